{-# LANGUAGE BangPatterns #-}
-- Two hot functions: hotA does three times the work of hotB.
module Main where

import System.Environment (getArgs)

{-# NOINLINE hotA #-}
hotA :: Int -> Int
hotA n = go 0 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go (acc + (i * i) `mod` 7) (i + 1)

{-# NOINLINE hotB #-}
hotB :: Int -> Int
hotB n = go 0 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go (acc + (i * i) `mod` 7) (i + 1)

main :: IO ()
main = do
  [r] <- map read <$> getArgs
  let loop :: Int -> Int -> Int
      loop 0 !acc = acc
      loop k !acc = loop (k - 1) (acc + hotA (3000 + k `mod` 3) + hotB (1000 + k `mod` 3))
  print (loop r 0)
