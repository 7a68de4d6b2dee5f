-- Strict loops over unboxed numbers: accumulators with bang patterns, Word and bit
-- operations, narrow integer types, Double and Float, GHC's primops called directly,
-- and C's maths library through unsafe and safe foreign calls.
{-# LANGUAGE BangPatterns, MagicHash, UnboxedTuples #-}
module Main (main) where

import Data.Bits
import Data.Char (ord)
import Data.Int (Int8, Int64)
import Data.Word (Word16, Word64)
import Foreign.C.Types (CDouble (..))
import GHC.Exts

foreign import ccall unsafe "math.h hypot" c_hypot :: CDouble -> CDouble -> CDouble
foreign import ccall safe "math.h exp" c_exp :: Double -> Double

sumSquares :: Int -> Int
sumSquares n = go 0 1
  where
    go !acc i
      | i > n = acc
      | otherwise = go (acc + i * i) (i + 1)

-- The greatest common divisor by Euclid, and the number of steps it took.
gcdSteps :: Int -> Int -> (Int, Int)
gcdSteps a0 b0 = go a0 b0 0
  where
    go a 0 !k = (abs a, k)
    go a b !k = go b (a `rem` b) (k + 1)

-- A string hash that mixes each character in with a rotation; its step masks off the
-- low bits and sets the lowest.
{-# NOINLINE mixHash #-}
mixHash :: String -> Word
mixHash = go 5381
  where
    go !h [] = h `xor` (h `unsafeShiftR` 31)
    go !h (c : cs) = go (rotateL (h * 33 `xor` fromIntegral (ord c)) 7 .&. complement 6 .|. 1) cs

-- Reverses the bits of a Word16 one at a time.
{-# NOINLINE reverse16 #-}
reverse16 :: Word16 -> Word16
reverse16 = go 0 16
  where
    go :: Word16 -> Int -> Word16 -> Word16
    go !r 0 _ = r
    go !r k x = go ((r `shiftL` 1) .|. (x .&. 1)) (k - 1) (x `shiftR` 1)

{-# NOINLINE bitFacts #-}
bitFacts :: Word64 -> (Int, Int, Int, Bool)
bitFacts w = (popCount w, countLeadingZeros w, countTrailingZeros w, testBit w 63)

{-# NOINLINE narrowing #-}
narrowing :: Int -> (Int8, Word16, Int64)
narrowing n = (fromIntegral n, fromIntegral (n * 1000), fromIntegral n `shiftL` 40)

{-# NOINLINE division #-}
division :: Int -> Int -> [Int]
division a b = [a `quot` b, a `rem` b, a `div` b, a `mod` b]

-- The integral of f over [a, b] by Simpson's rule with n intervals.
simpson :: (Double -> Double) -> Double -> Double -> Int -> Double
simpson f a b n = h / 3 * go 1 (f a + f b)
  where
    h = (b - a) / fromIntegral n
    go !i !acc
      | i >= n = acc
      | otherwise = go (i + 1) (acc + (if odd i then 4 else 2) * f (a + h * fromIntegral i))

{-# NOINLINE floatStats #-}
floatStats :: [Float] -> (Float, Float, Int, Bool)
floatStats xs = (minimum xs, maximum xs - minimum xs, round (sum xs), any isNaN xs)

-- Full-width multiplication, division with remainder and bit counts on raw Word#.
{-# NOINLINE wideMul #-}
wideMul :: Word -> Word -> (Word, Word, Word, Word, Word)
wideMul (W# a) (W# b) = case timesWord2# a b of
  (# hi, lo #) -> case quotRemWord# lo (b `or#` 1##) of
    (# q, r #) -> (W# hi, W# lo, W# q, W# (r `plusWord#` popCnt# a), W# (ctz# b `xor#` clz# a))

{-# NOINLINE fastSum #-}
fastSum :: Int -> Int
fastSum (I# n) = I# (go 0# 1#)
  where
    go acc i = case i ># n of
      1# -> acc
      _ -> go (acc +# (i *# 3#)) (i +# 1#)

main :: IO ()
main = do
  print (sumSquares 1000, fastSum 10000)
  print (gcdSteps 1071 462, gcdSteps 832040 514229)
  print (mixHash "strobe", mixHash (replicate 50 'z'))
  print (map reverse16 [1, 2, 0x8000, 0x1234])
  print (bitFacts 0xF00000000000F0F0, bitFacts 1)
  print (narrowing 300, narrowing (-129))
  print (division (-23) 4, division 23 (-4))
  print (simpson (\x -> x * x) 0 3 100, simpson sin 0 pi 64)
  print (floatStats [1.5, -2.25, 8.0, 0.125])
  print (wideMul 0xFFFFFFFFFFFFFFFF 3, wideMul 123456789 987654321)
  print (c_hypot 3 4, c_exp 1, realToFrac (c_hypot 5 12) + c_exp 0 :: Double)
