#!/usr/bin/env bash
# strobec-share.sh [RUNS] [STROBEC] — how much of a full compile is strobe's own work?
#
# Compiles the largest corpus dump (by uncompressed size; a .gz one is unpacked first) to an
# object RUNS times (default 5) with `strobec --time-passes`, at -O0 and at -O2, takes the
# median of each stage over the runs, and prints strobec's own share of the total:
#   (read + parse + types + scopes + ticks + lower) / total
# the rest being LLVM's (optimize, codegen+write). `total` is strobec's sum of its stages.
# Environment: STROBE_CORPUS, the GHC 9.0.2 corpus directory (default: build/corpus, which
# the build makes from corpus/).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
corpus=$(cd "${STROBE_CORPUS:-$root/build/corpus}" && pwd)
runs=${1:-5}
strobec=${2:-$root/build/strobec}
[[ -x $strobec ]] ||
  { echo "strobec-share.sh: $strobec missing; build first: cmake -B build && cmake --build build" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The largest dump, gzipped ones counted by their unpacked size.
largest='' size=0
while IFS= read -r f; do
  if [[ $f == *.gz ]]; then n=$(gzip -dc "$f" | wc -c); else n=$(wc -c <"$f"); fi
  if ((n > size)); then size=$n largest=$f; fi
done < <(find "$corpus" -name '*.dump-cmm*' | sort)
[[ -n $largest ]] || { echo "strobec-share.sh: no dumps under $corpus" >&2; exit 2; }
input=$largest
if [[ $largest == *.gz ]]; then
  input=$tmp/$(basename "${largest%.gz}")
  gzip -dc "$largest" >"$input"
fi
echo "input: ${largest#"$corpus"/} ($size bytes) in $corpus"
echo "strobec: $strobec; $runs runs per level, median per stage"

stages=(read parse types scopes ticks lower optimize codegen+write total)
for opt in -O0 -O2; do
  echo
  cmd=("$strobec" --time-passes "$opt" -w "$input" -o "$tmp/out.o")
  echo "\$ ${cmd[*]}   # x$runs"
  for ((r = 0; r < runs; r++)); do
    "${cmd[@]}" 2>"$tmp/times.$r"
  done
  # One line per stage: name and its median over the runs.
  for s in "${stages[@]}"; do
    for ((r = 0; r < runs; r++)); do
      awk -v s="$s" '$1 == s { print $2 }' "$tmp/times.$r"
    done | sort -g | awk -v s="$s" '{ v[NR] = $1 }
      END { if (NR == 0) { print s, "?"; exit 1 }
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print s, m }'
  done >"$tmp/median"
  awk -v opt="$opt" '{ t[$1] = $2; order[NR] = $1 }
    END {
      for (i = 1; i <= NR; i++) if (order[i] != "total")
        printf "  %-14s %8.4f s\n", order[i], t[order[i]]
      printf "  %-14s %8.4f s\n", "total", t["total"]
      own = t["read"] + t["parse"] + t["types"] + t["scopes"] + t["ticks"] + t["lower"]
      printf "strobe share at %s: %.1f%% (read+parse+types+scopes+ticks+lower %.4f s of %.4f s; LLVM optimize+codegen %.4f s)\n",
        opt, 100 * own / t["total"], own, t["total"], t["optimize"] + t["codegen+write"]
    }' "$tmp/median"
done
