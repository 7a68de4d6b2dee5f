module Main (main) where

fact :: Int -> Int -> Int
fact acc 0 = acc
fact acc n = fact (acc * n) (n - 1)

main :: IO ()
main = print (fact 1 10)
