#!/usr/bin/env bash
# parse-speed.sh [SECONDS] — front-end throughput (MB/s) on the largest corpus dump.
# Builds bench_parse (Release) and the corpus (corpus/) in build-bench/ and runs it on the
# largest dump there, or under STROBE_CORPUS if set; see bench/bench_parse.c.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
corpus=${STROBE_CORPUS:-build-bench/corpus}
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench --target bench_parse strobe_corpus -j2 >/dev/null
largest=$(find "$corpus" -name '*.dump-cmm*' ! -name '*.gz' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
build-bench/bench_parse "$largest" "${1:-3}"
