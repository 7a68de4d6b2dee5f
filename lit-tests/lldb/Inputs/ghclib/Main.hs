-- A program whose own functions are called from GHC's libraries: Data.Map's strict
-- fold (containers), foldr and sortBy (base), and a method of a type class.
module Main (main) where

import Data.List (sortBy)
import qualified Data.Map.Strict as Map

class Weigh a where
  weigh :: a -> Int

newtype Box = Box Int

instance Weigh Box where
  weigh (Box n) = n * 3

total :: Int -> Int -> Int
total x acc = x + acc
{-# NOINLINE total #-}

step :: Box -> Int -> Int
step b acc = weigh b + acc
{-# NOINLINE step #-}

byLast :: Int -> Int -> Ordering
byLast a b = compare (a `mod` 10) (b `mod` 10)
{-# NOINLINE byLast #-}

main :: IO ()
main = do
  let m = Map.fromList [(k, Box k) | k <- [1 .. 50 :: Int]]
  print (Map.foldr' step 0 m)
  print (foldr total 0 [1 .. 100 :: Int])
  print (take 5 (sortBy byLast [31, 42, 13, 24, 55, 6 :: Int]))
