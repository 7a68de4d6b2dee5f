#!/usr/bin/env bash
# line-tables.sh [STROBEC] — do strobe's objects cover every Haskell line GHC's own -g object has?
#
# For each corpus program <p> and each level (O0, O1):
#   1. compiles <p>.hs with GHC's native code generator and -g: the flags of <p>/<level>/COMMAND.txt
#      without the dump flags, -o and -outputdir, plus -c, in a temporary directory;
#   2. runs strobec at -O0 and at -O2 on the dumps of that level: the native pipeline's
#      .dump-cmm and .dump-cmm-raw, and the -fllvm pipeline's .dump-cmm and .dump-cmm-raw(.gz);
#   3. reads the lines of <p>.hs in each object's line table (bench/hs-lines.sh, from
#      llvm-dwarfdump --debug-line) and prints per program/level/flavour/strobec level:
#      |GHC lines|, |strobe lines|, |GHC lines that strobe has|, |strobe lines GHC lacks|,
#      and the GHC lines strobe lacks.
# The -fllvm dumps are compared with GHC's native object too: GHC 9.0.2 -fllvm writes no line table.
# Exit status: 0 if no GHC line is missing anywhere, 1 if some is, 2 if a tool failed.
# Not part of CI (CI has no ghc). Installs nothing.
# Environment: STROBE_CORPUS, the GHC 9.0.2 corpus directory (default: build/corpus, which
# the build makes from corpus/), DWARFDUMP (llvm-dwarfdump-22).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
corpus=$(cd "${STROBE_CORPUS:-$root/build/corpus}" && pwd) || exit 2
strobec=${1:-$root/build/strobec}
dwarfdump=${DWARFDUMP:-llvm-dwarfdump-22}

if ! command -v ghc >/dev/null; then
  echo "line-tables.sh: ghc not found; install GHC 9.0.2 (Debian bookworm: apt-get install ghc)" >&2
  exit 2
fi
command -v "$dwarfdump" >/dev/null ||
  { echo "line-tables.sh: $dwarfdump not found (apt-get install llvm-22-tools)" >&2; exit 2; }
[[ -x $strobec ]] ||
  { echo "line-tables.sh: $strobec missing; build first: cmake -B build && cmake --build build" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "ghc: $(ghc --numeric-version) ($(command -v ghc)); strobec: $strobec; corpus: $corpus"
echo "strobe objects: strobec -OL -w DUMP -o OUT.o  (L = 0, 2; gzipped dumps unpacked first)"
echo

rows=0 complete=0 missing_rows=0 missing_total=0 failures=0
printf '%-10s %-5s %-10s %-7s %5s %6s %7s %5s  %s\n' \
  program level flavour strobec ghc strobe covered extra "missing (GHC has, strobe lacks)"

for dir in "$corpus"/*/; do
  prog=$(basename "$dir")
  [[ -f $dir/$prog.hs ]] || continue
  for level in O0 O1; do
    cmdfile=$dir/$level/COMMAND.txt
    [[ -f $cmdfile ]] || continue
    # GHC's object: COMMAND.txt's flags without dumps, -o, -outputdir and the source file.
    read -r -a words <"$cmdfile"
    flags=()
    skip=0
    for w in "${words[@]:1}"; do
      if ((skip)); then skip=0; continue; fi
      case $w in
        -ddump-*) ;;
        -o | -outputdir) skip=1 ;;
        *.hs) ;;
        *) flags+=("$w") ;;
      esac
    done
    work=$tmp/$prog-$level
    mkdir -p "$work"
    cp "$dir/$prog.hs" "$work/"
    ghccmd=(ghc "${flags[@]}" -c -outputdir . -o "$prog.o" "$prog.hs")
    echo "# $prog $level: (cd TMP && ${ghccmd[*]})"
    if ! (cd "$work" && "${ghccmd[@]}" >"$work/ghc.log" 2>&1); then
      echo "FAIL $prog $level: ghc failed:"; sed 's/^/  /' "$work/ghc.log"
      failures=$((failures + 1)); continue
    fi
    "$here/hs-lines.sh" "$work/$prog.o" "$prog.hs" "$dwarfdump" >"$work/ghc.lines" ||
      { echo "FAIL $prog $level: cannot read GHC's line table"; failures=$((failures + 1)); continue; }

    for flavour in native-cmm native-raw llvm-cmm llvm-raw; do
      case $flavour in
        native-cmm) dump=$dir/$level/$prog.dump-cmm ;;
        native-raw) dump=$dir/$level/$prog.dump-cmm-raw ;;
        llvm-cmm) dump=$dir/$level/llvm-backend/$prog.dump-cmm ;;
        llvm-raw) dump=$dir/$level/llvm-backend/$prog.dump-cmm-raw ;;
      esac
      [[ -f $dump ]] || { [[ -f $dump.gz ]] && gzip -dc "$dump.gz" >"$work/$flavour.dump" && dump=$work/$flavour.dump; } ||
        { echo "FAIL $prog $level $flavour: no dump"; failures=$((failures + 1)); continue; }
      for opt in -O0 -O2; do
        out=$work/$flavour$opt
        if ! (cd "$work" && "$strobec" "$opt" -w "$dump" -o "$out.o") 2>"$out.err"; then
          echo "FAIL $prog $level $flavour strobec $opt: $(head -n 1 "$out.err")"
          failures=$((failures + 1)); continue
        fi
        "$here/hs-lines.sh" "$out.o" "$prog.hs" "$dwarfdump" >"$out.lines" ||
          { echo "FAIL $prog $level $flavour $opt: cannot read line table"; failures=$((failures + 1)); continue; }
        nghc=$(wc -l <"$work/ghc.lines")
        nstrobe=$(wc -l <"$out.lines")
        # comm wants lexical order; the lists are numeric, so compare sorted copies.
        sort "$work/ghc.lines" >"$work/ghc.lex"
        sort "$out.lines" >"$out.lex"
        covered=$(comm -12 "$work/ghc.lex" "$out.lex" | wc -l)
        extra=$(comm -13 "$work/ghc.lex" "$out.lex" | wc -l)
        missing=$(comm -23 "$work/ghc.lex" "$out.lex" | sort -n | tr '\n' ' ' | sed 's/ $//')
        rows=$((rows + 1))
        if [[ -z $missing ]]; then
          complete=$((complete + 1)); shown=-
        else
          missing_rows=$((missing_rows + 1))
          missing_total=$((missing_total + nghc - covered)); shown=$missing
        fi
        printf '%-10s %-5s %-10s %-7s %5d %6d %7d %5d  %s\n' \
          "$prog" "$level" "$flavour" "$opt" "$nghc" "$nstrobe" "$covered" "$extra" "$shown"
      done
    done
  done
done

echo
echo "summary: $rows comparisons, $complete with every GHC line, $missing_rows missing some" \
  "($missing_total missing lines in all), $failures failures"
((failures)) && exit 2
((missing_rows)) && exit 1
exit 0
