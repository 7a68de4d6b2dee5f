module Mix.Hash (hash, Digest (..)) where

import Data.Bits
import Data.List (foldl')
import Data.Word
import Mix.Step

newtype Digest = Digest Word64 deriving (Eq, Show)

hash :: [Word64] -> Digest
hash = Digest . foldl' (\acc w -> step (acc * 31 + blend w (acc `shiftR` 3) 0xff00ff00ff00ff00))
                       0x9e3779b97f4a7c15
