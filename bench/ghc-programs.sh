#!/usr/bin/env bash
# ghc-programs.sh [DIR|PROG.hs ...] — strobe-ghc against GHC's own code generators on whole
# Haskell programs (issue 10, item 7).
#
#   STROBE_GHC_CMD=build/strobe-ghc bash bench/ghc-programs.sh ../shared/corpus/ghc902/scaled
#
# For each program NAME.hs (default: every *.hs of the scaled corpus programs,
# ../shared/corpus/ghc902/scaled; arguments may be directories or .hs files) it builds, from the
# same source at -O1, with clean builds (-fforce-recomp, a fresh -outputdir):
#   ghc    ghc -O1                       GHC's native code generator
#   llvm   ghc -O1 -fllvm $LLVM_FLAGS    GHC's LLVM back end (GHC 9.0.2 wants LLVM 9-12;
#                                        default LLVM_FLAGS: -pgmlo opt-14 -pgmlc llc-14)
#   strobe strobe-ghc -O1 $STROBE_FLAGS  every module lowered by strobec
# checks that each prints NAME.stdout.txt (when it exists) and exits 0, and measures
#   Ir      callgrind's instructions of the whole process (valgrind --tool=callgrind,
#           the "Collected" line) of the binary's `strip --strip-debug` copy (the same code;
#           bookworm's valgrind cannot read every DWARF 5 file): the primary figure,
#           repeatable on a shared machine;
#   wall    the best of RUNS runs (secondary: the machine is shared);
#   build   the best of BUILD_RUNS clean builds, compile and link;
#   size    the binary's file size, `size`'s text+data+bss, and the file size of a
#           `strip --strip-debug` copy (without DWARF: strobe-ghc's objects carry it, GHC's
#           -O1 objects carry none).
# Then the ratios strobe/ghc and strobe/llvm per program and their geometric means.
# A benchmark: it prints figures; it fails (status 1) only when a build fails or an output
# differs, and keeps going.  Not part of CI (needs ghc and valgrind).
# Environment: STROBE_GHC_CMD (strobe-ghc; default: build/strobe-ghc,
# driver/strobe-ghc, then strobe-ghc on PATH; STROBE_GHC_CMD=ghc measures the script itself; STROBE_GHC is strobe-ghc's own: the ghc it runs),
# STROBE_FLAGS (extra strobe-ghc flags, e.g. strobec's optimisation level), GHC (default ghc),
# LLVM_FLAGS, RUNS (3), BUILD_RUNS (3), IR_TIMEOUT (seconds per callgrind run, 600; 0 = none),
# NO_LLVM=1 skips the -fllvm build.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
ghc=${GHC:-ghc}
runs=${RUNS:-3}
build_runs=${BUILD_RUNS:-3}
ir_timeout=${IR_TIMEOUT:-600}

find_strobe_ghc() {
  local c
  for c in "$root/build/strobe-ghc" "$root/driver/strobe-ghc"; do
    [[ -x $c ]] && { echo "$c"; return; }
  done
  command -v strobe-ghc
}
strobe_ghc=${STROBE_GHC_CMD:-$(find_strobe_ghc)}
if [[ -z $strobe_ghc ]] || ! command -v "$strobe_ghc" >/dev/null; then
  echo "ghc-programs.sh: strobe-ghc not found; build it (cmake --build build) or set STROBE_GHC_CMD" >&2
  exit 2
fi
read -r -a strobe_flags <<<"${STROBE_FLAGS:-}"
for t in "$ghc" valgrind size strip; do
  command -v "$t" >/dev/null || { echo "ghc-programs.sh: $t not found" >&2; exit 2; }
done
if [[ -n ${LLVM_FLAGS+set} ]]; then
  read -r -a llvm_flags <<<"$LLVM_FLAGS"
elif command -v opt-14 >/dev/null && command -v llc-14 >/dev/null; then
  llvm_flags=(-pgmlo opt-14 -pgmlc llc-14)
else
  llvm_flags=()
fi

