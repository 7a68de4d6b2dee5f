-- Plain recursion, not in tail position: Fibonacci, Ackermann, the Integer factorial
-- (bignum calls), mutual recursion, and a recursion that builds a list.
module Main (main) where

fib :: Int -> Int
fib n
  | n < 2 = n
  | otherwise = fib (n - 1) + fib (n - 2)

ackermann :: Int -> Int -> Int
ackermann 0 n = n + 1
ackermann m 0 = ackermann (m - 1) 1
ackermann m n = ackermann (m - 1) (ackermann m (n - 1))

factorial :: Integer -> Integer
factorial 0 = 1
factorial n = n * factorial (n - 1)

isEven, isOdd :: Int -> Bool
isEven 0 = True
isEven n = isOdd (n - 1)
isOdd 0 = False
isOdd n = isEven (n - 1)

hanoi :: Int -> String -> String -> String -> [(String, String)]
hanoi 0 _ _ _ = []
hanoi n from to via = hanoi (n - 1) from via to ++ [(from, to)] ++ hanoi (n - 1) via to from

digits :: Integer -> Int
digits n = if n < 10 then 1 else 1 + digits (n `quot` 10)

main :: IO ()
main = do
  print (map fib [0 .. 22])
  print (ackermann 2 3, ackermann 3 4)
  print (factorial 30)
  print (digits (factorial 100), factorial 20 `mod` 1000003)
  print (isEven 1001, isOdd 1001)
  let moves = hanoi 4 "a" "c" "b"
  print (length moves, take 3 moves)
