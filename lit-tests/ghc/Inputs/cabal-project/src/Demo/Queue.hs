-- A banker's queue and a word count, in the library.
module Demo.Queue
  ( Queue
  , empty
  , push
  , pop
  , wordCounts
  ) where

import qualified Data.Map.Strict as Map

data Queue a = Queue [a] [a]

empty :: Queue a
empty = Queue [] []

push :: a -> Queue a -> Queue a
push x (Queue f b) = Queue f (x : b)

pop :: Queue a -> Maybe (a, Queue a)
pop (Queue [] []) = Nothing
pop (Queue [] b) = pop (Queue (reverse b) [])
pop (Queue (x : f) b) = Just (x, Queue f b)

wordCounts :: String -> Map.Map String Int
wordCounts = Map.fromListWith (+) . map (\w -> (w, 1)) . words