srcs=()
(($# > 0)) || set -- "$root/../shared/corpus/ghc902/scaled"
for a in "$@"; do
  if [[ -d $a ]]; then
    for f in "$a"/*.hs; do [[ -f $f ]] && srcs+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
  elif [[ -f $a ]]; then
    srcs+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")")
  else
    echo "ghc-programs.sh: $a: no such file or directory" >&2; exit 2
  fi
done
((${#srcs[@]} > 0)) || { echo "ghc-programs.sh: no .hs programs in $*" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

variants=(ghc llvm strobe)
((${NO_LLVM:-0})) && variants=(ghc strobe)
# variant_cmd VARIANT: the compiler and flags of that variant, one per line.
variant_cmd() {
  case $1 in
    ghc) printf '%s\n' "$ghc" -O1 ;;
    llvm) printf '%s\n' "$ghc" -O1 -fllvm "${llvm_flags[@]}" ;;
    strobe) printf '%s\n' "$strobe_ghc" -O1 "${strobe_flags[@]}" ;;
  esac
}
now_ns() { date +%s%N; }

echo "ghc: $("$ghc" --numeric-version) ($(command -v "$ghc")); strobe-ghc: $strobe_ghc"
for v in "${variants[@]}"; do
  mapfile -t c < <(variant_cmd "$v")
  echo "  $v: ${c[*]} -fforce-recomp -outputdir OUT NAME.hs -o OUT/NAME"
done
echo "wall: best of $runs runs; build: best of $build_runs clean builds; Ir: callgrind, whole process"
echo

status=0
results=$tmp/results # prog variant ok build_ns ir cut wall_ns file size_tdb stripped
: >"$results"
for src in "${srcs[@]}"; do
  p=$(basename "$src" .hs)
  expected=$(dirname "$src")/$p.stdout.txt
  echo "== $p"
  for v in "${variants[@]}"; do
    mapfile -t cmd < <(variant_cmd "$v")
    out=$tmp/$p-$v
    exe=$out/$p
    best_build='' ok=1 why=''
    for ((i = 0; i < build_runs; i++)); do
      rm -rf "$out" && mkdir -p "$out"
      start=$(now_ns)
      if ! (cd "$(dirname "$src")" &&
            "${cmd[@]}" -fforce-recomp -outputdir "$out" "$src" -o "$exe") >"$out/build.log" 2>&1; then
        ok=0 why="build failed"
        break
      fi
      t=$(($(now_ns) - start))
      if [[ -z $best_build ]] || ((t < best_build)); then best_build=$t; fi
    done
    if ((!ok)); then
      echo "  $v: BUILD FAILED: ${cmd[*]} -fforce-recomp -outputdir OUT $src -o OUT/$p"
      sed -n '1,15s/^/    | /p' "$out/build.log"
      [[ $v == llvm ]] || status=1
      echo "$p $v 0 0 0 0 0 0 0 0" >>"$results"
      continue
    fi
    if grep -qi 'warning.*llvm\|unsupported.*llvm' "$out/build.log"; then
      echo "  $v: ghc says: $(grep -i -m1 'llvm' "$out/build.log")"
    fi

    best_wall=''
    for ((i = 0; i < runs; i++)); do
      start=$(now_ns)
      "$exe" >"$out/stdout" 2>"$out/stderr"
      rc=$?
      t=$(($(now_ns) - start))
      if [[ -z $best_wall ]] || ((t < best_wall)); then best_wall=$t; fi
      ((rc == 0)) || { ok=0; why="exit status $rc"; }
      if [[ -f $expected ]] && ! cmp -s "$out/stdout" "$expected"; then ok=0; why="stdout differs from $(basename "$expected")"; fi
    done
    ((ok)) || { echo "  $v: WRONG: $why"; status=1; }

    file_size=$(stat -c %s "$exe")
    tdb=$(size "$exe" | awk 'NR == 2 { print $1 + $2 + $3 }')
    strip --strip-debug -o "$exe.nodebug" "$exe"
    stripped=$(stat -c %s "$exe.nodebug")
    # Counted on the copy without DWARF: the same code, and valgrind 3.19 gives up on some
    # DWARF 5 ("unhandled dwarf2 abbrev form code 0x25 ... I can't recover").
    cut=0
    if ((ir_timeout > 0)); then
      timeout -s INT "$ir_timeout" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe.nodebug" \
        >/dev/null 2>"$out/cg.err" || cut=1
    else
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe.nodebug" >/dev/null 2>"$out/cg.err" || cut=1
    fi
    ir=$(sed -n 's/^==[0-9]*== Collected : *\([0-9]*\).*/\1/p' "$out/cg.err" | tail -1)
    [[ -n $ir ]] || { echo "  $v: callgrind printed no 'Collected' line" >&2; ir=0; }

    echo "$p $v $ok $best_build $ir $cut $best_wall $file_size $tdb $stripped" >>"$results"
    awk -v v="$v" -v b="$best_build" -v ir="$ir" -v cut="$cut" -v w="$best_wall" -v f="$file_size" \
        -v s="$stripped" -v ok="$ok" \
      'BEGIN { printf "  %-6s build %6.2f s, Ir %s%s, wall %.3f s, size %d (%d without DWARF), output %s\n",
               v, b / 1e9, cut ? ">" : "", ir, w / 1e9, f, s, ok ? "right" : "WRONG" }'
  done
done

echo
echo "figures ('>' a lower bound: callgrind cut short; '-' no build)"
awk -v variants="${variants[*]}" '
  { prog[$1] = 1; if (!($1 in order)) { order[$1] = ++n; names[n] = $1 }
    k = $1 SUBSEP $2; ok[k] = $3; build[k] = $4 / 1e9; ir[k] = $5; cut[k] = $6; wall[k] = $7 / 1e9
    fsize[k] = $8; tdb[k] = $9; strp[k] = $10 }
  function r(num, den) { return (num > 0 && den > 0) ? num / den : 0 }
  function fr(x) { return x > 0 ? sprintf("%.3f", x) : "-" }
  BEGIN { nv = split(variants, vs, " ") }
  END {
    printf "%-10s %-6s %-6s %14s %9s %9s %10s %10s %10s\n", "program", "build", "output",
           "Ir", "wall s", "build s", "size", "text+data", "no DWARF"
    for (i = 1; i <= n; i++) for (j = 1; j <= nv; j++) {
      k = names[i] SUBSEP vs[j]
      if (!(k in ok)) continue
      if (build[k] == 0) { printf "%-10s %-6s %-6s %14s\n", names[i], vs[j], "-", "build failed"; continue }
      printf "%-10s %-6s %-6s %14s %9.3f %9.2f %10d %10d %10d\n", names[i], vs[j],
             ok[k] ? "right" : "WRONG", (cut[k] ? ">" : "") ir[k], wall[k], build[k], fsize[k], tdb[k], strp[k]
    }
    split("ghc llvm", bases, " ")
    for (b = 1; b <= 2; b++) {
      base = bases[b]
      has = 0; for (j = 1; j <= nv; j++) if (vs[j] == base) has = 1
      if (!has) continue
      printf "\nratios strobe/%s\n", base
      printf "%-10s %9s %9s %9s %9s %11s\n", "program", "Ir", "wall", "build", "size", "no DWARF"
      m = 0; delete s; delete c
      for (i = 1; i <= n; i++) {
        ks = names[i] SUBSEP "strobe"; kb = names[i] SUBSEP base
        x[1] = r(ir[ks], ir[kb]); x[2] = r(wall[ks], wall[kb]); x[3] = r(build[ks], build[kb])
        x[4] = r(fsize[ks], fsize[kb]); x[5] = r(strp[ks], strp[kb])
        printf "%-10s %9s %9s %9s %9s %11s%s\n", names[i], fr(x[1]), fr(x[2]), fr(x[3]), fr(x[4]), fr(x[5]),
               (cut[ks] || cut[kb]) ? "  (Ir cut short)" : ""
        for (q = 1; q <= 5; q++) if (x[q] > 0) { s[q] += log(x[q]); c[q]++ }
      }
      printf "%-10s", "geo. mean"
      for (q = 1; q <= 5; q++) printf " %*s", q == 5 ? 11 : 9, c[q] ? sprintf("%.3f", exp(s[q] / c[q])) : "-"
      printf "\n"
    }
  }' "$results"
exit "$status"
