#!/usr/bin/env bash
# instrument-overhead.sh [PROGRAM...] — what the dynamic-stack instrumentation costs
# (issue 4, item 6; docs/design.md, "The dynamic stack").
#
# For each bench program bench/instrument/<p>/<p>.cmm (default: all of them) it builds
# four variants at -O2 and links them with libstrobe-rt:
#   none  --no-intrinsics: no instrumentation at all (the baseline)
#   all   --instrument='*': every function
#   half  --instrument-list=<p>/half.list: every other function in source order
#   pops  the same half plus --pops-everywhere: pop and ret checks in the other half too
#         (with '*' that option would change nothing: every function is instrumented)
# It checks that `none` prints <p>/expected_stdout.txt and every variant prints what `none`
# prints, counts instructions with callgrind (total Ir) and takes the best wall time of
# RUNS runs, then prints each variant's ratios against `none`, the runtime's statistics
# (ticks executed, from the same build with --count-ticks; calls of the slow paths:
# STROBE_OPTIONS=report_at_exit=1), and the geometric
# mean of each ratio.  Issue 4's target: the geometric mean of `all`'s Ir ratio <= 1.10 on
# programs whose ticks are at least as dense as the O0 corpus dumps; so it also prints
# statements per //tick for each program and for the corpus (statements: the lines inside
# a proc's {offset ... } body that end in ';' and are neither //tick notes nor labels),
# and, per tick executed, the program's own instructions and the instrumentation's.
#
# A benchmark: it prints figures and fails only when a build fails or an output differs.
# Environment: RUNS (wall-time runs, default 5); IR_TIMEOUT (seconds per callgrind run,
# default 300, 0 = none; a run cut short reports the Ir it reached, as a lower bound '>');
# STROBEC (default build/strobec), RTLIB (build/rts/libstrobe-rt-standalone.a), CC (clang-22),
# STROBE_CORPUS (the GHC 9.0.2 corpus directory; default: build/corpus, made by the build).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
progs_dir=$here/instrument
strobec=${STROBEC:-$root/build/strobec}
rtlib=${RTLIB:-$root/build/rts/libstrobe-rt-standalone.a}
cc=${CC:-clang-22}
runs=${RUNS:-5}
ir_timeout=${IR_TIMEOUT:-300}
corpus=${STROBE_CORPUS:-$root/build/corpus}
for f in "$strobec" "$rtlib"; do
  [[ -e $f ]] || { echo "instrument-overhead.sh: $f missing; build first: cmake --build build" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "instrument-overhead.sh: valgrind missing" >&2; exit 2; }

