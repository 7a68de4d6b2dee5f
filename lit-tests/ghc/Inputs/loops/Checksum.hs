{-# LANGUAGE BangPatterns #-}
-- A checksum over a million blocks: a strict `where` loop, which GHC compiles to a loop
-- of gotos (at -O1 with no call in it), and which fails at the block given on the
-- command line.
module Main (main) where

import Data.Bits (shiftL, xor, (.&.))
import System.Environment (getArgs)

checksum :: Int -> Int -> Int
checksum bad n = go 0 1
  where
    go !acc i
      | i > n = acc
      | i == bad = error ("checksum: block " ++ show i ++ " is corrupt")
      | otherwise = go (mix acc i) (i + 1)
    mix acc i = ((acc `shiftL` 5) `xor` i) .&. 0xffffff

main :: IO ()
main = do
  args <- getArgs
  let bad = case args of
        [b] -> read b
        _ -> 0
  print (checksum 0 1000000)
  print (checksum bad 1000000)
