-- The instances, across a module boundary from the class, and an existential box.
{-# LANGUAGE ExistentialQuantification #-}
module Shapes.Types
  ( Circle (..)
  , Rect (..)
  , Triangle (..)
  , AnyShape (..)
  , triangle
  ) where

import Control.Exception (ArithException (..), throw)
import Shapes.Class

newtype Circle = Circle Double

data Rect = Rect Double Double

data Triangle = Triangle Double Double Double

data AnyShape = forall s. Shape s => AnyShape s

instance Shape Circle where
  name _ = "circle"
  area (Circle r) = pi * r * r
  perimeter (Circle r) = 2 * pi * r

instance Shape Rect where
  name (Rect w h) | w == h = "square"
                  | otherwise = "rectangle"
  area (Rect w h) = w * h
  perimeter (Rect w h) = 2 * (w + h)
  corners _ = 4

instance Shape Triangle where
  name _ = "triangle"
  area (Triangle a b c) = let s = (a + b + c) / 2 in sqrt (s * (s - a) * (s - b) * (s - c))
  perimeter (Triangle a b c) = a + b + c
  corners _ = 3

instance Shape AnyShape where
  name (AnyShape s) = name s
  area (AnyShape s) = area s
  perimeter (AnyShape s) = perimeter s
  corners (AnyShape s) = corners s

-- A triangle whose sides break the triangle inequality is an exception (a pure throw).
triangle :: Double -> Double -> Double -> Triangle
triangle a b c
  | a + b <= c || a + c <= b || b + c <= a = throw Denormal
  | otherwise = Triangle a b c
