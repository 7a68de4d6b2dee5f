{-# LANGUAGE BangPatterns #-}
-- Many distinct stacks: a non-tail recursion to depths 0 to 39, then a loop.
module Main where

import System.Environment (getArgs)

{-# NOINLINE work #-}
work :: Int -> Int
work n = go 0 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go (acc + (i * i) `mod` 7) (i + 1)

{-# NOINLINE deep #-}
deep :: Int -> Int -> Int
deep 0 w = work w
deep d w = 1 + deep (d - 1) w

main :: IO ()
main = do
  [r] <- map read <$> getArgs
  let loop :: Int -> Int -> Int
      loop 0 !acc = acc
      loop k !acc = loop (k - 1) (acc + deep (k `mod` 40) 3000)
  print (loop r 0)
