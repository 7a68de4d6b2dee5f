-- Type classes: dictionaries passed to polymorphic code, a superclass, default methods,
-- instances for our own and base's types, an existential collection, and deriving.
{-# LANGUAGE ExistentialQuantification #-}
module Main (main) where

import Data.List (sortOn, intercalate)

class Show a => Priced a where
  price :: a -> Int
  label :: a -> String
  label x = show x ++ " @ " ++ show (price x)

data Fruit = Apple | Pear | Plum
  deriving (Show, Eq, Ord, Enum, Bounded)

data Box = Box { boxName :: String, boxItems :: [Fruit] }
  deriving (Show, Eq)

instance Priced Fruit where
  price f = case f of
    Apple -> 30
    Pear -> 45
    Plum -> 12

instance Priced Box where
  price = sum . map price . boxItems
  label b = boxName b ++ " (" ++ show (length (boxItems b)) ++ " fruits) @ " ++ show (price b)

instance Priced a => Priced (Maybe a) where
  price = maybe 0 price

-- Anything priced, whatever its type.
data Offer = forall a. Priced a => Offer a

instance Show Offer where
  show (Offer a) = "Offer " ++ label a

cheapest :: [Offer] -> Offer
cheapest = foldr1 (\o1 o2 -> if cost o1 <= cost o2 then o1 else o2)
  where cost (Offer a) = price a

-- A monoid of our own, and code polymorphic in it.
newtype MaxPrice = MaxPrice Int deriving (Show, Eq, Ord)

instance Semigroup MaxPrice where
  MaxPrice a <> MaxPrice b = MaxPrice (max a b)

instance Monoid MaxPrice where
  mempty = MaxPrice 0

summarise :: (Priced a, Monoid m) => (Int -> m) -> [a] -> m
summarise f = foldMap (f . price)

data Pair a = Pair a a deriving Show

instance Functor Pair where
  fmap f (Pair x y) = Pair (f x) (f y)

rank :: (Ord b, Priced a) => (a -> b) -> [a] -> [String]
rank key = map label . sortOn key

main :: IO ()
main = do
  let box = Box "mixed" [Apple, Plum, Plum, Pear]
  mapM_ (putStrLn . label) [minBound .. maxBound :: Fruit]
  putStrLn (label box)
  print (price (Just Pear), price (Nothing :: Maybe Box), label (Just Apple))
  let offers = [Offer box, Offer Plum, Offer (Just Apple), Offer (Box "empty" [])]
  print offers
  print (cheapest offers)
  print (summarise MaxPrice [Apple, Pear, Plum], sum (summarise (: []) [box, box]))
  print (fmap price (Pair Apple Plum), fmap succ (Pair Apple Pear))
  putStrLn (intercalate "; " (rank (negate . price) [Pear, Apple, Plum]))
  print (compare Apple Plum, [Apple ..], box == box { boxItems = [] })
