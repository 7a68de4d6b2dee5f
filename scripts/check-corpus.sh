#!/usr/bin/env bash
# check-corpus.sh STROBEC DIR... — the front end against real GHC dumps.
#
# For every dump under each DIR (-ddump-cmm, -ddump-cmm-raw, native and -fllvm
# pipelines, gzipped or not) it checks that:
#   1. strobec --emit=cmm accepts it;
#   2. the canonical output says what GHC's text says: the same text once runs of
#      spaces and newlines are made one space (GHC wraps long lines, strobe does not);
#   3. strobec --emit=cmm of that output reproduces it byte for byte (a fixed point);
#   4. strobec --emit=scopes accepts it.
# A dump strobec refuses (exit status 2: an ambiguous bitwise expression, valid GHC Cmm
# whose meaning the text does not say) is listed as `refused`, not as a failure.
# Prints one line per dump and a summary; exits 1 if any dump failed.
set -uo pipefail
strobec=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=0
failed=0
refused=0

squash() { tr -s ' \n' '  ' <"$1"; }

check() {
  local dump=$1 input=$1
  if [[ $dump == *.gz ]]; then
    input=$tmp/input
    gzip -dc "$dump" >"$input" || { echo "FAIL $dump: cannot gunzip"; return 1; }
  fi
  "$strobec" --emit=cmm "$input" -o "$tmp/a.cmm" 2>"$tmp/err"
  case $? in
    0) ;;
    2) echo "refused $dump: $(head -n 1 "$tmp/err")"; return 2 ;;
    *) echo "FAIL $dump: not accepted: $(head -n 1 "$tmp/err")"; return 1 ;;
  esac
  cmp -s <(squash "$input") <(squash "$tmp/a.cmm") ||
    { echo "FAIL $dump: canonical Cmm differs from GHC's text"; return 1; }
  "$strobec" --emit=cmm "$tmp/a.cmm" -o "$tmp/b.cmm" 2>"$tmp/err" ||
    { echo "FAIL $dump: own output not accepted: $(head -n 1 "$tmp/err")"; return 1; }
  cmp -s "$tmp/a.cmm" "$tmp/b.cmm" || { echo "FAIL $dump: printing is not a fixed point"; return 1; }
  "$strobec" --emit=scopes "$input" -o "$tmp/scopes.txt" 2>"$tmp/err" ||
    { echo "FAIL $dump: --emit=scopes failed: $(head -n 1 "$tmp/err")"; return 1; }
  echo "ok   $dump"
}

while IFS= read -r dump; do
  total=$((total + 1))
  check "$dump"
  case $? in
    0) ;;
    2) refused=$((refused + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done < <(find "$@" -name '*.dump-cmm' -o -name '*.dump-cmm-raw' -o -name '*.dump-cmm-raw.gz' | sort)

echo "$total dumps, $failed failed, $refused refused"
[ "$total" -gt 0 ] && [ "$failed" -eq 0 ]
