#!/bin/sh
# A linker for -pgml: notes that it ran, then links with gcc, with -no-pie as GHC's own
# linker does (GHC 9.4 and later leave it out for a -pgml linker, and GHC's objects,
# as strobe's, are not PIE: plain ghc's link with this script fails without it).
echo "logging-ld ran" >> "$LOGGING_LD"
exec gcc -no-pie "$@"
