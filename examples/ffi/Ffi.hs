-- Calling C: printf with several arguments (ints, a string, doubles),
-- putchar, libm (cos, pow, sqrt, sqrtf), C functions called through
-- pointers, and the runtime's strobe_print_int.  (String literals stand for
-- the CStrings that C wants.)
{-# LANGUAGE ForeignFunctionInterface #-}
module Main (main) where

import Foreign.C.String (CString)
import Foreign.C.Types (CInt (..))
import Foreign.Ptr (FunPtr)

foreign import ccall unsafe "printf" printfIII :: CString -> Int -> Int -> Int -> IO CInt
foreign import ccall unsafe "printf" printfDD :: CString -> Double -> Double -> IO CInt
foreign import ccall unsafe "printf" printfID :: CString -> Int -> Double -> IO CInt
foreign import ccall unsafe "putchar" c_putchar :: CInt -> IO CInt
foreign import ccall unsafe "sqrt" c_sqrt :: Double -> Double
foreign import ccall unsafe "cos" c_cos :: Double -> Double
foreign import ccall unsafe "pow" c_pow :: Double -> Double -> Double
foreign import ccall unsafe "sqrtf" c_sqrtf :: Float -> Float
foreign import ccall unsafe "dynamic" callD :: FunPtr (Double -> Double) -> Double -> Double
foreign import ccall unsafe "&floor" p_floor :: FunPtr (Double -> Double)
foreign import ccall unsafe "&ceil" p_ceil :: FunPtr (Double -> Double)
foreign import ccall unsafe "strobe_print_int" printInt :: Int -> IO ()

hypot :: Double -> Double -> Double
hypot x y = c_sqrt (x * x + y * y)

main :: IO ()
main = do
  _ <- printfIII "%ld + %ld = %ld\n" 40 2 (40 + 2)
  mapM_ (c_putchar . fromIntegral . fromEnum) "strobe\n"
  _ <- printfDD "sqrt 2 = %.6f, hypot 3 4 = %.1f\n" (sqrt 2) (hypot 3 4)
  mapM_ (\k -> printfID "cos(%ld pi/4) = %+.4f\n" k (c_cos (fromIntegral k * pi / 4))) [0 .. 4]
  _ <- printfDD "2^10 = %.0f, sqrtf 2 = %.5f\n" (c_pow 2 10) (realToFrac (c_sqrtf 2))
  mapM_ (\f -> printfDD "%.1f -> %.1f\n" 2.5 (callD f 2.5)) [p_floor, p_ceil]
  printInt (truncate (hypot 5 12) * 1000 - 7)
