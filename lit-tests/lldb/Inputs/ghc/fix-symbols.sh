#!/bin/sh
# Gives the undefined symbols of strobec's object OBJ the package prefixes of GHC's
# own libraries (base, ghc-prim) for the names the lldb tests' program uses.  A stopgap
# until strobec resolves them itself (--package-map).
set -e
obj=$1
nm -u "$obj" | awk '{print $2}' | while read -r s; do
  case "$s" in
    GHCziTypes_*|GHCziTuple_*|GHCziClasses_*|GHCziCString_*) echo "$s ghczmprim_$s";;
    GHCzi*|Systemzi*) echo "$s base_$s";;
    ZC_con_info) echo "$s ghczmprim_GHCziTypes_ZC_con_info";;
    ZMZN_closure) echo "$s ghczmprim_GHCziTypes_ZMZN_closure";;
  esac
done > "$obj.syms"
llvm-objcopy --redefine-syms="$obj.syms" "$obj"
