#!/usr/bin/env python3
"""check-chain.py: does a program's report at its uncaught exception name the right chain?

    check-chain.py TEST [--strobe-ghc P] [--ghc P] [--out DIR] [--modes M,...] [-- OPTS]

(OPTS: more options for strobe-ghc's builds, such as a sanitized build's link flags.)

TEST is a fidelity test (lit-tests/fidelity/*.test).  Besides its RUN line, it says in
lines of its own (the rule is in docs/dynstack-ghc.md, "Fidelity"):

    PROGRAM:   Threads.hs [Other.hs ...]    the program, under Inputs/ (the main module first)
    DATA:      header-good.txt              files under Inputs/ it reads (copied beside it)
    ARGS:      300                          its arguments (shell words)
    GHC-OPTS:  -threaded                    for every build of it
    RTS-OPTS:  -N2                          for every run of it (+RTS ... -RTS)
    INSTRUMENT: Main.*,Shapes.*             strobe-ghc's --instrument (default Main.*)
    MESSAGE:   stepB: out of turns          a piece of GHC's message for the failure
    EXIT:      0                            the exit status (default: any but 0)
    CHAIN:     Main.failB Main.stepB Main.main    the right chain, the raiser first
    ABSENT:    Main.stepA                   names that must not appear in the report at all
    MAY:       Main.radius                  names dropped from the report before comparing
    XC-CHAIN:  ...                          -xc's right chain when it rightly differs from
                                            CHAIN; `none`: -xc is not compared (it is wrong)

CHAIN, ABSENT and MAY may be repeated; their names add up.  Every mode of --modes
(default: all) builds the program and runs it:

    strobe-O0, strobe-O1   strobe-ghc -O0/-O1 --instrument=...: the report that strobe
                           prints before GHC's message (the last one, if several)
    strobe-O0-fn, strobe-O1-fn   the same with --ticks=functions
    xc                     ghc -O0 -prof -fprof-auto, run with +RTS -xc: the last -xc stack
                           printed before GHC's message

and compares its chain with the right one.  It prints one line per mode (PASS or FAIL)
and, for a failure, the right chain, the run's and -xc's side by side, and the report.
The exit status is 1 if any mode failed.  bench/fidelity-table.py uses the functions
below.
"""

import argparse
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys

MODES = ["strobe-O0", "strobe-O1", "xc"]
# also by --modes: the cheaper --ticks=functions
FUNCTION_MODES = ["strobe-O0-fn", "strobe-O1-fn"]
LIST_KEYS = {"CHAIN", "ABSENT", "MAY", "PROGRAM", "DATA"}
KEYS = LIST_KEYS | {"ARGS", "GHC-OPTS", "RTS-OPTS", "INSTRUMENT", "MESSAGE", "EXIT", "XC-CHAIN"}
RUN_TIMEOUT = 300  # seconds; the deepest program runs in well under one


