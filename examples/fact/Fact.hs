-- Recursion that is not a tail call: every call leaves a frame on the stack
-- (the argument it still needs and a return point), and the frame's
-- continuation does the multiplication or the addition.
module Main (main) where

fact :: Int -> Int
fact 0 = 1
fact n = n * fact (n - 1)

sumTo :: Int -> Int
sumTo 0 = 0
sumTo n = n + sumTo (n - 1)

main :: IO ()
main = do
  print (fact 20)
  print (sumTo 50000)
  print (fact 10 + sumTo 10)
