-- shapes: a multi-module Haskell program for strobe-ghc (examples/haskell/README.md):
-- a type class across modules, Data.Map, IORef, exceptions (throw/catch, error,
-- evaluate) and threads (forkIO, MVar).  With --fail it ends in an uncaught exception.
module Main (main) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar
import Control.Exception
import Control.Monad (forM, forM_, when)
import Data.IORef
import Data.List (foldl')
import System.Environment (getArgs)
import qualified Data.Map.Strict as Map

import Shapes.Class
import Shapes.Types

shapes :: [AnyShape]
shapes =
  [ AnyShape (Circle 1.5)
  , AnyShape (Rect 2 3)
  , AnyShape (Rect 4 4)
  , AnyShape (triangle 3 4 5)
  , AnyShape (Circle 0.5)
  ]

-- How many shapes of each kind, and their total area, in a Map.
census :: [AnyShape] -> Map.Map String (Int, Double)
census = foldl' add Map.empty
  where
    add m s = Map.insertWith plus (name s) (1, area s) m
    plus (n1, a1) (n2, a2) = (n1 + n2, a1 + a2)

-- The sum of 1..n on a worker thread, its result through an MVar.
worker :: Int -> IO (MVar Int)
worker n = do
  box <- newEmptyMVar
  _ <- forkIO $ putMVar box $! sum [1 .. n]
  return box

main :: IO ()
main = do
  mapM_ (putStrLn . describe) shapes

  forM_ (Map.toList (census shapes)) $ \(k, (n, a)) ->
    putStrLn (k ++ " x" ++ show n ++ ", total area " ++ show (fromIntegral (round (a * 1000)) / 1000 :: Double))

  -- IORef: a counter that the loop below bumps.
  counter <- newIORef (0 :: Int)
  forM_ shapes $ \s -> when (corners s > 0) $ modifyIORef' counter (+ corners s)
  readIORef counter >>= \c -> putStrLn ("corners in all: " ++ show c)

  -- Exceptions: a pure throw, a call to error, and one from arithmetic.
  r1 <- try (evaluate (area (triangle 1 1 5)))
  putStrLn $ case r1 of
    Left e -> "bad triangle: " ++ show (e :: ArithException)
    Right a -> "area " ++ show a
  r2 <- try (evaluate (length (name (Rect 1 2)) + error "no such shape"))
  putStrLn $ case r2 of
    Left (ErrorCall msg) -> "caught error: " ++ msg
    Right n -> "length " ++ show n
  r3 <- try (evaluate (10 `div` (corners (Circle 2))))
  putStrLn $ case r3 of
    Left DivideByZero -> "caught divide by zero"
    Left e -> "caught " ++ show e
    Right q -> "quotient " ++ show q
  handle (\e -> putStrLn ("handled: " ++ displayException (e :: SomeException))) $
    throwIO (userError "thrown in IO")

  -- Threads: four workers, results through MVars, a shared MVar as a lock.
  boxes <- forM [1000, 2000, 3000, 4000] worker
  results <- mapM takeMVar boxes
  print results
  total <- newMVar (0 :: Int)
  dones <- forM results $ \r -> do
    done <- newEmptyMVar
    _ <- forkIO $ do
      modifyMVar_ total (return . (+ r))
      putMVar done ()
    return done
  mapM_ takeMVar dones
  readMVar total >>= \t -> putStrLn ("total: " ++ show t)

  -- `shapes --fail`: an uncaught exception ends the program (GHC's message, status 1).
  args <- getArgs
  when ("--fail" `elem` args) $ error ("asked to fail after " ++ show (length shapes) ++ " shapes")
