-- Sieve of Eratosthenes on a byte array, run many times (bench/instrument).
module Main (main) where

import Data.Array.Base (unsafeRead, unsafeWrite)
import Data.Array.IO (IOUArray, newArray)

type Sieve = IOUArray Int Bool

clear :: Sieve -> Int -> Int -> IO ()
clear a n i
  | i >= n    = return ()
  | otherwise = unsafeWrite a i True >> clear a n (i + 1)

mark :: Sieve -> Int -> Int -> Int -> IO ()
mark a n p j
  | j >= n    = return ()
  | otherwise = unsafeWrite a j False >> mark a n p (j + p)

sieve :: Sieve -> Int -> Int -> IO ()
sieve a n p
  | p * p >= n = return ()
  | otherwise  = do
      isP <- unsafeRead a p
      if isP then mark a n p (p * p) else return ()
      sieve a n (p + 1)

count :: Sieve -> Int -> Int -> Int -> IO Int
count a n i acc
  | i >= n    = return acc
  | otherwise = do
      isP <- unsafeRead a i
      count a n (i + 1) (if isP then acc + 1 else acc)

primesBelow :: Sieve -> Int -> IO Int
primesBelow a n = do
  clear a n 2
  sieve a n 2
  count a n 2 0

rounds :: Sieve -> Int -> Int -> Int -> IO Int
rounds a n k acc
  | k == 0    = return acc
  | otherwise = do
      c <- primesBelow a n
      rounds a n (k - 1) (acc + c)

main :: IO ()
main = do
  a <- newArray (0, 1000000) False
  total <- rounds a 1000000 150 0
  print total
  small <- primesBelow a 100
  print small
