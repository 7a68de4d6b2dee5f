-- The type class, in a module of its own: its instances live in other modules.
module Shapes.Class
  ( Shape (..)
  , describe
  ) where

class Shape a where
  name :: a -> String
  area :: a -> Double
  perimeter :: a -> Double
  -- A default method, which some instances override.
  corners :: a -> Int
  corners _ = 0

describe :: Shape a => a -> String
describe s =
  name s ++ ": area " ++ show2 (area s) ++ ", perimeter " ++ show2 (perimeter s)
    ++ ", " ++ show (corners s) ++ " corners"

-- Two decimals, without Text.Printf.
show2 :: Double -> String
show2 x =
  let cents = round (x * 100) :: Integer
      (whole, frac) = abs cents `divMod` 100
      sign = if cents < 0 then "-" else ""
  in sign ++ show whole ++ "." ++ (if frac < 10 then "0" else "") ++ show frac
