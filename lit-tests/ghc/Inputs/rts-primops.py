#!/usr/bin/env python3
"""rts-primops.py STROBEC OUTDIR: strobe's symbol for every label of the RTS's.

GHC prints the label of an out-of-line primop as `stg_` and the primop's name
(`stg_decodeDouble_Int64#`); the RTS defines the primop's code under GHC's assembly
spelling of that label.  The primop names come from GHC itself (`ghc -e ':browse
GHC.Prim'`), the symbols from the RTS (`llvm-nm` of the libHSrts .a that ghc-pkg names).  Every `stg_…` label
of every primop goes through strobec, and so does every other `stg_` symbol the RTS
defines (those are printed verbatim: `stg_ap_pp_info`).  Then each RTS symbol that
names a primop (by GHC's z-decoding) must be what strobec made of that primop's label,
and each other RTS symbol must be its own label's symbol."""
import os
import re
import subprocess
import sys


def z_decode(s):
    """GHC's zDecodeString (GHC.Utils.Encoding)."""
    upper = {"L": "(", "R": ")", "M": "[", "N": "]", "C": ":", "Z": "Z"}
    lower = {"z": "z", "a": "&", "b": "|", "c": "^", "d": "$", "e": "=", "g": ">", "h": "#",
             "i": ".", "l": "<", "m": "-", "n": "!", "p": "+", "q": "'", "r": "\\", "s": "/",
             "t": "*", "u": "_", "v": "%"}
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c in "zZ" and i + 1 < len(s):
            d = s[i + 1]
            if c == "z" and d.isdigit():
                j = s.index("U", i)
                out.append(chr(int(s[i + 1:j], 16)))
                i = j + 1
                continue
            out.append((upper if c == "Z" else lower).get(d, d))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def rts_library():
    """The static RTS that ghc links by default, where ghc-pkg says the rts package has it
    (GHC 9.0: <libdir>/rts/libHSrts.a, 9.6: <libdir>/../lib/<platform>/rts-1.0.2/
    libHSrts-1.0.2.a)."""
    def field(name):
        return subprocess.run(["ghc-pkg", "field", "rts", name, "--simple-output"], check=True,
                              stdout=subprocess.PIPE, text=True).stdout.split()
    for d in field("library-dirs"):
        for lib in field("hs-libraries"):
            path = os.path.join(d, f"lib{lib}.a")
            if os.path.exists(path):
                return path
    sys.exit("rts-primops.py: ghc-pkg names no libHSrts .a that exists")


def main(strobec, outdir):
    os.makedirs(outdir, exist_ok=True)
    browse = subprocess.run(["ghc", "-e", ":browse GHC.Prim"], check=True,
                            stdout=subprocess.PIPE, text=True).stdout
    primops = sorted(set(re.findall(r"^(?:GHC\.Prim\.)?([a-z][A-Za-z0-9_]*#+)", browse, re.M)))
    nm = subprocess.run(["llvm-nm", "--defined-only", "--extern-only", "--no-sort", rts_library()],
                        check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                        text=True).stdout
    rts = sorted({line.split()[-1] for line in nm.splitlines()
                  if len(line.split()) >= 2 and line.split()[-1].startswith("stg_")})
    is_primop = {sym: z_decode(sym[4:]) in primops for sym in rts}
    labels = ["stg_" + p for p in primops] + [s for s in rts if not is_primop[s]]
    cmm = os.path.join(outdir, "labels.cmm")
    with open(cmm, "w") as f:
        f.write('[section ""data" . Main.labels_closure" {\n     Main.labels_closure:\n')
        f.writelines(f"         const {l};\n" for l in labels)
        f.write(" }]\n")
    obj = os.path.join(outdir, "labels.o")
    subprocess.run([strobec, cmm, "-o", obj], check=True)
    undefined = subprocess.run(["llvm-nm", "--undefined-only", "--no-sort", obj], check=True,
                               stdout=subprocess.PIPE, text=True).stdout.split()
    made = {s for s in undefined if s != "U"}
    wrong = [s for s in rts if s not in made]
    for s in wrong:
        print(f"wrong: the RTS defines {s}, strobec made no such symbol from "
              f"{'stg_' + z_decode(s[4:]) if is_primop[s] else s}")
    nprim = sum(is_primop.values())
    print(f"{len(primops)} primops of GHC.Prim; the RTS defines {len(rts)} stg_ symbols: "
          f"{nprim} name primops, {len(rts) - nprim} do not; {len(wrong)} wrong")
    other = [s for s in rts if not is_primop[s] and s.endswith("zh")]
    print("stg_…zh symbols that name no primop of GHC.Prim: " + " ".join(other))
    return 1 if wrong or nprim == 0 else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
