-- A module with a foreign export: GHC merges its object with the export's C stub.
module Fe (triple) where

foreign export ccall triple :: Int -> Int

triple :: Int -> Int
triple x = 3 * x
