#!/bin/sh
# corpus.sh STROBE_GHC DIR PROG OUT [ghc and strobe options] [-- +RTS options]
# Builds DIR/PROG.hs with strobe-ghc (from DIR, so that the dump lands in strobe-ghc's
# own directory), runs it, and checks that it prints what GHC's own build at the same
# level prints (DIR/O0/PROG or DIR/O1/PROG, which the build made: corpus/README.md) and
# exits with its status, and that its one module is strobe's object (its DWARF's
# producer is "strobe", and none is GHC's).  Prints "PROG ok" or why not.  When
# strobec refuses the module (an ambiguous bitwise expression), strobe-ghc warns and
# keeps GHC's object: then the one compile unit must be GHC's, and it prints
# "PROG ok, GHC's object".
set -eu
strobe_ghc=$1 dir=$2 prog=$3 out=$4
shift 4
opts= level=O0
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in -O | -O[1-9]) level=O1 ;; -O0) level=O0 ;; esac
  opts="$opts '$1'"
  shift
done
[ $# -gt 0 ] && shift
rm -rf "$out" && mkdir -p "$out"
set +e
LC_ALL=C.UTF-8 "$dir/$level/$prog" > "$out/expected_stdout"
echo $? > "$out/expected_status"
set -e
test -s "$out/expected_stdout"
(cd "$dir" && eval "\"$strobe_ghc\" -v0 $opts -outputdir \"$out/o\" $prog.hs -o \"$out/$prog\"") 2> "$out/build.log"
cat "$out/build.log" >&2
set +e
# GHC encodes stdout by the locale (hof_lists prints non-ASCII text).
LC_ALL=C.UTF-8 "$out/$prog" "$@" > "$out/stdout" 2> "$out/stderr"
echo $? > "$out/status"
set -e
diff "$out/expected_stdout" "$out/stdout"
diff "$out/expected_status" "$out/status"
llvm-dwarfdump --debug-info "$out/$prog" > "$out/dwarf"
strobe=$(grep -c 'DW_AT_producer.*("strobe")' "$out/dwarf" || true)
ghc=$(grep -c 'DW_AT_producer.*Glasgow' "$out/dwarf" || true)
if grep -q "module Main: strobec refused to lower it; keeping GHC's own object" "$out/build.log"; then
  [ "$strobe" = 0 ] && [ "$ghc" = 1 ] || { echo "$prog: refused, but $strobe units by strobe, $ghc by GHC"; exit 1; }
  echo "$prog ok, GHC's object"
  exit 0
fi
[ "$strobe" -ge 1 ] || { echo "$prog: no compile unit by strobe"; exit 1; }  # more than one: split code generation (strobec --jobs)
[ "$ghc" = 0 ] || { echo "$prog: $ghc compile units by GHC"; exit 1; }
llvm-dwarfdump --debug-line "$out/$prog" | grep -q "name: \"$prog.hs\"" ||
  { echo "$prog: no line table for $prog.hs"; exit 1; }
echo "$prog ok"
