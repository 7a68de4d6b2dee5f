-- Validates amounts with a pure check, then throws from IO when one is negative.
import Control.Exception
import Control.Monad
import System.Environment

data BadAmount = BadAmount Int deriving Show

instance Exception BadAmount

class Checked a where
  check :: a -> Bool

instance Checked Int where
  check n = n >= 0

process :: Int -> IO Int
process n = do
  let ok = check n
  unless ok $ throwIO (BadAmount n)
  return (n * 2)

main :: IO ()
main = do
  amounts <- map read <$> getArgs
  results <- mapM process amounts
  print (sum results)
