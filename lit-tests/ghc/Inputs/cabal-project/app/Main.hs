module Main (main) where

import qualified Data.Map.Strict as Map
import Demo.Queue

drain :: Queue Int -> [Int]
drain q = case pop q of
  Nothing -> []
  Just (x, q') -> x : drain q'

main :: IO ()
main = do
  print (drain (foldr push empty [1 .. 10]))
  print (Map.toList (wordCounts "the cat and the hat and the bat"))
