#!/usr/bin/env python3
# python3 bench/dynstack-cost.py [PROGRAM...]
#
# dynstack-cost.py — what the dynamic stack costs on real Haskell programs, beside what
# GHC's cost-centre profiling costs on the same programs (issue 11, item 5).  A benchmark,
# not part of CI: it prints a table and fails only when a build fails or an output differs.
#
# On each scaled corpus program ($STROBE_CORPUS/scaled/NAME.hs, default: all of them;
# STROBE_CORPUS defaults to ../shared/corpus/ghc902 beside the repository) it builds, from
# the same source, each in its own directory with -fforce-recomp:
#   a   ghc -O1
#   b   ghc -O1 -prof -fprof-auto          (Debian's ghc-prof)
#   c   ghc -O1 -prof -fprof-auto-top
#   s0  strobe-ghc -O1                     (not instrumented)
#   s1  strobe-ghc -O1 --instrument='*' --ticks=functions
#   s2  strobe-ghc -O1 --instrument='*' --ticks=all
# When strobe-ghc --help has no --ticks, s1 and s2 are not built and their columns say
# "n/a"; one build more then measures today's instrumentation instead:
#   si  strobe-ghc -O1 --instrument='*'   (no --ticks option: what it gives today)
# and its ratio si/s0 and instructions per tick are printed beside them (no target is
# judged on it).  Every run's standard output must be NAME.stdout.txt.  For each build it counts
# callgrind's instructions (whole process, `valgrind --tool=callgrind
# --callgrind-out-file=/dev/null` on a `strip --strip-debug` copy: the instructions are the
# same, and bookworm's valgrind cannot read every DWARF a build may carry) and takes the
# best wall time of RUNS runs.  For s1 and s2 the same build once more with
# --strobec-opt=--count-ticks, run with STROBE_OPTIONS=report_at_exit=1, gives the ticks
# executed (the runtime's statistics, intrinsics/stats.def; uncounted code counts none), and so
# the instrumentation's own instructions per tick, (Ir(s) - Ir(s0)) / ticks.
#
# It then checks the targets of issue 11:
#   s1/s0 geometric mean <= 1.5, and s1/s0 < c/a on every program;
#   s2/s0 < b/a on every program;
#   each common fast path at most 8 instructions: a tick pushing onto a deeper frame, a
#   tick repeating the top entry, a pop and a ret removing no entry or one.
# The fast paths are counted statically: a small module with one function per
# pseudo-intrinsic (a ghccc function whose only work is the intrinsic and a tail call) goes
# through `opt -load-pass-plugin=StrobePlugin.so -passes='strobe-instrument,default<O2>'
# -strobe-local-exec` and `llc -O2 -relocation-model=static` (strobec's pipeline, as
# strobe-ghc runs it for GHC's non-PIE programs: the fast paths, then LLVM's -O2), and the assembly is traced along
# each path, named by the plugin's IR blocks (instrument.c, Note [The fast paths in
# IR]), which llc keeps in its block comments.  Every instruction up to the function's
# tail call counts, any frame push and pop included.
#
# Environment: RUNS (wall-time runs, default 3), BUILD (strobe's build tree, default
# build), GHC (default ghc), STROBE_CORPUS, LLVM_BIN (default /usr/lib/llvm-22/bin),
# KEEP=1 keeps the build directory (its path is printed), RESULTS=FILE saves the
# measurements as JSON, REPLAY=FILE prints the tables from such a file without measuring.
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(ROOT, "build")))
GHC = os.environ.get("GHC", "ghc")
RUNS = int(os.environ.get("RUNS", "3"))
LLVM_BIN = os.environ.get("LLVM_BIN", "/usr/lib/llvm-22/bin")
CORPUS = os.environ.get("STROBE_CORPUS", os.path.join(ROOT, "..", "shared", "corpus", "ghc902"))
SCALED = os.path.join(os.path.abspath(CORPUS), "scaled")
STROBE_GHC = os.path.join(BUILD, "strobe-ghc")
PLUGIN = os.path.join(BUILD, "plugin", "StrobePlugin.so")

BUILDS = ["a", "b", "c", "s0", "s1", "s2"]


def die(msg):
    print("dynstack-cost.py: " + msg, file=sys.stderr)
    sys.exit(2)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw)


