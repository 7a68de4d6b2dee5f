#!/bin/sh
# llvm-stub.sh — stands in for LLVM's opt and llc when GHC compiles with -fllvm, so
# that the -fllvm pipeline's Cmm dumps are made whatever LLVM is installed (GHC 9.0.2
# wants LLVM 10 to 13; strobe uses 22).  GHC writes its Cmm dumps before it calls
# opt; this stub answers GHC's version question and writes an empty output, so that
# GHC's mangler and assembler then make an empty object and the compile succeeds.
# Any other failure of GHC's still fails the compile.
out=
while [ $# -gt 0 ]; do
  case $1 in
    -version | --version) printf 'LLVM (http://llvm.org/):\n  LLVM version 12.0.1\n'; exit 0 ;;
    -o) out=$2; shift ;;
  esac
  shift
done
[ -n "$out" ] || { echo "llvm-stub.sh: no -o FILE" >&2; exit 1; }
: > "$out"
