"""strobe -- lldb 22 support for programs built by strobe (loaded by strobe_lldb.py).

    (lldb) command script import <prefix>/share/strobe/lldb/strobe_lldb.py

Cmm code tail-calls everywhere, so a machine backtrace of it shows the function the
program is in and little else: its callers wait as return points on the Cmm stack,
which lldb cannot walk.  A program whose functions were instrumented
(`strobec --instrument=GLOB`) keeps, per thread, a *dynamic stack* of the Haskell
expressions it is inside, and lists every thread's in the exported global
`strobe_registry` (docs/registry.md).  This package reads it, with plain memory reads,
from a live process or a core file:

  - a scripted frame provider makes plain `bt` show the dynamic stack's entries as
    frames, inserted above the C frame that entered Cmm code, each at an address on
    its tick's line, so that lldb names its Haskell function and line;
  - `strobe bt [-a] [--full] [N]` prints the entries as the runtime's own reports do,
    a function's nested notes grouped into one frame (as plain `bt` does; `strobe
    frames full` for every entry); `strobe threads` (Haskell threads too),
    `strobe stats`, and `strobe ticks [PATTERN]`, which lists the tick descriptors an
    executable carries (no process needed).
  - in a GHC program, each OS thread's stack is that of the Haskell thread it runs
    (docs/lldb.md, "Haskell threads"); plain `bt` walks its Haskell stack, and `next`,
    `step` and `finish` step by Haskell lines (docs/lldb.md).

The modules, in the order the data flows:
  registry.py     every layout the package knows (from strobe_abi.py), and nothing else
  descriptors.py  reads of a process or its files; tick descriptors and their strings,
                  cached; an address on each tick's line
  snapshot.py     one stop's view of every thread's stack; Cmm frames, the live Sp, and
                  which stack a thread runs
  printing.py     entries as docs/registry.md "How an entry is printed" says
  provider.py     StrobeFrameProvider: the frames of plain `bt`
  commands.py     the `strobe` commands
  loading.py      what `command script import` does
and for programs linked with GHC's runtime:
  ghc.py          the Haskell stack of GHC 9.0's runtime, walked from Sp, and the C
                  frames below StgRun, unwound by their .eh_frame
  stepping.py     next, step and finish by Haskell lines

Facts about lldb 22.1.8 that shaped it (docs/design.md, "lldb"): dict frames
({"idx", "pc"}) work live and on cores, ScriptedFrame objects crash lldb on register
access; calling SBThread's frame APIs from inside a provider aborts lldb, so the
provider looks only at the SBFrameList it is given; an exception inside a provider
silently cuts the backtrace, so the provider catches everything and falls back to the
machine frames.
"""

# lldb finds the frame provider, the commands and the breakpoint resolver by a dotted
# name in the module it imported: strobe_lldb.py, which holds them and sets ENTRY to
# its own name when it is imported.
ENTRY = "strobe_lldb"


def lldb_name(attr):
    """The name by which lldb finds attr of the module it imported."""
    return "%s.%s" % (ENTRY, attr)
