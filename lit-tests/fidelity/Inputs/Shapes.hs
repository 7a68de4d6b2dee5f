-- Shapes with a type class; the polygon's area refuses degenerate polygons.
module Shapes (Shape (..), Circle (..), Polygon (..)) where

class Shape a where
  area :: a -> Double
  describe :: a -> String

newtype Circle = Circle Double

newtype Polygon = Polygon [(Double, Double)]

instance Shape Circle where
  area (Circle r) = pi * r * r
  describe (Circle r) = "circle of radius " ++ show r

instance Shape Polygon where
  area (Polygon ps)
    | length ps < 3 = error ("area: degenerate polygon " ++ show ps)
    | otherwise = abs (shoelace (ps ++ take 1 ps)) / 2
    where
      shoelace ((x1, y1) : rest@((x2, y2) : _)) = x1 * y2 - x2 * y1 + shoelace rest
      shoelace _ = 0
  describe (Polygon ps) = show (length ps) ++ "-gon"
