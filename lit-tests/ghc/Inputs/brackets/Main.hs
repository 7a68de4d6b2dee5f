{-# LANGUAGE UnboxedTuples #-}
module Main (main) where

import Brackets

main :: IO ()
main = do
  print (size [[1 :: Int, 2], [3]], size ((), [(), ()]), size ("ab", [True]))
  print (size ('a', 'b', 'c'), size ())
  print (pair "abc" [1 :: Int, 2], pair () [(), (), ()], pair ('x', 'y') [('a', 'b')])
  print (pair [[True]] (False, "xyz", ()))
  print (unboxed (Unit (# #) 7), unboxed (Two (# 3, 4 #)))
  case dicts of (d, Dict) -> putStrLn (showEq d 1 (2 :: Int))
  mapM_ print reps
  print (show ((), [()]), show ([()], ((), ())))
