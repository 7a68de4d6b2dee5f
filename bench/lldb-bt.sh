#!/usr/bin/env bash
# lldb-bt.sh [BUILD] [DEPTH] — how long plain `bt` takes with the lldb module's frame
# provider on a stop with DEPTH (default 10000) dynamic-stack entries.
#
# Builds lit-tests/lldb/Inputs/deep.cmm with every function instrumented (-O2), runs
# it under lldb-22 with DEEP_DEPTH=DEPTH and a capacity of twice that, stops at the
# bottom of the recursion (Deep.hs:5: one entry per level, and main's), and times, in
# three fresh lldb sessions each:
#   bt          the first backtrace of the stop: the module reads the stack (one
#               memory read) and lldb makes and prints a frame per entry;
#   bt again    lldb's cached frames, printed again;
#   strobe bt   the module's own listing of the same entries.
# Prints the figures; the target (issue 5) is <= 0.2 s for the first `bt` with 10,000
# entries.  Asserts nothing about time.  Not part of CI.
# BUILD: the build tree with strobec and rts/libstrobe-rt-standalone.a (default build/).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
depth=${2:-10000}
inputs=$root/lit-tests/lldb/Inputs
lldb=${LLDB:-lldb-22}
clang=${CLANG:-clang-22}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$inputs" && "$build/strobec" --entry=Main.main_entry -O2 --instrument='*' deep.cmm \
   -o "$tmp/deep.o")
"$clang" "$tmp/deep.o" "$inputs/deep_env.c" "$build/rts/libstrobe-rt-standalone.a" -o "$tmp/deep"

# `timed CMD`: runs an lldb command, keeps its output, prints the wall time it took.
cat > "$tmp/timed.py" <<'EOF'
import time
import lldb

seen = {}

def timed(debugger, command, exe_ctx, result, internal_dict):
    ro = lldb.SBCommandReturnObject()
    t = time.perf_counter()
    debugger.GetCommandInterpreter().HandleCommand(command, exe_ctx, ro)
    dt = time.perf_counter() - t
    lines = (ro.GetOutput() or "").count("\n")
    seen[command] = seen.get(command, 0) + 1
    label = command + (" again" if seen[command] > 1 else "")
    result.AppendMessage("%-10s %7.3f s  (%d lines)" % (label, dt, lines))

def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -o -f timed.timed timed")
EOF

echo "lldb-bt.sh: bt with $depth dynamic-stack entries ($("$lldb" --version | head -n 1), $(nproc) CPUs)"
for run in 1 2 3; do
  echo "run $run:"
  DEEP_DEPTH=$depth STROBE_OPTIONS=capacity=$((2 * depth)) "$lldb" -x -b \
    -o "command script import $root/lldb/strobe_lldb.py" \
    -o "command script import $tmp/timed.py" \
    -o 'b Deep.hs:5' -o run -o 'timed bt' -o 'timed bt' -o 'timed strobe bt' -o kill \
    "$tmp/deep" < /dev/null 2>&1 | sed -n 's/^\(bt\|strobe bt\) /  &/p'
done
