-- A module with data constructors (their workers' info tables are local in GHC's
-- objects) and instances for tuples (`$fSize(,,)`: tuples inside symbol names).
module Cell (Cell (..), Size (..), grid, sameTriple, sizes, total) where

data Cell = Cell !Int Int | Wall | Int :+: Int
  deriving (Eq, Show)

-- Two methods: the dictionary is a constructor (C:Size), not a newtype of the method.
class Size a where
  size :: a -> Int
  label :: a -> String
  label x = "size " ++ show (size x)

instance Size Cell where
  size (Cell a b) = a + b
  size Wall = 0
  size (a :+: b) = a * b

instance Size Int where
  size = id
  label n = "int " ++ show n

instance (Size a, Size b) => Size (a, b) where
  size (a, b) = size a + size b

instance (Size a, Size b, Size c) => Size (a, b, c) where
  size (a, b, c) = size a + size b + size c

grid :: Int -> [Cell]
grid n = [if even i then Cell i (i * i) else if i `mod` 3 == 0 then Wall else i :+: 2 | i <- [1 .. n]]

{-# NOINLINE sameTriple #-}
sameTriple :: (Int, Cell, Bool) -> (Int, Cell, Bool) -> Bool
sameTriple = (==)

total :: [(Cell, Int, Cell)] -> Int
total = sum . map size

-- Polymorphic and not inlined: a caller in another module builds the dictionary, with
-- `$fSize(,,)` (symbol Cell_zdfSizzeZLz2cUz2cUZR_…), and passes it.
{-# NOINLINE sizes #-}
sizes :: Size a => [a] -> [Int]
sizes = map size
