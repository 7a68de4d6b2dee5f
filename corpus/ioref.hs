-- Mutable state in IO: IORefs read, written and modified (lazily, strictly and
-- atomically), a closure over an IORef, a queue and a log kept in IORefs, and loops
-- in IO with forM_, when and unless.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Control.Monad (forM_, forM, when, unless, replicateM)
import Data.IORef

data Account = Account { owner :: String, balance :: IORef Int, history :: IORef [String] }

open :: String -> Int -> IO Account
open name amount = Account name <$> newIORef amount <*> newIORef ["opened with " ++ show amount]

-- Takes the money if there is enough; says whether it did.
withdraw :: Account -> Int -> IO Bool
withdraw acct amount = do
  ok <- atomicModifyIORef' (balance acct) $ \b ->
    if b >= amount then (b - amount, True) else (b, False)
  modifyIORef (history acct) (((if ok then "paid " else "refused ") ++ show amount) :)
  return ok

deposit :: Account -> Int -> IO ()
deposit acct amount = do
  modifyIORef' (balance acct) (+ amount)
  modifyIORef (history acct) (("got " ++ show amount) :)

transfer :: Account -> Account -> Int -> IO ()
transfer from to amount = do
  ok <- withdraw from amount
  when ok $ deposit to amount

newTicketMachine :: IO (IO Int)
newTicketMachine = do
  next <- newIORef (100 :: Int)
  return (atomicModifyIORef' next (\n -> (n + 1, n)))

-- A queue as two lists in one IORef.
newtype Queue a = Queue (IORef ([a], [a]))

push :: Queue a -> a -> IO ()
push (Queue r) x = modifyIORef' r (\(front, back) -> (front, x : back))

pop :: Queue a -> IO (Maybe a)
pop (Queue r) = do
  (front, back) <- readIORef r
  case front of
    x : rest -> writeIORef r (rest, back) >> return (Just x)
    [] -> case reverse back of
      [] -> return Nothing
      x : rest -> writeIORef r (rest, []) >> return (Just x)

main :: IO ()
main = do
  alice <- open "alice" 120
  bob <- open "bob" 15
  transfer alice bob 50
  transfer bob alice 200
  transfer bob alice 65
  forM_ [alice, bob] $ \a -> do
    b <- readIORef (balance a)
    h <- readIORef (history a)
    putStrLn (owner a ++ ": " ++ show b ++ " " ++ show (reverse h))
  ticket <- newTicketMachine
  ts <- replicateM 4 ticket
  print ts
  q <- Queue <$> newIORef ([], [])
  forM_ "queue" (push q)
  firsts <- forM [1 .. 3 :: Int] (const (pop q))
  push q '!'
  rest <- replicateM 4 (pop q)
  print (firsts, rest)
  total <- newIORef (0 :: Int)
  let loop !i = unless (i > 2000) $ do
        when (odd i) $ modifyIORef' total (+ i)
        loop (i + 1)
  loop 1
  readIORef total >>= print
  flags <- mapM newIORef [False, True, False]
  mapM_ (\r -> atomicModifyIORef' r (\v -> (not v, ()))) flags
  mapM readIORef flags >>= print
