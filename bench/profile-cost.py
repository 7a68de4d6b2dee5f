#!/usr/bin/env python3
# python3 bench/profile-cost.py [PROGRAM...]
#
# profile-cost.py — what sampling profiles cost on real Haskell programs, and what they
# say beside GHC's cost-centre profiles (issue 12).  A benchmark, not part of CI: it
# prints tables and fails only when a build fails, an output differs or a profile is
# missing.
#
# On each scaled corpus program ($STROBE_CORPUS/scaled/NAME.hs, default: all of them;
# STROBE_CORPUS defaults to ../shared/corpus/ghc902 beside the repository; the programs
# take no arguments, scaled/README.md) it builds, from the same source, each in its own
# directory with -fforce-recomp:
#   ghc     ghc -O1
#   prof    ghc -O1 -prof -fprof-auto            (Debian's ghc-prof), run with +RTS -p
#   strobe  strobe-ghc -O1 --instrument='*'
# and runs, RUNS rounds of one run each (the variants of a program one after the other
# in every round, so that a change in the machine's speed touches them all alike, each
# round starting at the next variant of this list):
#   ghc, prof (+RTS -p),
#   strobe without STROBE_OPTIONS,
#   strobe with STROBE_OPTIONS=profile=FILE (the default rate, 99 Hz),
#   strobe with STROBE_OPTIONS=profile=FILE,profile_rate=$HIGH_RATE (default 999),
#   strobe without STROBE_OPTIONS again: the same runs as the first, whose "overhead"
#   is the measurement's noise on this machine at this time.
# Every run's standard output must be NAME.stdout.txt and its status 0; every profiled
# run must write its profile.  Of each variant it keeps the best wall time (the time from
# spawning the process to reaping it) and, separately, the best CPU time (user + system,
# from wait4's rusage) of the RUNS runs.
#
# Table 1, the cost of sampling: the profiled runs' best times against the unprofiled
# run's, per program and their geometric mean; target: at most 5% at the default rate
# (wall and CPU), beside the noise (the unprofiled runs again).  The samples per run
# and per CPU second show the rate obtained (the kernel's CPU-time timers fire at its
# clock tick, so a high rate gets about that).
#
# Then the fixed cost of a profile, what a run pays whatever its length (the start reads
# the executable's symbol table into a sorted code map, the end writes the file): a
# program that does next to nothing (`print (sum [1 .. 1000])`, strobe-ghc -O1
# --instrument='*'), run 20 * RUNS times without STROBE_OPTIONS and with profile=FILE,
# alternately: the difference of the best and of the median wall and CPU times.
#
# Table 2, the cost of each build: best wall time against ghc -O1's.
#
# Table 3, the top five functions by self time, side by side:
#   -prof   the .prof file's top table (the cost centres by %time; its rows are
#           `fn` or `fn.local` of MODULE, with a source span), summed over the RUNS runs
#           as ticks; GHC leaves the time in its garbage collector out of it.
#   strobe  the folded profiles of the RUNS runs at $HIGH_RATE, concatenated.  Self time
#           as a cost centre gets it: a sample counts for its innermost Haskell frame,
#           the frames that say where the PC was outside instrumented code (`[base]`,
#           `[rts]`, `[libc]`…: library code the function called) charged to it, as
#           -prof charges library code to its caller's cost centre; samples in GC
#           (`[gc]`) are left out, as -prof leaves GC out; a sample with no Haskell frame
#           keeps its bracketed name.  strobe-prof's own list, with [gc] and the leaves
#           as it prints them, follows each table.
# How the names are lined up: GHC names a cost centre by the source binding (`fib`,
# `wordFreq.bump`, `main.\` for a lambda); strobe names a frame by GHC's Cmm function
# after -O1 (`Main.$wfib`, a worker; `Main.lvl3`, `Main.$wgo1`, `Main.main_go1`: floated
# and local code).  Both are mapped to the *top-level binding* they are part of: a cost
# centre by the first component of its name; a strobe function by its source notes (the
# executable's tick descriptors, which have the spans): its outermost notes' spans are
# looked up in the spans of the top-level cost centres that the .prof file lists, and the
# binding holding most of them wins (the widest, on a tie); a function with no note in
# such a span is mapped by its name (`$w`, `$s` and such prefixes, a numeric suffix and a
# `_local` part taken off) when that names a binding, else shown as `?`.  Each row shows
# its binding and the other tool's share of that binding (-prof: the %time of all the
# binding's cost centres; strobe: the self time of all the functions mapped to it).  A
# summary gives each program's first binding by these sums in both.
#
# Environment: RUNS (rounds, default 15), HIGH_RATE (default 999), BUILD (strobe's build
# tree, default build), GHC (default ghc), STROBE_CORPUS, KEEP=1 keeps the build
# directory (its path is printed), RESULTS=FILE saves the measurements as JSON,
# REPLAY=FILE prints the tables from such a file without measuring.
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(ROOT, "build")))
GHC = os.environ.get("GHC", "ghc")
RUNS = int(os.environ.get("RUNS", "15"))
HIGH_RATE = int(os.environ.get("HIGH_RATE", "999"))
CORPUS = os.environ.get("STROBE_CORPUS", os.path.join(ROOT, "..", "shared", "corpus", "ghc902"))
SCALED = os.path.join(os.path.abspath(CORPUS), "scaled")
STROBE_GHC = os.path.join(BUILD, "strobe-ghc")
STROBE_PROF = os.path.join(BUILD, "strobe-prof")
TARGET = 0.05  # at most 5% at the default rate
TOP = 5

