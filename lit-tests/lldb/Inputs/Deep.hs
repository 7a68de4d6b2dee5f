module Main (main) where

-- Not a tail call: each level waits on the Cmm stack for the one below it.
down :: Int -> Int
down 0 = bottom 0
down n = 1 + down (n - 1)

main :: IO ()
main = print (down depth)

-- From C (deep_env.c, deep_threads.c): how deep to go, and what to do there.
foreign import ccall "deep_depth" depth :: Int
foreign import ccall "deep_bottom" bottom :: Int -> Int
