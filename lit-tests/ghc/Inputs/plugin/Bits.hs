-- Bit mixing whose Cmm GHC prints ambiguously: mixA's `x | (y & z)` and mixB's
-- `(x | y) & z` both print as `R2 | R3 & R4`, and so do the xor and complement runs of
-- the hash.  Built through strobe's plugin, each is lowered as GHC holds it.
module Main (main) where

import Data.Bits
import Data.List (foldl')
import Data.Word

mixA :: Word64 -> Word64 -> Word64 -> Word64
mixA x y z = x .|. (y .&. z)
{-# NOINLINE mixA #-}

mixB :: Word64 -> Word64 -> Word64 -> Word64
mixB x y z = (x .|. y) .&. z
{-# NOINLINE mixB #-}

-- A PRNG step: xor-shifts, a complemented mask, and the two groupings above.
step :: Word64 -> Word64
step h = let a = h `xor` (h `shiftL` 13)
             b = a `xor` (a `shiftR` 7)
             c = b `xor` (b `shiftL` 17)
         in complement (c .&. 0xff00ff00ff00ff00) `xor` (c .|. (h .&. 0x0f0f)) .&. (c .|. h)
{-# NOINLINE step #-}

hash :: [Word64] -> Word64
hash = foldl' (\acc w -> step (acc `xor` complement w)) 0x9e3779b97f4a7c15

main :: IO ()
main = do
  print (mixA 0xF0 0x0F 0x3C, mixB 0xF0 0x0F 0x3C)
  print [mixA x y z | x <- [1, 6], y <- [3, 12], z <- [5, 10]]
  print [mixB x y z | x <- [1, 6], y <- [3, 12], z <- [5, 10]]
  print (take 4 (iterate step 1))
  print (hash [1 .. 1000], complement (hash []) `xor` 0xdeadbeef)