BUILDS = {
    "ghc": lambda: [GHC, "-O1"],
    "prof": lambda: [GHC, "-O1", "-prof", "-fprof-auto"],
    "strobe": lambda: [STROBE_GHC, "-O1", "--instrument=*"],
}
# variant: (build, extra arguments, STROBE_OPTIONS or None)
VARIANTS = [
    ("ghc", "ghc", [], None),
    ("prof", "prof", ["+RTS", "-p", "-RTS"], None),
    ("strobe", "strobe", [], None),
    ("strobe+99", "strobe", [], "profile=%s"),
    ("strobe+high", "strobe", [], "profile=%%s,profile_rate=%d" % HIGH_RATE),
    ("strobe-again", "strobe", [], None),
]


def die(msg):
    print("profile-cost.py: " + msg, file=sys.stderr)
    sys.exit(2)


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def build(prog, b, tmp):
    """Builds prog as b in tmp/prog/b; returns (exe, note) or (None, note)."""
    d = os.path.join(tmp, prog, b)
    os.makedirs(d)
    shutil.copy(os.path.join(SCALED, prog + ".hs"), d)
    cmd = BUILDS[b]() + ["-fforce-recomp", "-outputdir", "o", "-o", prog, prog + ".hs"]
    print("+ (cd %s && %s)" % (d, " ".join(cmd)), flush=True)
    r = subprocess.run(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        print("%s/%s: build failed (status %d)" % (prog, b, r.returncode), file=sys.stderr)
        return None, None
    note = None
    m = re.search(r"warning: module (\S+): strobec refused", r.stderr)
    if m:
        note = "strobec refused module %s: GHC's object, not instrumented" % m.group(1)
    return os.path.join(d, prog), note


def run_once(exe, args, strobe_options, expected):
    """One run: (wall s, cpu s, error or None)."""
    env = dict(os.environ)
    env.pop("STROBE_OPTIONS", None)
    if strobe_options is not None:
        env["STROBE_OPTIONS"] = strobe_options
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen([exe] + args, stdout=out, stderr=subprocess.DEVNULL, env=env,
                             cwd=os.path.dirname(exe))
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    err = None
    if p.returncode != 0:
        err = "exit status %d" % p.returncode
    elif text != expected:
        err = "output differs from the expected"
    return wall, ru.ru_utime + ru.ru_stime, err


def folded(path):
    """The stacks of a folded file: [(frames, count)]."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, count = line.rsplit(" ", 1)
                out.append((stack.split(";"), int(count)))
    return out


def prof_top_table(path):
    """The .prof file's total ticks and its top table: [(module, cost centre, src, %time)]."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"total time\s*=\s*[\d.]+ secs\s*\((\d+) ticks", text)
    if not m:
        raise ValueError("%s: no `total time` line" % path)
    ticks = int(m.group(1))
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("COST CENTRE"))
    head = lines[start]
    rows = []
    for l in lines[start + 2:]:
        if not l.strip():
            break
        f = l.split()
        # COST CENTRE MODULE SRC %time %alloc; a cost centre's name has no space
        rows.append((f[1], f[0], " ".join(f[2:-2]), float(f[-2])))
    if "%time" not in head:
        raise ValueError("%s: no top table" % path)
    return ticks, rows


