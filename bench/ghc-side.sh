#!/bin/sh
# ghc-side.sh [ghc options] — ghc with what strobe-ghc adds to GHC's own work (-g and the
# raw Cmm dump of every module), and no strobec: the part of strobe-ghc's build time that
# is GHC's.  A stand-in for strobe-ghc in the build-time benchmarks:
#
#   python3 bench/nofib-conformance.py NOFIB --no-instructions --strobe-ghc bench/ghc-side.sh
#
# Its build time over ghc's is the least strobe-ghc's can be, whatever strobec costs.
# Environment: STROBE_GHC (the ghc to run; default ghc), as strobe-ghc's.
d=$(mktemp -d "${TMPDIR:-/tmp}/ghc-side.XXXXXX") || exit 1
"${STROBE_GHC:-ghc}" "$@" -g -ddump-cmm-raw -ddump-to-file -dumpdir "$d/"
status=$?
rm -rf "$d"
exit $status
