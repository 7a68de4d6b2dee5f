-- An inventory (a Data.Map) built from item:count:unit arguments; insertWith merges
-- the counts of an item given twice, and refuses to add different units.
import Data.List (foldl')
import qualified Data.Map.Strict as Map
import System.Environment

data Stock = Stock Int String deriving Show

merge :: Stock -> Stock -> Stock
merge (Stock a unit) (Stock b unit')
  | unit == unit' = Stock (a + b) unit
  | otherwise = error ("merge: cannot add " ++ unit ++ " to " ++ unit')

parseEntry :: String -> (String, Stock)
parseEntry s = case splitOn ':' s of
  [name, n, unit] -> (name, Stock (read n) unit)
  _ -> error ("parseEntry: " ++ s)
  where
    splitOn c str = case break (== c) str of
      (a, _ : rest) -> a : splitOn c rest
      (a, []) -> [a]

inventory :: [String] -> Map.Map String Stock
inventory entries = foldl' add Map.empty entries
  where
    add m s = let (name, stock) = parseEntry s in Map.insertWith merge name stock m

main :: IO ()
main = do
  args <- getArgs
  mapM_ print (Map.toList (inventory args))
