-- A non-tail recursion over many stack chunks returns; then a shallow chain fails.
module Main where

import System.IO (hFlush, stdout)

foreign import ccall unsafe "abort" c_abort :: IO ()

deepSum :: Int -> Int
deepSum 0 = 0
deepSum n = n + deepSum (n - 1)

shallow :: Int -> IO Int
shallow s = do
  r <- failNow s
  return (r + 1)

failNow :: Int -> IO Int
failNow s = do
  c_abort
  return s

main :: IO ()
main = do
  print (deepSum 200000)
  hFlush stdout
  r <- shallow 1
  print r
