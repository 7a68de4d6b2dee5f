#!/usr/bin/env python3
# python3 bench/fidelity-table.py [TEST...]
#
# fidelity-table.py — the fidelity suite (lit-tests/fidelity/, docs/dynstack-ghc.md,
# "Fidelity") as one table: does the report at an uncaught exception name the right
# chain?  For each test (default: every lit-tests/fidelity/*.test and *.pending; a TEST is a path or a
# test's name, such as `threads`) it builds the test's program three ways, as the test's
# checker does (lit-tests/fidelity/check-chain.py, whose functions this script uses):
#   strobe-ghc -O0 --instrument=...        the dynamic stack's report
#   strobe-ghc -O1 --instrument=...
#   ghc -O0 -prof -fprof-auto, +RTS -xc    the cost-centre stack at the raise
# runs each, and prints a markdown table: program | right chain | strobe's chain at -O0
# | at -O1 | -xc's chain.  A chain is the one the checker compares (frames of library
# code and MAY names dropped, lambdas in their binding, a run of equal names one element
# with its count); ✓ marks a chain that passes the test (for strobe: the right chain,
# nothing of ABSENT, the whole report; for -xc: its own right chain, XC-CHAIN, which
# differs from the right chain where the test says so).  Below the table: how many pass.
# Then a second table, a diagnostic: strobe's chains with each frame named by the -prof
# cost centre whose span holds the frame's location (one per binding, from the -prof
# run's profile), as if every frame had its source binding's name; ✓ where that is the
# right chain, whole, with nothing of ABSENT.  What it does not fix is not a naming problem (a missing, stale or cut
# frame, a frame at the wrong place).
# A benchmark, not part of CI: it exits with 0 whatever the chains are, and with 1 only
# when a build fails.
#
# Environment: BUILD (strobe's build tree, default build), GHC (default ghc), OUT (where
# to build, default a temporary directory, removed unless KEEP=1).
import importlib.util
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUITE = os.path.join(ROOT, "lit-tests", "fidelity")
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(ROOT, "build")))
GHC = os.environ.get("GHC", "ghc")

spec = importlib.util.spec_from_file_location("check_chain", os.path.join(SUITE, "check-chain.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)


# A program strobe gets right at -O0 and -O1 is a lit test (NAME.test); one it does not
# get right yet waits as NAME.pending, in the same format, which lit does not run.
SUFFIXES = (".test", ".pending")


def tests(argv):
    if not argv:  # the tests of a program (not checker.test, the checker's own)
        paths = sorted(os.path.join(SUITE, f) for f in os.listdir(SUITE) if f.endswith(SUFFIXES))
        return [p for p in paths if "\nPROGRAM:" in open(p).read()]
    found = []
    for a in argv:
        named = [os.path.join(SUITE, a + s) for s in SUFFIXES]
        found.append(a if os.path.exists(a) else next((p for p in named if os.path.exists(p)), named[0]))
    return found


def cell(res):
    """A chain in a table cell: ✓ or ✗, then the names, the raiser first."""
    text = cc.show_chain(res.chain, res.report)
    if any(p.startswith("the build failed") for p in res.problems):
        text = "(the build failed)"
    mark = "\u2713" if res.ok else "\u2717"
    extra = [p for p in res.problems if " is in the report" in p]
    if extra:
        text += " \u2014 " + "; ".join(p.split(":")[0] for p in extra)
    return "%s %s" % (mark, text.replace("|", "\\|"))


def main():
    strobe_ghc = os.path.join(BUILD, "strobe-ghc")
    if not os.path.exists(strobe_ghc):
        sys.exit("fidelity-table.py: no %s: build strobe first (or set BUILD)" % strobe_ghc)
    out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="strobe-fidelity-")
    rows, passed, build_failed = [], {m: 0 for m in cc.MODES}, False
    loc_rows, loc_passed = [], {"strobe-O0": 0, "strobe-O1": 0}
    paths = tests(sys.argv[1:])
    for path in paths:
        test = cc.Test(path)
        results = {}
        for mode in cc.MODES:
            r = cc.run_mode(test, mode, os.path.join(out, test.name), strobe_ghc, GHC)
            results[mode] = r
            build_failed |= any(p.startswith("the build failed") for p in r.problems)
            if r.ok:
                passed[mode] += 1
            print("%s %s: %s" % (test.name, cc.LABEL[mode], "pass" if r.ok else "FAIL"),
                  file=sys.stderr, flush=True)
        right = cc.show_chain([(n, 1) for n in test.chain])
        if test.xc_chain != test.chain:
            xc_right = "none" if test.xc_chain is None else cc.show_chain([(n, 1) for n in test.xc_chain])
            right += " (-xc: %s)" % xc_right
        rows.append([test.name, right] + [cell(results[m]) for m in cc.MODES])
        ccs = cc.parse_prof(os.path.join(out, test.name, "xc", "prog.prof"))
        loc = []
        for m in ("strobe-O0", "strobe-O1"):
            r = results[m]
            chain, good = cc.by_location(r.report, test, ccs)
            text = cc.show_chain(chain, r.report) if r.report.found else "(%s)" % r.report.note
            loc.append("%s %s" % ("\u2713" if good else "\u2717", text.replace("|", "\\|")))
            loc_passed[m] += good
        loc_rows.append([test.name] + loc)
    print("| program | right chain | strobe's chain -O0 | strobe's chain -O1 | -xc's chain |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("Passing: strobe -O0 %d of %d, strobe -O1 %d of %d, -xc %d of %d."
          % (passed["strobe-O0"], len(paths), passed["strobe-O1"], len(paths), passed["xc"], len(paths)))
    print()
    print("Named by location (each frame by the -prof cost centre whose span holds it):")
    print()
    print("| program | strobe -O0, by location | strobe -O1, by location |")
    print("|---|---|---|")
    for row in loc_rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("Right by location: -O0 %d of %d, -O1 %d of %d."
          % (loc_passed["strobe-O0"], len(paths), loc_passed["strobe-O1"], len(paths)))
    if os.environ.get("KEEP") == "1" or os.environ.get("OUT"):
        print("(builds kept in %s)" % out, file=sys.stderr)
    else:
        shutil.rmtree(out, ignore_errors=True)
    sys.exit(1 if build_failed else 0)


if __name__ == "__main__":
    main()
