-- The first big order: head of a filter, and there is none.
import System.Environment

isBig :: Int -> Bool
isBig n = n > 1000

firstBig :: [Int] -> Int
firstBig xs = head (filter isBig xs)

report :: [Int] -> String
report xs = "first big order: " ++ show (firstBig xs)

main :: IO ()
main = do
  orders <- map read <$> getArgs
  putStrLn (report orders)
