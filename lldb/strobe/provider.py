"""The frame provider: a thread's dynamic stack (or, in a GHC program without one,
the continuations on its Haskell stack) as frames of plain `bt`."""

import sys

import lldb
from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider

from . import lldb_name
from .descriptors import Memory
from .ghc import GhcError, ghc_code, ghc_runtime
from .printing import FRAMES, shown_entries
from .snapshot import cmm_layout, current_view, live_sp, process_state


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
        return ((p.GetStopID(True), self.input_frames.GetSize(), FRAMES["full"])
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


_providers = set()  # (debugger id, target index key) with a provider registered


def ensure_provider(target):
    """Registers the frame provider on target, once."""
    key = (target.GetDebugger().GetID(), target.GetExecutable().fullpath,
           target.GetDebugger().GetIndexOfTarget(target))
    if key in _providers:
        return
    err = lldb.SBError()
    target.RegisterScriptedFrameProvider(lldb_name("StrobeFrameProvider"),
                                         lldb.SBStructuredData(), err)
    if err.Success():
        _providers.add(key)
    else:
        print("strobe: cannot register the frame provider: %s" % err.GetCString(),
              file=sys.stderr)
