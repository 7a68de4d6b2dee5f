"""Snapshots: one stop's view of the dynamic stacks, which compile units are Cmm
code, and which stack a thread runs."""

from .descriptors import Descriptors, Memory, section_descriptors
from .ghc import ghc_code, ghc_runtime
from .registry import Registry, RegistryError


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
