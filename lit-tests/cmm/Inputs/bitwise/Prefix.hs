module Main (main) where

import Data.Bits

{-# NOINLINE notAnd #-}
notAnd :: Int -> Int -> Int
notAnd x y = complement (x .&. y)

{-# NOINLINE andNot #-}
andNot :: Int -> Int -> Int
andNot x y = complement x .&. y

{-# NOINLINE notXor #-}
notXor :: Int -> Int -> Int
notXor x y = complement (x `xor` y)

{-# NOINLINE xorNot #-}
xorNot :: Int -> Int -> Int
xorNot x y = complement x `xor` y

{-# NOINLINE negAnd #-}
negAnd :: Int -> Int -> Int
negAnd x y = negate x .&. y

{-# NOINLINE sameOp #-}
sameOp :: Int -> Int -> Int -> Int
sameOp x y z = x .&. (y .&. z)

main :: IO ()
main = print [notAnd 12 10, andNot 12 10, notXor 12 10, xorNot 12 10, negAnd 12 10, sameOp 12 10 7]
