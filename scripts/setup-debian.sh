#!/usr/bin/env bash
# setup-debian.sh — install what strobe needs on Debian bookworm (GHC 9.0.2) or trixie
# (GHC 9.6.6); the packages have the same names on both (run as root).
# Idempotent: does nothing when every package is already installed.
# STROBE_SKIP_APT=1 skips this step entirely.
set -euo pipefail

packages=(
  cmake make gcc g++ libtsan2 pkg-config python3 git ca-certificates
  llvm-22-dev llvm-22-tools clang-22 lld-22 libcmocka-dev
  libclang-22-dev libclang-rt-22-dev lldb-22 python3-lldb-22 liblldb-22-dev
  ghc ghc-prof cabal-install valgrind gdb
)

if [ "${STROBE_SKIP_APT:-0}" = 1 ]; then
  echo "setup-debian.sh: STROBE_SKIP_APT=1, not installing packages"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
echo "setup-debian.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-debian.sh: done"
