module Main (main) where

-- A worker with four unboxed arguments and a long name: GHC's header comment
-- `//  [R5, R4, R3, R2]` runs past its ribbon and wraps.
{-# NOINLINE accumulateTheWeightedSumOfFourCountersUntilTheFirstOneRunsOut #-}
accumulateTheWeightedSumOfFourCountersUntilTheFirstOneRunsOut :: Int -> Int -> Int -> Int -> Int
accumulateTheWeightedSumOfFourCountersUntilTheFirstOneRunsOut a b c d
  | a <= 0 = b + c + d
  | otherwise = accumulateTheWeightedSumOfFourCountersUntilTheFirstOneRunsOut (a - 1) (b + c) (c * 3 + d) (d + a)

-- A name longer than GHC's line: every register on a line of its own.
{-# NOINLINE thisFunctionNameIsSoLongThatTheProcedureHeaderAloneFillsMoreThanAWholeLineOfGhcsOutputAtOneHundredColumns #-}
thisFunctionNameIsSoLongThatTheProcedureHeaderAloneFillsMoreThanAWholeLineOfGhcsOutputAtOneHundredColumns :: Int -> Int -> Int -> Int
thisFunctionNameIsSoLongThatTheProcedureHeaderAloneFillsMoreThanAWholeLineOfGhcsOutputAtOneHundredColumns x y z
  | x <= 0 = y * z
  | otherwise = thisFunctionNameIsSoLongThatTheProcedureHeaderAloneFillsMoreThanAWholeLineOfGhcsOutputAtOneHundredColumns (x - 1) (y + z) (z + 1)

-- Doubles too: D1, D2 with R2, R3.
{-# NOINLINE mixTheFloatingPointAndIntegerArgumentsOfThisRatherVerboseFunction #-}
mixTheFloatingPointAndIntegerArgumentsOfThisRatherVerboseFunction :: Int -> Double -> Int -> Double -> Double
mixTheFloatingPointAndIntegerArgumentsOfThisRatherVerboseFunction n x m y
  | n <= 0 = x + y + fromIntegral m
  | otherwise = mixTheFloatingPointAndIntegerArgumentsOfThisRatherVerboseFunction (n - 1) (x * 0.5 + y) (m + n) (y - 1)

main :: IO ()
main = do
  print (accumulateTheWeightedSumOfFourCountersUntilTheFirstOneRunsOut 10 1 2 3)
  print (thisFunctionNameIsSoLongThatTheProcedureHeaderAloneFillsMoreThanAWholeLineOfGhcsOutputAtOneHundredColumns 5 1 2)
  print (mixTheFloatingPointAndIntegerArgumentsOfThisRatherVerboseFunction 7 1.5 2 3.25)
