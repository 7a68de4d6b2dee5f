{-# LANGUAGE FlexibleInstances, MultiParamTypeClasses, UnboxedTuples, ConstraintKinds,
             GADTs, KindSignatures, DataKinds #-}
-- Names that hold GHC's built-in syntax (lowering/lex.c, Note [Built-in syntax in
-- names]): an instance's dictionary names its class and its arguments' type
-- constructors ($fSize[], $fPair[][] as in ShellCheck's $fRegexContextRegex[][],
-- $fPair()[], $fPair(,)[], $fPair[](,,)), Typeable representations name theirs
-- (GHC.Types.$tc(##), $tc(#,#), GHC.Tuple.$tc'(,)), and a constraint tuple's
-- dictionary is GHC.Classes.C:(%,%).
module Brackets
  ( Size (..), Pair (..), Unboxed (..), Dict (..), unboxed, showEq, dicts, reps
  ) where

import Data.Kind (Constraint)
import Data.Proxy (Proxy (..))
import Data.Typeable (TypeRep, typeRep)

class Size a where
  size :: a -> Int

instance Size [[a]] where
  size = sum . map length

instance Size ((), [()]) where
  size (_, xs) = 1 + length xs

instance Size ([a], [b]) where
  size (a, b) = length a * 10 + length b

instance Size (a, b, c) where
  size _ = 3

instance Size () where
  size _ = 0

class Pair a b where
  pair :: a -> b -> Int

instance Pair [a] [b] where
  pair a b = length a * length b

instance Pair () [()] where
  pair _ b = 100 + length b

instance Pair (a, b) [(a, b)] where
  pair _ b = 200 + length b

instance Pair [[a]] (a, [b], ()) where
  pair a (_, b, _) = length a + length b

-- Fields of unboxed types: their Typeable representations are GHC.Types.$tc(##) and
-- GHC.Types.$tc(#,#).
data Unboxed = Unit (# #) Int | Two (# Int, Int #)

unboxed :: Unboxed -> Int
unboxed (Unit _ n) = n
unboxed (Two (# a, b #)) = a + b

data Dict (c :: Constraint) where
  Dict :: c => Dict c

showEq :: Dict (Show a, Eq a) -> a -> a -> String
showEq Dict x y = if x == y then show x else show x ++ "/=" ++ show y

dicts :: (Dict (Show Int, Eq Int), Dict (() :: Constraint))
dicts = (Dict, Dict)

reps :: [TypeRep]
reps = [ typeRep (Proxy :: Proxy '( 'True, 'False)), typeRep (Proxy :: Proxy ((), [()]))
       , typeRep (Proxy :: Proxy Unboxed) ]
