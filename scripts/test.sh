#!/usr/bin/env bash
# test.sh — install the dependencies, build strobe twice, run every test.
#
# Runs the cmocka unit tests (ctest) and the lit tests, in a plain build (build/) and
# in one with AddressSanitizer and UBSan (build-asan/), and prints as its last line
#   N passed, N failed
# (the sum over both suites).  A step that fails without reporting a failed test
# (configure, build, or a test runner that could not run) counts as one failure.
# Exits non-zero if anything failed.
#
# Environment: STROBE_BUILD names the plain build's directory (default build; the
# sanitized one is STROBE_BUILD-asan), STROBE_SANITIZE_PASS=0 skips the sanitized build
# (scripts/test-chroot.sh, whose host run makes it).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${STROBE_BUILD:-build}
lit=/usr/lib/llvm-22/bin/lit
passed=0
failed=0

bash scripts/setup-debian.sh || exit 1

# "N% tests passed, F tests failed out of T"
count_ctest() {
  local line
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -n 1)
  [ -n "$line" ] || return 0
  local f t
  f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  t=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
  passed=$((passed + t - f))
  failed=$((failed + f))
}

# lit's summary: "  Passed: N (…%)", "  Failed: N (…%)"; Unresolved, Timed Out and
# Unexpectedly Passed tests also make lit fail, so they count as failed.
count_lit() {
  local n
  n=$(sed -nE 's/^ *Passed *: *([0-9]+).*/\1/p' "$1" | tail -n 1)
  passed=$((passed + ${n:-0}))
  for what in 'Failed' 'Unresolved' 'Timed Out' 'Unexpectedly Passed'; do
    n=$(sed -nE "s/^ *$what *: *([0-9]+).*/\\1/p" "$1" | tail -n 1)
    failed=$((failed + ${n:-0}))
  done
}

# Runs a step; if it fails but its failures were not counted, counts one.
step() {
  local before=$failed status
  "$@"
  status=$?
  if [ "$status" -ne 0 ] && [ "$failed" -eq "$before" ]; then
    failed=$((failed + 1))
  fi
  return "$status"
}

run_configure() { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo; }
# MAKEFLAGS=-k: build every target that can be built, so one broken file does not hide
# the results of all the others.
run_build() { MAKEFLAGS=-k cmake --build "$build" -j2; }
run_ctest() {
  ctest --test-dir "$build" --output-on-failure 2>&1 | tee "$build/ctest.log"
  local status=$?
  count_ctest "$build/ctest.log"
  return "$status"
}
run_lit() {
  "$lit" -sv --no-progress-bar "$build/lit-tests" 2>&1 | tee "$build/lit.log"
  local status=$?
  count_lit "$build/lit.log"
  return "$status"
}

if step run_configure; then
  step run_build
  step run_ctest
  step run_lit
fi

# The same suite again with AddressSanitizer and UBSan: bad input must never crash.
if [ "${STROBE_SANITIZE_PASS:-1}" != 0 ]; then
  build=${STROBE_BUILD:-build}-asan
  run_configure() { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTROBE_SANITIZE=ON; }
  if step run_configure; then
    step run_build
    step run_ctest
    step run_lit
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
