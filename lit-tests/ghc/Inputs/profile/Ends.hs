{-# LANGUAGE BangPatterns #-}
-- Works in spin, then ends as its first argument says: normally, by an uncaught
-- exception (error), or by exitWith (ExitFailure 3).
module Main where

import System.Environment (getArgs)
import System.Exit

{-# NOINLINE spin #-}
spin :: Int -> Int
spin r = loop r 0
  where
    loop :: Int -> Int -> Int
    loop 0 !acc = acc
    loop k !acc = loop (k - 1) ((acc * 31 + k) `mod` 1000003)

main :: IO ()
main = do
  [mode, r] <- getArgs
  let !x = spin (read r)
  print x
  case mode of
    "error" -> error "boom"
    "exit" -> exitWith (ExitFailure 3)
    _ -> return ()
