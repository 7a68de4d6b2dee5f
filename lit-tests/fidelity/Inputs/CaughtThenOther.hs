-- A 5000-deep recursion throws; a handler near the top catches it and the program
-- goes on, until other calls other2, which fails with error.
import Control.Exception
import System.Environment

data TooDeep = TooDeep Int deriving Show

instance Exception TooDeep

descend :: Int -> Int -> IO Int
descend limit n
  | n >= limit = throwIO (TooDeep n)
  | otherwise = do
      r <- descend limit (n + 1)
      return (r + 1)

recovered :: TooDeep -> IO Int
recovered (TooDeep n) = do
  putStrLn ("recovered from depth " ++ show n)
  return n

other :: Int -> IO ()
other n = do
  r <- other2 n
  print r

other2 :: Int -> IO Int
other2 n
  | n < 0 = return n
  | otherwise = error ("other2: " ++ show n ++ " is not negative")

main :: IO ()
main = do
  args <- getArgs
  let limit = case args of
        (a : _) -> read a
        [] -> 5000
  d <- descend limit 0 `catch` recovered
  other d
