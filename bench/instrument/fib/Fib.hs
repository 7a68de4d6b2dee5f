-- Recursion that is not a tail call: every call pushes a frame with what it
-- still needs and a return point (bench/instrument).
module Main (main) where

fib :: Int -> Int
fib n
  | n < 2     = n
  | otherwise = fib (n - 1) + fib (n - 2)

fibs :: Int -> Int -> Int -> Int
fibs i n acc
  | i > n     = acc
  | otherwise = fibs (i + 1) n (acc + fib i)

tak :: Int -> Int -> Int -> Int
tak x y z
  | y < x     = tak (tak (x - 1) y z) (tak (y - 1) z x) (tak (z - 1) x y)
  | otherwise = z

ack :: Int -> Int -> Int
ack 0 n = n + 1
ack m 0 = ack (m - 1) 1
ack m n = ack (m - 1) (ack m (n - 1))

hanoi :: Int -> Int -> Int -> Int -> Int
hanoi 0 _ _ _ = 0
hanoi n from to via = hanoi (n - 1) from via to + 1 + hanoi (n - 1) via to from

main :: IO ()
main = do
  print (fibs 0 34 0)
  print (tak 24 16 8)
  print (ack 3 10)
  print (hanoi 24 1 3 2)
