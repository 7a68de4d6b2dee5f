# stored-dumps.sh STROBEC PACKAGE_MAP CORPUS OUTDIR: the stored corpus dumps (native raw
# Cmm and the -fllvm pipeline's Cmm, O0 and O1) lowered with the package map, linked by
# ghc with GHC's libraries: each program prints its expected output and exit status.
set -eu
strobec=$1 map=$2 corpus=$3 out=$4
rm -rf "$out" && mkdir -p "$out"
export LC_ALL=C.UTF-8
for p in adt_tree classes fib_ack hof_lists ioref loops; do
  for o in O0 O1; do
    for dump in "$o/$p.dump-cmm-raw" "$o/llvm-backend/$p.dump-cmm"; do
      obj="$out/$p-$o-$(basename "$(dirname "$dump")").o"
      "$strobec" -w "--package-map=$map" "$corpus/$p/$dump" -o "$obj"
      ghc "$obj" -o "$obj.prog" > "$obj.link.log"
      set +e
      "$obj.prog" > "$obj.stdout"
      status=$?
      set -e
      cmp "$obj.stdout" "$corpus/$p/expected_stdout.txt"
      test "$status" -eq "$(cat "$corpus/$p/expected_exitcode.txt")"
      echo "ok $p/$dump"
    done
  done
done
