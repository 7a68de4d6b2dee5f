#!/usr/bin/env python3
"""ghc-plugin-cost.py [SOURCE.hs ...] — what strobe's GHC plugin costs GHC's compile.

    python3 bench/ghc-plugin-cost.py                      # the repository's own modules
    python3 bench/ghc-plugin-cost.py ../shared/corpus/ghc902/*/*.hs

Compiles each module (`ghc -O1 -c`, -fforce-recomp) four ways: plain; with -g; with -g
and the text dump strobe-ghc --strobe-text-dumps asks for (-ddump-cmm-raw -ddump-to-file,
GHC's code generated too); and with -g and the plugin (the module's Cmm written, no
code generated).  Prints the CPU seconds of each (user + system, best of --runs) and the
plugin's against `ghc -g` and against the text dump.  Needs the build tree's plugin
(build/ghc-plugin/package.conf.d, or --plugin-db).  Not part of the tests.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["lit-tests/ghc/Inputs/plugin/Bits.hs", "lit-tests/ghc/Inputs/background/Big.hs"]


def cpu(cmd, runs):
    best = None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = t if best is None else min(best, t)
    return best


def main():
    ap = argparse.ArgumentParser(description="what strobe's GHC plugin costs GHC's compile")
    ap.add_argument("sources", nargs="*")
    ap.add_argument("--ghc", default="ghc")
    ap.add_argument("--plugin-db", default=os.path.join(ROOT, "build", "ghc-plugin", "package.conf.d"))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    sources = a.sources or [os.path.join(ROOT, s) for s in DEFAULT]
    tmp = tempfile.mkdtemp(prefix="plugin-cost.")
    modes = {
        "ghc": [],
        "ghc -g": ["-g"],
        "-g + dump": ["-g", "-ddump-cmm-raw", "-ddump-to-file", "-dumpdir", tmp + "/dump/"],
        "-g + plugin": ["-g", "-package-db", a.plugin_db, "-plugin-package", "strobe-plugin",
                        "-fplugin", "Strobe.Plugin", "-fplugin-opt", "Strobe.Plugin:out=" + tmp + "/cmm"],
    }
    print("%-24s" % "module" + "".join("%13s" % m for m in modes) + "  plugin/-g  plugin/dump")
    try:
        for src in sources:
            row = []
            for flags in modes.values():
                out = os.path.join(tmp, "o")
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                # From the source's directory, so that its imports are found.
                row.append(cpu([a.ghc, "-v0", "-O1", "-fforce-recomp", "-c", os.path.abspath(src),
                                "-i" + os.path.dirname(os.path.abspath(src)), "-outputdir", out,
                                "-o", os.path.join(out, "x.o")] + flags, a.runs))
            print("%-24s" % os.path.basename(src) + "".join("%13.2f" % t for t in row)
                  + "%11.2f%13.2f" % (row[3] / row[1], row[3] / row[2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
