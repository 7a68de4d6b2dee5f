"""Loading: what `command script import` does, and the line that says what the
target has for the module."""

from . import lldb_name
from .commands import exe_name, no_registry_message
from .descriptors import section_descriptors
from .ghc import GhcRuntime
from .provider import ensure_provider
from .registry import Registry
from .stepping import handle_ghc_signals, install_stepping


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
    debugger.HandleCommand("command script add -o -f %s strobe" % lldb_name("strobe_command"))
    targets = [debugger.GetTargetAtIndex(i) for i in range(debugger.GetNumTargets())]
    if not targets:
        print("strobe: commands loaded; the frame provider is registered on a target "
              "by the first strobe command (or import this module after creating the "
              "target)")
    for target in targets:
        print(announce(target))


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
