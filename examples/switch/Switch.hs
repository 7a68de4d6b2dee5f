-- Multi-way branches: a case on a seven-constructor type (a jump table on
-- the pointer tag) and a little register machine whose dispatch on the
-- opcode is a switch over all Ints.
{-# LANGUAGE BangPatterns, MagicHash #-}
module Main (main) where

import GHC.Exts (Int (I#), indexInt8OffAddr#)
import System.Exit (ExitCode (..), exitWith)
import Text.Printf (printf)

data Day = Sun | Mon | Tue | Wed | Thu | Fri | Sat deriving (Enum)

dayName :: Day -> String
dayName d = case d of
  Sun -> "Sunday"
  Mon -> "Monday"
  Tue -> "Tuesday"
  Wed -> "Wednesday"
  Thu -> "Thursday"
  Fri -> "Friday"
  Sat -> "Saturday"

isWeekend :: Day -> Bool
isWeekend d = case d of { Sun -> True; Sat -> True; _ -> False }

-- One byte per opcode, and an operand byte after 1, 2 and 6:
-- 0 halt, 1 n: acc := n, 2 n: x := n, 3: acc := acc * x, 4: x := x - 1,
-- 5: print acc, 6 t: if x /= 0 then go to t, 7: acc := acc + x.
-- The program prints 1*5, *4, *3, *2, *1, then adds 10 + 9 + ... + 1.
fetch :: Int -> Int
fetch (I# i) = I# (indexInt8OffAddr# "\1\1\2\5\3\5\4\6\4\2\10\7\4\6\11\5\0"# i)

run :: Int -> Int -> Int -> IO Int
run !pc !acc !x = case fetch pc of
  0 -> return acc
  1 -> run (pc + 2) (fetch (pc + 1)) x
  2 -> run (pc + 2) acc (fetch (pc + 1))
  3 -> run (pc + 1) (acc * x) x
  4 -> run (pc + 1) acc (x - 1)
  5 -> print acc >> run (pc + 1) acc x
  6 -> run (if x /= 0 then fetch (pc + 1) else pc + 2) acc x
  7 -> run (pc + 1) (acc + x) x
  op -> ioError (userError ("bad opcode " ++ show op))

main :: IO ()
main = do
  mapM_ (\i -> let d = toEnum (i `rem` 7) in
                 printf "%d: %s%s\n" i (dayName d) (if isWeekend d then " (weekend)" else ""))
        [0 .. 8 :: Int]
  r <- run 0 0 0
  exitWith (ExitFailure r)
