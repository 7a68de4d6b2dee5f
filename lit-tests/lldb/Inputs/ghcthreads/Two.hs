module Main (main) where

import Control.Concurrent
import Control.Concurrent.MVar

-- Two Haskell threads take turns through MVars, each deep in functions of its own:
-- the main thread in `ping`, the forked one in `pong`.  Each level waits on the
-- one below it (not a tail call), and the bottom of each hands the turn over.

{-# NOINLINE ping #-}
ping :: MVar Int -> MVar Int -> Int -> IO Int
ping toPong toPing 0 = do
  putMVar toPong 1
  n <- takeMVar toPing
  pingBottom n
ping toPong toPing k = do
  r <- ping toPong toPing (k - 1)
  return (r + 1)

{-# NOINLINE pingBottom #-}
pingBottom :: Int -> IO Int
pingBottom n = return (n * 10)

{-# NOINLINE pong #-}
pong :: MVar Int -> MVar Int -> MVar Int -> Int -> IO ()
pong toPong toPing done 0 = do
  n <- takeMVar toPong
  pongBottom n >>= putMVar toPing
  putMVar done 0
pong toPong toPing done k = do
  pong toPong toPing done (k - 1)
  return ()

{-# NOINLINE pongBottom #-}
pongBottom :: Int -> IO Int
pongBottom n = return (n + 41)

main :: IO ()
main = do
  toPong <- newEmptyMVar
  toPing <- newEmptyMVar
  done <- newEmptyMVar
  _ <- forkIO (pong toPong toPing done 3)
  r <- ping toPong toPing 2
  takeMVar done
  print r
