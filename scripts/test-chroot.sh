#!/usr/bin/env bash
# test-chroot.sh RELEASE — the test suite on another Debian release's GHC, on this
# machine (run as root): trixie (GHC 9.6.6) or forky (GHC 9.10.3).
#
# Builds a minimal chroot of RELEASE with debootstrap in .chroot/RELEASE of this clone
# (made again by each run: nothing is kept outside the clone), mounts the clone in it at
# /strobe, and runs scripts/test.sh there, which installs what strobe needs from the
# release's own archive (Debian's ghc, llvm-22...) and builds strobe in build-RELEASE/
# (STROBE_BUILD), without the sanitizer pass (STROBE_SANITIZE_PASS=0) that the host's
# run makes.  Its last line is test.sh's: "N passed, N failed".  The mounts go when it
# ends, however it ends.
#
# Environment: STROBE_KEEP_CHROOT=1 reuses an existing .chroot/RELEASE (for a second
# run by hand; CI never sets it), STROBE_DEBIAN_MIRROR (default deb.debian.org).
set -uo pipefail

release=${1:-}
case $release in
  trixie | forky) ;;
  *) echo "usage: test-chroot.sh trixie|forky" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  echo "test-chroot.sh: debootstrap and chroot need root" >&2
  exit 1
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
root=$repo/.chroot/$release
mirror=${STROBE_DEBIAN_MIRROR:-http://deb.debian.org/debian}

unmount() {
  for m in strobe dev/pts dev proc; do
    mountpoint -q "$root/$m" && umount -l "$root/$m"
  done
}
trap unmount EXIT

if ! command -v debootstrap > /dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap > /dev/null || exit 1
fi

if [ "${STROBE_KEEP_CHROOT:-0}" != 1 ] || [ ! -x "$root/bin/sh" ]; then
  unmount
  rm -rf "$root"
  mkdir -p "$root"
  # bookworm's debootstrap has no script for forky; sid's makes the same system.
  script=/usr/share/debootstrap/scripts/$release
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  echo "test-chroot.sh: debootstrap $release into $root"
  debootstrap --variant=minbase "$release" "$root" "$mirror" "$script" > "$root.debootstrap.log" 2>&1 || {
    tail -n 20 "$root.debootstrap.log" >&2
    echo "test-chroot.sh: debootstrap $release failed" >&2
    exit 1
  }
  # forky's Release file may be past its Valid-Until by this machine's clock: this
  # chroot's apt only takes it as it is.
  [ "$release" = forky ] &&
    echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99strobe-valid-until"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/strobe"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount --bind "$repo" "$root/strobe"

chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  STROBE_BUILD="build-$release" STROBE_SANITIZE_PASS=0 \
  bash -c 'cd /strobe && bash scripts/test.sh'
