-- N-body: five planets, symplectic Euler steps on a mutable array of Doubles
-- (bench/instrument).  Each body is 7 Doubles: x y z vx vy vz mass.
module Main (main) where

import Data.Array.Base (unsafeRead, unsafeWrite)
import Data.Array.IO (IOUArray, newListArray)
import Text.Printf (printf)

type Bodies = IOUArray Int Double

dt :: Double
dt = 0.01

get :: Bodies -> Int -> Int -> IO Double
get bs i k = unsafeRead bs (7 * i + k)

add :: Bodies -> Int -> Int -> Double -> IO ()
add bs i k d = get bs i k >>= unsafeWrite bs (7 * i + k) . (+ d)

kick :: Bodies -> Int -> Double -> Double -> Double -> Double -> IO ()
kick bs i s dx dy dz = do
  add bs i 3 (s * dx)
  add bs i 4 (s * dy)
  add bs i 5 (s * dz)

interact :: Bodies -> Int -> Int -> IO ()
interact bs i j
  | j >= 5    = return ()
  | otherwise = do
      dx <- (-) <$> get bs i 0 <*> get bs j 0
      dy <- (-) <$> get bs i 1 <*> get bs j 1
      dz <- (-) <$> get bs i 2 <*> get bs j 2
      let d2  = dx * dx + dy * dy + dz * dz
          mag = dt / (d2 * sqrt d2)
      mi <- get bs i 6
      mj <- get bs j 6
      kick bs i (negate (mj * mag)) dx dy dz
      kick bs j (mi * mag) dx dy dz
      interact bs i (j + 1)

advance :: Bodies -> Int -> IO ()
advance bs i
  | i >= 5    = return ()
  | otherwise = interact bs i (i + 1) >> advance bs (i + 1)

move :: Bodies -> Int -> IO ()
move bs i
  | i >= 5    = return ()
  | otherwise = do
      get bs i 3 >>= add bs i 0 . (dt *)
      get bs i 4 >>= add bs i 1 . (dt *)
      get bs i 5 >>= add bs i 2 . (dt *)
      move bs (i + 1)

offset :: Bodies -> Int -> Double -> Double -> Double -> IO ()
offset bs i px py pz
  | i >= 5    = do
      m <- get bs 0 6
      mapM_ (\(k, p) -> unsafeWrite bs k (negate p / m)) [(3, px), (4, py), (5, pz)]
  | otherwise = do
      m <- get bs i 6
      [vx, vy, vz] <- mapM (get bs i) [3, 4, 5]
      offset bs (i + 1) (px + vx * m) (py + vy * m) (pz + vz * m)

energy :: Bodies -> Int -> Double -> IO Double
energy bs i e
  | i >= 5    = return e
  | otherwise = do
      m <- get bs i 6
      [vx, vy, vz] <- mapM (get bs i) [3, 4, 5]
      p <- potential bs i (i + 1) 0
      energy bs (i + 1) (e + 0.5 * m * (vx * vx + vy * vy + vz * vz) - p)

potential :: Bodies -> Int -> Int -> Double -> IO Double
potential bs i j acc
  | j >= 5    = return acc
  | otherwise = do
      [dx, dy, dz] <- mapM (\k -> (-) <$> get bs i k <*> get bs j k) [0, 1, 2]
      mi <- get bs i 6
      mj <- get bs j 6
      potential bs i (j + 1) (acc + mi * mj / sqrt (dx * dx + dy * dy + dz * dz))

steps :: Bodies -> Int -> IO ()
steps bs n
  | n == 0    = return ()
  | otherwise = advance bs 0 >> move bs 0 >> steps bs (n - 1)

main :: IO ()
main = do
  bs <- newListArray (0, 34) planets
  offset bs 0 0 0 0
  printf "%.9f\n" =<< energy bs 0 0
  steps bs 2000000
  printf "%.9f\n" =<< energy bs 0 0

planets :: [Double]
planets = concat [sun, jupiter, saturn, uranus, neptune]
  where
    solarMass = 4 * pi * pi
    year = 365.24
    planet [x, y, z, vx, vy, vz, m] = [x, y, z, vx * year, vy * year, vz * year, m * solarMass]
    sun = [0, 0, 0, 0, 0, 0, solarMass]
    jupiter = planet [4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01, 1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05, 9.54791938424326609e-04]
    saturn = planet [8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01, -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05, 2.85885980666130812e-04]
    uranus = planet [1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01, 2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05, 4.36624404335156298e-05]
    neptune = planet [1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01, 2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05, 5.15138902046611451e-05]
