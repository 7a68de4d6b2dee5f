-- An inventory kept in a binary search tree: algebraic data types, case analysis on
-- nested patterns, strict fields, Maybe and Either, and a small expression language.
module Main (main) where

import Data.Maybe (fromMaybe, mapMaybe)

data Tree k v = Tip | Bin !Int (Tree k v) k v (Tree k v)
  deriving Show

size :: Tree k v -> Int
size Tip = 0
size (Bin n _ _ _ _) = n

bin :: Tree k v -> k -> v -> Tree k v -> Tree k v
bin l k v r = Bin (size l + size r + 1) l k v r

insertWith :: Ord k => (v -> v -> v) -> k -> v -> Tree k v -> Tree k v
insertWith _ k v Tip = bin Tip k v Tip
insertWith f k v (Bin n l k' v' r) = case compare k k' of
  LT -> bin (insertWith f k v l) k' v' r
  GT -> bin l k' v' (insertWith f k v r)
  EQ -> Bin n l k (f v v') r

lookupKey :: Ord k => k -> Tree k v -> Maybe v
lookupKey _ Tip = Nothing
lookupKey k (Bin _ l k' v r)
  | k < k' = lookupKey k l
  | k > k' = lookupKey k r
  | otherwise = Just v

toAscList :: Tree k v -> [(k, v)]
toAscList t = go t []
  where
    go Tip acc = acc
    go (Bin _ l k v r) acc = go l ((k, v) : go r acc)

height :: Tree k v -> Int
height Tip = 0
height (Bin _ l _ _ r) = 1 + max (height l) (height r)

-- The smallest key and the tree without it.
minView :: Tree k v -> Maybe ((k, v), Tree k v)
minView Tip = Nothing
minView (Bin _ Tip k v r) = Just ((k, v), r)
minView (Bin _ l k v r) = case minView l of
  Just (kv, l') -> Just (kv, bin l' k v r)
  Nothing -> Nothing

data Item = Tool String | Part !Int | Bulk { unit :: String, grams :: !Int }
  deriving (Show, Eq)

weight :: Item -> Int
weight item = case item of
  Tool name | length name > 6 -> 900
            | otherwise -> 400
  Part n -> 15 * n
  Bulk { grams = g } -> g

data Expr = Lit Int | Var String | Add Expr Expr | Div Expr Expr | Neg Expr

eval :: (String -> Maybe Int) -> Expr -> Either String Int
eval env = go
  where
    go (Lit n) = Right n
    go (Var x) = maybe (Left ("unbound " ++ x)) Right (env x)
    go (Add a b) = (+) <$> go a <*> go b
    go (Neg (Neg e)) = go e
    go (Neg e) = negate <$> go e
    go (Div a b) = do
      x <- go a
      y <- go b
      if y == 0 then Left "divide by zero" else Right (x `div` y)

main :: IO ()
main = do
  let stock = foldr (\(k, n) t -> insertWith (+) k n t) Tip
        [("bolt", 40), ("nut", 25), ("washer", 100), ("bolt", 2), ("gear", 3), ("axle", 1 :: Int)]
  print (toAscList stock)
  print (size stock, height stock)
  print (map (`lookupKey` stock) ["nut", "spring", "bolt"])
  print (fmap fst (minView stock), fmap (size . snd) (minView stock))
  print (map weight [Tool "hammer", Tool "screwdriver", Part 12, Bulk "flour" 2500])
  print (Bulk "rice" 1000 == Bulk "rice" 1000, Part 3)
  let env x = lookupKey x stock
  print (map (eval env)
    [ Add (Var "bolt") (Neg (Neg (Lit 8)))
    , Div (Var "washer") (Add (Var "gear") (Neg (Lit 3)))
    , Add (Lit 1) (Var "spring")
    , Div (Lit 100) (Var "nut") ])
  print (mapMaybe (`lookupKey` stock) ["axle", "cog", "gear"], fromMaybe 0 (lookupKey "cog" stock))
