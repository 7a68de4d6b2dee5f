-- Lists on the heap: build, map, filter, fold and length, many rounds
-- (bench/instrument).  A round's lists are garbage once it returns.
module Main (main) where

data List = Nil | Cons List !Int

build :: Int -> Int -> List -> List
build lo hi acc
  | hi < lo   = acc
  | otherwise = build lo (hi - 1) (Cons acc hi)

mapSq :: List -> List
mapSq Nil = Nil
mapSq (Cons xs x) = Cons (mapSq xs) (x * x `rem` 1009)

keepOdd :: List -> List -> List
keepOdd Nil acc = acc
keepOdd (Cons xs x) acc
  | odd x     = keepOdd xs (Cons acc x)
  | otherwise = keepOdd xs acc

total :: List -> Int -> Int
total Nil s = s
total (Cons xs x) s = total xs (s + x)

len :: List -> Int
len Nil = 0
len (Cons xs _) = 1 + len xs

oneRound :: Int -> Int
oneRound n =
  let ys = keepOdd (mapSq (build 1 n Nil)) Nil
  in total ys 0 + len ys

rounds :: Int -> Int -> Int -> Int
rounds n k acc
  | k == 0    = acc
  | otherwise = rounds n (k - 1) (acc + oneRound (n + k `rem` 7))

main :: IO ()
main = do
  print (rounds 20000 1000 0)
  print (oneRound 10)
