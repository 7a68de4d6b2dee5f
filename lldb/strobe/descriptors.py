"""Memory and descriptors: reads of a process or its files, and the tick descriptors
with their strings, cached, and an address on each tick's line."""

import fnmatch

import lldb

from .registry import Registry


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
