#!/usr/bin/env bash
# demo.sh — install the dependencies, build strobe, then show its main job on bundled
# examples: the tick scopes of a real GHC dump, and a Cmm program built by strobe
# (lower, link, run) whose crash lldb shows at its Haskell source line.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-debian.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "== The tick scopes of fact in GHC's -g dump of examples/fib_ack/fib_ack.hs"
step build/strobec --emit=scopes examples/fib_ack/fib_ack.dump-cmm -o "$tmp/scopes.txt"
sed -n '1,/^group 2/p' "$tmp/scopes.txt" | sed '$d'

echo
echo "== examples/crash: lower to an object with Haskell DWARF, link with libstrobe-rt, run"
step build/strobec --entry=Main.main_entry -O0 examples/crash/crash.cmm -o "$tmp/crash.o"
step clang-22 "$tmp/crash.o" build/rts/libstrobe-rt-standalone.a -o "$tmp/crash"
step sh -c "ulimit -c 0; $tmp/crash; echo \"exit status \$?\"" || true

echo
echo "== lldb at the crash: the frame is a Haskell function at its source line"
step lldb-22 -b -o run -k bt -k quit "$tmp/crash" < /dev/null 2>&1 | grep -av "^(lldb) target\|^Current executable\|session id" || true
echo
echo "(level3, level2, level1 and main wait as return points on the Cmm stack, not as"
echo " machine frames, so bt cannot show them: that is what strobe's dynamic stack is for.)"
