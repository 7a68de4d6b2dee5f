-- The programs of lit-tests/ghc/raise-*.test: one exception per mode (the argument).
import Control.Concurrent
import Control.Exception
import System.Environment
import System.Exit

data Oops = Oops Int deriving Show
instance Exception Oops

{-# NOINLINE level3 #-}
level3 :: Int -> Int
level3 n = if n > 100 then error ("boom " ++ show n) else n * 3

{-# NOINLINE level2 #-}
level2 :: Int -> Int
level2 n = level3 (n + 1) + 2

{-# NOINLINE level1 #-}
level1 :: Int -> Int
level1 n = level2 (n * 2) + 1

{-# NOINLINE deep #-}
deep :: Int -> IO Int
deep 0 = throwIO (Oops 42)
deep n = do { r <- deep (n - 1); return (r + 1) }

{-# NOINLINE firstOf #-}
firstOf :: [Int] -> Int
firstOf xs = head xs + 1

main :: IO ()
main = do
  [mode] <- getArgs
  case mode of
    "error" -> print (level1 60)
    "caught" -> do
      r <- try (evaluate (level1 60))
      putStrLn (either (\e -> "caught: " ++ show (e :: ErrorCall)) show r)
      print (level1 7)
    "exit" -> print (level1 7) >> exitWith (ExitFailure 3)
    "throw" -> deep 3 >>= print
    "head" -> print (firstOf (filter (> 5) [1, 2, 3]))
    "finally" -> (deep 2 >>= print) `finally` putStrLn "cleanup"
    "fork" -> do
      v <- newEmptyMVar
      _ <- forkIO ((deep 1 >>= print) `finally` putMVar v ())
      takeMVar v
      putStrLn "main goes on"
    "kill" -> do
      me <- myThreadId
      _ <- forkIO (throwTo me (ErrorCall "killed"))
      threadDelay 2000000
    _ -> return ()
