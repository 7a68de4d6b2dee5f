module Main (main) where

import Loop (build, total)

fact :: Int -> Int
fact 0 = 1
fact n =
  let r = fact (n - 1)
  in r `seq` n * r

main :: IO ()
main = do
  print (fact 20)
  print (total (build 100000) 0)