def build_command(b, have_ticks):
    if b in ("a", "b", "c"):
        extra = {"a": [], "b": ["-prof", "-fprof-auto"], "c": ["-prof", "-fprof-auto-top"]}[b]
        return [GHC, "-O1"] + extra
    if b == "s0":
        return [STROBE_GHC, "-O1"]
    if b == "si":
        return [STROBE_GHC, "-O1", "--instrument=*"]
    if not have_ticks:
        return None
    return [STROBE_GHC, "-O1", "--instrument=*",
            "--ticks=" + ("functions" if b == "s1" else "all")]


def build(cmd, d, out, prog, b):
    """Builds d/prog.hs into d/out with cmd; False (and says why) if that fails."""
    r = run(cmd + ["-fforce-recomp", "-outputdir", "o." + out, "-o", out, prog + ".hs"], cwd=d,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        print("%s/%s: build failed (status %d)" % (prog, b, r.returncode), file=sys.stderr)
    return r.returncode == 0


def measure(prog, b, cmd, tmp, expected):
    """Builds, checks and measures one build; returns a dict (None fields: not measured)."""
    d = os.path.join(tmp, prog, b)
    os.makedirs(d)
    shutil.copy(os.path.join(SCALED, prog + ".hs"), d)
    exe = os.path.join(d, prog)
    res = {"ir": None, "wall": None, "ticks": None, "ok": False}
    if not build(cmd, d, prog, prog, b):
        return res
    ok = True
    env = dict(os.environ)
    env.pop("STROBE_OPTIONS", None)
    best = None
    for _ in range(RUNS):
        t0 = time.perf_counter()
        p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        t = time.perf_counter() - t0
        if p.returncode != 0 or p.stdout != expected:
            print("%s/%s: exit status %d, output %s" % (prog, b, p.returncode,
                  "as expected" if p.stdout == expected else "differs"), file=sys.stderr)
            ok = False
        best = t if best is None or t < best else best
    res["wall"] = best
    if b in ("s1", "s2", "si"):
        # the ticks, from the same build with every tick counted (--count-ticks)
        counted = prog + ".counted"
        if not build(cmd + ["--strobec-opt=--count-ticks"], d, counted, prog, b):
            return res
        env2 = dict(env, STROBE_OPTIONS="report_at_exit=1")
        p = subprocess.run([os.path.join(d, counted)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env2)
        m = re.search(rb"^\s*ticks\s+(\d+)", p.stderr, re.M)
        if p.stdout != expected or not m:
            print("%s/%s: report_at_exit run: output %s, %s" % (prog, b,
                  "as expected" if p.stdout == expected else "differs",
                  "ticks found" if m else "no ticks statistic"), file=sys.stderr)
            ok = False
        else:
            res["ticks"] = int(m.group(1))
    stripped = exe + ".stripped"
    subprocess.run(["strip", "--strip-debug", "-o", stripped, exe], check=True)
    cg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", stripped]
    p = run(cg, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    m = re.search(rb"Collected\s*:\s*(\d+)", p.stderr)
    if p.returncode != 0 or p.stdout != expected or not m:
        print("%s/%s: callgrind: status %d, output %s" % (prog, b, p.returncode,
              "as expected" if p.stdout == expected else "differs"), file=sys.stderr)
        sys.stderr.write(p.stderr.decode(errors="replace")[-2000:])
        ok = False
    else:
        res["ir"] = int(m.group(1))
    res["ok"] = ok
    print("  %s/%s: Ir %s, wall %.3f s, ticks %s, output %s" % (
        prog, b, res["ir"], best, res["ticks"], "ok" if ok else "WRONG"), flush=True)
    return res


# ---- the fast paths, counted in the assembly -----------------------------------------

FAST_PATH_LL = r"""
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
@.str.f = private unnamed_addr constant [7 x i8] c"Main.f\00"
@.str.file = private unnamed_addr constant [5 x i8] c"F.hs\00"
@outer = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 15, i32 1, i32 16, i32 30, i32 1, ptr @.str.f, ptr @.str.file, ptr null, ptr null }, section "strobe_ticks", align 8
@desc = private constant { i32, i32, i32, i32, i32, i32, ptr, ptr, ptr, ptr } { i32 1, i32 15, i32 10, i32 15, i32 25, i32 1, ptr @.str.f, ptr @.str.file, ptr null, ptr @outer }, section "strobe_ticks", align 8
declare void @strobe.tick(ptr, i64)
declare void @strobe.pop(i64)
declare void @strobe.ret(i64)
declare ghccc void @next(ptr, ptr, ptr, i64)
""" + "".join("""
define ghccc void @fp_%s(ptr %%Base, ptr %%Sp, ptr %%Hp, i64 %%R1) #0 {
entry:
  %%sp = ptrtoint ptr %%Sp to i64
  call void @strobe.%s(%si64 %%sp)
  musttail call ghccc void @next(ptr %%Base, ptr %%Sp, ptr %%Hp, i64 %%R1)
  ret void
}
""" % (k, k, "ptr @desc, " if k == "tick" else "") for k in ("tick", "pop", "ret")) + """
attributes #0 = { nounwind "strobe-instrument" "strobe-name"="Main.f" }
"""

# name, function, the plugin's blocks the path goes through, in order
FAST_PATHS = [
    ("tick: push onto a deeper frame", "fp_tick", ["entry", "tick.deeper", "tick.push"]),
    ("tick: repeat (the top entry again)", "fp_tick",
     ["entry", "tick.same", "tick.top", "tick.repeat"]),
    ("pop: removes none", "fp_pop", ["entry", "pop.cont"]),
    ("pop: removes one", "fp_pop", ["entry", "pop.one", "pop.set"]),
    ("ret: removes none", "fp_ret", ["entry", "ret.cont"]),
    ("ret: removes one", "fp_ret", ["entry", "ret.one", "ret.set"]),
]


def parse_asm(text):
    """{function: [(kind, value)]}: ('block', (label, ir_name)) or ('insn', text)."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(fp_\w+):", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        if line.startswith(".Lfunc_end"):
            cur = None
            continue
        m = re.match(r"^(\.LBB\w+):\s*(?:#\s*%(\S+))?", line)
        if m:
            cur.append(("block", (m.group(1), m.group(2))))
            continue
        m = re.match(r"^#\s*%bb\.\d+:\s*(?:#\s*%(\S+))?", line)
        if m:
            cur.append(("block", (None, m.group(1))))
            continue
        s = line.split("#")[0].strip()
        if s and not s.startswith("."):
            cur.append(("insn", s))
    return funcs


def trace(items, path):
    """Instructions executed along path (IR block names) up to the tail call; or an error."""
    labels = {v[0]: i for i, (k, v) in enumerate(items) if k == "block" and v[0]}
    names = {v[0]: v[1] for k, v in items if k == "block" and v[0]}
    at, pc, count = 0, 0, 0
    for _ in range(1000):
        if pc >= len(items):
            return None, "ran off the function"
        kind, v = items[pc]
        if kind == "block":
            name = v[1] or ""
            base = name.split(".")
            if name in path[at + 1:]:
                j = path.index(name, at + 1)
                if j != at + 1:
                    return None, "skipped %s" % path[at + 1]
                at = j
            elif name.endswith(".cold") or (name in path[:at + 1] and name != path[at]):
                return None, "reached %s" % name
            del base
            pc += 1
            continue
        op = v.split()[0]
        target = v.split()[1] if len(v.split()) > 1 else ""
        if op == "jmp" and target.startswith("next"):
            if at != len(path) - 1:
                return None, "tail call after %s" % path[at]
            return count, None
        if op.startswith("j") and target.startswith("next") and path[at + 1:] and \
                path[at + 1].endswith(".cont"):  # a conditional tail call: the cont block
            return count + 1, None
        count += 1
        if op.startswith("j") and target in labels:
            if op == "jmp" or (at + 1 < len(path) and names[target] == path[at + 1]):
                pc = labels[target]
                continue
        pc += 1
    return None, "no end"


def fast_paths(tmp):
    opt, llc = os.path.join(LLVM_BIN, "opt"), os.path.join(LLVM_BIN, "llc")
    src = os.path.join(tmp, "fastpath.ll")
    with open(src, "w") as f:
        f.write(FAST_PATH_LL)
    p1 = subprocess.run([opt, "-load-pass-plugin=" + PLUGIN, "-passes=strobe-instrument,default<O2>",
                         "-strobe-local-exec", src, "-o", src + ".bc"], capture_output=True, text=True)
    p2 = p1.returncode == 0 and subprocess.run(
        [llc, "-O2", "-relocation-model=static", src + ".bc", "-o", src + ".s"],
        capture_output=True, text=True)
    if p1.returncode != 0 or p2.returncode != 0:
        print("fast paths: opt/llc failed:\n" + p1.stderr + (p2.stderr if p2 else ""))
        return None
    with open(src + ".s") as f:
        funcs = parse_asm(f.read())
    out = []
    for name, fn, path in FAST_PATHS:
        n, err = trace(funcs.get(fn, []), path)
        out.append((name, n, err))
    return out


# ---- main ----------------------------------------------------------------------------

def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    for f in (STROBE_GHC, PLUGIN):
        if not os.path.exists(f):
            die("%s missing; build first: cmake --build build -j2" % f)
    for t in ("valgrind", "strip", GHC):
        if not shutil.which(t):
            die("%s not found" % t)
    if not os.path.isdir(SCALED):
        die("no scaled corpus at %s (set STROBE_CORPUS)" % SCALED)
    progs = sys.argv[1:] or sorted(f[:-3] for f in os.listdir(SCALED) if f.endswith(".hs"))
    helptext = subprocess.run([STROBE_GHC, "--help"], capture_output=True, text=True).stdout
    have_ticks = "--ticks" in helptext
    keep = os.environ.get("KEEP") == "1"
    tmp = tempfile.mkdtemp(prefix="dynstack-cost.")
    try:
        commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"],
                                capture_output=True, text=True).stdout.strip()
        print("strobe: %s (%s)" % (ROOT, commit))
        print("corpus: %s; wall: best of %d runs; ghc: %s" % (
            SCALED, RUNS, subprocess.run([GHC, "--numeric-version"], capture_output=True,
                                         text=True).stdout.strip()))
        if not have_ticks:
            print("strobe-ghc --help has no --ticks: s1 and s2 are not available")
        if not have_ticks:
            BUILDS.append("si")
        results, status = {}, 0
        if os.environ.get("REPLAY"):
            with open(os.environ["REPLAY"]) as f:
                saved = json.load(f)
            progs = saved["progs"]
            BUILDS[:] = saved["builds"]
            results = {tuple(k.split("/")): v for k, v in saved["results"].items()}
            report(progs, results, have_ticks, tmp)
            return 0
        for prog in progs:
            with open(os.path.join(SCALED, prog + ".stdout.txt"), "rb") as f:
                expected = f.read()
            print("\n== %s" % prog, flush=True)
            for b in BUILDS:
                cmd = build_command(b, have_ticks)
                if cmd is None:
                    results[prog, b] = None
                    continue
                r = measure(prog, b, cmd, tmp, expected)
                results[prog, b] = r
                if not r["ok"]:
                    status = 1
        if os.environ.get("RESULTS"):
            with open(os.environ["RESULTS"], "w") as f:
                json.dump({"progs": progs, "builds": BUILDS, "results": {
                    "%s/%s" % k: v for k, v in results.items()}}, f)
        report(progs, results, have_ticks, tmp)
        if keep:
            print("\nbuilds kept in %s" % tmp)
        return status
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def ratio(results, prog, num, den, key="ir"):
    n, d = results.get((prog, num)), results.get((prog, den))
    if not n or not d or not n[key] or not d[key]:
        return None
    return n[key] / d[key]


def fmt(x, f="%.2f"):
    return "n/a" if x is None else f % x


def report(progs, results, have_ticks, tmp):
    print("\ncallgrind instructions (Ir), whole process")
    print("%-10s" % "program" + "".join("%12s" % b for b in BUILDS))
    for p in progs:
        print("%-10s" % p + "".join(
            "%12s" % (fmt(results[p, b]["ir"] / 1e9, "%.3fe9") if results[p, b] and
                      results[p, b]["ir"] else "n/a") for b in BUILDS))
    print("\nwall time, best of %d (s)" % RUNS)
    print("%-10s" % "program" + "".join("%12s" % b for b in BUILDS))
    for p in progs:
        print("%-10s" % p + "".join(
            "%12s" % (fmt(results[p, b]["wall"], "%.3f") if results[p, b] else "n/a")
            for b in BUILDS))

    cols = [("b/a", "b", "a"), ("c/a", "c", "a"), ("s1/s0", "s1", "s0"), ("s2/s0", "s2", "s0")]
    per_tick = ["s1", "s2"]
    if "si" in BUILDS:
        cols.append(("si/s0", "si", "s0"))
        per_tick.append("si")
    for key, title in (("ir", "instructions"), ("wall", "wall time")):
        print("\nratios, %s" % title)
        print("%-10s" % "program" + "".join("%9s" % c[0] for c in cols) +
              ("".join("%14s" % (s + " Ir/tick") for s in per_tick) if key == "ir" else ""))
        for p in progs:
            line = "%-10s" % p + "".join("%9s" % fmt(ratio(results, p, n, d, key))
                                         for _, n, d in cols)
            if key == "ir":
                for s in per_tick:
                    r, r0 = results.get((p, s)), results.get((p, "s0"))
                    v = None
                    if r and r0 and r["ir"] and r0["ir"] and r["ticks"]:
                        v = (r["ir"] - r0["ir"]) / r["ticks"]
                    line += "%14s" % fmt(v, "%.1f")
            print(line)
        gm = []
        for _, n, d in cols:
            rs = [ratio(results, p, n, d, key) for p in progs]
            gm.append(gmean(rs) if all(r is not None for r in rs) else None)
        print("%-10s" % "geomean" + "".join("%9s" % fmt(g) for g in gm))

    print("\nticks executed (STROBE_OPTIONS=report_at_exit=1)")
    for p in progs:
        print("%-10s" % p + "".join("   %s %14s" % (
            s, str(results[p, s]["ticks"]) if results.get((p, s)) and results[p, s]["ticks"]
            else "n/a") for s in per_tick))

    def verdict(ok):
        return "n/a (not measured)" if ok is None else ("PASS" if ok else "FAIL")

    s1 = [ratio(results, p, "s1", "s0") for p in progs]
    s2 = [ratio(results, p, "s2", "s0") for p in progs]
    ca = [ratio(results, p, "c", "a") for p in progs]
    ba = [ratio(results, p, "b", "a") for p in progs]
    have1 = all(x is not None for x in s1 + ca)
    have2 = all(x is not None for x in s2 + ba)
    print("\ntargets (instructions)")
    g1 = gmean(s1) if have1 else None
    print("  s1/s0 geometric mean <= 1.5 (%s): %s" % (
        fmt(g1, "%.3f"), verdict(None if g1 is None else g1 <= 1.5)))
    # A program whose instrumented build counted no tick kept GHC's objects (strobec
    # refused its modules, strobe-ghc warned): its ratios of 1 say nothing.
    untouched = [p for p in progs if not (results.get((p, "s1")) or {}).get("ticks")]
    if untouched and have1:
        kept = [x for p, x in zip(progs, s1) if p not in untouched]
        g = gmean(kept) if kept else None
        print("    without %s (no tick executed: not instrumented): %s, %s" % (
            ", ".join(untouched), fmt(g, "%.3f"), verdict(None if g is None else g <= 1.5)))
    print("  s1/s0 < c/a on every program: %s%s" % (
        verdict(all(x < y for x, y in zip(s1, ca)) if have1 else None),
        "" if not have1 else " (" + ", ".join(
            "%s %.2f<%.2f" % (p, x, y) if x < y else "%s %.2f>=%.2f" % (p, x, y)
            for p, x, y in zip(progs, s1, ca)) + ")"))
    print("  s2/s0 < b/a on every program: %s%s" % (
        verdict(all(x < y for x, y in zip(s2, ba)) if have2 else None),
        "" if not have2 else " (" + ", ".join(
            "%s %.2f<%.2f" % (p, x, y) if x < y else "%s %.2f>=%.2f" % (p, x, y)
            for p, x, y in zip(progs, s2, ba)) + ")"))

    print("\nfast paths: instructions executed, counted in the assembly of the plugin's inline"
          " sequences after LLVM's -O2, as strobec compiles them (target <= 8 each)")
    fps = fast_paths(tmp)
    if fps is None:
        print("  FAIL: could not compile the fast paths")
        return
    for name, n, err in fps:
        print("  %-38s %s  %s" % (name, "?" if n is None else "%3d" % n,
                                  ("could not trace: " + err) if err else verdict(n <= 8)))
    print("  all fast paths <= 8: %s" % verdict(all(n is not None and n <= 8 for _, n, _ in fps)))


if __name__ == "__main__":
    sys.exit(main())
