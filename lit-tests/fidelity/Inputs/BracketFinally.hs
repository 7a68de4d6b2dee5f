-- Read and describe the header of each file named in the arguments, with bracket to
-- open and close it, and finally to say that the run is over; the file without a version line fails
-- in parseHeader, and the exception goes through both handlers to the top.
import Control.Exception
import Control.Monad
import System.Environment
import System.IO

data Header = Header {format :: String, version :: Int} deriving Show

parseHeader :: FilePath -> String -> IO Header
parseHeader path line = case words line of
  [f, v] -> return (Header f (read v))
  _ -> throwIO (userError (path ++ ": no version in " ++ show line))

readHeader :: FilePath -> IO Header
readHeader path =
  bracket (openFile path ReadMode) hClose $ \h -> do
    line <- hGetLine h
    parseHeader path line

describe :: FilePath -> Header -> String
describe path (Header f v) = path ++ ": " ++ f ++ ", version " ++ show v

main :: IO ()
main = do
  paths <- getArgs
  forM_ paths (\path -> readHeader path >>= putStrLn . describe path)
    `finally` putStrLn "done"
