-- A small stack (+RTS -ki1k) that a GC moves: the main thread is a few frames deep
-- when performGC moves its stack, then fails two levels further down.
module Main where

import System.Mem (performGC)

foreign import ccall unsafe "abort" c_abort :: IO ()

outer :: Int -> IO Int
outer n = do
  r <- middle (n + 1)
  return (r + 1)

middle :: Int -> IO Int
middle n = do
  performGC
  performGC
  r <- inner (n + 1)
  return (r + 1)

inner :: Int -> IO Int
inner n = do
  r <- failNow n
  return (r + n)

failNow :: Int -> IO Int
failNow n = do
  c_abort
  return n

main :: IO ()
main = do
  r <- outer 1
  print r
