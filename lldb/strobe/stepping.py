"""Stepping by Haskell lines in a GHC program: next, step and finish.

`next`, `step` and `finish` are replaced by commands that do what lldb's do where
lldb's work (any program that is not a GHC program, and C code of a GHC program),
and in Haskell code step by Haskell lines: single instructions while the code has
Haskell lines; through code without (the RTS's heap and stack checks, the scheduler,
libraries), a run to the next entry of a function with Haskell lines (one breakpoint
with a location at each, enabled only while stepping).  Depths are bytes of live
Haskell stack (GhcRuntime.depth), which the GC and stack chunks do not change.
  step    stops at the first row of another Haskell line, or at a function entry;
  next    the same, but a function entered deeper than where it started (a call,
          the evaluation of a thunk: Sp[0] is not the function itself) runs to
          its return; a re-entry of the same function at the same depth after a
          heap or stack check (through stg_gc_*) is no new line;
  finish  runs to the continuation of the youngest frame on the Haskell stack,
          then on to the next Haskell line.
"""

import struct

import lldb

from . import lldb_name
from .descriptors import Memory
from .ghc import GhcError, ghc_code, ghc_runtime, haskell_line


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
        b = self.target.BreakpointCreateFromScript(lldb_name("HaskellEntries"),
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
            interp.HandleCommand("command script add -o -f %s %s"
                                 % (lldb_name(fn), name), res)
