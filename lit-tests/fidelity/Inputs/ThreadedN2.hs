-- Under -threaded +RTS -N2: a background thread keeps a capability busy summing
-- squares, while the main thread checks the readings (the arguments) recursively and
-- fails on the first one out of range.
import Control.Concurrent
import Control.Exception
import Control.Monad
import System.Environment

data OutOfRange = OutOfRange Int deriving Show

instance Exception OutOfRange

crunch :: MVar Int -> Int -> IO ()
crunch progress i = do
  modifyMVar_ progress (\acc -> return $! (acc + i * i) `mod` 1000003)
  crunch progress (i + 1)

checkReadings :: [Int] -> IO Int
checkReadings [] = return 0
checkReadings (r : rs) = do
  when (r < 0 || r > 100) $ throwIO (OutOfRange r)
  rest <- checkReadings rs
  return (r + rest)

main :: IO ()
main = do
  readings <- map read <$> getArgs
  progress <- newMVar 0
  _ <- forkIO (crunch progress 1)
  threadDelay 1000
  total <- checkReadings readings
  print total