class Test:
    """A fidelity test's directives."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.name = os.path.splitext(os.path.basename(path))[0]
        d = {k: [] for k in KEYS}
        with open(path) as f:
            for line in f:
                m = re.match(r"^([A-Z][A-Z0-9-]*):\s*(.*?)\s*$", line)
                if m and m.group(1) in KEYS:
                    d[m.group(1)].append(m.group(2))
        words = lambda k: [w for v in d[k] for w in v.split()]
        one = lambda k, default: d[k][-1] if d[k] else default
        self.program = words("PROGRAM")
        self.data = words("DATA")
        self.inputs = os.path.join(os.path.dirname(self.path), "Inputs")
        self.args = shlex.split(one("ARGS", ""))
        self.ghc_opts = shlex.split(one("GHC-OPTS", ""))
        self.rts_opts = shlex.split(one("RTS-OPTS", ""))
        self.instrument = one("INSTRUMENT", "Main.*")
        self.message = one("MESSAGE", "")
        self.exit = one("EXIT", None)
        self.chain = words("CHAIN")
        self.absent = words("ABSENT")
        self.may = words("MAY")
        xc = one("XC-CHAIN", None)
        self.xc_chain = None if xc == "none" else (xc.split() if xc else self.chain)
        if not self.program or not self.chain or not self.message:
            raise SystemExit("%s: PROGRAM, CHAIN and MESSAGE are required" % path)

    def globs(self):
        return [g for g in self.instrument.split(",") if g]


# ---- the report ------------------------------------------------------------------------

class Frame:
    def __init__(self, name, file=None, span=None, count=1, tail=False):
        self.name, self.file, self.span, self.count, self.tail = name, file, span, count, tail

    def __repr__(self):
        return "Frame(%r, %r, %r, %d)" % (self.name, self.file, self.span, self.count)


class Report:
    """What a run printed: its frames newest first, and how complete they are."""

    def __init__(self, kind):
        self.kind = kind      # "strobe" or "xc"
        self.found = False    # a report (a stack) was printed at all
        self.note = ""        # why there is no stack, if so
        self.frames = []
        self.cut = 0          # entries not kept at the bottom (the chain is incomplete)
        self.folded = 0       # entries not kept between frames (a recursion's middle)
        self.lines = []       # the report's text
        self.elided = 0       # tail calls elided, in total


HEADER = "strobe: uncaught exception in Haskell thread"
# `#3 Main.stepB at Threads.hs:25:23-28 (x297) (tail)`: the count (`x` or `×`) and the
# tail mark in any order, other parenthesised remarks ignored.
FRAME_RE = re.compile(r"^#(\d+) (\S+)(?: at (\S+))?((?: \([^()]*\))*)\s*$")
LOC_RE = re.compile(r"^(.*?):(\d+:\d+(?:-\d+)?|\(\d+,\d+\)-\(\d+,\d+\))$")
ELIDED_RE = re.compile(r"^\s+\.\.\. (\d+) tail calls? elided")
CUT_RE = re.compile(r"^\.\.\. (\d+) older entr(?:y|ies) (?:not kept|dropped)")


def parse_strobe(stderr):
    """The last strobe report at an uncaught exception in stderr."""
    r = Report("strobe")
    lines = stderr.splitlines()
    starts = [i for i, l in enumerate(lines) if l.startswith(HEADER)]
    if not starts:
        r.note = "no report: strobe printed nothing at the uncaught exception"
        return r
    i = starts[-1]
    r.lines.append(lines[i])
    if "asynchronously" in lines[i]:
        r.note = "no stack: the report says the exception was asynchronous"
        return r
    r.found = True
    for line in lines[i + 1:]:
        m = FRAME_RE.match(line)
        if m and r.cut:  # frames below the marker: it stands for the middle, not the bottom
            r.folded += r.cut
            r.cut = 0
        if m:
            notes = re.findall(r"\(([^()]*)\)", m.group(4))
            f = Frame(m.group(2), tail="tail" in notes)
            if m.group(3):
                lm = LOC_RE.match(m.group(3))
                f.file, f.span = (lm.group(1), lm.group(2)) if lm else (m.group(3), None)
            for n in notes:
                if re.match(r"^(?:x|\u00d7)\d+$", n):
                    f.count = int(n[1:])
            r.frames.append(f)
        elif ELIDED_RE.match(line):
            r.elided += int(ELIDED_RE.match(line).group(1))
        elif CUT_RE.match(line):
            r.cut = int(CUT_RE.match(line).group(1))
        elif line.startswith("(the dynamic stack") or line.startswith("(approximate"):
            pass
        else:
            break
        r.lines.append(line)
    return r


XC_HEADER = "*** Exception (reporting due to +RTS -xc)"


def parse_xc(stderr, message):
    """The last +RTS -xc stack printed before GHC's message (its last occurrence)."""
    r = Report("xc")
    end = stderr.rfind(message) if message else len(stderr)
    if end < 0:
        end = len(stderr)
    start = stderr.rfind(XC_HEADER, 0, end)
    if start < 0:
        # Without -xc's, the cost-centre stack that an ErrorCall's message carries.
        m = re.search(r"^CallStack \(from -prof\):\n((?:  \S+ \(.*\)\n?)+)", stderr, re.M)
        if not m:
            r.note = "no -xc stack before GHC's message"
            return r
        r.found = True
        r.lines = m.group(0).splitlines()
        r.frames = [Frame(l.split()[0]) for l in r.lines[1:]]
        return r
    r.found = True
    lines = stderr[start:].splitlines()
    r.lines.append(lines[0])
    for line in lines[1:]:
        # A CAF's own stack, then the stack that evaluated it: `  --> evaluated by: M.f,`.
        m = re.match(r"^  (?:called from |--> evaluated by: )?(\S+?),?\s*$", line)
        if not m:
            break
        r.lines.append(line)
        r.frames.append(Frame(m.group(1)))
    return r


