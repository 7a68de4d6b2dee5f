# ghc-vs-strobe.sh STROBEC PACKAGE_MAP CORPUS_DIR PROGRAM OPT OUTDIR
#
# One GHC compile of the corpus program gives GHC's object and the dump together
# (-ddump-cmm-raw -ddump-to-file); strobec lowers that dump.  Then: the two objects'
# symbols compare equal (compare-symbols.py), and strobe's object linked by ghc with
# GHC's libraries prints the expected output and exits with the expected status.
set -eu
strobec=$1 map=$2 corpus=$3 p=$4 opt=$5 out=$6
here=$(dirname "$0")
rm -rf "$out" && mkdir -p "$out"
cp "$corpus/$p/$p.hs" "$out/"
cd "$out"
ghc "-$opt" -g -c -ddump-cmm-raw -ddump-to-file -outputdir ghc "$p.hs" > ghc.log
"$strobec" -w "--package-map=$map" "ghc/$p.dump-cmm-raw" -o strobe.o
python3 "$here/compare-symbols.py" "ghc/Main.o" strobe.o "ghc/$p.dump-cmm-raw"
ghc strobe.o -o prog > link.log
set +e
export LC_ALL=C.UTF-8  # the programs print Unicode; lit runs without a locale
./prog > stdout.txt
status=$?
set -e
cmp stdout.txt "$corpus/$p/expected_stdout.txt"
test "$status" -eq "$(cat "$corpus/$p/expected_exitcode.txt")"
echo "$p -$opt: strobe's object linked by ghc ran as GHC's build (exit $status)"
