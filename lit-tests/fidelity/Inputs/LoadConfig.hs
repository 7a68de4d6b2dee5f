-- Reads a configuration file that is not there: the IO error is raised in base.
import Control.Exception
import System.Environment
import qualified Data.Map as Map

parseLine :: String -> Maybe (String, String)
parseLine l = case break (== '=') l of
  (k, '=' : v) -> Just (k, v)
  _ -> Nothing

loadConfig :: FilePath -> IO (Map.Map String String)
loadConfig path = do
  text <- readFile path
  let pairs = [p | Just p <- map parseLine (lines text)]
  return (Map.fromList pairs)

main :: IO ()
main = do
  [path] <- getArgs
  cfg <- loadConfig path
  print (Map.size cfg)
