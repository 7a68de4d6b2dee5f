{-# LANGUAGE BangPatterns #-}
-- Split.hs's two hot functions in a module that exports neither (Hidden.hs).
module Hot (run) where

{-# NOINLINE hotA #-}
hotA :: Int -> Int
hotA n = go 0 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go (acc + (i * i) `mod` 7) (i + 1)

{-# NOINLINE hotB #-}
hotB :: Int -> Int
hotB n = go 0 0
  where
    go !acc i
      | i >= n = acc
      | otherwise = go (acc + (i * i) `mod` 7) (i + 1)

run :: Int -> Int
run r = loop r 0
  where
    loop :: Int -> Int -> Int
    loop 0 !acc = acc
    loop k !acc = loop (k - 1) (acc + hotA (3000 + k `mod` 3) + hotB (1000 + k `mod` 3))
