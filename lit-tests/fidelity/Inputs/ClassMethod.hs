-- The total area of polygons read from the arguments (x,y pairs, one polygon per
-- argument): the class method of another module fails on the degenerate one.
import Shapes
import System.Environment

parsePolygon :: String -> Polygon
parsePolygon s = Polygon (pairs (map read (words (map comma s))))
  where
    comma ',' = ' '
    comma c = c
    pairs (x : y : rest) = (x, y) : pairs rest
    pairs _ = []

totalArea :: Shape a => [a] -> Double
totalArea shapes = sum (map area shapes)

main :: IO ()
main = do
  args <- getArgs
  let polygons = map parsePolygon args
  mapM_ (putStrLn . describe) polygons
  print (totalArea polygons)
