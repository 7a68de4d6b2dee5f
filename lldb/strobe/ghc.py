"""GHC programs: the Haskell stack of GHC 9.0's runtime, walked from Sp.

A program linked with GHC's runtime (`StgRun`, `hs_main`) runs Haskell code on the
Cmm stack of a Haskell thread (a TSO's STACK object, in chunks), entered from C by
`StgRun`.  Without instrumentation the return stack itself says where the program
goes next: every frame on it starts with the address of its continuation's code,
whose info table (tables-next-to-code) sits just before that code and gives the
frame's type and size.  This module walks that stack and reads what lldb's unwinder
cannot (Haskell code keeps rsp at StgRun's frame and uses rbp as Sp): the C frames
below StgRun, from their .eh_frame.  provider.py (ghc_plan) makes frames of them, and
stepping.py steps by Haskell lines through code that lldb cannot unwind (the RTS's
heap and stack checks, the scheduler, libraries built without debug information).

Facts about GHC's runtime used here, each checked against the program's own RTS where
it can be (GhcRuntime.check); the numbers are those of the GHC strobe is built with
(rts/ghc_layout.h, in strobe_abi.py), GHC 9.0.2's shown here:
  - an info table is {layout: 8 bytes, type: u32, srt: u32}, right before the code;
  - closure types (rts/storage/ClosureTypes.h) RET_BCO 29, RET_SMALL 30, RET_BIG 31,
    RET_FUN 32, UPDATE_FRAME 33, CATCH_FRAME 34, UNDERFLOW_FRAME 35, STOP_FRAME 36,
    STACK 53, ATOMICALLY_FRAME 55, CATCH_RETRY_FRAME 56, CATCH_STM_FRAME 57;
  - a frame is 1 + BITMAP_SIZE(layout) words (size in the low 6 bits), except
    RET_BIG (1 + its large bitmap's first word, the bitmap at code + layout) and
    RET_FUN ({info, size, fun, payload[size]});
  - a STACK object is {info, stack_size: u32, dirty, marking, sp, stack[]}; SpLim
    (r15) is stack + RESERVED_STACK_WORDS (21) words; an UNDERFLOW_FRAME {info,
    next_chunk} is the oldest frame of every chunk but the last;
  - ghccc registers: rbp = Sp, r15 = SpLim, r12 = Hp, r13 = BaseReg (HpLim at +856,
    rCurrentTSO at +872); BaseReg is a Capability's address + 24 (after its
    StgFunTable); the RTS lists them in `capabilities` (n_capabilities of them);
    a TSO's current STACK chunk is its word 3 (stackobj), its id (StgWord64) at +48;
  - the runtime keeps a dynamic stack per Haskell thread (registry records with
    `thread_id`): current_view picks the one of BaseReg's rCurrentTSO.
"""

import struct
from collections import namedtuple

import lldb

from .registry import abi


class GhcError(Exception):
    """The Haskell stack cannot be read as GHC 9.0's runtime lays it out."""


GHC_FRAME_TYPES = abi.GHC_FRAME_TYPES  # closure type -> name, of the GHC strobe is built with
GhcFrame = namedtuple("GhcFrame", "sp info type words")


class GhcRuntime:
    """What the module knows of one target's GHC runtime: its symbols, checked."""

    # The layouts of the GHC strobe is built with (rts/ghc_layout.h, by strobe_abi.py)
    RET_BIG = abi.GHC["CLOSURE_RET_BIG"]
    RET_FUN = abi.GHC["CLOSURE_RET_FUN"]
    UNDERFLOW_FRAME = abi.GHC["CLOSURE_UNDERFLOW_FRAME"]
    STOP_FRAME = abi.GHC["CLOSURE_STOP_FRAME"]
    STACK = abi.GHC["CLOSURE_STACK"]
    RESERVED_STACK_WORDS = abi.GHC["RESERVED_STACK_WORDS"]
    STACK_HEADER = abi.GHC["STACK_STACK"]            # info, stack_size/dirty/marking, sp
    HPLIM_OFFSET = abi.GHC["REG_HPLIM"]              # BaseReg->rHpLim
    CURRENT_TSO_OFFSET = abi.GHC["REG_CURRENT_TSO"]  # BaseReg->rCurrentTSO
    CAP_REGS = abi.GHC["CAP_R"]      # a Capability's StgRegTable (BaseReg), after its StgFunTable
    TSO_STACKOBJ = abi.GHC["TSO_STACKOBJ"]           # StgTSO: header, _link, global_link, stackobj
    TSO_ID = abi.GHC["TSO_ID"]       # StgTSO.id (StgWord64), which the GC never changes
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
