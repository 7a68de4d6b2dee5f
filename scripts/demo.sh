#!/usr/bin/env bash
# demo.sh — install the dependencies, build strobe, then show its main job on bundled
# examples: a real Haskell program (examples/haskell/shapes, three modules) built by
# strobe-ghc, whose output is GHC's own build's and which lldb stops at Haskell lines
# with Haskell frames in bt; the tick scopes of a real GHC dump; and a Cmm program built
# by strobe (lower, link, run) whose crash lldb shows at its Haskell source line.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-debian.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

shapes=examples/haskell/shapes
echo "== $shapes: three modules, a type class across them, Data.Map, IORef, exceptions,"
echo "   forkIO/MVar; built by GHC 9.0.2 alone, and by strobe-ghc (GHC to Cmm, strobec"
echo "   lowers every module, GHC links with its own runtime and libraries)"
step sh -c "cd $shapes && ghc -v0 -O1 -outputdir $tmp/ghc Main.hs -o $tmp/shapes-ghc"
step sh -c "cd $shapes && ../../../build/strobe-ghc -O1 -outputdir $tmp/strobe Main.hs -o $tmp/shapes"
step sh -c "$tmp/shapes > $tmp/strobe.out; echo \"exit status \$?\" >> $tmp/strobe.out; cat $tmp/strobe.out"
"$tmp/shapes-ghc" > "$tmp/ghc.out"; echo "exit status $?" >> "$tmp/ghc.out"
step diff "$tmp/ghc.out" "$tmp/strobe.out" && echo "(identical to GHC's own build)"
echo
echo "== Each module is strobe's object: DWARF by strobe, on Haskell lines"
step sh -c "llvm-dwarfdump-22 --debug-info $tmp/shapes | grep -c 'DW_AT_producer.*(\"strobe\")'"

echo
echo "== lldb stops at a Haskell line; built with --instrument, bt shows the Haskell"
echo "   callers that wait on the Cmm stack (strobe's dynamic stack, lldb/strobe_lldb.py)."
echo "   GHC's runtime ticks with SIGVTALRM, which lldb must pass on quietly."
step sh -c "cd $shapes && ../../../build/strobe-ghc -v0 -O1 --instrument='Main.*,Shapes.*' -outputdir $tmp/instr Main.hs -o $tmp/shapes-i"
step lldb-22 -b -o 'command script import lldb/strobe_lldb.py' \
  -o 'process handle SIGVTALRM -n false -p true -s false' \
  -o 'b Types.hs:35' -o run -o 'bt 8' -o 'strobe bt' -o kill -o quit "$tmp/shapes-i" < /dev/null 2>&1 |
  grep -av "^(lldb) target\|^Current executable\|session id\|^NAME\|^====\|^SIGVTALRM" || true
echo
echo "(Without --instrument, lldb stops at the same lines, but bt shows only the frame"
echo " the program is in: teaching lldb GHC's return stack is still to be done.)"

echo
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
