#!/usr/bin/env python3
# nofib-conformance.py NOFIB [options] — does strobe-ghc build GHC's nofib programs so that they
# print what GHC's own build prints, and what does it cost? (issue 13, "Also" and item 6)
#
#   python3 bench/nofib-conformance.py /tmp/nofib --strobe-ghc build/strobe-ghc
#
# NOFIB: a checkout of https://github.com/ghc/nofib (e.g. `git archive HEAD imaginary spectral
# real shootout mk runstdtest common | tar x -C /tmp/nofib`).  For each program of the suites
# (default imaginary, spectral, real, shootout; nested SUBDIRS followed), in the suite's order:
#   1. reads its Makefile through nofib's own make files (GNU make evaluates them, mode=fast):
#      NOFIB_PROG, HS_SRCS, C_SRCS, HC_OPTS, PROG_ARGS (= FAST_OPTS), STDIN_FILE
#      (PROG.faststdin or PROG.stdin), the +RTS ... -RTS parts of RUNTEST_OPTS, and the
#      expected PROG.faststdout / PROG.stdout; runs `make boot mode=fast` in the program's
#      directory first when its Makefile generates its input or output files that way;
#   2. builds it with `ghc -O1` and with `strobe-ghc -O1`: the same flags (HC_OPTS without its
#      -O and -Rghc-timing), each a clean build (-fforce-recomp) into its own -outputdir under
#      a temporary directory, timed (wall clock, compile and link);
#   3. runs both builds in the program's directory with the suite's arguments and stdin
#      (timeout --timeout), and compares strobe's stdout, stderr and exit status with GHC's;
#      GHC's stdout is also checked against the suite's expected files (column "ghc=exp");
#   4. counts instructions of both runs (of `strip --strip-debug` copies: the same code)
#      with callgrind (--instructions=callgrind, the default;
#      `perf` uses `perf stat -e instructions` where the machine has the counter; `none`,
#      or --no-instructions, skips it).
# A program that does not build with `ghc -O1` (and the boot packages GHC ships) is skipped,
# and so is one whose GHC build prints something else when run again (nothing to compare).
# Prints one row per program ("mods": modules strobe-ghc had strobec lower, from its
# STROBE_GHC_LOG; the last column names modules that kept GHC's object: strobec refused
# them, exit status 2), then the summary: how many pass, fail and were skipped, the
# geometric mean of strobe's instructions against GHC's, and the build time (total over the
# programs both built, target <= 1.3x ghc's; issue 13, item 6).  Build times compare only
# when programs build one at a time (--jobs 1, the default; the machine's other load counts).
# Exit status: 0 when no program fails, 1 when some does, 2 on bad usage.  Not part of CI.
import argparse
import concurrent.futures
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUITES = ["imaginary", "spectral", "real", "shootout"]

VARS_MK = r"""
__strobe_vars:
	@:
$(info @@STROBE@@NOFIB_PROG=$(NOFIB_PROG))
$(info @@STROBE@@SUBDIRS=$(SUBDIRS))
$(info @@STROBE@@HS_SRCS=$(HS_SRCS))
$(info @@STROBE@@C_SRCS=$(C_SRCS))
$(info @@STROBE@@HC_OPTS=$(HC_OPTS))
$(info @@STROBE@@PROG_ARGS=$(PROG_ARGS))
$(info @@STROBE@@STDIN_FILE=$(STDIN_FILE))
$(info @@STROBE@@RUNTEST_OPTS=$(RUNTEST_OPTS))
$(info @@STROBE@@HC_FAIL=$(HC_FAIL))
$(info @@STROBE@@STDOUT=$(wildcard $(NOFIB_PROG).$(mode)stdout*) $(wildcard $(NOFIB_PROG).stdout*))
$(info @@STROBE@@STDERR=$(wildcard $(NOFIB_PROG).$(mode)stderr*) $(wildcard $(NOFIB_PROG).stderr*))
"""


def find_strobe_ghc():
    for c in ("build/strobe-ghc", "driver/strobe-ghc"):
        p = os.path.join(ROOT, c)
        if os.access(p, os.X_OK):
            return p
    return shutil.which("strobe-ghc")


