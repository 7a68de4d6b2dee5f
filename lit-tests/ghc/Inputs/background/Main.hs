import Fe (triple)

main :: IO ()
main = print (sum (map triple [1 .. 100]))
