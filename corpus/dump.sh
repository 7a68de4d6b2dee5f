#!/bin/sh
# dump.sh GHC LEVEL FLAVOUR PROG OUTDIR WORKDIR — one corpus compile (corpus/README.md).
#
# Run in the directory that holds PROG.hs: GHC compiles it at LEVEL (O0 or O1) with -g
# and writes the Cmm dumps (-ddump-cmm, -ddump-cmm-raw); FLAVOUR says which pipeline:
#   ncg   the native code generator; GHC also links its own build of the program,
#         OUTDIR/PROG, which tests run for the output strobe's builds must print;
#   llvm  -fllvm, with llvm-stub.sh as opt and llc (and as the LLVM assembler, where
#         GHC has one of its own: 9.10).
# GHC works in WORKDIR; the dumps (and the program) are moved into OUTDIR only when
# GHC succeeded and every dump holds as many sections as the other (the same groups,
# printed twice), so a failed compile leaves no output and the next build retries it.
set -eu
ghc=$1 level=$2 flavour=$3 prog=$4 outdir=$5 work=$6
stub=$(cd "$(dirname "$0")" && pwd)/llvm-stub.sh
rm -rf "$work"
mkdir -p "$work" "$outdir"
set -- "-$level" -g -fforce-recomp -ddump-cmm -ddump-cmm-raw -ddump-to-file -outputdir "$work"
case $flavour in
  ncg) set -- "$@" -o "$work/$prog" "$prog.hs" ;;
  llvm) set -- "$@" -fllvm -pgmlo "$stub" -pgmlc "$stub" -c "$prog.hs"
        # GHC 9.10 and later assemble LLVM's output with clang (-pgmlas), 9.0 with its
        # own assembler.
        if "$ghc" --info | grep -q '"LLVM llvm-as command"'; then set -- "$@" -pgmlas "$stub"; fi ;;
  *) echo "dump.sh: unknown flavour '$flavour'" >&2; exit 2 ;;
esac
"$ghc" -v0 "$@" || { echo "dump.sh: ghc failed on $prog.hs (-$level, $flavour)" >&2; exit 1; }
cmm=$(grep -c '^==================== Output Cmm ====================$' "$work/$prog.dump-cmm" || true)
raw=$(grep -c '^==================== Raw Cmm ====================$' "$work/$prog.dump-cmm-raw" || true)
if [ "$cmm" -eq 0 ] || [ "$cmm" -ne "$raw" ]; then
  echo "dump.sh: $prog -$level $flavour: $cmm sections of Cmm, $raw of raw Cmm" >&2
  exit 1
fi
echo "ghc $*" > "$work/COMMAND.txt"
for f in COMMAND.txt "$prog.dump-cmm" "$prog.dump-cmm-raw"; do mv "$work/$f" "$outdir/$f"; done
[ "$flavour" = llvm ] || mv "$work/$prog" "$outdir/$prog"
rm -rf "$work"