def make_vars(d, vars_mk, env):
    r = subprocess.run(["make", "-s", "-f", "Makefile", "-f", vars_mk, "__strobe_vars", "mode=fast"],
                       cwd=d, capture_output=True, text=True, env=env, timeout=120)
    v = {}
    for line in r.stdout.splitlines():
        if line.startswith("@@STROBE@@"):
            k, _, val = line[len("@@STROBE@@"):].partition("=")
            v[k] = val.strip()
    if "NOFIB_PROG" not in v:
        raise RuntimeError("make could not read the Makefile: " + (r.stderr.strip().splitlines() or ["?"])[0])
    return v


def programs(nofib, suites, vars_mk, env):
    """(suite/relative/path, directory) of every leaf program, in the suites' order."""
    out = []

    def walk(rel):
        d = os.path.join(nofib, rel)
        if not os.path.isfile(os.path.join(d, "Makefile")):
            return
        v = make_vars(d, vars_mk, env)
        subs = v.get("SUBDIRS", "").split()
        if subs:
            for s in subs:
                walk(os.path.join(rel, s))
        else:
            out.append((rel, d))

    for s in suites:
        walk(s)
    return out


def rts_parts(opts):
    """The +RTS ... -RTS parts of runstdtest's options: they are the program's arguments."""
    words, keep, inside = shlex.split(opts), [], False
    for w in words:
        if w == "+RTS":
            inside = True
        if inside:
            keep.append(w)
        if w == "-RTS":
            inside = False
    return keep


def first_error(log):
    """The head of a build's error: its first line naming an error, with the next line when
    that one only says where (GHC puts the message on the following lines)."""
    lines = [l.strip() for l in log.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if re.search(r"\berror\b", l, re.I) or l.startswith("<command line>"):
            if re.search(r"error:?$", l) and i + 1 < len(lines):
                l += " " + lines[i + 1]
            return l[:160]
    return (lines[-1] if lines else "no output")[:160]


def run_timed(cmd, cwd, timeout, stdin=None, env=None):
    t = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=cwd, stdin=stdin or subprocess.DEVNULL, capture_output=True,
                           timeout=timeout, env=env)
        return r.returncode, r.stdout, r.stderr, time.monotonic() - t, False
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b"", time.monotonic() - t, True


def ghc_deterministic(first, args, cwd, stdin_file, timeout, reruns=3):
    """Whether GHC's own build prints, run again, what it printed the first time (some
    programs, e.g. spectral/ansi under +RTS -V0, do not: they cannot be compared)."""
    for _ in range(reruns):
        with open(stdin_file or os.devnull, "rb") as f:
            rc, so, _, _, cut = run_timed([first[4]] + args, cwd, timeout, stdin=f)
        if cut or rc != first[0] or so != first[1]:
            return False
    return True


def instructions(how, cmd, cwd, stdin_file, timeout):
    """Instructions of one run (None if not counted) and whether the count is cut short."""
    if how == "none":
        return None, False
    if how == "callgrind":
        full = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd
        pat = re.compile(rb"^==\d+== Collected : *(\d+)", re.M)
    else:
        full = ["perf", "stat", "-x,", "-e", "instructions"] + cmd
        pat = re.compile(rb"^(\d+),[^,]*,instructions", re.M)
    with open(stdin_file or os.devnull, "rb") as f:
        rc, _, err, _, cut = run_timed(full, cwd, timeout, stdin=f)
    m = pat.findall(err)
    return (int(m[-1]) if m else None), cut


def build(compiler, flags, v, d, out, timeout):
    os.makedirs(out, exist_ok=True)
    exe = os.path.join(out, v["NOFIB_PROG"])
    srcs = v["HS_SRCS"].split() + v["C_SRCS"].split()
    cmd = compiler + flags + ["-fforce-recomp", "-outputdir", out, "-o", exe] + srcs
    env = dict(os.environ, STROBE_GHC_LOG=os.path.join(out, "strobec.log"))
    rc, so, se, t, cut = run_timed(cmd, d, timeout, env=env)
    log = (so + se).decode(errors="replace")
    with open(os.path.join(out, "build.log"), "w") as f:
        f.write(" ".join(map(shlex.quote, cmd)) + "\n" + log)
    if cut:
        return None, t, "build timed out after %ds" % timeout, log
    if rc != 0:
        return None, t, first_error(log), log
    return exe, t, None, log


