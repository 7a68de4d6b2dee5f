-- An exception thrown deep (over many stack chunks) is caught far up; then another
-- chain fails.
module Main where

import Control.Exception
import System.IO (hFlush, stdout)

foreign import ccall unsafe "abort" c_abort :: IO ()

thrower :: Int -> IO Int
thrower 0 = throwIO (userError "deep")
thrower n = do
  r <- thrower (n - 1)
  return (r + 1)

afterwards :: Int -> IO Int
afterwards n = do
  r <- failNow n
  return (r + 1)

failNow :: Int -> IO Int
failNow n = do
  c_abort
  return n

main :: IO ()
main = do
  r <- try (thrower 100000) :: IO (Either IOException Int)
  either (const (putStrLn "caught")) print r
  hFlush stdout
  x <- afterwards 1
  print x
