-- The total weight of a 1,000,000-element list (the length is the first argument),
-- summed by a non-tail recursion; the last element's weight is invalid, so the failure
-- is at the bottom of a 1,000,000-deep recursion.
import System.Environment

weight :: Int -> Int
weight x
  | x >= 0 = x `mod` 7
  | otherwise = error ("weight: negative item " ++ show x)

totalWeight :: [Int] -> Int
totalWeight [] = 0
totalWeight (x : xs) = weight x + totalWeight xs

-- The items: all valid but the last.
items :: Int -> [Int]
items n = [1 .. n - 1] ++ [negate n]

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 1000000
  print (totalWeight (items n))
