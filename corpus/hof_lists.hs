-- Higher-order functions over lists: base's map, filter, folds, zipWith, iterate and
-- sortBy; closures over free variables, partial application and sections, function
-- composition, laziness, and strings with escapes.
module Main (main) where

import Data.Char (isDigit, isSpace, toLower, chr, ord)
import Data.List (foldl', sortBy, groupBy)
import Data.Ord (comparing)
import Data.Function (on)

pipeline :: [Int -> Int] -> Int -> Int
pipeline = foldl' (flip (.)) id

scale :: Int -> Int -> Int
scale k = (* k)

-- Each closure keeps its own n.
offsets :: [Int] -> [Int -> Int]
offsets = map (\n x -> x + n)

runLengths :: String -> [(Char, Int)]
runLengths = map (\g -> (head g, length g)) . groupBy (==)

tokens :: String -> [String]
tokens s = case dropWhile isSpace s of
  "" -> []
  s' -> let (w, rest) = break isSpace s' in w : tokens rest

average :: [Double] -> Double
average xs = total / fromIntegral count
  where
    (total, count) = foldr step (0, 0 :: Int) xs
    step x (t, c) = (t + x, c + 1)

rot13 :: String -> String
rot13 = map rot
  where
    rot c
      | c >= 'a' && c <= 'z' = shift 'a' c
      | c >= 'A' && c <= 'Z' = shift 'A' c
      | otherwise = c
    shift base c = chr (ord base + (ord c - ord base + 13) `mod` 26)

main :: IO ()
main = do
  print (pipeline [(+ 3), scale 4, subtract 1] 10)
  print (zipWith ($) (offsets [1, 10, 100]) [5, 6, 7])
  print (takeWhile (< 200) (iterate (\x -> 2 * x + 1) 1))
  let primes = sieve [2 ..] where sieve (p : xs) = p : sieve [x | x <- xs, x `mod` p /= 0]
  print (take 12 primes)
  print (runLengths "aaabccddddde")
  let ws = tokens "  the quick  brown fox   jumps over the lazy dog "
  print (sortBy (comparing length <> compare) ws)
  print (map (map toLower) (filter (any isDigit) (words "R2D2 and C3PO met BB8")))
  print (average [2.5, 3.5, 9.0], sum (map fromIntegral [1 .. 10 :: Int]) / 10 :: Double)
  putStrLn (rot13 "Uryyb, Jbeyq!")
  print (foldr (\x acc -> x : take 2 acc) [] [1 .. 10 :: Int])
  print ((zip3 <*> tail <*> (tail . tail)) "abcde")
  print (((==) `on` map toLower) "GHC" "ghc", uncurry (+) (3, 4 :: Int))
  putStrLn "tab:\there, quote:\" backslash:\\ e-acute:\233 arrow:\x2192."
  print "tab:\there, quote:\" newline:\n, e-acute:\233 arrow:\x2192 nul:\0 bell:\a."
