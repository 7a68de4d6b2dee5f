-- Statistics of the numbers in the arguments: summarize builds a record whose mean is
-- a lazy field (a thunk), and returns; render forces it later, and there is no mean
-- of no numbers.
import System.Environment

data Stats = Stats {count :: Int, mean :: Int}

summarize :: [Int] -> Stats
summarize xs = Stats {count = n, mean = avg}
  where
    n = length xs
    avg
      | n == 0 = error "summarize: no mean of no numbers"
      | otherwise = sum xs `div` n

render :: Stats -> String
render s = "count " ++ show (count s) ++ ", mean " ++ show (mean s)

main :: IO ()
main = do
  stats <- summarize . map read <$> getArgs
  putStrLn ("counted " ++ show (count stats))
  putStrLn (render stats)
