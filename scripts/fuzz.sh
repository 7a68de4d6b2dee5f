#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET] — fuzz strobe with libFuzzer.
#
# TARGET is parse (default: the front end, and the printer's fixed point) or lower (the
# front end and the lowering to verified LLVM IR); see tests/fuzz/.
# Builds build-fuzz/ with clang-22 and -DSTROBE_FUZZ=ON, seeds a corpus from the GHC
# dumps that the build makes from corpus/ (or those under STROBE_CORPUS if set; each dump
# whole, and each `==== … ====` section of it on its own, so seeds are small), and runs
# for SECONDS (default 600).  Crashes land in build-fuzz/artifacts/.
# Not part of CI.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-600}
target=fuzz_${2:-parse}
build=build-fuzz

CC=clang-22 CXX=clang++-22 cmake -S . -B "$build" -DSTROBE_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target "$target" strobe_corpus -j2
corpus_src=$(realpath "${STROBE_CORPUS:-$build/corpus}")

# Seeds: every corpus dump (gunzipped), plus one chunk per dump section.
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds" "$build/corpus-$target" "$build/artifacts"
find "$corpus_src" -type f \( -name '*.dump-cmm' -o -name '*.dump-cmm-raw' -o -name '*.dump-cmm-raw.gz' \) |
  sort | while read -r f; do
  name=$(echo "${f#"$corpus_src"/}" | tr '/' '_')
  case $f in
    *.gz) gunzip -c "$f" >"$seeds/${name%.gz}"; name=${name%.gz} ;;
    *) cp "$f" "$seeds/$name" ;;
  esac
  if [[ $name == *.dump-cmm* ]]; then
    awk -v out="$seeds/$name.section" '
      /^=+ .* =+$/ { n++; if (file) close(file); file = sprintf("%s%03d", out, n) }
      file { print > file }' "$seeds/$name"
  fi
done
echo "fuzz.sh: $(ls "$seeds" | wc -l) seeds, running for ${seconds}s"

log=$build/$target.log
status=0
"$build/$target" "$build/corpus-$target" "$seeds" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 >"$log" 2>&1 || status=$?

if [ "$status" -ne 0 ]; then
  tail -n 60 "$log"
  echo "fuzz.sh: fuzz_parse exited with $status; see $log and $build/artifacts/" >&2
fi
grep -E '^#[0-9]+[[:space:]]+DONE|^Done [0-9]+ runs' "$log" || true
exit "$status"
