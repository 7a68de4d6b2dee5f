{-# LANGUAGE MagicHash #-}
module Main (main) where

import GHC.Exts

-- Reverses the low n bits of x, one bit per step: r' = (r << 1) | (x & 1).
-- GHC prints the step as `(r << 1) | x & 1`, the same text as `((r << 1) | x) & 1`.
revBits :: Int -> Int -> Int
revBits (I# n0) (I# x0) = I# (go n0 x0 0#)
  where
    go 0# _ r = r
    go n x r = go (n -# 1#) (uncheckedIShiftRL# x 1#) (orI# (uncheckedIShiftL# r 1#) (andI# x 1#))

main :: IO ()
main = print (map (revBits 3) [0 .. 7])
