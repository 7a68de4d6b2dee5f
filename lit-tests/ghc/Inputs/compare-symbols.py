#!/usr/bin/env python3
"""compare-symbols.py GHC.o STROBE.o DUMP: strobe's object has GHC's symbols.

The global defined symbols and the undefined symbols of the two objects, made from the
same dump, must be the same sets, and no symbol GHC keeps local may be global in
strobe's.  Two differences come from GHC's code generator, not from the dump's labels,
and are allowed where the dump or GHC's object shows their cause:
  - `hs_popcnt<N>`: GHC's native code calls it for `MO_PopCnt W<N>`, strobe uses
    llvm.ctpop (docs/lowering.md);
  - `registerForeignExports`: GHC's object carries its foreign-exports initialiser
    (the local `stginit_export_<Module>`), C code that is not in the Cmm.
One difference comes from GHC 9.10's text, which drops what the symbol says: a record
field's selector is `M_zdfldZC<Type>ZC<field>_closure` (`$fld:Type:field`), and the dump
names it `M.field_closure`, without its type.  Each such pair is printed as a field
selector, not a difference (GHC 9.0's and 9.6's objects have no such symbols; strobe-ghc
reads the plugin's table of GHC's own symbols, not the text).
Prints one line per difference and a summary; exit status 1 if they differ."""
import re
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["llvm-nm", "--no-sort", obj], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    defined, local, undefined = set(), set(), set()
    for line in out.splitlines():
        parts = line.split()
        kind, name = parts[-2], parts[-1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
        else:
            local.add(name)
    return defined, local, undefined


def main(ghc_obj, strobe_obj, dump):
    gd, gl, gu = symbols(ghc_obj)
    sd, sl, su = symbols(strobe_obj)
    text = open(dump, encoding="utf-8", errors="replace").read()
    allowed = {f"hs_popcnt{w}" for w in re.findall(r"MO_PopCnt W(\d+)", text)}
    if any(n.startswith("stginit_export_") for n in gl):
        allowed.add("registerForeignExports")
    bad = 0
    for name in sorted(gd - sd):
        m = re.fullmatch(r"(.*?)zdfldZC.+?ZC(.+)", name)
        if m and m.group(1) + m.group(2) in sd - gd:
            print(f"field selector without its type in the text: {m.group(1) + m.group(2)} "
                  f"for {name}")
            sd.discard(m.group(1) + m.group(2)); gd.discard(name)
    for name in sorted(gd - sd):
        print(f"global in GHC's object only: {name}"); bad += 1
    for name in sorted(sd - gd):
        print(f"global in strobe's object only: {name}"); bad += 1
    for name in sorted(gu - su - allowed):
        print(f"undefined in GHC's object only: {name}"); bad += 1
    for name in sorted(su - gu):
        print(f"undefined in strobe's object only: {name}"); bad += 1
    for name in sorted(gl & sd):
        print(f"local in GHC's object, global in strobe's: {name}"); bad += 1
    print(f"{len(gd)} global, {len(gu & su)} undefined, {len(gl & (sl | sd))} local symbols "
          f"compared: {'same' if not bad else str(bad) + ' differences'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
