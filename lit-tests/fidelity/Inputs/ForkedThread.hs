-- A worker thread runs the jobs (the arguments) that the main thread sends it through
-- a channel; a job that is no number makes the worker fail, in its own thread.  GHC
-- prints the worker's exception, and the main thread goes on when the worker is gone.
import Control.Concurrent
import Control.Exception
import System.Environment

runJob :: String -> IO Int
runJob job = case reads job of
  [(n, "")] -> return (n * n)
  _ -> throwIO (ErrorCall ("runJob: bad job " ++ show job))

worker :: Chan String -> Int -> IO ()
worker _ 0 = return ()
worker jobs n = do
  job <- readChan jobs
  r <- runJob job
  print r
  worker jobs (n - 1)

supervise :: [String] -> IO ()
supervise jobList = do
  jobs <- newChan
  done <- newEmptyMVar
  _ <- forkIO (worker jobs (length jobList) `finally` putMVar done ())
  mapM_ (writeChan jobs) jobList
  takeMVar done
  putStrLn "the worker is gone"

main :: IO ()
main = getArgs >>= supervise
