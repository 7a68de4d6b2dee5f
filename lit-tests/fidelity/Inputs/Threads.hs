-- Two workers take turns through a pair of MVars: each step waits for its turn,
-- passes a token on, and goes one level deeper.  The main thread's worker runs out of
-- turns 300 levels down (the count is the first argument) and fails with ioError,
-- while the other thread waits, deep in its own recursion, for a turn that never comes.
import Control.Concurrent
import System.Environment
import System.IO.Error

-- The other thread's side: more turns than the main thread's.
stepA :: MVar Int -> MVar Int -> Int -> IO Int
stepA mine theirs n
  | n == 0 = return 0
  | otherwise = do
      t <- takeMVar mine
      putMVar theirs (t + 1)
      r <- stepA mine theirs (n - 1)
      return (r + t)

stepB :: MVar Int -> MVar Int -> Int -> IO Int
stepB mine theirs n
  | n == 0 = failB n
  | otherwise = do
      t <- takeMVar mine
      putMVar theirs (t + 1)
      r <- stepB mine theirs (n - 1)
      return (r + t)

failB :: Int -> IO Int
failB n = ioError (userError ("stepB: out of turns at " ++ show n))

main :: IO ()
main = do
  args <- getArgs
  let turns = case args of
        (a : _) -> read a
        [] -> 300
  forA <- newEmptyMVar
  forB <- newEmptyMVar
  _ <- forkIO (stepA forA forB (turns + 100) >>= print)
  putMVar forB 0
  total <- stepB forB forA turns
  print total
