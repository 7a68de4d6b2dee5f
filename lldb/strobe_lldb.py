"""strobe_lldb -- lldb 22 support for programs built by strobe.

    (lldb) command script import <prefix>/share/strobe/lldb/strobe_lldb.py

Cmm code tail-calls everywhere, so a machine backtrace of it shows the function the
program is in and little else: its callers wait as return points on the Cmm stack,
which lldb cannot walk.  A program whose functions were instrumented
(`strobec --instrument=GLOB`) keeps, per thread, a *dynamic stack* of the Haskell
expressions it is inside, and lists every thread's in the exported global
`strobe_registry` (docs/registry.md).  This module reads it, with plain memory reads,
from a live process or a core file:

  - a scripted frame provider makes plain `bt` show the dynamic stack's entries as
    frames, inserted above the C frame that entered Cmm code, each at an address on
    its tick's line, so that lldb names its Haskell function and line;
  - `strobe bt [-a] [N]` prints the entries as the runtime's own reports do;
    `strobe threads`, `strobe stats`, and `strobe ticks [PATTERN]`, which lists the
    tick descriptors an executable carries (no process needed).

The file reads top-down as the data flows:
  1. Registry     every layout this module knows (from strobe_abi.py), and nothing else
  2. Descriptors  tick descriptors and their strings, cached; an address on each
                  tick's line
  3. Snapshots    one stop's view of every thread's stack; Cmm frames and the live Sp
  4. Printing     entries as docs/registry.md "How an entry is printed" says
  5. StrobeFrameProvider
  6. Commands, and loading

Facts about lldb 22.1.8 that shaped it (docs/design.md, "lldb"): dict frames
({"idx", "pc"}) work live and on cores, ScriptedFrame objects crash lldb on register
access; calling SBThread's frame APIs from inside a provider aborts lldb, so the
provider looks only at the SBFrameList it is given; an exception inside a provider
silently cuts the backtrace, so the provider catches everything and falls back to the
machine frames.
"""

import fnmatch
import importlib.util
import os
import shlex
import struct
import sys
from collections import namedtuple

import lldb
from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider


# ==== 1. The registry ================================================================
#
# Every layout this module knows comes from strobe_abi.py, beside this file: the build
# generates it from the runtime's header (lldb/strobe_abi_gen.c: sizeof and offsetof on
# the structs that rts/strobe/dynstack.h expands from abi/), and installs it with this
# module.  docs/registry.md documents the layouts.  x86-64, little-endian.