# ---- the chain -------------------------------------------------------------------------

def chain_of(report, test):
    """The report's chain by the rule of docs/dynstack-ghc.md ("Fidelity"): [(name, n)].

    strobe: frames of code from files that are not the program's (a library's code that
    GHC inlined into the program) and MAY names are dropped; -xc: only the names of the
    instrumented modules are kept (the libraries' cost centres), MAY names dropped.  A
    lambda (-prof's `Main.main.\\`) is part of the binding it is in (`Main.main`).  Then
    a run of equal names is one element; n counts the activations it stands for."""
    files = {os.path.basename(p) for p in test.program}
    out = []
    for f in report.frames:
        name = f.name
        while name.endswith(".\\"):  # a lambda is part of the binding it is in
            name = name[:-2]
        if name in test.may:
            continue
        if report.kind == "strobe" and f.file is not None and os.path.basename(f.file) not in files:
            continue
        if report.kind == "xc" and not any(fnmatch.fnmatchcase(f.name, g) for g in test.globs()):
            continue
        if out and out[-1][0] == name:
            out[-1] = (name, out[-1][1] + f.count)
        else:
            out.append((name, f.count))
    return out


def show_chain(chain, report=None, sep=" \u2190 "):
    """`Main.failB ← Main.stepB (×300) ← Main.main`, and `← …` if the bottom was cut."""
    parts = [n if c == 1 else "%s (\u00d7%d)" % (n, c) for n, c in chain]
    if report is not None and report.cut:
        parts.append("\u2026 %d not kept" % report.cut)
    if report is not None and not report.found:
        return "(%s)" % report.note
    return sep.join(parts) if parts else "(empty)"


# ---- names by location ------------------------------------------------------------------
# A diagnostic, not a test: the chain a strobe report would have if each frame were named
# by the binding its location is in, the innermost of -prof's cost centres (-fprof-auto:
# one per binding) whose span holds the frame's span.  It tells what names alone would
# fix (source names for GHC's) from what they would not (a missing or stale frame).

def parse_span(span):
    m = re.match(r"^(\d+):(\d+)(?:-(\d+))?$", span)
    if m:
        l, c1 = int(m.group(1)), int(m.group(2))
        return (l, c1, l, int(m.group(3) or c1))
    m = re.match(r"^\((\d+),(\d+)\)-\((\d+),(\d+)\)$", span)
    return tuple(int(g) for g in m.groups()) if m else None


def parse_prof(path):
    """The cost centres of a -prof run's .prof file: [(Module.name, file, span)]."""
    ccs, tree = [], False
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return ccs
    for line in lines:
        if line.startswith("COST CENTRE") and " no. " in line:
            tree = True
            continue
        w = line.split()
        if not tree or len(w) < 3 or w[2].startswith("<"):
            continue
        lm = LOC_RE.match(w[2])
        span = parse_span(lm.group(2)) if lm else None
        if span:
            ccs.append(("%s.%s" % (w[1], w[0]), os.path.basename(lm.group(1)), span))
    return ccs


