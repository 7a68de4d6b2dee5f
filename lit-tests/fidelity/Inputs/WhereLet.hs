{-# LANGUAGE BangPatterns #-}
-- Sum key=value settings (the arguments; those that begin with # are comments): a
-- where-bound loop, a where-bound parser with a let-bound helper for its errors; the
-- line without '=' fails.
import Data.Char (isSpace)
import System.Environment

sumSettings :: [String] -> Int
sumSettings ls = go 0 (filter (not . isComment . snd) (zip [1 :: Int ..] ls))
  where
    isComment l = take 1 l == "#"

    go !acc [] = acc
    go !acc ((n, l) : rest) = go (acc + parseValue n l) rest

    parseValue n l =
      let bad why = error ("line " ++ show n ++ ": " ++ why ++ ": " ++ show l)
       in case break (== '=') l of
            (k, '=' : v)
              | all isSpace k -> bad "no key"
              | otherwise -> read v
            _ -> bad "no '='"

main :: IO ()
main = do
  args <- getArgs
  print (sumSettings args)
