#!/usr/bin/env bash
# demo.sh — install the dependencies, build strobe, and show the tick scopes of a
# real GHC dump: every scope, its parent and its best source note.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-debian.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target strobec >/dev/null

set -x
build/strobec --emit=scopes examples/fib_ack/fib_ack.dump-cmm
