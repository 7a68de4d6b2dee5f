-- Float literals GHC folds at -O1 and prints in its own words: -1e400 becomes
-- -Infinity (`-Infinity :: W64` in expressions, `const -Infinity :: W64;` in static
-- data), 1e400 :: Float becomes `Infinity :: W32`.  The argument keeps the
-- comparisons from being folded away.
module Main (main) where

import System.Environment (getArgs)

negInf :: Double
negInf = -1e400
{-# NOINLINE negInf #-}

posInfF :: Float
posInfF = 1e400
{-# NOINLINE posInfF #-}

negInfF :: Float
negInfF = -1e400
{-# NOINLINE negInfF #-}

negZero :: Double
negZero = -0.0
{-# NOINLINE negZero #-}

main :: IO ()
main = do
  [s] <- getArgs
  let x = read s :: Double
      y = realToFrac x :: Float
  print (x < (-1e400 :: Double), x > 1e400, y < (-1e400 :: Float), y > (1e400 :: Float))
  print (negInf, posInfF, negInfF, negZero, isNegativeZero negZero)
  print (x * 0.0, y * (-0.0), x + (-1.5e-3), y - 2.5e38)
