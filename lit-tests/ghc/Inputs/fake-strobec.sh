#!/bin/sh
# A strobec for strobe-ghc's tests (STROBE_STROBEC): FAKE_STROBEC=refuse exits 2 with a
# message, as strobec does for valid Cmm that it refuses to lower; FAKE_STROBEC=break
# appends a bad statement to the Cmm (the plugin's file or GHC's dump) and runs the real
# strobec ($REAL_STROBEC), whose diagnostic then points into it.
for a; do case $a in *.dump-cmm-raw|*.cmm) dump=$a ;; esac; done
case ${FAKE_STROBEC:-} in
  refuse)
    echo "$dump:1:1: error: procedure Main.main_info: refused (fake strobec)" >&2
    exit 2 ;;
  break)
    printf '\nthis is not Cmm;\n' >> "$dump"
    exec "$REAL_STROBEC" "$@" ;;
esac
exec "$REAL_STROBEC" "$@"
