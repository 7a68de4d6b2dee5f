-- A function small enough for GHC to inline at -O1: its code then comes first in
-- Main's assembly, whose first `.file` line names Util.hs, not Main.hs.
module Util (hash) where

import Data.Char (ord)
import Data.List (foldl')

hash :: String -> Int
hash = foldl' (\acc c -> ord c + acc * 31) 0
