-- Hidden.hs: the work is in Hot, whose hot functions are local symbols.
module Main (main) where

import Hot (run)
import System.Environment (getArgs)

main :: IO ()
main = do
  [r] <- map read <$> getArgs
  print (run r)
