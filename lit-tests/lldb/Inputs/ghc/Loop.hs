module Loop (build, total) where

build :: Int -> [Int]
build 0 = []
build n = n : build (n - 1)

total :: [Int] -> Int -> Int
total [] acc = acc
total (x:xs) acc =
  let acc' = acc + x
  in acc' `seq` total xs acc'
