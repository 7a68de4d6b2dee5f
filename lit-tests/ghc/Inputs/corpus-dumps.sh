# corpus-dumps.sh STROBEC PACKAGE_MAP CORPUS OUTDIR: the corpus dumps (native raw Cmm and
# the -fllvm pipeline's Cmm, O0 and O1) lowered with the package map, linked by ghc with
# GHC's libraries: each program prints what GHC's own build at that level
# (CORPUS/P/Ox/P) prints, and exits with its status.
# A dump strobec refuses (status 2: an ambiguous bitwise expression) prints "refused".
set -eu
strobec=$1 map=$2 corpus=$3 out=$4
rm -rf "$out" && mkdir -p "$out"
export LC_ALL=C.UTF-8
for p in adt_tree classes fib_ack hof_lists ioref loops; do
  for o in O0 O1; do
    set +e
    "$corpus/$p/$o/$p" > "$out/$p-$o.expected"
    expected=$?
    set -e
    test -s "$out/$p-$o.expected"
    for dump in "$o/$p.dump-cmm-raw" "$o/llvm-backend/$p.dump-cmm"; do
      obj="$out/$p-$o-$(basename "$(dirname "$dump")").o"
      status=0
      "$strobec" -w "--package-map=$map" "$corpus/$p/$dump" -o "$obj" 2> "$obj.log" || status=$?
      if [ "$status" -eq 2 ]; then echo "refused $p/$dump"; continue; fi
      cat "$obj.log" >&2
      test "$status" -eq 0
      ghc "$obj" -o "$obj.prog" > "$obj.link.log"
      set +e
      "$obj.prog" > "$obj.stdout"
      status=$?
      set -e
      cmp "$obj.stdout" "$out/$p-$o.expected"
      test "$status" -eq "$expected"
      echo "ok $p/$dump"
    done
  done
done
