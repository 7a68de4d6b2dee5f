-- A list built on the heap, one cons cell at a time, then walked twice.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

data List = Nil | Cons List !Int

build :: Int -> List -> List
build 0 acc = acc
build n acc = build (n - 1) (Cons acc n)

total :: List -> Int
total = go 0
  where
    go !s Nil = s
    go !s (Cons xs x) = go (s + x) xs

len :: List -> Int
len Nil = 0
len (Cons xs _) = 1 + len xs

main :: IO ()
main = do
  let xs = build 100000 Nil
  print (total xs)
  print (len xs)
  print (total (build 10 Nil))