def by_location(report, test, ccs):
    """The report's chain with each frame named by its innermost cost centre ([raw] if
    none), and whether that is right: the right chain, whole, nothing of ABSENT."""
    named = Report(report.kind)
    named.found, named.cut, named.note = report.found, report.cut, report.note
    for f in report.frames:
        span = parse_span(f.span) if f.span else None
        best = None
        for name, file, (l1, c1, l2, c2) in ccs:
            if span and file == os.path.basename(f.file or "") and \
                    (l1, c1) <= span[:2] and span[2:] <= (l2, c2):
                size = (l2 - l1, c2 - c1 if l1 == l2 else c2)
                if best is None or size < best[0]:
                    best = (size, name)
        named.frames.append(Frame(best[1] if best else "[%s]" % f.name, f.file, f.span, f.count, f.tail))
    chain = chain_of(named, test)
    right = (report.found and not report.cut and [n for n, _ in chain] == test.chain
             and not any(f.name in test.absent for f in named.frames))
    return chain, right


class Result:
    def __init__(self, mode, report, chain, expected, problems, status=None, stderr=""):
        self.mode, self.report, self.chain, self.expected = mode, report, chain, expected
        self.problems, self.status, self.stderr = problems, status, stderr

    @property
    def ok(self):
        return not self.problems


def judge(mode, test, report, status, stderr):
    expected = test.xc_chain if mode == "xc" else test.chain
    problems = []
    if status == "timeout":
        problems.append("the program did not end within %d seconds" % RUN_TIMEOUT)
    if test.message not in stderr:
        problems.append("GHC's message does not say %r: the program did not fail as intended" % test.message)
    if status == "timeout":
        pass
    elif test.exit is None and status == 0:
        problems.append("exit status 0: the program did not fail")
    elif test.exit is not None and str(status) != test.exit:
        problems.append("exit status %s, not %s" % (status, test.exit))
    chain = chain_of(report, test) if report.found else []
    if not report.found:
        problems.append(report.note)
    elif expected is not None:
        names = [n for n, _ in chain]
        if report.cut:
            problems.append("the report's bottom is cut: %d older entries not kept" % report.cut)
        if names != expected:
            problems.append("the chain is not the right one")
            if not names or names[0] != expected[0]:
                problems.append("the top is %s, not the raiser %s" % (names[0] if names else "nothing", expected[0]))
    if mode != "xc" and report.found:
        present = [f.name for f in report.frames]
        for name in test.absent:
            if name in present:
                problems.append("%s is in the report: it must not be (finished, or another thread's)" % name)
    return Result(mode, report, chain, expected, problems, status, stderr)


# ---- building and running --------------------------------------------------------------

