"""The `strobe` commands: bt, threads, frames, stats and ticks."""

import shlex

import lldb

from .descriptors import section_descriptors
from .printing import FRAMES, count, entry_lines, span, stack_lines
from .provider import ensure_provider
from .registry import Registry
from .snapshot import cmm_frame, current_view, live_sp, process_state


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
        FRAMES["full"] = args[0] == "full"
    out.append("`bt` shows %s" % ("one frame per dynamic-stack entry" if FRAMES["full"]
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
