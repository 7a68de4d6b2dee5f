-- A program that crashes: main calls level1, level1 calls level2, level2
-- calls level3, and level3 calls crash, which reads memory at the address it
-- is given: 8, in the page at 0 that is never mapped.  The read faults
-- (SIGSEGV) while the return points of level3, level2, level1 and main are
-- on the Cmm stack.
module Main (main) where

import Foreign.Ptr (nullPtr, plusPtr)
import Foreign.Storable (peek)
import System.IO (hFlush, stdout)

crash :: Int -> IO Int
crash off = peek (nullPtr `plusPtr` off)

level3 :: Int -> IO Int
level3 n = do
  r <- crash (n + 4)
  return (r + 3)

level2 :: Int -> IO Int
level2 n = do
  r <- level3 (n * 2)
  return (r + 2)

level1 :: Int -> IO Int
level1 n = do
  r <- level2 (n + 1)
  return (r + 1)

main :: IO ()
main = do
  putStrLn "calling level1"
  hFlush stdout
  r <- level1 1
  print r
