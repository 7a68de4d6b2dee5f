"""Checks lldb/strobe/ghcnames.py against the rows of a test file:

    SYMBOL: <symbol> -> <how a backtrace shows it, or `-` for as it is>
    ZDECODE: <z-encoded string> -> <decoded string>

Usage: ghcnames_table.py <strobe_lldb.py> <test file>.  Prints one line per mismatch
and a count of the rows checked; exits 1 on any mismatch."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
from strobe.ghcnames import haskell_name, zdecode  # noqa: E402

checked, bad = 0, 0
with open(sys.argv[2], encoding="utf-8") as f:
    for line in f:
        kind, _, row = line.partition(": ")
        if kind not in ("SYMBOL", "ZDECODE") or " -> " not in row:
            continue
        given, want = row.rstrip("\n").split(" -> ", 1)
        if kind == "SYMBOL":
            got = haskell_name(given)
            got = "-" if got is None else got
        else:
            got = zdecode(given)
        checked += 1
        if got != want:
            bad += 1
            print("mismatch: %s %s gives %r, expected %r" % (kind, given, got, want))
print("%d rows checked, %d mismatches" % (checked, bad))
sys.exit(1 if bad else 0)
