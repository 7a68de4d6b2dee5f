-- Ship orders (name:quantity arguments) one after the other with mapM_; an order of
-- no items cannot be shipped.
import System.Environment
import System.IO.Error

data Order = Order {item :: String, quantity :: Int}

parseOrder :: String -> Order
parseOrder s = case break (== ':') s of
  (name, ':' : q) -> Order name (read q)
  (name, _) -> Order name 1

label :: Order -> String
label (Order name q) = show q ++ " x " ++ name

ship :: Order -> IO ()
ship order
  | quantity order <= 0 = ioError (userError ("cannot ship " ++ item order))
  | otherwise = putStrLn ("shipped " ++ label order)

main :: IO ()
main = do
  orders <- map parseOrder <$> getArgs
  mapM_ ship orders