def one(rel, d, a, tmp, vars_mk, env):
    r = {"prog": rel, "status": "skip", "why": "", "ghc_exp": "-", "ghc_b": None, "strobe_b": None,
         "ghc_ir": None, "strobe_ir": None, "cut": False, "fallbacks": [], "lowered": None}
    try:
        with open(os.path.join(d, "Makefile")) as f:
            mk = f.read()
        if re.search(r"^boot\s*::", mk, re.M):
            subprocess.run(["make", "-s", "boot", "mode=fast"], cwd=d, capture_output=True, env=env,
                           timeout=600)
        v = make_vars(d, vars_mk, env)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        r["why"] = "Makefile: %s" % e
        return r
    if v.get("HC_FAIL") == "YES":
        r["why"] = "HC_FAIL=YES (the suite expects the build to fail)"
        return r
    if not v["HS_SRCS"]:
        r["why"] = "no Haskell sources"
        return r
    flags = ["-O1"] + [w for w in shlex.split(v["HC_OPTS"])
                       if not re.fullmatch(r"-O\d?|-Rghc-timing", w)]
    args = rts_parts(v.get("RUNTEST_OPTS", "")) + shlex.split(v.get("PROG_ARGS", ""))
    stdin_file = v["STDIN_FILE"].split()[0] if v.get("STDIN_FILE") else None
    if stdin_file:
        stdin_file = os.path.join(d, stdin_file)
    key = rel.replace("/", "+")
    runs = {}
    for name, compiler in (("ghc", a.ghc_cmd), ("strobe", a.strobe_cmd)):
        extra = a.strobe_flags if name == "strobe" else []
        exe, bt, err, log = build(compiler, flags + extra, v, d, os.path.join(tmp, key, name),
                                  a.build_timeout)
        r[name + "_b"] = bt
        if name == "strobe":
            kept = re.findall(r"warning: (?:module (\S+): .*|no Cmm dump for (\S+) .*)"
                              r"keeping GHC's (?:own )?object", log)
            r["fallbacks"] = [x or y for x, y in kept]
            try:
                with open(os.path.join(tmp, key, name, "strobec.log")) as f:
                    r["lowered"] = sum(1 for l in f if l.startswith("strobec "))
            except OSError:
                r["lowered"] = 0
        if exe is None:
            if name == "ghc":
                r["why"] = "ghc -O1: " + err
                r["ghc_b"] = None
                return r
            r["status"], r["why"] = "fail", "build: " + err
            return r
        with open(stdin_file or os.devnull, "rb") as f:
            rc, so, se, wt, cut = run_timed([exe] + args, d, a.timeout, stdin=f)
        runs[name] = (rc, so, se, cut, exe)
        if name == "ghc":
            if cut:
                r["why"] = "ghc's build ran longer than %ds" % a.timeout
                return r
            exp = v["STDOUT"].split()
            if exp:
                ok = False
                for e in exp:
                    with open(os.path.join(d, e), "rb") as f:
                        ok = ok or f.read() == so
                r["ghc_exp"] = "yes" if ok else "NO"
    g, s = runs["ghc"], runs["strobe"]
    if s[3]:
        r["status"], r["why"] = "fail", "timeout: ran longer than %ds (ghc's build did not)" % a.timeout
    elif s[0] is not None and s[0] < 0:
        r["status"], r["why"] = "fail", "crash: signal %d (ghc's build: exit %d)" % (-s[0], g[0])
    elif s[0] != g[0]:
        r["status"] = "fail"
        r["why"] = "exit status %d, ghc's %d: %s" % (s[0], g[0], s[2].decode(errors="replace").strip()[:80])
    elif s[1] != g[1] and not ghc_deterministic(runs["ghc"], args, d, stdin_file, a.timeout):
        r["status"] = "skip"
        r["why"] = "GHC's own build prints different output from run to run"
    elif s[1] != g[1]:
        gl, sl = g[1].splitlines(), s[1].splitlines()
        n = next((i for i in range(min(len(gl), len(sl))) if gl[i] != sl[i]), min(len(gl), len(sl)))
        r["status"], r["why"] = "fail", "stdout differs from ghc's at line %d" % (n + 1)
    elif s[2] != g[2]:
        r["status"], r["why"] = "fail", "stderr differs from ghc's"
    else:
        r["status"] = "pass"
    if a.instructions != "none" and r["status"] == "pass":
        for name in ("ghc", "strobe"):
            # Counted on a copy without DWARF: the same code, and bookworm's valgrind 3.19
            # gives up on some DWARF 5 ("unhandled dwarf2 abbrev form code 0x25").
            exe = runs[name][4]
            subprocess.run(["strip", "--strip-debug", "-o", exe + ".nodebug", exe], check=True)
            n, cut = instructions(a.instructions, [exe + ".nodebug"] + args, d, stdin_file, a.ir_timeout)
            r[name + "_ir"] = n
            r["cut"] = r["cut"] or cut
    return r


