-- Transfers between two accounts in STM; a transfer larger than the balance aborts its
-- transaction with throwSTM, and nothing catches it.
import Control.Concurrent.STM
import Control.Exception
import Control.Monad
import System.Environment

data Insufficient = Insufficient Int Int deriving Show

instance Exception Insufficient

withdraw :: TVar Int -> Int -> STM ()
withdraw account amount = do
  balance <- readTVar account
  when (balance < amount) $ throwSTM (Insufficient balance amount)
  writeTVar account (balance - amount)

deposit :: TVar Int -> Int -> STM ()
deposit account amount = modifyTVar' account (+ amount)

transfer :: TVar Int -> TVar Int -> Int -> IO ()
transfer from to amount = atomically $ do
  withdraw from amount
  deposit to amount

main :: IO ()
main = do
  amounts <- map read <$> getArgs
  a <- newTVarIO 100
  b <- newTVarIO 0
  forM_ amounts $ \amount -> do
    transfer a b amount
    balances <- (,) <$> readTVarIO a <*> readTVarIO b
    print balances
