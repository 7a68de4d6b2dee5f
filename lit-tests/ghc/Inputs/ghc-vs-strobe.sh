# ghc-vs-strobe.sh STROBEC PACKAGE_MAP CORPUS_DIR PROGRAM OPT OUTDIR
#
# One GHC compile of the corpus program gives GHC's object and the dump together
# (-ddump-cmm-raw -ddump-to-file); strobec lowers that dump.  Then: the two objects'
# symbols compare equal (compare-symbols.py), and strobe's object linked by ghc with
# GHC's libraries prints what GHC's object, linked the same way, prints, and exits with
# the same status.
# A dump strobec refuses (status 2: an ambiguous bitwise expression) is reported as such.
set -eu
strobec=$1 map=$2 corpus=$3 p=$4 opt=$5 out=$6
here=$(dirname "$0")
rm -rf "$out" && mkdir -p "$out"
cp "$corpus/$p/$p.hs" "$out/"
cd "$out"
ghc "-$opt" -g -c -ddump-cmm-raw -ddump-to-file -outputdir ghc "$p.hs" > ghc.log
status=0
"$strobec" -w "--package-map=$map" "--ghc-version=$(ghc --numeric-version)" "ghc/$p.dump-cmm-raw" -o strobe.o 2> strobec.log || status=$?
if [ "$status" -eq 2 ]; then
  echo "$p -$opt: strobec refuses the dump: $(grep -m1 'error:' strobec.log)"
  exit 0
fi
cat strobec.log >&2
test "$status" -eq 0
python3 "$here/compare-symbols.py" "ghc/Main.o" strobe.o "ghc/$p.dump-cmm-raw"
ghc strobe.o -o prog > link.log
ghc ghc/Main.o -o ghc-prog > ghc-link.log
set +e
export LC_ALL=C.UTF-8  # the programs print Unicode; lit runs without a locale
./ghc-prog > expected.txt
expected=$?
./prog > stdout.txt
status=$?
set -e
test -s expected.txt
cmp stdout.txt expected.txt
test "$status" -eq "$expected"
echo "$p -$opt: strobe's object linked by ghc ran as GHC's build (exit $status)"