def prof_spans(path):
    """The top-level cost centres of the .prof file's tree, with their spans:
    {(module, name): [(file, l1, c1, l2, c2)]}."""
    with open(path) as f:
        lines = f.read().split("\n")
    heads = [i for i, l in enumerate(lines) if l.startswith("COST CENTRE")]
    spans = {}
    for l in lines[heads[1] + 1:] if len(heads) > 1 else []:
        f = l.split()
        if len(f) < 4 or "." in f[0] or f[0] in ("MAIN", "CAF"):
            continue
        s = parse_span(f[2])
        if s:
            spans.setdefault((f[1], f[0]), [])
            if s not in spans[(f[1], f[0])]:
                spans[(f[1], f[0])].append(s)
    return spans


def parse_span(src):
    m = re.match(r"(.+):\((\d+),(\d+)\)-\((\d+),(\d+)\)$", src)
    if m:
        return (m.group(1),) + tuple(int(x) for x in m.groups()[1:])
    m = re.match(r"(.+):(\d+):(\d+)(?:-(\d+))?$", src)
    if m:
        l, c1 = int(m.group(2)), int(m.group(3))
        return (m.group(1), l, c1, l, int(m.group(4) or c1))
    return None


# ---- the executable's tick descriptors (intrinsics/tickdesc.def: 56 bytes, x86-64) -----------

DESC = struct.Struct("<6I4Q")  # kind line1 col1 line2 col2 flags function file code parent


