-- Count the nodes of a tree (written as nested brackets in the first argument, such
-- as "a(b(c d) e)"): countNode and countForest call each other; a node with an empty
-- name fails.
import Control.Monad (when)
import System.Environment
import System.IO.Error

data Tree = Node String [Tree]

parseForest :: String -> ([Tree], String)
parseForest s = case dropWhile (== ' ') s of
  "" -> ([], "")
  (')' : rest) -> ([], rest)
  s' ->
    let (name, rest) = span (`notElem` " ()") s'
        (kids, rest') = case rest of
          ('(' : r) -> parseForest r
          _ -> ([], rest)
        (more, rest'') = parseForest rest'
     in (Node name kids : more, rest'')

countNode :: Tree -> IO Int
countNode (Node name kids) = do
  when (null name) $ ioError (userError "countNode: a node without a name")
  k <- countForest kids
  return (k + 1)

countForest :: [Tree] -> IO Int
countForest [] = return 0
countForest (t : ts) = do
  a <- countNode t
  b <- countForest ts
  return (a + b)

main :: IO ()
main = do
  [text] <- getArgs
  n <- countForest (fst (parseForest text))
  print n
