-- A deep computation finishes normally (a 300,000-deep non-tail recursion, the first
-- argument), then a shallow one fails: shallow1 calls shallow2, which calls boom.
import Control.Exception
import System.Environment

sumTo :: Int -> Int
sumTo 0 = 0
sumTo n = n + sumTo (n - 1)

shallow1 :: Int -> IO ()
shallow1 n = do
  r <- shallow2 (n `div` 1000)
  putStrLn ("shallow1: " ++ show r)

shallow2 :: Int -> IO Int
shallow2 k = do
  r <- evaluate (boom k)
  return (r * 2)

boom :: Int -> Int
boom k
  | k > 1000 = k
  | otherwise = error ("boom: " ++ show k ++ " is too small")

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 300000
  print (sumTo n)
  shallow1 n
