import Big

main :: IO ()
main = do
  print (sum (map weigh ts))
  print (maximum ts, minimum ts)
  print (length (filter (uncurry (<)) (zip ts (tail ts))))
