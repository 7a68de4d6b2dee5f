"""strobe_lldb -- lldb 22 support for programs built by strobe.

    (lldb) command script import <prefix>/share/strobe/lldb/strobe_lldb.py

The module lldb imports.  The code is the package `strobe` beside it (its __init__
says which module does what); strobe_abi.py, beside it too, holds the runtime's
layouts, generated from its header.  This file holds what lldb looks up by name: the
entry point, the `strobe` command, the frame provider, the stepping commands and their
breakpoint resolver.
"""

import strobe
from strobe.commands import strobe_command
from strobe.loading import __lldb_init_module
from strobe.provider import StrobeFrameProvider
from strobe.stepping import HaskellEntries, strobe_finish, strobe_next, strobe_step

__all__ = ["__lldb_init_module", "strobe_command", "StrobeFrameProvider", "HaskellEntries",
           "strobe_next", "strobe_step", "strobe_finish"]

strobe.ENTRY = __name__