def tick_descriptors(exe):
    """[(function, file, l1, c1, l2, c2)] of the section strobe_ticks (ELF64; pointers as
    stored, or by R_X86_64_RELATIVE relocations in a position-independent executable)."""
    with open(exe, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return []
    e_type, = struct.unpack_from("<H", data, 16)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]

    def name(s):
        o = names + s[0]
        return data[o:data.index(b"\0", o)].decode()

    def cstr(va):
        for s in secs:
            if s[1] != 8 and s[3] and s[3] <= va < s[3] + s[5]:  # not SHT_NOBITS
                o = s[4] + va - s[3]
                return data[o:data.index(b"\0", o)].decode(errors="replace")
        return None

    ticks = [s for s in secs if name(s) == "strobe_ticks"]
    if not ticks:
        return []
    t = ticks[0]
    relocs = {}
    if e_type == 3:  # ET_DYN
        for s in secs:
            if s[1] == 4:  # SHT_RELA
                for k in range(s[5] // 24):
                    off, info, add = struct.unpack_from("<QQq", data, s[4] + 24 * k)
                    if info & 0xffffffff == 8 and t[3] <= off < t[3] + t[5]:
                        relocs[off] = add
    out = []
    for k in range(t[5] // DESC.size):
        v = list(DESC.unpack_from(data, t[4] + DESC.size * k))
        va = t[3] + DESC.size * k
        fn = relocs.get(va + 24, v[6])
        fi = relocs.get(va + 32, v[7])
        if v[0] != 1:  # STROBE_TICK_SOURCE_NOTE
            continue
        out.append((cstr(fn), cstr(fi), v[1], v[2], v[3], v[4]))
    return out


def inside(a, b):
    """Span a (l1, c1, l2, c2) lies in span b."""
    return (a[0], a[1]) >= (b[0], b[1]) and (a[2], a[3]) <= (b[2], b[3])


def width(s):
    return (s[2] - s[0]) * 1000 + (s[3] - s[1])


def strip_name(fn):
    """`Main.$w$sinsert` -> (`Main`, `insert`); `Main.main_go1` -> (`Main`, `main`)."""
    m = re.match(r"((?:[A-Z][\w']*\.)+)(.*)$", fn)
    if not m:
        return None, fn
    mod, n = m.group(1)[:-1], m.group(2)
    while re.match(r"\$[A-Za-z].", n):  # $w worker, $s specialisation, $c method...
        n = n[2:]
    n = re.sub(r"\d+$", "", n)
    if "_" in n and not n.startswith("_"):
        n = n.split("_")[0]
    return mod, n


def binding_of(fn, descs, spans):
    """The top-level binding (`Module.name`) that strobe function fn is part of, or None."""
    if fn.startswith("["):
        return None
    mine = [d for d in descs if d[0] == fn]
    outer = [d for d in mine if not any(e is not d and e[1] == d[1] and inside(d[2:], e[2:])
                                        and d[2:] != e[2:] for e in mine)]
    votes = {}
    for d in outer:
        best = None
        for key, ss in spans.items():
            for s in ss:
                if os.path.basename(s[0]) == os.path.basename(d[1] or "") and inside(d[2:], s[1:]):
                    if best is None or width(s[1:]) < width(best[1][1:]):
                        best = (key, s)
        if best:
            k = "%s.%s" % best[0]
            n, w = votes.get(k, (0, 0))
            votes[k] = (n + 1, max(w, width(d[2:])))
    if votes:
        return max(sorted(votes), key=lambda k: votes[k])
    mod, n = strip_name(fn)
    if mod and (mod, n) in spans:
        return "%s.%s" % (mod, n)
    return None


def strobe_self(stacks):
    """Self samples by function, library leaves charged to the frame under them, [gc]
    left out: ({function: count}, samples counted, samples in [gc])."""
    self_, total, gc = {}, 0, 0
    for frames, c in stacks:
        if frames[-1] == "[gc]":
            gc += c
            continue
        haskell = [f for f in frames if not f.startswith("[")]
        key = haskell[-1] if haskell else frames[-1]
        self_[key] = self_.get(key, 0) + c
        total += c
    return self_, total, gc


def strobe_prof_top(path, n):
    """strobe-prof's own top n: [(self%, function)]."""
    p = subprocess.run([sys.executable, STROBE_PROF, "--top", str(n), path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("strobe-prof failed: " + p.stderr)
    rows = []
    for line in p.stdout.split("\n")[2:]:
        f = line.split()
        if len(f) >= 5:
            rows.append((float(f[0].rstrip("%")), f[4]))
    return rows


# ---- main ----------------------------------------------------------------------------

TRIVIAL = "main :: IO ()\nmain = print (sum [1 .. 1000 :: Int])\n"


def fixed_cost(tmp):
    """The trivial program's best and median times, without and with a profile."""
    d = os.path.join(tmp, "trivial")
    os.makedirs(d)
    with open(os.path.join(d, "Trivial.hs"), "w") as f:
        f.write(TRIVIAL)
    cmd = BUILDS["strobe"]() + ["-outputdir", "o", "-o", "trivial", "Trivial.hs"]
    print("+ (cd %s && %s)" % (d, " ".join(cmd)), flush=True)
    r = subprocess.run(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return None
    exe, expected = os.path.join(d, "trivial"), b"500500\n"
    times = {"none": [], "profile": []}
    for i in range(20 * RUNS):
        for v in ("none", "profile") if i % 2 == 0 else ("profile", "none"):
            opts = "profile=%s" % os.path.join(d, "t.folded") if v == "profile" else None
            wall, cpu, err = run_once(exe, [], opts, expected)
            if err:
                print("trivial/%s: %s" % (v, err), file=sys.stderr)
                return None
            times[v].append((wall, cpu))
    out = {}
    for v, xs in times.items():
        w, c = sorted(x[0] for x in xs), sorted(x[1] for x in xs)
        out[v] = {"wall": [w[0], w[len(w) // 2]], "cpu": [c[0], c[len(c) // 2]], "n": len(xs)}
    return out


def measure(progs, tmp):
    res = {"progs": progs, "runs": RUNS, "high_rate": HIGH_RATE, "time": {}, "notes": {},
           "samples99": {}, "cpu99": {}, "sampleshigh": {}, "cpuhigh": {}, "prof": {},
           "strobe": {}}
    exes, status = {}, 0
    expected = {}
    for prog in progs:
        with open(os.path.join(SCALED, prog + ".stdout.txt"), "rb") as f:
            expected[prog] = f.read()
        for b in BUILDS:
            exe, note = build(prog, b, tmp)
            if exe is None:
                return None, 1
            exes[prog, b] = exe
            if note:
                res["notes"][prog] = note
    best = {}
    high = {prog: [] for prog in progs}
    prof_ticks = {prog: {} for prog in progs}
    prof_total = {prog: 0 for prog in progs}
    samples = {(prog, v): [] for prog in progs for v in ("strobe+99", "strobe+high")}
    for rnd in range(RUNS):
        print("round %d of %d" % (rnd + 1, RUNS), flush=True)
        for prog in progs:
            k = rnd % len(VARIANTS)  # each round starts at another variant
            for v, b, args, opts in VARIANTS[k:] + VARIANTS[:k]:
                exe = exes[prog, b]
                path = None
                if opts:
                    path = os.path.join(os.path.dirname(exe), "%s.%d.folded" % (v, rnd))
                    opts = opts % path
                wall, cpu, err = run_once(exe, args, opts, expected[prog])
                if err:
                    print("%s/%s: %s" % (prog, v, err), file=sys.stderr)
                    status = 1
                w, c = best.get((prog, v), (wall, cpu))
                best[prog, v] = (min(w, wall), min(c, cpu))
                if path:
                    if not os.path.exists(path):
                        print("%s/%s: no profile written" % (prog, v), file=sys.stderr)
                        status = 1
                        continue
                    st = folded(path)
                    samples[prog, v].append((sum(c for _, c in st), cpu))
                    if v == "strobe+high":
                        high[prog].extend(st)
                if v == "prof":
                    pf = os.path.join(os.path.dirname(exe), prog + ".prof")
                    ticks, rows = prof_top_table(pf)
                    prof_total[prog] += ticks
                    for mod, cc, src, pct in rows:
                        k = (mod, cc, src)
                        prof_ticks[prog][k] = prof_ticks[prog].get(k, 0) + pct * ticks / 100
                    if rnd == RUNS - 1:
                        res["prof"][prog] = {"spans": {"%s\t%s" % k: v2 for k, v2 in
                                                       prof_spans(pf).items()}}
    for (prog, v), (w, c) in best.items():
        res["time"]["%s/%s" % (prog, v)] = [w, c]
    for (prog, v), xs in samples.items():
        key = "samples99" if v == "strobe+99" else "sampleshigh"
        res[key][prog] = [x[0] for x in xs]
        res["cpu99" if v == "strobe+99" else "cpuhigh"][prog] = [x[1] for x in xs]
    res["fixed"] = fixed_cost(tmp)
    if res["fixed"] is None:
        status = 1
    for prog in progs:
        res["prof"][prog]["ticks"] = prof_total[prog]
        res["prof"][prog]["rows"] = [[k[0], k[1], k[2], t] for k, t in prof_ticks[prog].items()]
        hp = os.path.join(tmp, prog, "strobe", "high.folded")
        with open(hp, "w") as f:
            for frames, c in high[prog]:
                f.write("%s %d\n" % (";".join(frames), c))
        res["strobe"][prog] = {
            "stacks": high[prog],
            "descs": tick_descriptors(exes[prog, "strobe"]),
            "strobe_prof": strobe_prof_top(hp, TOP),
        }
    return res, status


def pct(x):
    return "%+.1f%%" % (100 * x)


def report(res):
    progs, t = res["progs"], res["time"]

    def T(prog, v):
        return t["%s/%s" % (prog, v)]

    print("\n1. The cost of sampling: strobe-ghc -O1 --instrument='*', run without "
          "STROBE_OPTIONS and with profile=FILE")
    print("   best of %d runs each; +wall and +cpu against the runs without a profile; "
          "noise: those runs again;" % res["runs"])
    print("   +ms: wall time added; smp: samples per run; /s: samples per CPU second")
    print("%-10s %9s %9s | %-15s | %-36s | %-36s" % (
        "", "no profile", "", "noise", "profile_rate=99 (the default)",
        "profile_rate=%d" % res["high_rate"]))
    print("%-10s %9s %9s | %7s %7s | %7s %7s %7s %6s %5s | %7s %7s %7s %6s %5s" % (
        "program", "wall s", "cpu s", "+wall", "+cpu", "+wall", "+ms", "+cpu", "smp", "/s",
        "+wall", "+ms", "+cpu", "smp", "/s"))
    ratios = {"99w": [], "99c": [], "hw": [], "hc": [], "nw": [], "nc": []}
    for p in progs:
        w0, c0 = T(p, "strobe")
        wn, cn = T(p, "strobe-again")
        ratios["nw"].append(wn / w0)
        ratios["nc"].append(cn / c0)
        line = "%-10s %9.3f %9.3f | %7s %7s" % (p, w0, c0, pct(wn / w0 - 1), pct(cn / c0 - 1))
        for v, key, sk, ck in (("strobe+99", "99", "samples99", "cpu99"),
                               ("strobe+high", "h", "sampleshigh", "cpuhigh")):
            w, c = T(p, v)
            ratios[key + "w"].append(w / w0)
            ratios[key + "c"].append(c / c0)
            smp = res[sk][p]
            n = sum(smp) / len(smp)
            rate = sum(smp) / sum(res[ck][p])
            line += " | %7s %7.1f %7s %6.0f %5.0f" % (pct(w / w0 - 1), 1000 * (w - w0),
                                                      pct(c / c0 - 1), n, rate)
        print(line + ("   (*)" if p in res["notes"] else ""))
    g = {k: gmean(v) for k, v in ratios.items()}
    print("%-10s %9s %9s | %7s %7s | %7s %7s %7s %6s %5s | %7s %7s %7s" % (
        "geomean", "", "", pct(g["nw"] - 1), pct(g["nc"] - 1), pct(g["99w"] - 1), "",
        pct(g["99c"] - 1), "", "", pct(g["hw"] - 1), "", pct(g["hc"] - 1)))
    for p, note in sorted(res["notes"].items()):
        print("(*) %s: %s; its samples measure the timer and the handler alone" % (p, note))
    worst = max(ratios["99w"] + ratios["99c"])
    ok = g["99w"] - 1 <= TARGET and g["99c"] - 1 <= TARGET
    print("target: geometric mean at the default rate at most +%.0f%%: wall %s, CPU %s: %s "
          "(worst single program %s)" % (100 * TARGET, pct(g["99w"] - 1), pct(g["99c"] - 1),
                                         "PASS" if ok else "FAIL", pct(worst - 1)))

    fx = res.get("fixed")
    if fx:
        print("\nthe fixed cost (the start and the end of a profile): a trivial program, %d runs "
              "each way, alternately" % fx["none"]["n"])
        for i, what in ((0, "best"), (1, "median")):
            print("  %-6s  no profile: wall %.3f ms, cpu %.3f ms;  profile=FILE: wall %.3f ms "
                  "(%+.3f), cpu %.3f ms (%+.3f)" % (
                      what, 1e3 * fx["none"]["wall"][i], 1e3 * fx["none"]["cpu"][i],
                      1e3 * fx["profile"]["wall"][i],
                      1e3 * (fx["profile"]["wall"][i] - fx["none"]["wall"][i]),
                      1e3 * fx["profile"]["cpu"][i],
                      1e3 * (fx["profile"]["cpu"][i] - fx["none"]["cpu"][i])))

    print("\n2. The cost of each build: best wall time of %d runs against ghc -O1's" % res["runs"])
    print("%-10s %10s %16s %14s %20s" % ("program", "ghc -O1 s", "-prof +RTS -p", "strobe",
                                        "strobe + profile"))
    cols = {"prof": [], "strobe": [], "strobe+99": []}
    for p in progs:
        a = T(p, "ghc")[0]
        line = "%-10s %10.3f" % (p, a)
        for v, wdt in (("prof", 16), ("strobe", 14), ("strobe+99", 20)):
            r = T(p, v)[0] / a
            cols[v].append(r)
            line += "%*s" % (wdt, "%.2fx" % r)
        print(line + ("   (*)" if p in res["notes"] else ""))
    print("%-10s %10s%16s%14s%20s" % ("geomean", "", "%.2fx" % gmean(cols["prof"]),
                                       "%.2fx" % gmean(cols["strobe"]),
                                       "%.2fx" % gmean(cols["strobe+99"])))
    print("(strobe: strobe-ghc -O1 --instrument='*'; strobe + profile: the same with "
          "STROBE_OPTIONS=profile=FILE at 99 Hz)")

    print("\n3. The top %d functions by self time: GHC's -prof -fprof-auto (+RTS -p) and "
          "strobe's profile at %d Hz" % (TOP, res["high_rate"]))
    print("   strobe: library and RTS leaves charged to the Haskell frame under them, [gc] "
          "left out (as -prof does);")
    print("   binding: the top-level binding a row is part of; other: the other tool's share "
          "of that binding")
    agree = []
    for p in progs:
        pr = res["prof"][p]
        spans = {}
        for k, v in pr["spans"].items():
            mod, name = k.split("\t")
            spans[mod, name] = [tuple(s) for s in v]
        ticks = pr["ticks"]
        ghc_rows = sorted(((t_ / ticks * 100 if ticks else 0, "%s.%s" % (m, cc), cc, m)
                           for m, cc, src, t_ in pr["rows"]), key=lambda r: -r[0])
        ghc_by_binding = {}
        for share, _, cc, m in ghc_rows:
            b = "%s.%s" % (m, cc.split(".")[0])
            ghc_by_binding[b] = ghc_by_binding.get(b, 0) + share
        st = res["strobe"][p]
        descs = [tuple(d) for d in st["descs"]]
        self_, total, gc = strobe_self([(f, c) for f, c in st["stacks"]])
        s_rows = sorted(((c / total * 100 if total else 0, fn) for fn, c in self_.items()),
                        key=lambda r: (-r[0], r[1]))
        s_binding = {fn: binding_of(fn, descs, spans) for _, fn in s_rows}
        s_by_binding = {}
        for share, fn in s_rows:
            b = s_binding[fn]
            if b:
                s_by_binding[b] = s_by_binding.get(b, 0) + share
        allsamples = total + gc
        print("\n%s: -prof %d ticks in %d runs; strobe %d samples in %d runs, %.1f%% in [gc] "
              "left out%s" % (p, ticks, res["runs"], allsamples, res["runs"],
                              100 * gc / allsamples if allsamples else 0,
                              "; (*) " + res["notes"][p] if p in res["notes"] else ""))
        print("    %-51s | %-49s" % ("-prof +RTS -p", "strobe"))
        print("    %6s  %-24s %-13s %5s | %6s  %-22s %-13s %5s" % (
            "%time", "cost centre", "binding", "other", "self%", "function", "binding",
            "other"))
        gtop = [r for r in ghc_rows if r[0] > 0][:TOP]
        stop = s_rows[:TOP]
        for i in range(TOP):
            left = right = ""
            if i < len(gtop):
                share, name, cc, m = gtop[i]
                b = "%s.%s" % (m, cc.split(".")[0])
                left = "%6.1f  %-24s %-13s %5s" % (share, name, b.split(".", 1)[1],
                                                   "%.1f" % s_by_binding.get(b, 0))
            if i < len(stop):
                share, fn = stop[i]
                b = s_binding[fn]
                right = "%6.1f  %-22s %-13s %5s" % (
                    share, fn, b.split(".", 1)[1] if b else "?",
                    "%.1f" % ghc_by_binding.get(b, 0) if b else "-")
            print("  %d %-51s | %s" % (i + 1, left, right))
        sp = ", ".join("%s %.1f%%" % (fn, s) for s, fn in st["strobe_prof"])
        print("    strobe-prof's own top %d (self%%, [gc] and leaves as printed): %s" % (TOP, sp))
        g5 = []
        for share, name, cc, m in gtop:
            b = "%s.%s" % (m, cc.split(".")[0])
            if b not in g5:
                g5.append(b)
        s5 = []
        for share, fn in stop:
            if s_binding[fn] and s_binding[fn] not in s5:
                s5.append(s_binding[fn])
        common = [b for b in g5 if b in s5]
        gfirst = (max(sorted(ghc_by_binding), key=lambda b: ghc_by_binding[b])
                  if ghc_by_binding else None)
        smax = max(s_by_binding.values()) if s_by_binding else None
        sfirst = sorted(b for b, v in s_by_binding.items() if v == smax)
        agree.append((p, gfirst, sfirst, smax, s_by_binding.get(gfirst, 0)))
        print("    bindings of the top %d: -prof %s; strobe %s; in both: %d" % (
            TOP, ", ".join(b.split(".", 1)[1] for b in g5),
            ", ".join(b.split(".", 1)[1] for b in s5), len(common)))
    def short(b):
        return b.split(".", 1)[1] if b else "-"

    print("\nsummary: the first top-level binding by self time (its rows' shares added), "
          "-prof's and strobe's:")
    for p, g, sf, smax, sg in agree:
        print("  %-10s -prof %-14s strobe %-14s %s" % (
            p, short(g), "=".join(short(b) for b in sf) or "-",
            "same" if g in sf else "(strobe: %s %.1f%%, %s %.1f%%)" % (
                "=".join(short(b) for b in sf) or "-", smax or 0, short(g), sg)))
    print("  the same in %d of %d programs" % (sum(1 for a in agree if a[1] in a[2]), len(agree)))


def main():
    for f in (STROBE_GHC, STROBE_PROF):
        if not os.path.exists(f):
            die("%s missing; build first: cmake --build build -j2" % f)
    if not shutil.which(GHC):
        die("%s not found" % GHC)
    if os.environ.get("REPLAY"):
        with open(os.environ["REPLAY"]) as f:
            report(json.load(f))
        return 0
    if not os.path.isdir(SCALED):
        die("no scaled corpus at %s (set STROBE_CORPUS)" % SCALED)
    if RUNS < 1 or HIGH_RATE < 1 or HIGH_RATE > 10000:
        die("RUNS must be at least 1 and HIGH_RATE 1 to 10000")
    progs = sys.argv[1:] or sorted(f[:-3] for f in os.listdir(SCALED) if f.endswith(".hs"))
    for p in progs:
        if not os.path.exists(os.path.join(SCALED, p + ".hs")):
            die("no program %s in %s" % (p, SCALED))
    keep = os.environ.get("KEEP") == "1"
    tmp = tempfile.mkdtemp(prefix="profile-cost.")
    try:
        commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"],
                                capture_output=True, text=True).stdout.strip()
        print("strobe: %s (%s)" % (ROOT, commit))
        print("corpus: %s; %d rounds; ghc: %s; load average: %s" % (
            SCALED, RUNS, subprocess.run([GHC, "--numeric-version"], capture_output=True,
                                         text=True).stdout.strip(),
            " ".join(open("/proc/loadavg").read().split()[:3])))
        res, status = measure(progs, tmp)
        if res is None:
            return 1
        if os.environ.get("RESULTS"):
            with open(os.environ["RESULTS"], "w") as f:
                json.dump(res, f)
        report(res)
        if keep:
            print("\nbuilds kept in %s" % tmp)
        return status
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
