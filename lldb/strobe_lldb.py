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
  - `strobe bt [-a] [--full] [N]` prints the entries as the runtime's own reports do,
    a function's nested notes grouped into one frame (as plain `bt` does; `strobe
    frames full` for every entry); `strobe threads` (Haskell threads too),
    `strobe stats`, and `strobe ticks [PATTERN]`, which lists the tick descriptors an
    executable carries (no process needed).
  - in a GHC program, each OS thread's stack is that of the Haskell thread it runs
    (docs/lldb.md, "Haskell threads").

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
# the structs that rts/strobe/dynstack.h expands from intrinsics/), and installs it with this
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
    STACK_HASKELL = abi.STACK_HASKELL      # a thread record's flags: a Haskell thread's
    STACK_RUNNING = abi.STACK_RUNNING      # an OS thread (tid) runs it now
    STACK_APPROX = abi.STACK_APPROX        # its entries may be off
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

    def is_dropped_marker(self, entry):
        """Whether entry (entries[0] only) is the marker of the entries a full array
        dropped: its descriptor's kind is TICK_DROPPED; its elided counts them."""
        d = self.desc(entry.desc, self.memory.read(entry.desc, self.DESC_SIZE))
        return d.kind == abi.TICK_DROPPED

    @classmethod
    def desc(cls, addr, raw):
        """A descriptor from its bytes (None: unreadable, all 0); its strings are
        still addresses."""
        fields = cls.DESC.unpack(raw) if raw is not None else [0] * len(cls.DESC.names)
        return Desc(addr, *fields)

    @staticmethod
    def stats(header, threads, heads):
        """(name, value, help) rows for `strobe stats`, the runtime's own statistics
        (intrinsics/stats.def, in its order): each the counter of its name, the exited
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
        """The live entries, oldest first, without the marker of dropped ones."""
        if self._entries is None:
            self._read()
        return self._entries

    @property
    def dropped(self):
        """The marker of the entries a full array dropped (entries[0]), or None."""
        if self._entries is None:
            self._read()
        return self._marker

    def _read(self):
        entries = [] if self.note else self.registry.entries(self.thread, self.head)
        self._marker = None
        if entries and self.registry.is_dropped_marker(entries[0]):
            self._marker = entries.pop(0)
        self._entries = entries

    def newest_first(self, sp=0):
        """The entries that sp (the live Cmm Sp, 0 if unknown) does not show stale
        (wm < sp: their frames were popped by code that is not instrumented), newest
        first; and how many dropped entries are still live."""
        kept = [e for e in reversed(self.entries) if e.wm >= sp]
        m = self.dropped
        return kept, m.elided if m and m.wm >= sp else 0


class Snapshot:
    """Every thread's dynamic stack at one stop of one process, each read once.

    views: every record's, in the registry's order; stacks: by OS thread id (`tid`),
    the stack that OS thread runs (an OS thread's own, or the Haskell thread's that
    is RUNNING on it); haskell: a Haskell thread's stack by its thread id."""

    def __init__(self, registry):
        self.error = None
        self.header, self.stacks, self.views, self.haskell = None, {}, [], {}
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
                view = StackView(registry, t, head, note)
                self.views.append(view)
                if t.flags & Registry.STACK_HASKELL:
                    self.haskell[t.thread_id] = view
                    if t.flags & Registry.STACK_RUNNING and t.tid:
                        self.stacks[t.tid] = view  # before an OS thread's own
                elif t.tid not in self.stacks:
                    self.stacks[t.tid] = view
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


def on_parent_chain(descs, older, newer):
    """Whether the descriptor at older is on the `parent` chain of the one at newer
    (strictly: a descriptor is not on its own chain)."""
    d = descs.get(newer)
    for _ in range(256):  # chains are short; a torn or cyclic one must not hang
        if not d.parent:
            return False
        if d.parent == older:
            return True
        d = descs.get(d.parent)
    return False


def group_entries(descs, entries):
    """The frames a user sees, from entries newest first, by the runtime's rule (Note
    [One frame per activation] in rts/report.c): two consecutive entries are one frame
    when the older's descriptor is on the newer's parent chain (the same function's
    nested notes), the older is not marked tail and the newer elided nothing.  A frame
    shows its newest entry (function, span, tail mark) with its oldest entry's repeats
    and elided count."""
    out, newer = [], None
    for e in entries:
        if newer is not None and not e.flags & Registry.ENTRY_TAIL and newer.elided == 0 \
                and on_parent_chain(descs, e.desc, newer.desc):
            out[-1] = out[-1]._replace(repeats=e.repeats, elided=e.elided)
        else:
            out.append(e)
        newer = e
    return out


# Plain `bt` shows one frame per group (`strobe frames full`: per entry).
_frames = {"full": False}


def shown_entries(state, view, sp=0, full=None):
    """The entries a backtrace shows, newest first (grouped unless full), and how many
    dropped entries are still live."""
    entries, dropped = view.newest_first(sp)
    if not (_frames["full"] if full is None else full):
        entries = group_entries(state.descs, entries)
    return entries, dropped


def stack_lines(state, view, sp=0, limit=None, full=False):
    """The report of a stack, newest first, as the runtime prints it (its nested
    notes grouped into one frame per function activation unless full)."""
    entries, dropped = shown_entries(state, view, sp, full)
    lines = []
    for n, e in enumerate(entries[:limit] if limit is not None else entries):
        lines += entry_lines(n, e, state.descs.get(e.desc))
    if limit is not None and len(entries) > limit:
        lines.append("... " + count(len(entries) - limit, "more entry", "more entries")
                     + " (strobe bt without a count shows all)")
    elif dropped:
        lines.append("... " + count(dropped, "older entry dropped", "older entries dropped"))
    if view.thread.flags & Registry.STACK_APPROX:
        lines.append("(approximate: the thread's stack chunks changed in a way strobe "
                     "could not follow)")
    if view.note:
        lines.append("(%s)" % view.note)
    return lines


# ==== 5. The frame provider ==========================================================

_reported = set()


def report_once(what, exc):
    """Says once per session that `what` failed, and why (again when the reason
    changes: a provider that falls back to the machine frames must not do it in
    silence)."""
    key = (what, type(exc).__name__, str(exc))
    if key not in _reported:
        _reported.add(key)
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
        self.plan_stop = None

    def _stop_id(self):
        p = self.process
        return ((p.GetStopID(True), self.input_frames.GetSize(), _frames["full"])
                if p is not None else None)

    def get_frame_at_index(self, index):
        if self.plan is None or (index == 0 and self.plan_stop != self._stop_id()):
            # lldb may keep a provider over stops it makes and hides (a signal
            # passed on, a step): a plan is good for one stop.
            self.plan = self._make_plan()
            self.plan_stop = self._stop_id()
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
            ghc = ghc_runtime(self.target)
            if ghc is not None:
                return ghc_plan(self, ghc)
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
        for e in shown_entries(state, view, sp)[0]:
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


def cmm_frame(state, target, thread):
    """The youngest frame of thread that runs Cmm code (in a GHC program: Haskell
    code, the ghccc registers live), or None.  That frame is a machine frame: the
    provider puts its frames below it."""
    ghc = ghc_runtime(target) is not None
    i = 0
    while True:  # not GetNumFrames(), which would make every synthetic frame
        f = thread.GetFrameAtIndex(i)
        if not f.IsValid() or f.IsSynthetic():
            return None
        if ghc_code(f) if ghc else state.is_cmm(f):
            return f
        i += 1


def current_view(state, snap, target, tid, frame):
    """(the StackView of what OS thread tid runs, the Haskell thread id or None).

    In a GHC program stopped in Haskell code (frame: its youngest frame there),
    the Haskell thread is BaseReg's (r13, checked to be a capability's)
    rCurrentTSO, and its stack the record with that TSO's id as `thread_id`.
    Elsewhere (C code, the RTS, or r13 not a BaseReg) it is the record that tid
    runs: a RUNNING Haskell thread's, or the OS thread's own."""
    ghc = ghc_runtime(target)
    if ghc is not None and snap.haskell and frame is not None:
        reg = frame.FindRegister("r13")
        hs = ghc.thread_id(state.memory, reg.GetValueAsUnsigned(0)) if reg.IsValid() else None
        if hs is not None:
            return snap.haskell.get(hs), hs
    view = snap.stacks.get(tid)
    if view is not None and view.thread.flags & Registry.STACK_HASKELL:
        return view, view.thread.thread_id
    return view, None


def parse_bt_args(args):
    all_threads, limit, full = False, None, False
    for a in args:
        if a in ("-a", "--all"):
            all_threads = True
        elif a in ("-f", "--full"):
            full = True
        elif a.isdigit():
            limit = int(a)
        else:
            raise CommandError("usage: strobe bt [-a] [--full] [N]")
    return all_threads, limit, full


def cmd_bt(exe_ctx, args, out):
    all_threads, limit, full = parse_bt_args(args)
    target, process, state, snap = need_process(exe_ctx)
    if snap.changing:
        out.append("(the thread list was changing at this stop: it may be incomplete)")
    threads = list(process) if all_threads else [exe_ctx.GetThread()]
    for thread in threads:
        if not thread.IsValid():
            raise CommandError("no thread selected")
        frame = cmm_frame(state, target, thread)
        view, hs = current_view(state, snap, target, thread.GetThreadID(), frame)
        if all_threads:
            out.append("thread #%d: tid = %d%s" % (thread.GetIndexID(), thread.GetThreadID(),
                                                  ", Haskell thread %d" % hs if hs else ""))
        if view is None:
            out.append("no dynamic stack on this thread (it has run no instrumented code)")
            continue
        lines = stack_lines(state, view, live_sp(frame) if frame else 0, limit, full)
        out.extend(lines or ["the dynamic stack is empty"])


def cmd_threads(exe_ctx, args, out):
    if args:
        raise CommandError("usage: strobe threads")
    target, process, state, snap = need_process(exe_ctx)
    if snap.changing:
        out.append("(the thread list was changing at this stop: it may be incomplete)")
    lldb_ids = {t.GetThreadID(): t.GetIndexID() for t in process}
    if not snap.views:
        out.append("no thread has a dynamic stack (none has run instrumented code)")

    def thread_name(tid):
        return "thread #%d" % lldb_ids[tid] if tid in lldb_ids else "(not in this process)"

    # Haskell threads by id, then OS threads' own stacks in the registry's order.
    views = sorted((v for v in snap.views if v.thread.flags & Registry.STACK_HASKELL),
                   key=lambda v: v.thread.thread_id)
    views += [v for v in snap.views if not v.thread.flags & Registry.STACK_HASKELL]
    for view in views:
        t = view.thread
        top = ""
        if view.entries:
            top = "  " + entry_lines(0, view.entries[-1],
                                     state.descs.get(view.entries[-1].desc))[0]
        extra = (", busy" if t.busy else "") + \
            (", approximate" if t.flags & Registry.STACK_APPROX else "")
        dropped = count(view.dropped.elided if view.dropped else 0, "dropped", "dropped")
        if t.flags & Registry.STACK_HASKELL:
            where = ("running on %s (tid %d)" % (thread_name(t.tid), t.tid)
                     if t.flags & Registry.STACK_RUNNING else "parked")
            out.append("Haskell thread %d: %s, depth %d/%d, %s%s%s" % (
                t.thread_id, where, len(view.entries), t.capacity, dropped, extra, top))
            continue
        out.append("%s: tid = %d, depth %d/%d, %s%s%s" % (
            thread_name(t.tid), t.tid, len(view.entries), t.capacity, dropped, extra, top))


def cmd_stats(exe_ctx, args, out):
    if args:
        raise CommandError("usage: strobe stats")
    target, process, state, snap = need_process(exe_ctx)
    heads = [v.head for v in snap.views]
    threads = [v.thread for v in snap.views]
    out.append("strobe: dynamic stack statistics")
    for name, value, help in Registry.stats(snap.header, threads, heads):
        out.append("  %-12s%14d  %s" % (name, value, help))


def cmd_frames(exe_ctx, args, out):
    if len(args) > 1 or (args and args[0] not in ("grouped", "full")):
        raise CommandError("usage: strobe frames [grouped|full]")
    if args:
        _frames["full"] = args[0] == "full"
    out.append("`bt` shows %s" % ("one frame per dynamic-stack entry" if _frames["full"]
                                  else "one frame per function activation (nested notes "
                                  "grouped)"))


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
    "bt": (cmd_bt, "[-a] [--full] [N]",
           "the dynamic stack of the selected thread (-a: of every thread; in a GHC "
           "program, of the Haskell thread it runs), newest first, at most N frames: "
           "a function's nested notes grouped into one (--full: every entry); when "
           "the thread is in Cmm code, the entries that its live Sp shows stale are "
           "left out"),
    "threads": (cmd_threads, "", "the Haskell threads (running on which OS thread, or "
                "parked) and the OS threads that have a dynamic stack"),
    "frames": (cmd_frames, "[grouped|full]",
               "whether plain `bt` groups a function's nested notes into one frame "
               "(the default) or shows every entry"),
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
        result.SetError("usage: strobe {bt [-a] [--full] [N] | threads | frames "
                        "[grouped|full] | stats | ticks [PATTERN]}")
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
    if GhcRuntime.present(target):
        return announce_ghc(target)
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


# ==== 7. GHC programs ================================================================
#
# A program linked with GHC's runtime (`StgRun`, `hs_main`) runs Haskell code on the
# Cmm stack of a Haskell thread (a TSO's STACK object, in chunks), entered from C by
# `StgRun`.  Without instrumentation the return stack itself says where the program
# goes next: every frame on it starts with the address of its continuation's code,
# whose info table (tables-next-to-code) sits just before that code and gives the
# frame's type and size.  This section walks that stack, reads what lldb's unwinder
# cannot (Haskell code keeps rsp at StgRun's frame and uses rbp as Sp), and steps by
# Haskell lines through code that lldb cannot unwind (the RTS's heap and stack checks,
# the scheduler, libraries built without debug information).
#
# Facts about GHC 9.0's runtime used here, each checked against the program's own RTS
# where it can be (GhcRuntime.check):
#   - an info table is {layout: 8 bytes, type: u32, srt: u32}, right before the code;
#   - closure types (rts/storage/ClosureTypes.h) RET_BCO 29, RET_SMALL 30, RET_BIG 31,
#     RET_FUN 32, UPDATE_FRAME 33, CATCH_FRAME 34, UNDERFLOW_FRAME 35, STOP_FRAME 36,
#     STACK 53, ATOMICALLY_FRAME 55, CATCH_RETRY_FRAME 56, CATCH_STM_FRAME 57;
#   - a frame is 1 + BITMAP_SIZE(layout) words (size in the low 6 bits), except
#     RET_BIG (1 + its large bitmap's first word, the bitmap at code + layout) and
#     RET_FUN ({info, size, fun, payload[size]});
#   - a STACK object is {info, stack_size: u32, dirty, marking, sp, stack[]}; SpLim
#     (r15) is stack + RESERVED_STACK_WORDS (21) words; an UNDERFLOW_FRAME {info,
#     next_chunk} is the oldest frame of every chunk but the last;
#   - ghccc registers: rbp = Sp, r15 = SpLim, r12 = Hp, r13 = BaseReg (HpLim at +856,
#     rCurrentTSO at +872); BaseReg is a Capability's address + 24 (after its
#     StgFunTable); the RTS lists them in `capabilities` (n_capabilities of them);
#     a TSO's current STACK chunk is its word 3 (stackobj), its id (StgWord64) at +48;
#   - the runtime keeps a dynamic stack per Haskell thread (registry records with
#     `thread_id`): current_view picks the one of BaseReg's rCurrentTSO.

class GhcError(Exception):
    """The Haskell stack cannot be read as GHC 9.0's runtime lays it out."""


GHC_FRAME_TYPES = {29: "RET_BCO", 30: "RET_SMALL", 31: "RET_BIG", 32: "RET_FUN",
                   33: "UPDATE_FRAME", 34: "CATCH_FRAME", 35: "UNDERFLOW_FRAME",
                   36: "STOP_FRAME", 55: "ATOMICALLY_FRAME", 56: "CATCH_RETRY_FRAME",
                   57: "CATCH_STM_FRAME"}
GhcFrame = namedtuple("GhcFrame", "sp info type words")


class GhcRuntime:
    """What the module knows of one target's GHC runtime: its symbols, checked."""

    RET_BIG, RET_FUN, UNDERFLOW_FRAME, STOP_FRAME, STACK = 31, 32, 35, 36, 53
    RESERVED_STACK_WORDS = 21
    STACK_HEADER = 24          # info, stack_size/dirty/marking, sp
    HPLIM_OFFSET = 856         # BaseReg->rHpLim
    CURRENT_TSO_OFFSET = 872   # BaseReg->rCurrentTSO
    CAP_REGS = 24              # a Capability's StgRegTable (BaseReg), after its StgFunTable
    TSO_STACKOBJ = 24          # StgTSO: header, _link, global_link, stackobj
    TSO_ID = 48                # StgTSO.id (StgWord64), which the GC never changes
    MAX_FRAMES = 100000

    def __init__(self, target):
        self.target = target
        self.stgrun = self._symbol("StgRun")
        self.stgreturn = self._symbol("StgReturn")
        self.stack_info = self._symbol("stg_STACK_info")
        self.main_cap = self._symbol("MainCapability")
        self.caps_array = self._symbol("capabilities")
        self.n_caps = self._symbol("n_capabilities")
        self.error = None
        self.haskell = None    # Haskell functions with lines: start addresses

    def _symbol(self, name):
        for sym in self.target.FindSymbols(name):
            a = sym.GetSymbol().GetStartAddress().GetLoadAddress(self.target)
            if a != lldb.LLDB_INVALID_ADDRESS:
                return a
            a = sym.GetSymbol().GetStartAddress().GetFileAddress()
            if a != lldb.LLDB_INVALID_ADDRESS:
                return a
        return None

    @staticmethod
    def present(target):
        return (len(target.FindSymbols("StgRun")) > 0
                and len(target.FindSymbols("hs_main")) > 0)

    def check(self, memory):
        """Raises GhcError unless the runtime's info tables have the types above."""
        for name, want in (("stg_stop_thread_info", 36), ("stg_upd_frame_info", 33),
                           ("stg_underflow_frame_info", 35), ("stg_STACK_info", 53),
                           ("stg_catch_frame_info", 34)):
            a = self._symbol(name)
            if a is None and name in ("stg_underflow_frame_info", "stg_catch_frame_info"):
                continue  # not linked into this program
            raw = memory.read(a - 8, 4) if a else None
            if raw is None or struct.unpack("<I", raw)[0] != want:
                raise GhcError("%s's info table is not GHC 9.0's (type %s, expected %d):"
                               " this module reads GHC 9.0.2's runtime"
                               % (name, struct.unpack("<I", raw)[0] if raw else "?", want))

    # -- the Haskell stack ------------------------------------------------------------

    def word(self, memory, addr):
        raw = memory.read(addr, 8)
        if raw is None:
            raise GhcError("cannot read the Haskell stack at 0x%x" % addr)
        return struct.unpack("<Q", raw)[0]

    def info(self, memory, info):
        """(type, layout) of the info table whose code starts at info, or None."""
        raw = memory.read(info - 16, 16) if info > 16 else None
        if raw is None:
            return None
        layout, typ, _ = struct.unpack("<QII", raw)
        return typ, layout

    def chunk(self, memory, stack):
        """(lowest word, end) of the STACK object at stack, checked."""
        if self.word(memory, stack) != self.stack_info:
            raise GhcError("0x%x is not a STACK object" % stack)
        size = struct.unpack("<I", memory.read(stack + 8, 4))[0]
        lo = stack + self.STACK_HEADER
        return lo, lo + 8 * size

    def stack_of(self, splim):
        return splim - 8 * self.RESERVED_STACK_WORDS - self.STACK_HEADER

    def holds(self, memory, stack, sp):
        """Whether stack is a STACK object whose words hold sp."""
        try:
            lo, end = self.chunk(memory, stack)
        except GhcError:
            return False
        return lo <= sp <= end

    def splim(self, memory, sp, r15):
        """SpLim of the stack chunk that holds sp.  Code from GHC's code generator
        keeps it in r15 everywhere, but LLVM may use r15 for something else inside
        a function of strobe's: then it is found from the thread that runs, as the
        RTS keeps it (each capability's BaseReg->rCurrentTSO->stackobj)."""
        if self.holds(memory, self.stack_of(r15), sp):
            return r15
        for cap in self.capabilities(memory):
            tso = self.word(memory, cap + self.CAP_REGS + self.CURRENT_TSO_OFFSET)
            if not tso:
                continue
            stack = self.word(memory, tso + self.TSO_STACKOBJ)
            if self.holds(memory, stack, sp):
                return stack + self.STACK_HEADER + 8 * self.RESERVED_STACK_WORDS
        raise GhcError("no stack chunk of a running Haskell thread holds Sp 0x%x" % sp)

    def thread_id(self, memory, basereg):
        """The id of the Haskell thread that BaseReg basereg runs (its rCurrentTSO's
        StgTSO.id), or None if basereg is no capability's BaseReg or has no TSO."""
        try:
            if not basereg or basereg - self.CAP_REGS not in self.capabilities(memory):
                return None
            tso = self.word(memory, basereg + self.CURRENT_TSO_OFFSET)
            return self.word(memory, tso + self.TSO_ID) if tso else None
        except GhcError:
            return None

    def capabilities(self, memory):
        """The addresses of the RTS's capabilities: the array `capabilities` of
        n_capabilities (set up by the threaded and the non-threaded RTS alike)."""
        if self.caps_array is None or self.n_caps is None:
            return [self.main_cap] if self.main_cap else []
        raw = memory.read(self.n_caps, 4)
        n = struct.unpack("<I", raw)[0] if raw else 0
        array = self.word(memory, self.caps_array)
        return [self.word(memory, array + 8 * i) for i in range(min(n, 4096))] if array \
            else ([self.main_cap] if self.main_cap else [])

    def frame_words(self, memory, sp, typ, layout, info):
        if typ == self.RET_BIG:
            off = layout - (1 << 64) if layout >= 1 << 63 else layout
            return 1 + self.word(memory, info + off)
        if typ == self.RET_FUN:
            return 3 + self.word(memory, sp + 8)
        return 1 + (layout & 0x3F)

    def walk(self, memory, sp, splim, limit=None):
        """The frames of the Haskell stack from sp, youngest first, through every
        chunk to the STOP_FRAME.  Up to 8 words at sp may not be a frame yet (the
        arguments of the function that runs, or a frame being built)."""
        stack = self.stack_of(splim)
        lo, end = self.chunk(memory, stack)
        if not lo <= sp <= end:
            raise GhcError("Sp 0x%x is outside its stack chunk 0x%x-0x%x" % (sp, lo, end))
        frames = []
        for skip in range(9):
            t = self.info(memory, self.word(memory, sp + 8 * skip))
            if t and t[0] in GHC_FRAME_TYPES:
                sp += 8 * skip
                break
        else:
            raise GhcError("no return frame at Sp 0x%x" % sp)
        while len(frames) < (limit or self.MAX_FRAMES):
            if not lo <= sp < end:
                raise GhcError("frame at 0x%x is outside its stack chunk" % sp)
            info = self.word(memory, sp)
            t = self.info(memory, info)
            if t is None or t[0] not in GHC_FRAME_TYPES:
                raise GhcError("the word at 0x%x (0x%x) is not a return frame" % (sp, info))
            typ, layout = t
            words = self.frame_words(memory, sp, typ, layout, info)
            frames.append(GhcFrame(sp, info, typ, words))
            if typ == self.STOP_FRAME:
                return frames
            if typ == self.UNDERFLOW_FRAME:
                stack = self.word(memory, sp + 8)
                lo, end = self.chunk(memory, stack)
                sp = self.word(memory, stack + 16)
                continue
            sp += 8 * words
        return frames

    def depth(self, memory, sp, splim):
        """Bytes of live Haskell stack at sp, over every chunk: it does not change when
        the GC moves a stack or when a chunk overflows, as Sp does."""
        stack = self.stack_of(splim)
        lo, end = self.chunk(memory, stack)
        total = end - sp
        for _ in range(10000):
            bottom = self.word(memory, end - 16)
            t = self.info(memory, bottom)
            if not t or t[0] != self.UNDERFLOW_FRAME:
                return total
            stack = self.word(memory, end - 8)
            lo, end = self.chunk(memory, stack)
            total += end - self.word(memory, stack + 16)
        return total

    # -- the C frames below StgRun ------------------------------------------------------

    def c_frames(self, memory, rsp):
        """The return addresses of the C frames that entered Haskell code, youngest
        first: StgRun's (as StgReturn, where Haskell code leaves it) and its callers',
        unwound by their .eh_frame from rsp, the stack pointer Haskell code was
        entered with."""
        if self.stgreturn is None:
            return []
        inside = self.stgreturn - 1  # StgRun, before StgReturn
        regs = {7: rsp, 16: inside}
        out = [inside]
        lookup = inside
        for _ in range(64):
            cfi = cfi_for(self.target, memory, lookup)
            if cfi is None:
                break
            regs = cfi.unwind(memory, lookup, regs)
            pc = regs.get(16) if regs else None
            if not pc:
                break
            out.append(pc)
            lookup = pc - 1
        return out

    def entry_rsp(self, memory, frame):
        """The stack pointer of Haskell code as StgRun entered it: Haskell code never
        moves it but for spills in strobe's own functions, which their CFI describes
        (CFA - 8 is rsp at the function's entry).  Checked by StgRun's saved return
        address, which must be code."""
        cands = []
        cfa = frame.GetCFA()
        if cfa and cfa != lldb.LLDB_INVALID_ADDRESS:
            cands.append(cfa - 8)
        rsp = frame.FindRegister("rsp").GetValueAsUnsigned(0)
        cands.append(rsp)
        for c in cands:
            cfi = cfi_for(self.target, memory, self.stgreturn)
            regs = cfi.unwind(memory, self.stgreturn, {7: c, 16: self.stgreturn}) if cfi else None
            pc = regs.get(16) if regs else None
            if pc and self.target.ResolveLoadAddress(pc).GetSymbol().IsValid() \
                    and not self.in_stgrun(pc):
                return c
        return None

    def in_stgrun(self, pc):
        sym = self.target.ResolveLoadAddress(pc).GetSymbol()
        return sym.IsValid() and sym.GetName() in ("StgRun", "StgReturn",
                                                   "StgRunIsImplementedInAssembler")

    # -- Haskell code with lines --------------------------------------------------------

    def haskell_entries(self):
        """Start addresses of every function of a compile unit with Haskell lines (the
        program's own modules): where Haskell code is entered from outside it."""
        if self.haskell is None:
            starts = set()
            for module in self.target.module_iter():
                for cu in module.compile_unit_iter():
                    if not haskell_unit(cu):
                        continue
                    seen = None
                    for i in range(cu.GetNumLineEntries()):
                        a = cu.GetLineEntryAtIndex(i).GetStartAddress()
                        fn = a.GetFunction()
                        if fn.IsValid():
                            s = fn.GetStartAddress().GetLoadAddress(self.target)
                            if s != seen and s != lldb.LLDB_INVALID_ADDRESS:
                                starts.add(s)
                                seen = s
            self.haskell = sorted(starts)
        return self.haskell


def haskell_unit(cu):
    f = cu.GetFileSpec().GetFilename() or ""
    return f.endswith((".hs", ".lhs", ".hsc", ".cmm")) or f.endswith(".dump-cmm-raw")


def haskell_line(frame):
    """(file, line) if frame's pc is in code with Haskell lines, else None."""
    le = frame.GetLineEntry()
    if not le.IsValid() or le.GetLine() == 0:
        return None
    name = le.GetFileSpec().GetFilename() or ""
    if not name.endswith((".hs", ".lhs", ".hsc")):
        return None
    return (name, le.GetLine())


_ghc = {}


def ghc_runtime(target):
    """The target's GhcRuntime, or None if it is not a GHC program."""
    key = (target.GetDebugger().GetID(), target.GetExecutable().fullpath)
    if key not in _ghc:
        _ghc[key] = GhcRuntime(target) if GhcRuntime.present(target) else None
    return _ghc[key]


# -- .eh_frame, as far as C compilers use it on x86-64 ---------------------------------

class Cfi:
    """One module's .eh_frame: the FDEs by address, and the evaluation of a row."""

    def __init__(self, target, section):
        self.target = target
        self.base = section.GetLoadAddress(target)
        if self.base == lldb.LLDB_INVALID_ADDRESS:
            self.base = section.GetFileAddress()
        data = section.GetSectionData()
        err = lldb.SBError()
        self.raw = bytes(data.ReadRawData(err, 0, data.GetByteSize())) if data.GetByteSize() else b""
        self.cies = {}
        self.fdes = []  # (start, end, instructions offset, end offset, cie offset)
        self._index()

    def _leb(self, o, signed):
        r = s = 0
        while True:
            b = self.raw[o]
            o += 1
            r |= (b & 0x7F) << s
            s += 7
            if b < 0x80:
                if signed and b & 0x40:
                    r -= 1 << s
                return r, o

    def _uleb(self, o):
        return self._leb(o, False)

    def _sleb(self, o):
        return self._leb(o, True)

    def _ptr(self, o, enc):
        fmt = enc & 0x0F
        if fmt == 0x01:
            v, n = self._uleb(o)
        elif fmt == 0x09:
            v, n = self._sleb(o)
        else:
            size, sign = {0x00: (8, "<Q"), 0x02: (2, "<H"), 0x03: (4, "<I"),
                          0x04: (8, "<Q"), 0x0A: (2, "<h"), 0x0B: (4, "<i"),
                          0x0C: (8, "<q")}[fmt]
            v, n = struct.unpack_from(sign, self.raw, o)[0], o + size
        if enc & 0x70 == 0x10:
            v += self.base + o
        return v & 0xFFFFFFFFFFFFFFFF, n

    def _cie(self, off):
        c = self.cies.get(off)
        if c is None:
            o = off + 8
            version = self.raw[o]
            o += 1
            nul = self.raw.index(b"\0", o)
            aug = self.raw[o:nul].decode()
            o = nul + 1
            code_align, o = self._uleb(o)
            data_align, o = self._sleb(o)
            if version == 1:
                o += 1
            else:
                _, o = self._uleb(o)
            enc, end = 0, off + 4 + struct.unpack_from("<I", self.raw, off)[0]
            if aug.startswith("z"):
                n, o = self._uleb(o)
                aug_end = o + n
                for ch in aug[1:]:
                    if ch == "R":
                        enc = self.raw[o]
                        o += 1
                    elif ch == "P":
                        penc = self.raw[o]
                        _, o = self._ptr(o + 1, penc)
                    elif ch == "L":
                        o += 1
                o = aug_end
            c = self.cies[off] = (code_align, data_align, enc, aug, o, end)
        return c

    def _index(self):
        o, raw = 0, self.raw
        while o + 8 <= len(raw):
            length = struct.unpack_from("<I", raw, o)[0]
            if length == 0 or length == 0xFFFFFFFF:
                break
            cid = struct.unpack_from("<I", raw, o + 4)[0]
            end = o + 4 + length
            if cid != 0:
                cie_off = o + 4 - cid
                try:
                    _, _, enc, aug, _, _ = self._cie(cie_off)
                    start, p = self._ptr(o + 8, enc)
                    rng, p = self._ptr(p, enc & 0x0F)
                    if aug.startswith("z"):
                        n, p = self._uleb(p)
                        p += n
                    self.fdes.append((start, start + rng, p, end, cie_off))
                except (KeyError, IndexError, struct.error, ValueError):
                    pass
            o = end
        self.fdes.sort()
        self.starts = [f[0] for f in self.fdes]

    def fde(self, pc):
        import bisect
        i = bisect.bisect_right(self.starts, pc) - 1
        if i >= 0 and self.fdes[i][0] <= pc < self.fdes[i][1]:
            return self.fdes[i]
        return None

    def _run(self, o, end, loc, pc, st, init, code_align, data_align, stack):
        while o < end and loc <= pc:
            op = self.raw[o]
            o += 1
            hi, lo = op & 0xC0, op & 0x3F
            if hi == 0x40:
                loc += lo * code_align
                if loc > pc:
                    break
            elif hi == 0x80:
                v, o = self._uleb(o)
                st["regs"][lo] = ("off", v * data_align)
            elif hi == 0xC0:
                if lo in init["regs"]:
                    st["regs"][lo] = init["regs"][lo]
                else:
                    st["regs"].pop(lo, None)
            elif op == 0x00:
                pass
            elif op in (0x02, 0x03, 0x04):
                size = {0x02: 1, 0x03: 2, 0x04: 4}[op]
                d = int.from_bytes(self.raw[o:o + size], "little")
                o += size
                loc += d * code_align
                if loc > pc:
                    break
            elif op in (0x05, 0x11):
                r, o = self._uleb(o)
                v, o = (self._uleb(o) if op == 0x05 else self._sleb(o))
                st["regs"][r] = ("off", v * data_align)
            elif op in (0x06, 0x08):
                r, o = self._uleb(o)
                st["regs"].pop(r, None)
            elif op == 0x07:
                r, o = self._uleb(o)
                st["regs"][r] = ("undef",)
            elif op == 0x09:
                r, o = self._uleb(o)
                r2, o = self._uleb(o)
                st["regs"][r] = ("reg", r2)
            elif op == 0x0A:
                stack.append((st["cfa"], dict(st["regs"])))
            elif op == 0x0B:
                st["cfa"], st["regs"] = stack.pop()
            elif op == 0x0C:
                r, o = self._uleb(o)
                v, o = self._uleb(o)
                st["cfa"] = (r, v)
            elif op == 0x12:
                r, o = self._uleb(o)
                v, o = self._sleb(o)
                st["cfa"] = (r, v * data_align)
            elif op == 0x0D:
                r, o = self._uleb(o)
                st["cfa"] = (r, st["cfa"][1])
            elif op == 0x0E:
                v, o = self._uleb(o)
                st["cfa"] = (st["cfa"][0], v)
            elif op == 0x13:
                v, o = self._sleb(o)
                st["cfa"] = (st["cfa"][0], v * data_align)
            elif op in (0x0F, 0x10, 0x16):
                r = None
                if op != 0x0F:
                    r, o = self._uleb(o)
                n, o = self._uleb(o)
                block = self.raw[o:o + n]
                o += n
                rule = ("expr",)
                if op == 0x16 and block and block[0] == 0x77:  # DW_OP_breg7 (rsp)
                    self_o = 1
                    v, _ = Cfi._sleb_bytes(block, self_o)
                    rule = ("rsp+", v)
                if op == 0x0F:
                    st["cfa"] = ("expr",)
                else:
                    st["regs"][r] = rule
            elif op == 0x2E:
                _, o = self._uleb(o)
            else:
                raise GhcError("unknown CFI instruction 0x%x" % op)
        return loc

    @staticmethod
    def _sleb_bytes(b, o):
        r = s = 0
        while True:
            x = b[o]
            o += 1
            r |= (x & 0x7F) << s
            s += 7
            if x < 0x80:
                if x & 0x40:
                    r -= 1 << s
                return r, o

    def row(self, pc):
        """(cfa rule, register rules) at pc, or None without an FDE."""
        f = self.fde(pc)
        if f is None:
            return None
        start, _, o, end, cie_off = f
        code_align, data_align, _, _, io, iend = self._cie(cie_off)
        st = {"cfa": (7, 8), "regs": {}}
        self._run(io, iend, start, 1 << 64, st, {"regs": {}}, code_align, data_align, [])
        init = {"regs": dict(st["regs"])}
        self._run(o, end, start, pc, st, init, code_align, data_align, [])
        return st["cfa"], st["regs"]

    def unwind(self, memory, pc, regs):
        """The caller's registers (a dict by DWARF number) from regs at pc, or None."""
        row = self.row(pc)
        if row is None:
            return None
        cfa_rule, rules = row
        if cfa_rule[0] == "expr" or cfa_rule[0] not in regs:
            return None
        cfa = regs[cfa_rule[0]] + cfa_rule[1]
        out = dict(regs)
        out[7] = cfa
        for r, rule in rules.items():
            if rule[0] == "off":
                raw = memory.read(cfa + rule[1], 8)
                if raw is None:
                    return None
                out[r] = struct.unpack("<Q", raw)[0]
            elif rule[0] == "rsp+":
                out[r] = regs[7] + rule[1]
            elif rule[0] == "reg" and rule[1] in regs:
                out[r] = regs[rule[1]]
            else:
                out.pop(r, None)
        if 16 not in rules:
            return None
        return out


_cfis = {}


def cfi_for(target, memory, pc):
    """The Cfi of the module that holds pc, or None."""
    addr = target.ResolveLoadAddress(pc)
    module = addr.GetModule()
    if not module.IsValid():
        return None
    section = module.FindSection(".eh_frame")
    if not section.IsValid():
        return None
    key = (target.GetDebugger().GetID(), module.GetFileSpec().fullpath,
           section.GetLoadAddress(target))
    if key not in _cfis:
        _cfis[key] = Cfi(target, section)
    return _cfis[key]


def ghc_code(frame):
    """Whether frame runs Haskell code (the ghccc registers hold): code with Haskell
    lines, or GHC's own code of an info table or the RTS's Cmm (stg_*)."""
    if haskell_line(frame):
        return True
    sym = frame.GetSymbol()
    name = sym.GetName() if sym.IsValid() else ""
    return bool(name) and (name.endswith(("_info", "_entry", "_fast", "_ret"))
                           or name.startswith(("stg_", "__stg_")))


def ghc_plan(provider, ghc):
    """The frames of a thread of a GHC program: the machine frames down to the
    youngest one in Haskell code; then the thread's dynamic stack if it has one,
    else the continuations waiting on its Haskell stack; then StgRun and the C
    frames below it."""
    frames = provider.input_frames
    n = frames.GetSize()
    machine = list(range(n))
    target, process = provider.target, provider.process
    memory = Memory(target, process)
    if ghc.error is None:
        try:
            ghc.check(memory)
            ghc.error = False
        except GhcError as e:
            ghc.error = str(e)
    if ghc.error:
        raise GhcError(ghc.error)
    real = [frames.GetFrameAtIndex(i) for i in range(n)]
    top = next((i for i, f in enumerate(real) if ghc_code(f)), None)
    if top is None:
        return machine
    f = real[top]
    sp = f.FindRegister("rbp").GetValueAsUnsigned(0)
    splim = ghc.splim(memory, sp, f.FindRegister("r15").GetValueAsUnsigned(0))
    rsp = ghc.entry_rsp(memory, f)
    out = machine[:top + 1]
    synthetic = []
    state = process_state(target, process)
    view = None
    if state is not None:
        view = current_view(state, state.snapshot(process), target,
                            provider.thread.GetThreadID(), f)[0]
    if view is not None and view.depth > 0:
        for e in shown_entries(state, view, sp)[0]:
            pc = state.descs.pc(state.descs.get(e.desc))
            if pc:
                synthetic.append(pc)
    else:
        fn = f.GetFunction()
        here = (fn.GetStartAddress() if fn.IsValid() else f.GetSymbol().GetStartAddress())
        here = here.GetLoadAddress(target)
        for i, fr in enumerate(ghc.walk(memory, sp, splim)):
            if i == 0 and fr.info == here:
                continue  # the frame of the continuation that runs: frame 0
            synthetic.append(fr.info)
    if rsp is not None:
        synthetic += ghc.c_frames(memory, rsp)
    for pc in synthetic:
        out.append({"idx": len(out), "pc": pc})
    return out


# -- loading, for GHC programs ---------------------------------------------------------

# The RTS's timer: the non-threaded runtime takes SIGVTALRM (timer_create) every 10 ms
# of CPU time; the threaded one ticks with a timerfd in a thread of its own, without
# a signal.  lldb would stop at each SIGVTALRM; the program must see it.
GHC_SIGNALS = ("SIGVTALRM",)


def handle_ghc_signals(debugger, target, passed=True):
    """Passes the RTS's timer signal to the program without stopping or a word; or,
    while a stepping command runs, drops it (a tick fewer only delays the RTS's next
    context switch; passed on, each resume after a stop longer than a tick would
    enter the handler first, and the tick's context switch would make the next heap
    check fail)."""
    interp = debugger.GetCommandInterpreter()
    for sig in GHC_SIGNALS:
        res = lldb.SBCommandReturnObject()
        interp.HandleCommand("process handle %s -n false -p %s -s false"
                             % (sig, "true" if passed else "false"), res)


def announce_ghc(target):
    debugger = target.GetDebugger()
    handle_ghc_signals(debugger, target)
    ensure_provider(target)
    install_stepping(debugger)
    has = Registry.present(target) and next(section_descriptors(target), None) is not None
    return ("strobe: %s is a GHC program: `bt` shows %s, StgRun and the C frames below "
            "it; next/step/finish step by Haskell lines through the RTS; the RTS's "
            "timer signal passes silently"
            % (exe_name(target), "its dynamic stack" if has
               else "the continuations waiting on its Haskell stack"))


# -- stepping by Haskell lines ---------------------------------------------------------
#
# `next`, `step` and `finish` are replaced by commands that do what lldb's do where
# lldb's work (any program that is not a GHC program, and C code of a GHC program),
# and in Haskell code step by Haskell lines: single instructions while the code has
# Haskell lines; through code without (the RTS's heap and stack checks, the scheduler,
# libraries), a run to the next entry of a function with Haskell lines (one breakpoint
# with a location at each, enabled only while stepping).  Depths are bytes of live
# Haskell stack (GhcRuntime.depth), which the GC and stack chunks do not change.
#   step    stops at the first row of another Haskell line, or at a function entry;
#   next    the same, but a function entered deeper than where it started (a call,
#           the evaluation of a thunk: Sp[0] is not the function itself) runs to
#           its return; a re-entry of the same function at the same depth after a
#           heap or stack check (through stg_gc_*) is no new line;
#   finish  runs to the continuation of the youngest frame on the Haskell stack,
#           then on to the next Haskell line.

class HaskellEntries:
    """Scripted breakpoint resolver: a location at each Haskell function's entry."""

    def __init__(self, bkpt, extra_args, internal_dict):
        self.bkpt = bkpt
        target = bkpt.GetTarget()
        ghc = ghc_runtime(target)
        self.addrs = ghc.haskell_entries() if ghc else []
        self.target = target

    def __callback__(self, sym_ctx):
        module = sym_ctx.GetModule()
        for a in self.addrs:
            addr = self.target.ResolveLoadAddress(a)
            if addr.GetModule() == module:
                self.bkpt.AddLocation(addr)

    def __get_depth__(self):
        return lldb.eSearchDepthModule


_entry_bps = {}  # (debugger, executable) -> the id of its Haskell-entries breakpoint

# The breakpoints the stepping commands make carry these names, which
# `breakpoint list` does not show and `breakpoint delete` (without -f) leaves alone.
ENTRIES_BP_NAME = "strobe-haskell-entries"
STEP_BP_NAME = "strobe-step"


def hide(target, bkpt, name):
    """Gives bkpt the name, whose permissions (set first: lldb copies them to the
    breakpoint when it gets the name) keep it out of the user's commands."""
    bn = lldb.SBBreakpointName(target, name)
    if bn.IsValid():
        bn.SetAllowList(False)
        bn.SetAllowDelete(False)
        bn.SetAllowDisable(False)
    bkpt.AddName(name)


def in_haskell_code(frame):
    """Whether frame's pc is in a compile unit with Haskell lines (the program's own
    modules, lowered by strobe from GHC's dumps), also where its line is 0."""
    cu = frame.GetCompileUnit()
    name = (cu.GetFileSpec().GetFilename() or "") if cu.IsValid() else ""
    return name.endswith((".hs", ".lhs", ".hsc", ".dump-cmm-raw"))


class StepStop(Exception):
    """The stepping ended for another reason (a breakpoint, a signal, an exit)."""


class HaskellStepper:
    def __init__(self, debugger, target, process, thread, ghc):
        self.debugger, self.target, self.process, self.thread = \
            debugger, target, process, thread
        self.ghc = ghc
        self.memory = Memory(target, process)

    # -- primitives
    def frame(self):
        return self.thread.GetFrameAtIndex(0)

    def pc(self):
        return self.frame().GetPC()

    def regs(self):
        f = self.frame()
        sp = f.FindRegister("rbp").GetValueAsUnsigned(0)
        return sp, self.ghc.splim(self.memory, sp, f.FindRegister("r15").GetValueAsUnsigned(0))

    def depth(self):
        sp, splim = self.regs()
        return self.ghc.depth(self.memory, sp, splim)

    def check_stop(self, ours):
        if self.process.GetState() != lldb.eStateStopped:
            raise StepStop()
        reason = self.thread.GetStopReason()
        if reason == lldb.eStopReasonBreakpoint:
            ids = [self.thread.GetStopReasonDataAtIndex(i)
                   for i in range(0, self.thread.GetStopReasonDataCount(), 2)]
            if not all(i in ours for i in ids):
                raise StepStop()
        elif reason not in (lldb.eStopReasonPlanComplete, lldb.eStopReasonTrace,
                            lldb.eStopReasonNone):
            raise StepStop()

    def rsp(self):
        return self.frame().FindRegister("rsp").GetValueAsUnsigned(0)

    def si(self):
        """One instruction; returns (return address, rsp) if it was a call into code
        without Haskell lines (strobe's runtime, a C function), else None.  A signal
        that arrives during the step (the RTS's timer, when lldb passes it on) makes
        the kernel enter its handler first, and the step stops at the handler's
        first instruction: then the handler runs to its return, to the instruction
        it interrupted, and that is stepped again."""
        before, rsp0 = self.pc(), self.rsp()
        for _ in range(1000):
            self.thread.StepInstruction(False)
            self.check_stop(())
            if not self.in_signal_handler():
                break
            self.run_to_address(before, rsp0)
        else:
            raise GhcError("signals kept interrupting the instruction at 0x%x" % before)
        rsp = self.rsp()
        if rsp == rsp0 - 8 and not in_haskell_code(self.frame()):
            ret = self.ghc.word(self.memory, rsp)
            if before < ret <= before + 15:
                return ret, rsp + 8
        return None

    # x86-64 Linux's rt_sigreturn trampoline (libc's __restore_rt), to which the
    # kernel makes a handler return: mov $15, %rax; syscall.
    SIGRETURN = bytes.fromhex("48c7c00f0000000f05")

    def in_signal_handler(self):
        """Whether the thread has just entered a signal handler (and run its first
        instruction, which may push or reserve a few words): its return address, the
        sigreturn trampoline, is among the top words of the stack."""
        rsp = self.frame().FindRegister("rsp").GetValueAsUnsigned(0)
        raw = self.memory.read(rsp, 8 * 8) if rsp else None
        if raw is None:
            return False
        for ret in struct.unpack("<8Q", raw):
            if ret > 4096 and self.memory.read(ret, len(self.SIGRETURN)) == self.SIGRETURN:
                return True
        return False

    def entries_bp(self):
        key = (self.target.GetDebugger().GetID(), self.target.GetExecutable().fullpath)
        b = self.target.FindBreakpointByID(_entry_bps.get(key, 0))
        if b.IsValid():
            return b
        b = self.target.BreakpointCreateFromScript(__name__ + ".HaskellEntries",
                                                   lldb.SBStructuredData(),
                                                   lldb.SBFileSpecList(),
                                                   lldb.SBFileSpecList())
        b.SetEnabled(False)
        hide(self.target, b, ENTRIES_BP_NAME)
        _entry_bps[key] = b.GetID()
        return b

    def run_to_entry(self):
        b = self.entries_bp()
        b.SetEnabled(True)
        try:
            self.process.Continue()
            self.check_stop((b.GetID(),))
        finally:
            b.SetEnabled(False)

    def run_to_address(self, addr, rsp=None):
        """Runs until addr is reached (with rsp, if given), by a breakpoint of this
        module's, deleted after: no thread plan of lldb's stays behind when something
        else stops the process first."""
        b = self.target.BreakpointCreateByAddress(addr)
        hide(self.target, b, STEP_BP_NAME)
        try:
            while True:
                self.process.Continue()
                self.check_stop((b.GetID(),))
                if self.pc() == addr and (rsp is None or self.rsp() == rsp):
                    return
        finally:
            self.target.BreakpointDelete(b.GetID())

    def run_to(self, addr, depth):
        """Runs until addr is entered at depth."""
        while True:
            self.run_to_address(addr)
            if self.depth() == depth:
                return

    def is_entry(self, pc):
        f = self.frame().GetFunction()
        return f.IsValid() and f.GetStartAddress().GetLoadAddress(self.target) == pc

    def is_return(self, pc):
        sp, _ = self.regs()
        return self.ghc.word(self.memory, sp) == pc

    # -- the commands
    def step(self, over):
        start = haskell_line(self.frame())
        d0 = self.depth() if start else None
        moved, left = False, None
        call = None
        for _ in range(1000000):
            f = self.frame()
            pc = f.GetPC()
            if not in_haskell_code(f):
                if call is not None:  # a C function called from Haskell code
                    self.run_to_address(*call)
                    call = None
                    continue
                name = f.GetSymbol().GetName() if f.GetSymbol().IsValid() else ""
                if left is not None and "gc" in name and name.startswith(("stg_", "__stg_")):
                    left = (left[0], left[1], True)
                self.run_to_entry()
                moved = True
                continue
            line = haskell_line(f)  # None on code of line 0 (padding, spills)
            row = line is not None and \
                f.GetLineEntry().GetStartAddress().GetLoadAddress(self.target) == pc
            entry = self.is_entry(pc)
            if moved and row:
                depth = self.depth()
                ret = entry and self.is_return(pc)
                if entry and left and left[2] and pc == left[0] and depth == left[1]:
                    pass  # the same function again after a heap or stack check
                elif entry and not ret:  # a call, or the evaluation of a thunk
                    if not (over and d0 is not None and depth > d0):
                        return
                    sp, splim = self.regs()
                    fr = self.ghc.walk(self.memory, sp, splim, limit=1)[0]
                    self.run_to(fr.info, self.ghc.depth(self.memory, fr.sp, splim))
                    continue
                elif ret and d0 is not None and (depth < d0 or depth == d0 and line != start):
                    return  # a return to a caller's continuation (at depth d0 it may
                    # also be a continuation pushed before the step: a new line only)
                elif line != start:
                    return
            fn = f.GetFunction()
            if fn.IsValid():
                left = (fn.GetStartAddress().GetLoadAddress(self.target), self.depth(), False)
            call = self.si()
            moved = True
        raise GhcError("no Haskell line in a million steps")

    def finish(self):
        f = self.frame()
        if haskell_line(f):
            sp, splim = self.regs()
            frames = self.ghc.walk(self.memory, sp, splim, limit=2)
            fn = f.GetFunction()
            here = fn.GetStartAddress().GetLoadAddress(self.target) if fn.IsValid() else None
            fr = frames[1] if frames[0].info == here and len(frames) > 1 else frames[0]
            self.run_to(fr.info, self.ghc.depth(self.memory, fr.sp, splim))
            if haskell_line(self.frame()):
                return
        self.run_to_entry()


def report_stop(debugger, process, thread, reason, result):
    interp = debugger.GetCommandInterpreter()
    res = lldb.SBCommandReturnObject()
    interp.HandleCommand("frame select 0", res)
    name = thread.GetName()
    lines = ["Process %d stopped" % process.GetProcessID(),
             "* thread #%d, %sstop reason = %s" % (
                 thread.GetIndexID(), "name = '%s', " % name if name else "", reason)]
    body = res.GetOutput().rstrip("\n").split("\n")
    lines.append("    " + body[0])
    lines += body[1:]
    result.AppendMessage("\n".join(lines))


def stepping_command(mode):
    builtin = {"over": "thread step-over", "in": "thread step-in",
               "out": "thread step-out"}[mode]
    reason = {"over": "step over", "in": "step in", "out": "step out"}[mode]

    def command(debugger, command, exe_ctx, result, internal_dict):
        target, process, thread = exe_ctx.GetTarget(), exe_ctx.GetProcess(), exe_ctx.GetThread()
        ghc = ghc_runtime(target) if target.IsValid() else None
        frame = thread.GetFrameAtIndex(0) if thread.IsValid() else None
        if (ghc is None or command.strip() or not process.IsValid()
                or process.GetState() != lldb.eStateStopped or not ghc_code(frame)):
            debugger.GetCommandInterpreter().HandleCommand(
                (builtin + " " + command).strip(), exe_ctx, result)
            return
        was_async = debugger.GetAsync()
        debugger.SetAsync(False)
        handle_ghc_signals(debugger, target, passed=False)
        stepper = HaskellStepper(debugger, target, process, thread, ghc)
        try:
            if mode == "out":
                stepper.finish()
            else:
                stepper.step(mode == "over")
        except StepStop:
            # A single step that ended on another breakpoint leaves lldb's plan for
            # it on the thread, which a later `continue` would complete: drop it.
            res = lldb.SBCommandReturnObject()
            debugger.GetCommandInterpreter().HandleCommand("thread plan discard 1", res)
            res = lldb.SBCommandReturnObject()
            debugger.GetCommandInterpreter().HandleCommand("process status", res)
            result.AppendMessage(res.GetOutput().rstrip("\n"))
            return
        except GhcError as e:
            result.SetError("strobe: cannot step by Haskell lines: %s" % e)
            return
        finally:
            handle_ghc_signals(debugger, target)
            debugger.SetAsync(was_async)
        report_stop(debugger, process, thread, reason, result)
    return command


strobe_next = stepping_command("over")
strobe_step = stepping_command("in")
strobe_finish = stepping_command("out")

_stepping_installed = set()


def install_stepping(debugger):
    """Makes next/n, step/s and finish the stepping commands above (once)."""
    if debugger.GetID() in _stepping_installed:
        return
    _stepping_installed.add(debugger.GetID())
    interp = debugger.GetCommandInterpreter()
    for names, fn in ((("next", "n"), "strobe_next"), (("step", "s"), "strobe_step"),
                      (("finish",), "strobe_finish")):
        for name in names:
            res = lldb.SBCommandReturnObject()
            interp.HandleCommand("command unalias %s" % name, res)
            interp.HandleCommand("command script add -o -f %s.%s %s"
                                 % (__name__, fn, name), res)
