{-# LANGUAGE MagicHash, UnboxedTuples #-}
-- decodeFloat on Double and Float: GHC calls the RTS's out-of-line primops
-- decodeDouble_Int64# and decodeFloat_Int# (labels stg_decodeDouble_Int64#,
-- stg_decodeFloat_Int#), whose symbols z-encode the whole primop name.
module Main (main) where

import GHC.Exts (Double (D#), Float (F#), decodeDouble_Int64#, decodeFloat_Int#, Int (I#))
import GHC.Int (Int64 (I64#))

{-# NOINLINE mantissaD #-}
mantissaD :: Double -> (Int64, Int)
mantissaD (D# d) = case decodeDouble_Int64# d of (# m, e #) -> (I64# m, I# e)

{-# NOINLINE mantissaF #-}
mantissaF :: Float -> (Int, Int)
mantissaF (F# f) = case decodeFloat_Int# f of (# m, e #) -> (I# m, I# e)

main :: IO ()
main = do
  mapM_ (print . mantissaD) [0, 1, -1.5, 3.141592653589793, 1e300, 5e-324]
  mapM_ (print . mantissaF) [0, 1, -1.5, 3.1415927, 1e30]
  print (decodeFloat (2.5 :: Double), decodeFloat (0.1 :: Float))
  print (significand (6.0 :: Double), exponent (6.0 :: Float))
