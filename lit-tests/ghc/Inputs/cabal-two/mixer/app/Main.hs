module Main (main) where

import Mix.Hash

main :: IO ()
main = do
  print (hash [1 .. 100])
  print [hash [n .. n + 50] | n <- [0, 1, 2]]
