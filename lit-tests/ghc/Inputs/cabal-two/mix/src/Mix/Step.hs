-- A module the package keeps to itself; its bit mixing prints ambiguously in GHC's
-- Cmm text (`x | y & z` for both groupings).
module Mix.Step (step, blend) where

import Data.Bits
import Data.Word

step :: Word64 -> Word64
step h = let a = h `xor` (h `shiftL` 13)
             b = a `xor` (a `shiftR` 7)
             c = b `xor` (b `shiftL` 17)
         in c `xor` (complement h .&. 0xf0f0 .|. (c .&. 0x0f0f))
{-# NOINLINE step #-}

blend :: Word64 -> Word64 -> Word64 -> Word64
blend x y z = (x .|. y) .&. z `xor` (x .|. (y .&. z))
{-# NOINLINE blend #-}