def run_mode(test, mode, out, strobe_ghc, ghc, extra=()):
    """Builds and runs the program for one mode; the Result, or one with the build's error."""
    # The builds run in their own directory: a relative path to a compiler is made absolute.
    strobe_ghc, ghc = [os.path.abspath(c) if os.sep in c else c for c in (strobe_ghc, ghc)]
    d = os.path.join(out, mode)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for p in test.program + test.data:
        shutil.copy(os.path.join(test.inputs, p), d)
    main = test.program[0]
    if mode == "xc":
        cmd = [ghc, "-v0", "-O0", "-prof", "-fprof-auto", "-rtsopts"] + test.ghc_opts
        rts = ["-xc", "-p"] + test.rts_opts  # -p: prog.prof, the cost centres' spans
    else:
        cmd = [strobe_ghc, "-v0", "-" + mode.split("-")[1], "--instrument=" + test.instrument,
               "-rtsopts"] + (["--ticks=functions"] if mode.endswith("-fn") else []) \
            + test.ghc_opts + list(extra)
        rts = test.rts_opts
    cmd += ["-outputdir", "o", main, "-o", "prog"]
    b = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if b.returncode != 0:
        r = Report("xc" if mode == "xc" else "strobe")
        r.note = "the build failed"
        hint = ("\n(no profiling libraries: install ghc-prof, as scripts/setup-debian.sh does)"
                if mode == "xc" and "profiling librar" in b.stdout else "")
        return Result(mode, r, [], test.chain,
                      ["the build failed: " + " ".join(cmd) + "\n" + b.stdout + hint])
    argv = ["./prog"] + test.args + (["+RTS"] + rts + ["-RTS"] if rts else [])
    try:
        p = subprocess.run(argv, cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
        status, stderr = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        status, stderr = "timeout", (e.stderr or b"").decode("utf-8", "replace")
    with open(os.path.join(d, "stderr"), "w") as f:
        f.write(stderr)
    report = parse_xc(stderr, test.message) if mode == "xc" else parse_strobe(stderr)
    return judge(mode, test, report, status, stderr)


LABEL = {"strobe-O0": "strobe -O0", "strobe-O1": "strobe -O1", "xc": "-prof -xc",
         "strobe-O0-fn": "strobe -O0 --ticks=functions",
         "strobe-O1-fn": "strobe -O1 --ticks=functions"}


def chain_lines(res):
    lines = [n if c == 1 else "%s (\u00d7%d)" % (n, c) for n, c in res.chain]
    if res.report.cut:
        lines.append("\u2026 %d older entries not kept" % res.report.cut)
    if not res.report.found:
        lines = ["(%s)" % res.report.note]
    return lines


def side_by_side(res, xc=None):
    """The right chain, the run's and (for a strobe run) -xc's, one name a line; `≠`
    where the run's differs from the right one."""
    cols = [list(res.expected or []), chain_lines(res)]
    heads = ["right chain", LABEL[res.mode]]
    if xc is not None and res.mode != "xc":
        cols.append(chain_lines(xc))
        heads.append(LABEL["xc"])
    widths = [max([len(heads[k])] + [len(x) for x in cols[k]]) + 2 for k in range(len(cols) - 1)]
    def row(mark, cells):
        return ("  %s " % mark + "".join("%-*s" % (w, c) for w, c in zip(widths, cells))
                + cells[-1]).rstrip()
    out = [row(" ", heads)]
    for i in range(max(len(c) for c in cols)):
        cells = [c[i] if i < len(c) else "" for c in cols]
        same = i < len(cols[0]) and i < len(res.chain) and res.chain[i][0] == cols[0][i]
        out.append(row(" " if same else "\u2260", cells))
    return "\n".join(out)


SELF_TEST_TEST = """\
PROGRAM: Threads.hs
MESSAGE: out of turns
CHAIN: Main.failB Main.stepB Main.main
ABSENT: Main.stepA
MAY: Main.radius
"""

SELF_TEST_HEADER = "strobe: uncaught exception in Haskell thread 1; the dynamic stack at its raise, newest first:\n"

# (what the case shows, a report's frames, whether it is right)
SELF_TEST_CASES = [
    ("the right chain", "#0 Main.failB at Threads.hs:29:1-67\n#1 Main.stepB at Threads.hs:25:23-28\n"
     "#2 Main.main at Threads.hs:(32,1)-(42,13)\n", True),
    ("a run collapses, counts and tail marks do not count",
     "#0 Main.failB at Threads.hs:29:1-67 (tail)\n#1 Main.stepB at Threads.hs:25:23-28 (\u00d7297)\n"
     "#2 Main.stepB at Threads.hs:(20,1)-(26,20) (x3) (tail)\n   ... 2 tail calls elided\n"
     "#3 Main.main at Threads.hs:(32,1)-(42,13)\n", True),
    ("a library's inlined code and a MAY name are dropped, a lambda is its binding",
     "#0 Main.failB at Threads.hs:29:1-67\n#1 Main.$sinsertWith at Data/Map/Internal.hs:1:1-9\n"
     "#2 Main.radius at Threads.hs:2:1\n#3 Main.stepB at Threads.hs:25:23-28\n"
     "#4 Main.main.\\ at Threads.hs:40:3-9\n#5 Main.main at Threads.hs:(32,1)-(42,13)\n", True),
    ("the raiser missing", "#0 Main.stepB at Threads.hs:25:23-28\n#1 Main.main at Threads.hs:32:1\n", False),
    ("GHC's names", "#0 Main.failB at Threads.hs:29:1\n#1 Main.$wstepB at Threads.hs:25:23\n"
     "#2 Main.main1 at Threads.hs:32:1\n", False),
    ("a finished function", "#0 Main.failB at Threads.hs:29:1\n#1 Main.stepB at Threads.hs:25:23\n"
     "#2 Main.stepA at Threads.hs:12:1\n#3 Main.stepB at Threads.hs:25:23\n#4 Main.main at Threads.hs:32:1\n", False),
    ("a cut bottom", "#0 Main.failB at Threads.hs:29:1\n#1 Main.stepB at Threads.hs:25:23\n"
     "#2 Main.main at Threads.hs:32:1\n... 12 older entries not kept\n", False),
    ("a recursion's folded middle", "#0 Main.failB at Threads.hs:29:1\n"
     "#1 Main.stepB at Threads.hs:25:23 (\u00d720)\n... 12 older entries not kept\n"
     "#21 Main.stepB at Threads.hs:25:23\n#22 Main.main at Threads.hs:32:1\n", True),
]

SELF_TEST_XC = """*** Exception (reporting due to +RTS -xc): (THUNK_STATIC), stack trace:
  GHC.Real.CAF
  --> evaluated by: Main.failB,
  called from Main.stepB.\\,
  called from Main.stepB,
  called from Main.main
prog: out of turns
"""


def self_test():
    """Checks the rule on made-up reports: prints one line per case, exits 1 on a surprise."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".test", delete=False) as f:
        f.write(SELF_TEST_TEST)
    test = Test(f.name)
    os.unlink(f.name)
    bad = 0
    cases = [(what, "strobe", SELF_TEST_HEADER + frames + "prog: out of turns\n", right)
             for what, frames, right in SELF_TEST_CASES]
    cases.append(("-xc: a CAF's stack, then the one that evaluated it", "xc", SELF_TEST_XC, True))
    for what, kind, stderr, right in cases:
        report = parse_xc(stderr, test.message) if kind == "xc" else parse_strobe(stderr)
        res = judge(kind if kind == "xc" else "strobe-O0", test, report, 1, stderr)
        ok = res.ok == right
        bad += not ok
        print("%s %s: %s (%s)" % ("ok" if ok else "WRONG", what, show_chain(res.chain, report),
                                  "right" if res.ok else "; ".join(res.problems)))
    sys.exit(1 if bad else 0)


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("test")
    ap.add_argument("--strobe-ghc", default="strobe-ghc")
    ap.add_argument("--ghc", default="ghc")
    ap.add_argument("--out", default=None, help="where to build (default: a directory beside the test's name in /tmp)")
    ap.add_argument("--modes", default=",".join(MODES))
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []  # for strobe-ghc's builds
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    test = Test(a.test)
    out = a.out or os.path.join("/tmp", "strobe-fidelity", test.name)
    os.makedirs(out, exist_ok=True)
    failed = 0
    modes = a.modes.split(",")
    # -xc first: a strobe run's failure shows -xc's chain beside its own.
    results = {m: run_mode(test, m, out, a.strobe_ghc, a.ghc, extra)
               for m in sorted(modes, key=lambda m: m != "xc")}
    for mode in modes:
        res = results[mode]
        if mode == "xc" and test.xc_chain is None:
            print("INFO %s %s: %s (not compared: the test says -xc is wrong here)"
                  % (test.name, LABEL[mode], show_chain(res.chain, res.report)))
            if res.ok or all("chain" in p or "cut" in p for p in res.problems):
                continue
        if res.ok:
            print("PASS %s %s: %s" % (test.name, LABEL[mode], show_chain(res.chain, res.report)))
            continue
        failed += 1
        print("FAIL %s %s:" % (test.name, LABEL[mode]))
        for p in res.problems:
            print("  " + p)
        if res.report.found:
            print(side_by_side(res, results.get("xc")))
            if mode != "xc" and "xc" in results:
                ccs = parse_prof(os.path.join(out, "xc", "prog.prof"))
                loc, right = by_location(res.report, test, ccs)
                print("  named by location (each frame by the -prof cost centre whose span holds it):")
                print("    %s%s" % (show_chain(loc, res.report), "  (right)" if right else ""))
        print("  the report (%s):" % os.path.join(out, mode, "stderr"))
        for line in res.report.lines or res.stderr.splitlines()[-8:]:
            print("    | " + line)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
