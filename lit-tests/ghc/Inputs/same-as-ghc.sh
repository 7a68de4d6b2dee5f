#!/bin/sh
# same-as-ghc.sh STROBE_GHC SRCDIR MAIN OUT [ghc options] [-- program arguments and +RTS]
# Builds SRCDIR/MAIN with ghc and with strobe-ghc, the same options, from SRCDIR (so
# that both see the same relative paths), runs both with the same arguments, and
# compares standard output, standard error and exit status.  Both executables are
# called `prog` (GHC's messages name the program).  Prints "same as ghc" if all agree.
set -eu
strobe_ghc=$1 src=$2 main=$3 out=$4
shift 4
opts=
while [ $# -gt 0 ] && [ "$1" != -- ]; do opts="$opts '$1'"; shift; done
[ $# -gt 0 ] && shift
rm -rf "$out" && mkdir -p "$out/ghc" "$out/strobe"
(cd "$src" && eval "ghc -v0 $opts -outputdir \"$out/ghc/o\" $main -o \"$out/ghc/prog\"")
(cd "$src" && eval "\"$strobe_ghc\" -v0 $opts -outputdir \"$out/strobe/o\" $main -o \"$out/strobe/prog\"")
for b in ghc strobe; do
  set +e
  (cd "$out/$b" && LC_ALL=C.UTF-8 ./prog "$@" > stdout 2> stderr; echo $? > status)
  set -e
done
for f in stdout stderr status; do diff "$out/ghc/$f" "$out/strobe/$f"; done
echo "same as ghc"
