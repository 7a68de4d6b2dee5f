-- Double and Float arithmetic: Newton's method, a trapezoid integral of sin,
-- the mean and variance of an unboxed array, conversions between Int,
-- Double and Float, and comparisons that steer loops.
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import Data.Array.Unboxed (UArray, listArray, (!))
import Text.Printf (printf)

newton :: Double -> Double
newton x = go 1.0 (0 :: Int)
  where
    go !g !i
      | i >= 50 || abs (g * g - x) < 1.0e-12 = g
      | otherwise = go ((g + x / g) / 2) (i + 1)

integrateSin :: Double -> Double -> Int -> Double
integrateSin a b n = h * (sin a / 2 + go 1 0 + sin b / 2)
  where
    h = (b - a) / fromIntegral n
    go !k !s
      | k >= n = s
      | otherwise = go (k + 1) (s + sin (a + fromIntegral k * h))

samples :: UArray Int Double
samples = listArray (0, 5) [2.5, -1.25, 3.75, 0.5, 10.0, -4.0]

stats :: UArray Int Double -> (Double, Double)
stats xs = (m, v)
  where
    n = 6
    m = sum [xs ! i | i <- [0 .. n - 1]] / fromIntegral n
    v = sum [(xs ! i - m) * (xs ! i - m) | i <- [0 .. n - 1]] / fromIntegral n

main :: IO ()
main = do
  printf "newton 2 = %.12f\n" (newton 2)
  printf "newton 1e6 = %.6f\n" (newton 1e6)
  printf "integral of sin over [0, pi] = %.6f\n" (integrateSin 0 pi 1000)
  let (m, v) = stats samples
  printf "mean = %.4f, variance = %.4f\n" m v
  printf "truncate (-2.75) = %d, negate 7 / 2 = %.1f\n" (truncate (-2.75 :: Double) :: Int) (negate (fromIntegral (7 :: Int)) / 2 :: Double)
  let f = realToFrac (newton 2) :: Float
  printf "as Float: %.7f, squared: %.7f\n" f (f * f)
