#!/usr/bin/env bash
# hs-lines.sh OBJ HSFILE [DWARFDUMP] — the source lines of HSFILE in OBJ's DWARF line table,
# one per line, sorted numerically, each once.
#
# Reads `llvm-dwarfdump --debug-line OBJ`. Every line table (one per CU) has its own file
# table, so the file index of a row is looked up in the table of the CU it belongs to;
# DWARF 5 numbers files from 0, DWARF 2-4 from 1, both are read as printed. A row counts
# if its file's base name is HSFILE's base name and its line is not 0. end_sequence rows
# are skipped: they mark the address just past a sequence, not an instruction.
set -euo pipefail
obj=$1
hs=$(basename "$2")
dwarfdump=${3:-llvm-dwarfdump-22}
"$dwarfdump" --debug-line "$obj" | awk -v hs="$hs" '
  function base(p) { sub(/.*\//, "", p); return p }
  /^debug_line\[/ { delete file; idx = -1; next }
  /^file_names\[ *[0-9]+\]:/ {
    s = $0; sub(/^file_names\[ */, "", s); sub(/\].*/, "", s); idx = s + 0; next
  }
  idx >= 0 && /^ +name: / {
    s = $0; sub(/^ +name: +"/, "", s); sub(/"[^"]*$/, "", s); file[idx] = base(s); idx = -1; next
  }
  /^0x[0-9a-fA-F]+ +[0-9]+ +[0-9]+ +[0-9]+ / {
    if ($0 ~ /end_sequence/) next
    if ($2 != 0 && ($4 in file) && file[$4] == hs) print $2
  }
' | sort -n -u
