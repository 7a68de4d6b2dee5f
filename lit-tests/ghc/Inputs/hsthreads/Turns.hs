-- Two Haskell threads take turns through MVars on one capability (forkOn 0: one OS
-- thread at a time runs them, also with -threaded +RTS -N2); the first fails deep in
-- its own functions while the other waits deep in its own.
module Main where

import Control.Concurrent
import Control.Monad (when)

foreign import ccall unsafe "abort" c_abort :: IO ()

-- The other thread: down three levels of its own, then it hands the turn back at
-- every level and waits for it again.
otherLevel :: MVar () -> MVar () -> Int -> IO Int
otherLevel mine theirs n
  | n == 0 = do
      putMVar theirs ()
      takeMVar mine
      putMVar theirs ()
      takeMVar mine
      return 1
  | otherwise = do
      putMVar theirs ()
      takeMVar mine
      r <- otherLevel mine theirs (n - 1)
      return (r + 1)

mainLevel :: MVar () -> MVar () -> Int -> IO Int
mainLevel mine theirs n
  | n == 0 = do
      putMVar theirs ()
      takeMVar mine
      failHere
      return 0
  | otherwise = do
      putMVar theirs ()
      takeMVar mine
      r <- mainLevel mine theirs (n - 1)
      return (r + 1)

failHere :: IO ()
failHere = do
  c_abort

main :: IO ()
main = do
  mainTurn <- newEmptyMVar
  otherTurn <- newEmptyMVar
  done <- newEmptyMVar
  _ <- forkOn 0 (do
         r <- mainLevel mainTurn otherTurn 3
         putMVar done r)
  _ <- forkOn 0 (do
         takeMVar otherTurn
         r <- otherLevel otherTurn mainTurn 3
         when (r > 0) (putMVar mainTurn ()))
  r <- takeMVar done
  print r
