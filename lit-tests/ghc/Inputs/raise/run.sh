#!/bin/sh
# run.sh STROBE_GHC GHC OUT [ghc and strobe options]
# Builds Chain.hs twice, with strobe-ghc (and the options) and with GHC alone, runs
# both in every mode, and checks that strobe's build exits as GHC's and prints GHC's
# standard output and error, once its own `strobe:` lines are taken out of the latter
# (they are kept in OUT/MODE.err, strobe's own standard error).  Prints "MODE status N"
# for each mode.  The environment (STROBE_OPTIONS) reaches both programs.
set -eu
strobe_ghc=$1 ghc=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
cp "$here/Chain.hs" "$out/"
cd "$out"
"$strobe_ghc" -v0 -O1 "$@" -outputdir s Chain.hs -o strobe-chain 2> build.log || { cat build.log; exit 1; }
"$ghc" -v0 -O1 -outputdir g Chain.hs -o chain
for mode in error caught exit throw head finally fork kill; do
  set +e
  ./chain $mode > $mode.ghc.out 2> $mode.ghc.err; ghc_status=$?
  ./strobe-chain $mode > $mode.out 2> $mode.err; status=$?
  set -e
  [ $status = $ghc_status ] || { echo "$mode: exit status $status, GHC's $ghc_status"; exit 1; }
  diff $mode.ghc.out $mode.out
  # the program's name differs: chain, strobe-chain
  grep -v '^strobe: \|^#[0-9]\|^\.\.\. \|^   \.\.\. ' $mode.err | sed 's/^strobe-chain:/chain:/' | diff $mode.ghc.err -
  echo "$mode status $status"
done
