-- A checksum of each argument's characters, folded from the right with foldr; a
-- character that is no digit fails.  Arguments longer than 20 are refused first.
import Data.Char (digitToInt, isDigit)
import System.Environment

step :: Char -> Int -> Int
step c acc
  | isDigit c = (acc * 31 + digitToInt c) `mod` 1000003
  | otherwise = error ("step: not a digit: " ++ show c)

checksum :: String -> Int
checksum s = foldr step 7 s

shortEnough :: String -> Bool
shortEnough s = length s <= 20

main :: IO ()
main = do
  args <- getArgs
  if all shortEnough args
    then mapM_ (print . checksum) args
    else putStrLn "an argument is too long"
