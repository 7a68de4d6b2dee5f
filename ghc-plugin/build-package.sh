#!/bin/sh
# build-package.sh GHC SRC OUT — builds strobe's GHC plugin (the package strobe-plugin)
# with GHC and registers it in a package database of its own:
#
#   OUT/package.conf.d/      the database (strobe-ghc passes -package-db OUT/package.conf.d)
#   OUT/strobe-plugin/       its interfaces and libraries, static and shared
#
# The package's paths are ${pkgroot}-relative, so OUT can be copied anywhere (cmake
# --install copies it under the prefix).  A GHC that is itself dynamically linked, as
# Debian's is, loads a plugin from its shared library; the interfaces come in both ways.
set -eu
ghc=$1 src=$2 out=$3
ghc_pkg=$(dirname "$(command -v "$ghc")")/$(basename "$ghc" | sed 's/ghc/ghc-pkg/')
[ -x "$ghc_pkg" ] || ghc_pkg=ghc-pkg
version=0.1
id=strobe-plugin-$version
ghc_version=$("$ghc" --numeric-version)
deps="base ghc bytestring containers directory filepath"
modules="Strobe.Plugin Strobe.Notes Strobe.Print Strobe.Compat"
lib=$out/strobe-plugin
rm -rf "$out/build" "$lib" "$out/package.conf.d"
mkdir -p "$out/build" "$lib"

"$ghc" --make -no-link -v0 -O -this-unit-id "$id" -dynamic-too -fPIC \
  -hide-all-packages $(for d in $deps; do printf ' -package %s' "$d"; done) \
  -i"$src" -outputdir "$out/build" -hidir "$lib" \
  $modules
"$ghc" -v0 -shared -dynamic -o "$lib/libHS$id-ghc$ghc_version.so" \
  $(for d in $deps; do printf ' -package %s' "$d"; done) \
  $(for m in $modules; do printf ' %s' "$out/build/$(echo "$m" | tr . /).dyn_o"; done)
rm -f "$lib/libHS$id.a"
ar rcs "$lib/libHS$id.a" $(for m in $modules; do printf ' %s' "$out/build/$(echo "$m" | tr . /).o"; done)

ids=
for d in $deps; do ids="$ids $("$ghc_pkg" --global field "$d" id --simple-output | head -n1)"; done
cat > "$out/build/$id.conf" <<CONF
name: strobe-plugin
version: $version
id: $id
key: $id
license: MIT
exposed: True
exposed-modules: Strobe.Plugin
hidden-modules: Strobe.Notes Strobe.Print Strobe.Compat
import-dirs: \${pkgroot}/strobe-plugin
library-dirs: \${pkgroot}/strobe-plugin
dynamic-library-dirs: \${pkgroot}/strobe-plugin
hs-libraries: HS$id
depends:$ids
CONF
"$ghc_pkg" init "$out/package.conf.d"
"$ghc_pkg" --package-db="$out/package.conf.d" register -v0 "$out/build/$id.conf"
