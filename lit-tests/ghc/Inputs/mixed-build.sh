# mixed-build.sh STROBEC PACKAGE_MAP OPT OUTDIR SRCDIR MODULE...
#
# GHC compiles the program's modules once (--make -c, with -ddump-cmm-raw): GHC's
# objects and the dumps.  strobec lowers each module's dump.  Each module's two objects
# must have the same symbols (compare-symbols.py).  Then the program is linked by ghc
# from GHC's objects (the reference), and once for every non-empty set of modules taken
# from strobe instead (strobe's module linking against GHC's and the other way round);
# each must print the reference's output and exit with its status.
set -eu
strobec=$1 map=$2 opt=$3 out=$4 src=$5
shift 5
here=$(dirname "$0")
rm -rf "$out" && mkdir -p "$out"
for m in "$@"; do cp "$src/$m.hs" "$out/"; done
cd "$out"
files=$(for m in "$@"; do printf '%s.hs ' "$m"; done)
ghc "-$opt" -g -c -ddump-cmm-raw -ddump-to-file -outputdir ghc $files > ghc.log
for m in "$@"; do
  "$strobec" -w "--package-map=$map" "ghc/$m.dump-cmm-raw" -o "$m.strobe.o"
  printf '%s: ' "$m"
  python3 "$here/compare-symbols.py" "ghc/$m.o" "$m.strobe.o" "ghc/$m.dump-cmm-raw"
done
export LC_ALL=C.UTF-8 # the programs may print Unicode; lit runs without a locale
run() { # run NAME OBJECT...: link, run, keep stdout and status
  name=$1
  shift
  ghc "$@" -o "$name" > "$name.link.log"
  set +e
  "./$name" > "$name.stdout"
  echo $? > "$name.status"
  set -e
}
objs=$(for m in "$@"; do printf 'ghc/%s.o ' "$m"; done)
run reference $objs
n=$#
mask=1
while [ "$mask" -lt $((1 << n)) ]; do
  objs="" from=""
  i=0
  for m in "$@"; do
    if [ $((mask >> i & 1)) -eq 1 ]; then objs="$objs $m.strobe.o" from="$from $m"
    else objs="$objs ghc/$m.o"; fi
    i=$((i + 1))
  done
  run "mix$mask" $objs
  cmp "mix$mask.stdout" reference.stdout
  cmp "mix$mask.status" reference.status
  echo "strobe's$from with GHC's others: same output ($(wc -l < reference.stdout) lines) and exit status $(cat reference.status)"
  mask=$((mask + 1))
done
