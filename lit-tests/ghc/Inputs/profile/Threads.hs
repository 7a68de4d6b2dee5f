{-# LANGUAGE BangPatterns #-}
-- Two Haskell threads doing different work: threadA runs workA, threadB runs workB.
module Main where

import Control.Concurrent
import System.Environment (getArgs)

{-# NOINLINE workA #-}
workA :: Int -> Int
workA n = go 0 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go (acc + (i * i) `mod` 7) (i + 1)

{-# NOINLINE workB #-}
workB :: Int -> Int
workB n = go 1 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go ((acc * 3 + i) `mod` 1000003) (i + 1)

{-# NOINLINE threadA #-}
threadA :: Int -> MVar Int -> IO ()
threadA r m = putMVar m $! loop r 0
  where
    loop :: Int -> Int -> Int
    loop 0 !acc = acc
    loop k !acc = loop (k - 1) (acc + workA (2000 + k `mod` 3))

{-# NOINLINE threadB #-}
threadB :: Int -> MVar Int -> IO ()
threadB r m = putMVar m $! loop r 0
  where
    loop :: Int -> Int -> Int
    loop 0 !acc = acc
    loop k !acc = loop (k - 1) (acc + workB (2000 + k `mod` 5))

main :: IO ()
main = do
  [r] <- map read <$> getArgs
  a <- newEmptyMVar
  b <- newEmptyMVar
  _ <- forkIO (threadA r a)
  _ <- forkIO (threadB r b)
  x <- takeMVar a
  y <- takeMVar b
  print (x + y)
