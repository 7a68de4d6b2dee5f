-- Strict loops: tail calls that become jumps, nested loops, and a search
-- that keeps the best result so far in its arguments.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

collatzLen :: Int -> Int
collatzLen n = go 1 n
  where
    go !k 1 = k
    go !k m
      | even m = go (k + 1) (m `quot` 2)
      | otherwise = go (k + 1) (3 * m + 1)

longest :: Int -> (Int, Int)
longest lim = loop 1 1 1
  where
    loop !i !bi !bl
      | i >= lim = (bi, bl)
      | otherwise =
          let l = collatzLen i
          in if l > bl then loop (i + 1) i l else loop (i + 1) bi bl

pairs :: Int -> Int
pairs n = outer 1 0
  where
    outer !i !acc
      | i > n = acc
      | otherwise = outer (i + 1) (inner i (i + 1) acc)
    inner !i !j !acc
      | j > n = acc
      | (i * j) `rem` 7 == 0 = inner i (j + 1) (acc + 1)
      | otherwise = inner i (j + 1) acc

main :: IO ()
main = do
  let (start, len) = longest 10000
  print start
  print len
  print (pairs 300)
  print (collatzLen 27)
