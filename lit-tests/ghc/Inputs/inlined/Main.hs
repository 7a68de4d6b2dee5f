module Main (main) where

import Util (hash)

main :: IO ()
main = print (hash "strobe")
