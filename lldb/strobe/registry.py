"""The registry: every layout the package knows, and nothing else.

Every layout comes from strobe_abi.py, beside strobe_lldb.py (this package's parent
directory): the build generates it from the runtime's header (lldb/strobe_abi_gen.c:
sizeof and offsetof on the structs that rts/strobe/dynstack.h expands from
intrinsics/), and installs it with the module.  docs/registry.md documents the
layouts.  x86-64, little-endian.
"""

import importlib.util
import os
import struct
from collections import namedtuple

import lldb


def _load_abi():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