def geo(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__ or "nofib conformance of strobe-ghc")
    ap.add_argument("nofib", help="a checkout of GHC's nofib suite")
    ap.add_argument("--strobe-ghc", default=os.environ.get("STROBE_GHC_CMD") or find_strobe_ghc(),
                    help="strobe-ghc (default: $STROBE_GHC_CMD, the build tree's, then PATH's; "
                    "STROBE_GHC is strobe-ghc's own variable: the ghc it runs)")
    ap.add_argument("--strobe-flags", default=os.environ.get("STROBE_FLAGS", ""),
                    help="extra strobe-ghc flags, e.g. strobec's optimisation level")
    ap.add_argument("--ghc", default=os.environ.get("GHC", "ghc"))
    ap.add_argument("--suites", default=",".join(SUITES))
    ap.add_argument("--only", default="", help="PROG,... (names, or suite/name)")
    ap.add_argument("--jobs", type=int, default=1, help="programs at a time (build times then overlap)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run (default 120)")
    ap.add_argument("--build-timeout", type=int, default=1800, help="seconds per build (default 1800)")
    ap.add_argument("--ir-timeout", type=int, default=1800, help="seconds per counted run (default 1800)")
    ap.add_argument("--instructions", choices=["callgrind", "perf", "none"], default="callgrind")
    ap.add_argument("--no-instructions", dest="instructions", action="store_const", const="none")
    ap.add_argument("--keep", help="keep the builds in this directory")
    a = ap.parse_args()

    nofib = os.path.abspath(a.nofib)
    if not os.path.isfile(os.path.join(nofib, "mk", "boilerplate.mk")):
        sys.exit("nofib-conformance.py: %s: not a nofib checkout (no mk/boilerplate.mk)" % a.nofib)
    if not a.strobe_ghc or not shutil.which(a.strobe_ghc):
        sys.exit("nofib-conformance.py: strobe-ghc not found; build it or pass --strobe-ghc")
    for t in [a.ghc, "make"] + (["valgrind"] if a.instructions == "callgrind" else []):
        if not shutil.which(t):
            sys.exit("nofib-conformance.py: %s not found" % t)
    if a.instructions == "perf":
        r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True)
        if r.returncode != 0 or "not supported" in r.stderr or "not counted" in r.stderr:
            sys.exit("nofib-conformance.py: perf cannot count instructions here; use --instructions=callgrind")
    a.ghc_cmd = [a.ghc]
    a.strobe_cmd = [os.path.abspath(a.strobe_ghc) if os.sep in a.strobe_ghc else a.strobe_ghc]
    a.strobe_flags = shlex.split(a.strobe_flags)

    tmp = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="nofib-conformance.")
    os.makedirs(tmp, exist_ok=True)
    vars_mk = os.path.join(tmp, "strobe-vars.mk")
    with open(vars_mk, "w") as f:
        f.write(VARS_MK)
    env = dict(os.environ, WithNofibHc=shutil.which(a.ghc))
    try:
        progs = programs(nofib, a.suites.split(","), vars_mk, env)
        if a.only:
            want = set(a.only.split(","))
            progs = [(rel, d) for rel, d in progs if rel in want or os.path.basename(rel) in want]
            if not progs:
                sys.exit("nofib-conformance.py: --only %s: no such program" % a.only)
        print("# " + " ".join(map(shlex.quote, sys.argv)))
        print("# ghc: %s %s; strobe-ghc: %s %s" % (
            shutil.which(a.ghc), subprocess.run([a.ghc, "--numeric-version"], capture_output=True,
                                                text=True).stdout.strip(),
            " ".join(a.strobe_cmd), " ".join(a.strobe_flags)))
        print("# both: -O1 + the Makefile's HC_OPTS (without -O*, -Rghc-timing), -fforce-recomp; "
              "runs: mode=fast, timeout %ds; instructions: %s; jobs: %d" % (a.timeout, a.instructions, a.jobs))
        print("# %d programs under %s" % (len(progs), nofib), flush=True)
        results = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            futs = {ex.submit(one, rel, d, a, tmp, vars_mk, env): rel for rel, d in progs}
            for fu in concurrent.futures.as_completed(futs):
                rel = futs[fu]
                try:
                    results[rel] = fu.result()
                except Exception as e:  # the script's own failure: report it as such
                    results[rel] = {"prog": rel, "status": "fail", "why": "script: %r" % e, "ghc_exp": "-",
                                    "ghc_b": None, "strobe_b": None, "ghc_ir": None, "strobe_ir": None,
                                    "cut": False, "fallbacks": [], "lowered": None}
                r = results[rel]
                print("# %-32s %-4s %s" % (rel, r["status"], r["why"]), file=sys.stderr, flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    def f(x, fmt):
        return fmt % x if x is not None else "-"

    print()
    print("%-30s %-5s %-7s %-6s %4s %14s %14s %7s %8s %8s %6s %s" % (
        "program", "ghc", "ghc=exp", "strobe", "mods", "Ir ghc", "Ir strobe", "Ir s/g", "build g", "build s",
        "b s/g", "why / fallback modules"))
    for rel, _ in progs:
        r = results[rel]
        ratio = r["strobe_ir"] / r["ghc_ir"] if r["ghc_ir"] and r["strobe_ir"] else None
        bratio = r["strobe_b"] / r["ghc_b"] if r["ghc_b"] and r["strobe_b"] else None
        note = r["why"]
        if r["fallbacks"]:
            note = (note + "; " if note else "") + "GHC's object kept for " + ",".join(r["fallbacks"])
        print("%-30s %-5s %-7s %-6s %4s %14s %14s %7s %8s %8s %6s %s" % (
            rel, "no" if r["ghc_b"] is None else "yes", r["ghc_exp"], r["status"], f(r["lowered"], "%d"),
            f(r["ghc_ir"], "%d"), f(r["strobe_ir"], "%d"), f(ratio, "%.3f") + (">" if r["cut"] else ""),
            f(r["ghc_b"], "%.2f"), f(r["strobe_b"], "%.2f"),
            f(bratio, "%.2f"), note))
    rs = [results[rel] for rel, _ in progs]
    npass = sum(r["status"] == "pass" for r in rs)
    nfail = sum(r["status"] == "fail" for r in rs)
    nskip = sum(r["status"] == "skip" for r in rs)
    ir = geo(r["strobe_ir"] / r["ghc_ir"] for r in rs if r["ghc_ir"] and r["strobe_ir"])
    nir = sum(1 for r in rs if r["ghc_ir"] and r["strobe_ir"])
    # Build time over the programs that both built (a build strobe-ghc stopped does not count).
    both = [r for r in rs if r["ghc_b"] and r["strobe_b"] and not r["why"].startswith("build:")]
    tg, ts = sum(r["ghc_b"] for r in both), sum(r["strobe_b"] for r in both)
    bgeo = geo(r["strobe_b"] / r["ghc_b"] for r in both)
    print()
    nunstable = sum(r["status"] == "skip" and r["ghc_b"] is not None for r in rs)
    print("summary: %d pass, %d fail, %d skipped (%d do not build with ghc -O1 + boot packages, "
          "%d print differently from run to run in GHC's own build) of %d"
          % (npass, nfail, nskip, nskip - nunstable, nunstable, len(rs)))
    print("instructions strobe/ghc, geometric mean over %d programs: %s%s" % (
        nir, f(ir, "%.3f"), " (some counts cut short)" if any(r["cut"] for r in rs) else ""))
    if both:
        print("build time over %d programs: ghc %.1f s, strobe-ghc %.1f s, total %.2fx (target <= 1.3x: %s); "
              "geometric mean per program %.2fx%s" % (
                  len(both), tg, ts, ts / tg, "met" if ts / tg <= 1.3 else "NOT met", bgeo,
                  "" if a.jobs == 1 else " (--jobs %d: builds overlapped)" % a.jobs))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