def _load_abi():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "strobe_abi.py")
    if not os.path.exists(path):
        raise ImportError("strobe: %s is missing: import the strobe_lldb.py of a build "
                          "tree (build/lldb/) or of an installation "
                          "(share/strobe/lldb/), which has it beside it" % path)
    spec = importlib.util.spec_from_file_location("strobe_abi", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


abi = _load_abi()


class RegistryError(Exception):
    """The registry cannot be read, or is not a layout this module knows."""


class Layout:
    """One record of strobe_abi.LAYOUTS: its size, and its fields unpacked into a
    namedtuple (a field that is a record itself into that record's namedtuple)."""

    def __init__(self, name):
        self.size, fields = abi.LAYOUTS[name]
        self.names = [f[0] for f in fields]
        self.tuple = namedtuple(name, self.names)
        self.nested = []  # per field: its Layout, or None
        fmt, at = "<", 0
        for field, offset, size, record in fields:
            fmt += "%dx" % (offset - at) if offset > at else ""
            if record is None:
                fmt += {4: "I", 8: "Q"}[size]
                self.nested.append(None)
            else:
                fmt += "%ds" % size
                self.nested.append(Layout(record))
            at = offset + size
        fmt += "%dx" % (self.size - at) if self.size > at else ""
        self.struct = struct.Struct(fmt)
        assert self.struct.size == self.size, name
        self.flat = all(n is None for n in self.nested)

    def unpack(self, raw):
        values = self.struct.unpack(raw)
        if not self.flat:
            values = [v if n is None else n.unpack(v) for v, n in zip(values, self.nested)]
        return self.tuple(*values)

    def iter_unpack(self, raw):
        assert self.flat
        return map(self.tuple._make, self.struct.iter_unpack(raw))


class Registry:
    """Reads `strobe_registry`, of the version strobe_abi.py describes, and the
    structures it points to."""

    SYMBOL = abi.REGISTRY_SYMBOL
    MAGIC = abi.REGISTRY_MAGIC
    VERSION = abi.REGISTRY_VERSION

    HEADER = Layout("StrobeRegistry")      # the registry itself, its first six words
    #                                        saying which layout follows
    THREAD = Layout("StrobeThreadStack")   # one per thread, on the list from `threads`
    HEAD = Layout("StrobeDynStackHead")    # a thread's top of stack, in its TLS
    ENTRY = Layout("StrobeEntry")          # entries[0] the oldest live one, top newest
    DESC = Layout("StrobeTickDesc")        # constant, in section TICK_SECTION
    HEADER_SIZE, THREAD_SIZE, HEAD_SIZE = HEADER.size, THREAD.size, HEAD.size
    ENTRY_SIZE, DESC_SIZE = ENTRY.size, DESC.size
    ENTRY_TAIL = abi.ENTRY_TAIL            # flags: it tail-called the entry above it
    DESC_SECTION = abi.TICK_SECTION
    KIND_SOURCE_NOTE = abi.TICK_SOURCE_NOTE

    def __init__(self, memory, addr):
        self.memory = memory  # a Memory: reads of the process, or its files
        self.addr = addr      # where strobe_registry is

    @classmethod
    def present(cls, target):
        """Whether target (its executable or a library) defines strobe_registry."""
        return len(target.FindSymbols(cls.SYMBOL, lldb.eSymbolTypeData)) > 0

    @classmethod
    def find(cls, target):
        """The load address of strobe_registry in target's process, or None."""
        for sym in target.FindSymbols(cls.SYMBOL, lldb.eSymbolTypeData):
            addr = sym.GetSymbol().GetStartAddress().GetLoadAddress(target)
            if addr != lldb.LLDB_INVALID_ADDRESS:
                return addr
        return None

    def header(self):
        """The header, after checking that it has this module's version and sizes."""
        raw = self.memory.read(self.addr, self.HEADER_SIZE)
        if raw is None:
            raise RegistryError("cannot read strobe_registry at 0x%x" % self.addr)
        h = self.HEADER.unpack(raw)
        if h.magic != self.MAGIC:
            raise RegistryError("strobe_registry at 0x%x has magic 0x%x, not 0x%x"
                                % (self.addr, h.magic, self.MAGIC))
        expected = (self.VERSION, self.HEADER_SIZE, self.THREAD_SIZE, self.ENTRY_SIZE,
                    self.DESC_SIZE)
        found = (h.version, h.header_size, h.thread_size, h.entry_size, h.desc_size)
        if found != expected or h.head_size != self.HEAD_SIZE:
            raise RegistryError(
                "the program's strobe_registry is version %d (sizes %d/%d/%d/%d, head %d);"
                " this module reads version %d (sizes %d/%d/%d/%d, head %d): use the "
                "strobe_lldb.py of the strobe that built the program"
                % (found + (h.head_size,) + expected + (self.HEAD_SIZE,)))
        return h

    def threads(self, header):
        """The thread records on the list, newest first, each with its address
        (`addr`).  The walk is bounded, since a process stopped while the list
        changed (odd generation) may show it torn."""
        out, seen, addr = [], set(), header.threads
        while addr and addr not in seen and len(out) <= header.nthreads:
            raw = self.memory.read(addr, self.THREAD_SIZE)
            if raw is None:
                break
            t = self.THREAD.unpack(raw)
            seen.add(addr)
            out.append(Thread(addr, *t))
            addr = t.next
        return out

    def head(self, thread):
        """The thread's head, or None if it cannot be read."""
        raw = self.memory.read(thread.head, self.HEAD_SIZE) if thread.head else None
        return self.HEAD.unpack(raw) if raw else None

    def entries(self, thread, head):
        """The thread's live entries, oldest first, in one read: entries[0] up to the
        head's top (top == entries - 1, the sentinel, when the stack is empty)."""
        if head is None or head.top < thread.entries:
            return []
        depth = (head.top - thread.entries) // self.ENTRY_SIZE + 1
        if depth > thread.capacity:
            raise RegistryError("thread %d: top 0x%x is past its %d entries"
                                % (thread.tid, head.top, thread.capacity))
        raw = self.memory.read(thread.entries, depth * self.ENTRY_SIZE)
        if raw is None:
            raise RegistryError("thread %d: cannot read its %d entries at 0x%x"
                                % (thread.tid, depth, thread.entries))
        return list(self.ENTRY.iter_unpack(raw))

    @classmethod
    def desc(cls, addr, raw):
        """A descriptor from its bytes (None: unreadable, all 0); its strings are
        still addresses."""
        fields = cls.DESC.unpack(raw) if raw is not None else [0] * len(cls.DESC.names)
        return Desc(addr, *fields)

    @staticmethod
    def stats(header, threads, heads):
        """(name, value, help) rows for `strobe stats`, the runtime's own statistics
        (abi/stats.def, in its order): each the counter of its name, the exited
        threads' plus every live one's (a live thread counts its ticks in its head),
        but `threads`, the live and exited threads."""
        def total(name):
            n = getattr(header.exited, name) + sum(getattr(t.counters, name) for t in threads)
            return n + sum(h.ticks for h in heads if h) if name == "ticks" else n
        return [(name, header.nthreads + header.nexited if name == "threads" else total(name),
                 help) for name, help in abi.STATS]


# A thread's record and a descriptor, each with its address first.
Thread = namedtuple("Thread", ["addr"] + Registry.THREAD.names)
Desc = namedtuple("Desc", ["addr"] + Registry.DESC.names)


# ==== 2. Memory and descriptors ======================================================

class Memory:
    """Reads of a process (live or a core file); what it cannot read there, it reads
    from the target's files: a core file need not hold read-only data, such as the
    strings that descriptors point to."""

    def __init__(self, target, process):
        self.target, self.process = target, process

    def read(self, addr, size):
        if size == 0:
            return b""
        err = lldb.SBError()
        if self.process and self.process.IsValid():
            data = self.process.ReadMemory(addr, size, err)
            if err.Success() and data is not None and len(data) == size:
                return bytes(data)
        # lldb 22 reads from the file what a core file lacks, but leaves the error
        # of the core's read in err: the data's length is what says it worked.
        data = self.target.ReadMemory(self.target.ResolveLoadAddress(addr), size,
                                      lldb.SBError())
        if data is not None and len(data) == size:
            return bytes(data)
        return None

    def cstring(self, addr, limit=4096):
        """The NUL-terminated string at addr, or None."""
        if not addr:
            return None
        out, chunk = b"", 64
        while len(out) < limit:
            data = self.read(addr + len(out), chunk)
            if data is None:
                if chunk == 1:
                    return None
                chunk = 1  # the string may end just before unreadable memory
                continue
            nul = data.find(b"\0")
            if nul >= 0:
                return (out + data[:nul]).decode("utf-8", "replace")
            out += data
        return out.decode("utf-8", "replace")


class Descriptors:
    """Tick descriptors by address, with their strings read, cached: they are
    constant for the life of the process."""

    def __init__(self, memory):
        self.memory = memory
        self.by_addr = {}
        self.strings = {}
        self.pcs = {}       # descriptor address -> an address on its tick's line
        self.rows = {}      # compile unit -> sorted (address, line, column) rows

    def string(self, addr):
        if addr not in self.strings:
            self.strings[addr] = self.memory.cstring(addr)
        return self.strings[addr]

    def get(self, addr):
        """The descriptor at addr, its function and file as text (None if unreadable)."""
        d = self.by_addr.get(addr)
        if d is None:
            raw = self.memory.read(addr, Registry.DESC_SIZE) if addr else None
            if raw is None:
                d = Registry.desc(addr, None)._replace(function=None, file=None)
            else:
                d = Registry.desc(addr, raw)
                d = d._replace(function=self.string(d.function), file=self.string(d.file))
            self.by_addr[addr] = d
        return d

    def pc(self, d):
        """An address whose line-table row is d's line, for a frame of it.

        The descriptor's `code` is the start of the function (an LLVM function, a
        proc point) that holds the tick.  Within that function this picks the first
        row on the tick's line and column, else the first on its line, else the
        function's start (a row with no column is a prologue's, taken last).  The
        line table, not the code, says where the tick's line is, so the lowering
        need not mark the spot, and .text does not change."""
        pc = self.pcs.get(d.addr)
        if pc is None:
            pc = d.code
            target = self.memory.target
            addr = target.ResolveLoadAddress(d.code) if d.code else None
            fn = addr.GetFunction() if addr else None
            if fn and fn.IsValid() and d.kind == Registry.KIND_SOURCE_NOTE:
                lo = fn.GetStartAddress().GetLoadAddress(target)
                hi = fn.GetEndAddress().GetLoadAddress(target)
                best, best_score = d.code, (False, False, False)
                for a, line, col in self._rows(addr.GetCompileUnit(), lo, hi):
                    score = (True, col == d.col1, col != 0)
                    if line == d.line1 and score > best_score:  # the first of the best
                        best, best_score = a, score
                pc = best
            self.pcs[d.addr] = pc
        return pc

    def _rows(self, cu, lo, hi):
        key = (cu.GetFileSpec().fullpath, cu.GetNumLineEntries())
        rows = self.rows.get(key)
        if rows is None:
            target = self.memory.target
            rows = []
            for i in range(cu.GetNumLineEntries()):
                le = cu.GetLineEntryAtIndex(i)
                a = le.GetStartAddress().GetLoadAddress(target)
                if le.GetLine() and a != lldb.LLDB_INVALID_ADDRESS:
                    rows.append((a, le.GetLine(), le.GetColumn()))
            rows.sort()
            self.rows[key] = rows
        return (r for r in rows if lo <= r[0] < hi)


def section_descriptors(target, pattern=None):
    """Every descriptor in the strobe_ticks sections of target's modules, read from
    the process if there is one (its pointers relocated), else from the files (where
    the static linker left the pointers as file addresses, as GNU ld does).  Yields
    (Desc, note) where note says why strings are missing, if they are."""
    process = target.GetProcess()
    live = process.IsValid() and process.GetState() != lldb.eStateInvalid
    memory = Memory(target, process if live else None)
    for module in target.module_iter():
        section = module.FindSection(Registry.DESC_SECTION)
        if not section.IsValid():
            continue
        if live:
            start = section.GetLoadAddress(target)
            raw = memory.read(start, section.GetByteSize())
        else:
            start = section.GetFileAddress()
            err = lldb.SBError()
            data = section.GetSectionData()
            raw = bytes(data.ReadRawData(err, 0, data.GetByteSize())) if data.GetByteSize() else b""
        if not raw:
            continue
        descs = Descriptors(memory)
        for off in range(0, len(raw) - Registry.DESC_SIZE + 1, Registry.DESC_SIZE):
            d = Registry.desc(start + off, raw[off:off + Registry.DESC_SIZE])
            if d.kind == 0:
                continue
            # Without a process the pointers are file addresses, which the target
            # reads from the module's sections.
            d = d._replace(function=descs.string(d.function), file=descs.string(d.file))
            if pattern and not fnmatch.fnmatchcase(d.function or "", pattern):
                continue
            yield module, d


# ==== 3. Snapshots: one stop's view of the dynamic stacks ============================

class StackView:
    """One thread's dynamic stack at one stop; its entries are read when first used."""

    def __init__(self, registry, thread, head, note=None):
        self.registry = registry
        self.thread = thread  # the Thread record
        self.head = head      # its Head, or None
        self.note = note      # why the stack may be off, or None
        self._entries = None

    @property
    def depth(self):
        h, t = self.head, self.thread
        return (h.top - t.entries) // Registry.ENTRY_SIZE + 1 if h and h.top >= t.entries else 0

    @property
    def entries(self):
        """The live entries, oldest first."""
        if self._entries is None:
            self._entries = [] if self.note else self.registry.entries(self.thread, self.head)
        return self._entries

    def newest_first(self, sp=0):
        """The entries that sp (the live Cmm Sp, 0 if unknown) does not show stale
        (wm < sp: their frames were popped by code that is not instrumented), newest
        first; and how many dropped entries are still live."""
        kept = [e for e in reversed(self.entries) if e.wm >= sp]
        dropped = self.thread.dropped if self.thread.dropped_wm >= sp else 0
        return kept, dropped


class Snapshot:
    """Every thread's dynamic stack at one stop of one process, each read once."""

    def __init__(self, registry):
        self.error = None
        self.header, self.stacks = None, {}
        try:
            self.header = registry.header()
            for t in registry.threads(self.header):
                head = registry.head(t)
                note = None
                if t.busy:
                    note = ("the thread stopped inside a slow path of the dynamic stack:"
                            " it may be missing the change in progress")
                if head is None:
                    note = "its head at 0x%x cannot be read" % t.head
                elif head.stack != t.addr:
                    note = "its head at 0x%x belongs to another stack" % t.head
                self.stacks[t.tid] = StackView(registry, t, head, note)
        except RegistryError as e:
            self.error = str(e)

    @property
    def changing(self):
        return self.header is not None and self.header.generation % 2 == 1


class ProcessState:
    """What the module keeps per process: its memory, its descriptors (constant),
    which compile units are Cmm code, and the snapshot of the current stop."""

    def __init__(self, target, process):
        self.memory = Memory(target, process)
        self.descs = Descriptors(self.memory)
        addr = Registry.find(target)
        self.registry = Registry(self.memory, addr) if addr is not None else None
        self.stop_id = None
        self.snap = None
        self._cmm_units = None

    def snapshot(self, process):
        """The registry as of this stop: read once per stop, whoever asks."""
        stop_id = process.GetStopID()
        if self.snap is None or stop_id != self.stop_id:
            self.snap = Snapshot(self.registry)
            self.stop_id = stop_id
        return self.snap

    def cmm_units(self):
        """The compile units that hold Cmm code: those holding a descriptor's code.

        strobec writes one compile unit per Cmm module, and the lowering gives every
        instrumented function descriptors, so this finds every module with
        instrumented code.  (The DWARF says "strobe" as its producer, but lldb's API
        does not show producers.)  A Cmm module with nothing instrumented is not
        found: a stop in it is taken for C, and only stale entries are shown then,
        never live ones hidden."""
        if self._cmm_units is None:
            target = self.memory.target
            units = set()
            for module, d in section_descriptors(target):
                cu = target.ResolveLoadAddress(d.code).GetCompileUnit() if d.code else None
                if cu and cu.IsValid():
                    units.add(unit_key(cu))
            self._cmm_units = units
        return self._cmm_units

    def is_cmm(self, frame):
        cu = frame.GetCompileUnit()
        return cu.IsValid() and unit_key(cu) in self.cmm_units()


def unit_key(cu):
    return cu.GetFileSpec().fullpath


_states = {}  # process unique id -> ProcessState


def process_state(target, process):
    """The ProcessState of process (None if target has no strobe_registry)."""
    key = process.GetUniqueID()
    st = _states.get(key)
    if st is None:
        st = _states[key] = ProcessState(target, process)
    return st if st.registry is not None else None


# How a backtrace of a thread that runs Cmm code looks, youngest first:
#     C frames called from Cmm code (printf, the runtime's slow paths, a signal
#     handler), if any
#     Cmm frames (ghccc functions; each tail-calls the next, so usually only one)
#     the C frame that entered Cmm code (strobe_entry)
#     the C frames below it (strobe_rt_main or strobe_rt_run, main, ...)
# The dynamic stack goes between the Cmm frames and the frame that entered them.

def cmm_layout(state, frames):
    """(youngest Cmm frame's index, index of the frame that entered Cmm code), each
    None if there is none.  frames: a sequence of SBFrames, youngest first."""
    first = None
    for i, f in enumerate(frames):
        cmm = state.is_cmm(f)
        if first is None and cmm:
            first = i
        elif first is not None and not cmm:
            return first, i
    if first is None:
        # Nothing known to be Cmm code: the frame strobec's glue runs in still says
        # where Cmm code was entered.
        for i, f in enumerate(frames):
            if f.GetFunctionName() == "strobe_entry":
                return None, i
    return first, None if first is None else len(frames)


def live_sp(frame):
    """The Cmm Sp in a frame of Cmm code: rbp, as the ghccc convention pins it."""
    reg = frame.FindRegister("rbp")
    return reg.GetValueAsUnsigned(0) if reg.IsValid() else 0


# ==== 4. Printing ====================================================================

def span(d):
    """As GHC prints a span: l:c, l:c1-c2, or (l1,c1)-(l2,c2)."""
    if d.line1 == d.line2:
        return "%d:%d" % (d.line1, d.col1) + ("-%d" % d.col2 if d.col2 != d.col1 else "")
    return "(%d,%d)-(%d,%d)" % (d.line1, d.col1, d.line2, d.col2)


def count(n, one, many):
    return "%d %s" % (n, one if n == 1 else many)


def entry_lines(n, e, d):
    """`#n Main.fact at Fact.hs:15:10-25 (x3) (tail)`, and its elided tail calls."""
    s = "#%d %s" % (n, d.function or "?")
    if d.kind == Registry.KIND_SOURCE_NOTE and d.file:
        s += " at %s:%s" % (d.file, span(d))
    if e.repeats > 0:
        s += " (x%d)" % (e.repeats + 1)
    if e.flags & Registry.ENTRY_TAIL:
        s += " (tail)"
    lines = [s]
    if e.elided > 0:
        lines.append("   ... " + count(e.elided, "tail call elided", "tail calls elided"))
    return lines


def stack_lines(state, view, sp=0, limit=None):
    """The report of a stack, newest first, as the runtime prints it."""
    entries, dropped = view.newest_first(sp)
    lines = []
    for n, e in enumerate(entries[:limit] if limit is not None else entries):
        lines += entry_lines(n, e, state.descs.get(e.desc))
    if limit is not None and len(entries) > limit:
        lines.append("... " + count(len(entries) - limit, "more entry", "more entries")
                     + " (strobe bt without a count shows all)")
    elif dropped:
        lines.append("... " + count(dropped, "older entry dropped", "older entries dropped"))
    if view.note:
        lines.append("(%s)" % view.note)
    return lines


# ==== 5. The frame provider ==========================================================

_reported = set()


def report_once(what, exc):
    """Says once per session that `what` failed, and why."""
    if what not in _reported:
        _reported.add(what)
        print("strobe: %s failed (%s: %s); `bt` shows the machine frames only"
              % (what, type(exc).__name__, exc), file=sys.stderr)


class StrobeFrameProvider(ScriptedFrameProvider):
    """Inserts a thread's dynamic stack into its backtrace: the machine frames up to
    the youngest Cmm frame, then one frame per live entry (newest first, each a dict
    frame at an address on its tick's line), then the C frame that entered Cmm code
    and everything below it.  A thread with no dynamic stack, or that is not in Cmm
    code, keeps its machine frames."""

    @staticmethod
    def get_description():
        return "strobe: the dynamic stack of Haskell expressions, as frames"

    def __init__(self, input_frames, args):
        super().__init__(input_frames, args)
        self.plan = None  # per frame index: a machine frame's index, or a dict frame

    def get_frame_at_index(self, index):
        if self.plan is None:
            self.plan = self._make_plan()
        p = self.plan[index] if index < len(self.plan) else None
        if callable(p):
            p = self._expand(p)[index]
        return p

    def _make_plan(self):
        """The frames, with the dynamic stack's as one placeholder: a stop asks for
        the youngest frame alone, and only a backtrace reads the entries.  Every SB
        call on frames happens here, at the first request: later ones may come while
        lldb holds the frame list (a second lock of it aborts lldb)."""
        frames = self.input_frames
        n = frames.GetSize()
        machine = list(range(n))
        try:
            if self.process is None or self.target is None:
                return machine
            state = process_state(self.target, self.process)
            if state is None:
                return machine
            view = state.snapshot(self.process).stacks.get(self.thread.GetThreadID())
            if view is None or view.depth == 0:
                return machine
            real = [frames.GetFrameAtIndex(i) for i in range(n)]
            cmm, entered = cmm_layout(state, real)
            if entered is None:
                return machine
            entered = max(entered, 1)  # the youngest frame is the machine's, always
            sp = live_sp(real[cmm]) if cmm is not None else 0
            self.machine, self.entered = machine, entered
            return machine[:entered] + [lambda: self._entries(state, view, sp)]
        except Exception as exc:  # never cut the backtrace: fall back to the machine's
            report_once("the dynamic-stack frame provider", exc)
            return machine

    def _expand(self, placeholder):
        machine, entered = self.machine, self.entered
        try:
            synthetic = placeholder()
        except Exception as exc:
            report_once("the dynamic-stack frame provider", exc)
            synthetic = []
        self.plan = machine[:entered] + synthetic + machine[entered:]
        return self.plan

    def _entries(self, state, view, sp):
        """One dict frame per live entry, newest first: the hot loop of a deep stack
        (one dict per entry, few distinct descriptors)."""
        pcs, descs, synthetic, base = {}, state.descs, [], self.entered
        for e in view.newest_first(sp)[0]:
            pc = pcs.get(e.desc)
            if pc is None:
                pc = pcs[e.desc] = descs.pc(descs.get(e.desc))
            if pc:
                synthetic.append({"idx": base + len(synthetic), "pc": pc})
        return synthetic


# ==== 6. Commands ====================================================================

class CommandError(Exception):
    """The command cannot do what it was asked: an error."""


class NothingHere(Exception):
    """There is nothing to show, which is no error: a target without strobe."""


def need_process(exe_ctx):
    """(target, process, ProcessState) of the command's context."""
    target = exe_ctx.GetTarget()
    if not target.IsValid():
        raise CommandError("no target")
    process = exe_ctx.GetProcess()
    if not process.IsValid() or process.GetState() in (lldb.eStateInvalid,
                                                       lldb.eStateExited,
                                                       lldb.eStateDetached):
        raise CommandError("no process (run the program, or load a core file with "
                           "`target create -c CORE`)")
    if process.GetState() == lldb.eStateRunning:
        raise CommandError("the process is running; stop it first")
    state = process_state(target, process)
    if state is None:
        raise NothingHere(no_registry_message(target))
    ensure_provider(target)
    snap = state.snapshot(process)
    if snap.error:
        raise CommandError(snap.error)
    return target, process, state, snap


def no_registry_message(target):
    return ("%s has no strobe_registry: it was not linked with libstrobe-rt, so it "
            "keeps no dynamic stack" % exe_name(target))


def exe_name(target):
    exe = target.GetExecutable()
    return exe.GetFilename() if exe.IsValid() else "the target"


def thread_sp(state, thread):
    """The live Cmm Sp of thread, from its youngest Cmm frame (0 if it has none).
    That frame is a machine frame: the provider puts its frames below it."""
    i = 0
    while True:  # not GetNumFrames(), which would make every synthetic frame
        f = thread.GetFrameAtIndex(i)
        if not f.IsValid() or f.IsSynthetic():
            return 0
        if state.is_cmm(f):
            return live_sp(f)
        i += 1


def cmd_bt(exe_ctx, args, out):
    all_threads, limit = False, None
    for a in args:
        if a in ("-a", "--all"):
            all_threads = True
        elif a.isdigit():
            limit = int(a)
        else:
            raise CommandError("usage: strobe bt [-a] [N]")
    target, process, state, snap = need_process(exe_ctx)
    if snap.changing:
        out.append("(the thread list was changing at this stop: it may be incomplete)")
    threads = list(process) if all_threads else [exe_ctx.GetThread()]
    for thread in threads:
        if not thread.IsValid():
            raise CommandError("no thread selected")
        view = snap.stacks.get(thread.GetThreadID())
        if all_threads:
            out.append("thread #%d: tid = %d" % (thread.GetIndexID(), thread.GetThreadID()))
        if view is None:
            out.append("no dynamic stack on this thread (it has run no instrumented code)")
            continue
        lines = stack_lines(state, view, thread_sp(state, thread), limit)
        out.extend(lines or ["the dynamic stack is empty"])


def cmd_threads(exe_ctx, args, out):
    if args:
        raise CommandError("usage: strobe threads")
    target, process, state, snap = need_process(exe_ctx)
    if snap.changing:
        out.append("(the thread list was changing at this stop: it may be incomplete)")
    lldb_ids = {t.GetThreadID(): t.GetIndexID() for t in process}
    if not snap.stacks:
        out.append("no thread has a dynamic stack (none has run instrumented code)")
    for tid, view in snap.stacks.items():
        t = view.thread
        name = "thread #%d" % lldb_ids[tid] if tid in lldb_ids else "(not in this process)"
        top = ""
        if view.entries:
            top = "  " + entry_lines(0, view.entries[-1],
                                     state.descs.get(view.entries[-1].desc))[0]
        out.append("%s: tid = %d, depth %d/%d, %s%s%s" % (
            name, tid, len(view.entries), t.capacity,
            count(t.dropped, "dropped", "dropped"),
            ", busy" if t.busy else "", top))


def cmd_stats(exe_ctx, args, out):
    if args:
        raise CommandError("usage: strobe stats")
    target, process, state, snap = need_process(exe_ctx)
    heads = [v.head for v in snap.stacks.values()]
    threads = [v.thread for v in snap.stacks.values()]
    out.append("strobe: dynamic stack statistics")
    for name, value, help in Registry.stats(snap.header, threads, heads):
        out.append("  %-12s%14d  %s" % (name, value, help))


def cmd_ticks(exe_ctx, args, out):
    if len(args) > 1:
        raise CommandError("usage: strobe ticks [PATTERN]")
    target = exe_ctx.GetTarget()
    if not target.IsValid():
        raise CommandError("no target")
    pattern = args[0] if args else None
    n, functions = 0, set()
    for module, d in section_descriptors(target, pattern):
        n += 1
        functions.add(d.function)
        where = " at %s:%s" % (d.file, span(d)) if d.kind == Registry.KIND_SOURCE_NOTE else ""
        out.append("%s%s" % (d.function or "?", where))
    if n == 0:
        out.append("no tick descriptors%s in %s (nothing was built with --instrument)"
                   % (" match '%s'" % pattern if pattern else "", exe_name(target)))
    else:
        out.append("%s in %s" % (count(n, "tick descriptor", "tick descriptors"),
                                 count(len(functions), "function", "functions")))


SUBCOMMANDS = {
    "bt": (cmd_bt, "[-a] [N]",
           "the dynamic stack of the selected thread (-a: of every thread), newest "
           "first, at most N entries; when the thread is in Cmm code, the entries "
           "that its live Sp shows stale are left out"),
    "threads": (cmd_threads, "", "the threads that have a dynamic stack"),
    "stats": (cmd_stats, "", "the dynamic stack's statistics over all threads"),
    "ticks": (cmd_ticks, "[PATTERN]",
              "the tick descriptors in the target's executable and libraries (no "
              "process needed), of the functions that match the glob PATTERN"),
}


def strobe_command(debugger, command, exe_ctx, result, internal_dict):
    """strobe bt|threads|stats|ticks: the dynamic stack of a strobe program."""
    try:
        args = shlex.split(command)
    except ValueError as e:
        result.SetError(str(e))
        return
    if not args or args[0] not in SUBCOMMANDS:
        result.SetError("usage: strobe {bt [-a] [N] | threads | stats | ticks [PATTERN]}")
        return
    out = []
    try:
        SUBCOMMANDS[args[0]][0](exe_ctx, args[1:], out)
    except CommandError as e:
        result.SetError(str(e))
        return
    except NothingHere as e:
        out = [str(e)]
    except Exception as e:  # a bug here must not take lldb's session with it
        result.SetError("strobe %s failed: %s: %s" % (args[0], type(e).__name__, e))
        return
    result.AppendMessage("\n".join(out))


def help_text():
    lines = ["The dynamic stack of a program built by strobe (docs/registry.md).", ""]
    for name, (_, usage, what) in SUBCOMMANDS.items():
        lines.append("  strobe %s %s" % (name, usage))
        lines.append("      %s" % what)
    return "\n".join(lines)


strobe_command.__doc__ = help_text()


# ==== Loading ========================================================================

_providers = set()  # (debugger id, target index key) with a provider registered


def ensure_provider(target):
    """Registers the frame provider on target, once."""
    key = (target.GetDebugger().GetID(), target.GetExecutable().fullpath,
           target.GetDebugger().GetIndexOfTarget(target))
    if key in _providers:
        return
    err = lldb.SBError()
    target.RegisterScriptedFrameProvider(__name__ + ".StrobeFrameProvider",
                                         lldb.SBStructuredData(), err)
    if err.Success():
        _providers.add(key)
    else:
        print("strobe: cannot register the frame provider: %s" % err.GetCString(),
              file=sys.stderr)


def announce(target):
    """Sets target up and says in a line what it has for this module."""
    if not Registry.present(target):
        return "strobe: %s; the strobe commands will say so" % no_registry_message(target)
    ensure_provider(target)
    if next(section_descriptors(target), None) is None:
        return ("strobe: %s links libstrobe-rt but has no tick descriptors: nothing in "
                "it was built with --instrument, so its dynamic stack stays empty"
                % exe_name(target))
    return ("strobe: `bt` shows the dynamic stack of %s; `help strobe` for more"
            % exe_name(target))


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -o -f %s.strobe_command strobe" % __name__)
    targets = [debugger.GetTargetAtIndex(i) for i in range(debugger.GetNumTargets())]
    if not targets:
        print("strobe: commands loaded; the frame provider is registered on a target "
              "by the first strobe command (or import this module after creating the "
              "target)")
    for target in targets:
        print(announce(target))
