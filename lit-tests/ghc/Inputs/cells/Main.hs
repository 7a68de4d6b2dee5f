-- Uses Cell's constructors (allocating and matching them), its tuple instances, and
-- its tuple-specialised equality, across the module boundary.
module Main (main) where

import Cell

describe :: Cell -> String
describe (Cell a b) = "cell " ++ show a ++ "/" ++ show b
describe Wall = "wall"
describe (a :+: b) = show a ++ ":+:" ++ show b

main :: IO ()
main = do
  let cs = grid 12
  mapM_ (putStrLn . describe) cs
  print (map size cs)
  print (size (Cell 3 4, 5 :: Int), size (Wall, 1 :: Int, 2 :+: 7))
  print (total [(c, i, Cell i 1) | (c, i) <- zip cs [1 ..]])
  print (sameTriple (1, Cell 2 3, True) (1, Cell 2 3, True), sameTriple (1, Wall, True) (1, Wall, False))
  print (sizes [(Cell 1 2, 3 :: Int, Wall), (4 :+: 5, 6, Cell 7 8)], sizes [(Wall, 9 :: Int)])
  mapM_ (putStrLn . label) [(Cell 1 2, 3 :: Int, Wall), (4 :+: 5, 6, Cell 7 8)]
  print (zip3 cs [1 :: Int ..] (map (== Wall) cs) !! 2)
