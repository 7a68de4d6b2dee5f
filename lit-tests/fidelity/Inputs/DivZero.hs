{-# LANGUAGE BangPatterns #-}
-- The average of the arguments above a threshold (the first argument), in a strict
-- loop; when none is above it, the loop's end divides by zero.
import System.Environment

average :: [Int] -> Int
average xs = go 0 0 xs
  where
    go !total !n [] = total `div` n
    go !total !n (y : ys) = go (total + y) (n + 1) ys

above :: Int -> [Int] -> [Int]
above threshold = filter (> threshold)

main :: IO ()
main = do
  (threshold : rest) <- map read <$> getArgs
  print (average (above threshold rest))
