-- The perimeters of shapes read from the arguments ("c 2" a circle, "r 2 3" a
-- rectangle); perimeter uses the circle's field on every shape, so the rectangle fails
-- with GHC's "No match in record selector radius".
import System.Environment

data Shape
  = Circle {radius :: Double}
  | Rect {width :: Double, height :: Double}
  deriving Show

parseShape :: String -> Shape
parseShape s = case words s of
  ["c", r] -> Circle (read r)
  ["r", w, h] -> Rect (read w) (read h)
  _ -> error ("parseShape: " ++ show s)

perimeter :: Shape -> Double
perimeter shape = 2 * pi * radius shape

main :: IO ()
main = do
  shapes <- map parseShape <$> getArgs
  mapM_ (print . perimeter) shapes