if (($# > 0)); then progs=("$@"); else
  progs=()
  for d in "$progs_dir"/*/; do
    p=$(basename "$d")
    [[ -f $d/$p.cmm ]] && progs+=("$p")
  done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

# Statements and ticks of Cmm files: prints "STATEMENTS TICKS".
density() {
  awk '/^[ \t]*\{offset/ { body = 1; next }
       body && /^[ \t]*\}[ \t]*$/ { body = 0; next }
       body && /\/\/tick/ { ticks++; next }
       body && /;[ \t]*$/ && !/^[ \t]*[A-Za-z0-9_.$]+:/ { stmts++ }
       END { printf "%d %d\n", stmts, ticks }' "$@"
}

echo "strobec: $strobec ($("$strobec" --version))"
echo "runtime: $rtlib; cc: $cc; wall: best of $runs runs; callgrind timeout: ${ir_timeout}s"
echo
echo "statements per //tick (lower is denser):"
for p in "${progs[@]}"; do
  read -r s t < <(density "$progs_dir/$p/$p.cmm")
  awk -v p="$p" -v s="$s" -v t="$t" 'BEGIN { printf "  %-22s %5d / %4d = %5.1f\n", p, s, t, s / t }'
done
shopt -s nullglob
dumps=("$corpus"/*/O0/*.dump-cmm)
shopt -u nullglob
if ((${#dumps[@]} > 0)); then
  for f in "${dumps[@]}"; do
    read -r s t < <(density "$f")
    awk -v p="corpus ${f#"$corpus"/}" -v s="$s" -v t="$t" \
      'BEGIN { printf "  %-38s %5d / %4d = %5.1f\n", p, s, t, s / t }'
  done
  read -r s t < <(density "${dumps[@]}")
  awk -v n="${#dumps[@]}" -v s="$s" -v t="$t" \
    'BEGIN { printf "  corpus O0 average (%d dumps, all statements / all ticks) %d / %d = %.1f\n", n, s, t, s / t }'
else
  echo "  (no O0 corpus dumps under $corpus)"
fi

help=$("$strobec" --help)
none_flags=()
if grep -q -- '--no-intrinsics' <<<"$help"; then none_flags=(--no-intrinsics); fi
have_instrument=1
if ! grep -q -- '--instrument=' <<<"$help"; then
  have_instrument=0
  echo "instrument-overhead.sh: $strobec has no --instrument: every variant is the same build" >&2
fi

variants=(none all half pops)
status=0
results=$tmp/results # program variant ir cut wall_ns ticks slow_calls ok
: >"$results"
export STROBE_OPTIONS=report_at_exit=1
for p in "${progs[@]}"; do
  echo
  echo "== $p"
  src=$progs_dir/$p/$p.cmm
  half=$progs_dir/$p/half.list
  for v in "${variants[@]}"; do
    flags=("${none_flags[@]}")
    if ((have_instrument)); then
      case $v in
        all) flags=('--instrument=*') ;;
        half) flags=("--instrument-list=$half") ;;
        pops) flags=("--instrument-list=$half" --pops-everywhere) ;;
      esac
    fi
    exe=$tmp/$p-$v
    build=("$strobec" --entry=Main.main_entry -O2 "${flags[@]}" "$src" -o "$exe.o")
    link=("$cc" "$exe.o" "$rtlib" -lm -o "$exe")
    echo "+ ${build[*]}"
    "${build[@]}"
    echo "+ ${link[*]}"
    "${link[@]}"

    # Wall time: the best of $runs runs; each run's output is checked.
    echo "+ STROBE_OPTIONS=$STROBE_OPTIONS $exe   (x$runs, timed)"
    best=''
    ok=1
    for ((i = 0; i < runs; i++)); do
      start=$(date +%s%N)
      "$exe" >"$exe.out" 2>"$exe.err" || { echo "$p/$v: exit status $?" >&2; ok=0; }
      end=$(date +%s%N)
      t=$((end - start))
      if [[ -z $best ]] || ((t < best)); then best=$t; fi
      if [[ $v == none ]]; then
        cmp -s "$exe.out" "$progs_dir/$p/expected_stdout.txt" ||
          { echo "$p/$v: output differs from expected_stdout.txt" >&2; ok=0; }
      else
        cmp -s "$exe.out" "$tmp/$p-none.out" || { echo "$p/$v: output differs from none's" >&2; ok=0; }
      fi
    done
    ((ok)) || status=1
    # The ticks: the same build with every tick counted (uncounted code counts none).
    if [[ $v != none ]]; then
      "$strobec" --count-ticks --entry=Main.main_entry -O2 "${flags[@]}" "$src" -o "$exe.counted.o"
      "$cc" "$exe.counted.o" "$rtlib" -lm -o "$exe.counted"
      "$exe.counted" >/dev/null 2>"$exe.err" || true
    fi
    ticks=$(awk '$1 == "ticks" { print $2 }' "$exe.err")
    slow=$(awk '$1 == "slow_ticks" || $1 == "slow_pops" || $1 == "slow_rets" { n += $2 }
                END { print n + 0 }' "$exe.err")

    # Instructions: callgrind's total Ir (a lower bound if the run was cut short).
    cg=(valgrind --tool=callgrind "--callgrind-out-file=$exe.cg" "$exe")
    echo "+ ${cg[*]}"
    cut=0
    if ((ir_timeout > 0)); then
      timeout -s INT "$ir_timeout" "${cg[@]}" >/dev/null 2>"$exe.cgerr" || cut=1
    else
      "${cg[@]}" >/dev/null 2>"$exe.cgerr" || cut=1
    fi
    ir=$(awk '$1 == "summary:" { print $2 }' "$exe.cg" 2>/dev/null || true)
    [[ -n $ir ]] || { echo "$p/$v: callgrind wrote no summary" >&2; ir=0; status=1; }
    echo "$p $v $ir $cut $best ${ticks:-0} ${slow:-0} $ok" >>"$results"
    awk -v v="$v" -v ir="$ir" -v cut="$cut" -v w="$best" -v t="${ticks:-0}" -v s="${slow:-0}" -v ok="$ok" \
      'BEGIN { printf "  %s: Ir %s%s, wall %.3f s, ticks %s, slow calls %s, output %s\n", v,
               cut ? ">" : "", ir, w / 1e9, t, s, ok ? "same" : "DIFFERS" }'
  done
done

echo
echo "ratios against none (Ir: callgrind's total instructions; wall: best of $runs; '>' a lower bound)"
awk '
  function fmt(x) { return sprintf("%.3f", x) }
  { prog[NR] = $1; var[NR] = $2; ir[NR] = $3; cut[NR] = $4; wall[NR] = $5 / 1e9
    ticks[NR] = $6; slow[NR] = $7; ok[NR] = $8
    if ($2 == "none") { base_ir[$1] = $3; base_wall[$1] = $5 / 1e9 } }
  END {
    printf "%-8s %-5s %16s %10s %9s %10s %14s %14s %s\n", "program", "var", "Ir", "Ir ratio",
           "wall s", "wall ratio", "ticks", "slow calls", "output"
    for (i = 1; i <= NR; i++) {
      r = base_ir[prog[i]] > 0 ? ir[i] / base_ir[prog[i]] : 0
      w = base_wall[prog[i]] > 0 ? wall[i] / base_wall[prog[i]] : 0
      mark = cut[i] ? ">" : ""
      printf "%-8s %-5s %16s %10s %9.3f %10.2f %14.0f %14.0f %s\n", prog[i], var[i], mark ir[i],
             mark fmt(r), wall[i], w, ticks[i], slow[i], ok[i] ? "same" : "DIFFERS"
      if (var[i] != "none" && r > 0) {
        lir[var[i]] += log(r); lw[var[i]] += log(w); n[var[i]]++
        if (cut[i]) low[var[i]] = 1
      }
    }
    printf "\ngeometric means over %d programs:\n", n["all"]
    split("all half pops", vs, " ")
    for (k = 1; k <= 3; k++) {
      v = vs[k]
      if (!n[v]) continue
      printf "  %-5s Ir ratio %s%.3f   wall ratio %.2f\n", v, low[v] ? ">" : "",
             exp(lir[v] / n[v]), exp(lw[v] / n[v])
    }
    g = n["all"] ? exp(lir["all"] / n["all"]) : 0
    printf "all-instrumented Ir ratio (geometric mean): %s%.3f, target <= 1.10: %s\n",
           low["all"] ? ">" : "", g, g <= 1.10 && !low["all"] ? "met" : "NOT met"
    # How dense the ticks are at run time, and what each costs: the uninstrumented
    # program instructions per tick the instrumented one executes, and the extra
    # instructions per tick.
    printf "\nper tick executed (all):\n"
    for (i = 1; i <= NR; i++) {
      if (var[i] != "all" || ticks[i] == 0) continue
      printf "  %-8s %6.1f instructions of the program, %6.1f of instrumentation\n", prog[i],
             base_ir[prog[i]] / ticks[i], (ir[i] - base_ir[prog[i]]) / ticks[i]
    }
  }' "$results"
exit "$status"
