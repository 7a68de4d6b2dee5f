#!/usr/bin/env bash
# check-lowering.sh STROBEC DIR... — the lowering against real GHC dumps.
#
# For every dump under each DIR (-ddump-cmm, -ddump-cmm-raw, native and -fllvm
# pipelines, gzipped or not) and each of -O0 and -O2 it checks that:
#   1. strobec -w lowers the dump to an object (no diagnostic, no internal error:
#      strobec verifies the IR it makes before optimising it);
#   2. llvm-dwarfdump --verify finds no error in that object's DWARF.
# A dump strobec refuses (exit status 2: an ambiguous bitwise expression, valid GHC Cmm
# whose meaning the text does not say) is listed as `refused`, not as a failure.
# Prints one line per dump and level and a summary `N dumps, N failed, N refused` (a
# dump fails if either level fails); exits 1 if any dump failed.
set -uo pipefail
strobec=$1
shift
dwarfdump=${LLVM_DWARFDUMP:-llvm-dwarfdump-22}
command -v "$dwarfdump" >/dev/null || dwarfdump=/usr/lib/llvm-22/bin/llvm-dwarfdump
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=0
failed=0
refused=0

# check DUMP INPUT LEVEL
check() {
  local dump=$1 input=$2 level=$3
  "$strobec" -w "$level" "$input" -o "$tmp/out.o" 2>"$tmp/err"
  case $? in
    0) ;;
    2) echo "refused $level $dump: $(head -n 1 "$tmp/err")"; return 2 ;;
    *) echo "FAIL $level $dump: strobec failed: $(head -n 1 "$tmp/err")"; return 1 ;;
  esac
  "$dwarfdump" --verify "$tmp/out.o" >"$tmp/verify" 2>&1 ||
    { echo "FAIL $level $dump: llvm-dwarfdump --verify: $(grep -m 1 -i 'error' "$tmp/verify")"; return 1; }
  echo "ok   $level $dump"
}

while IFS= read -r dump; do
  total=$((total + 1))
  input=$dump
  if [[ $dump == *.gz ]]; then
    input=$tmp/$(basename "${dump%.gz}") # keep the name: it names the compile unit
    gzip -dc "$dump" >"$input" || { echo "FAIL $dump: cannot gunzip"; failed=$((failed + 1)); continue; }
  fi
  bad=0 refuse=0
  for level in -O0 -O2; do
    check "$dump" "$input" "$level"
    case $? in
      0) ;;
      2) refuse=1 ;;
      *) bad=1 ;;
    esac
  done
  failed=$((failed + bad))
  [ "$bad" -eq 0 ] && refused=$((refused + refuse))
done < <(find "$@" -name '*.dump-cmm' -o -name '*.dump-cmm-raw' -o -name '*.dump-cmm-raw.gz' | sort)

echo "$total dumps, $failed failed, $refused refused"
[ "$total" -gt 0 ] && [ "$failed" -eq 0 ]
