# lit configuration for strobe: Cmm in, IR / DWARF / program output / lldb transcript out.
# Loaded through the site config that CMake writes into build/lit-tests/.
import os
import shutil
import sys

import lit.formats

config.name = "strobe"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cmm", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strobe_obj_root, "lit-tests")

# Tools: strobe's own from the build tree, FileCheck & co. from LLVM.
config.environment["PATH"] = os.pathsep.join(
    [config.strobe_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
# The source tree (docs, scripts), and the Python that runs lit for strobe's own scripts.
config.substitutions.append(("%strobe_src", config.strobe_src_root))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%strobec", os.path.join(config.strobe_tools_dir, "strobec")))
config.substitutions.append(("%corpus", config.strobe_corpus))
# The strobe-instrument pass for opt -load-pass-plugin and clang -fpass-plugin.
config.substitutions.append(("%strobe_plugin", os.path.join(config.strobe_obj_root, "plugin", "StrobePlugin.so")))
# Linking a standalone program: clang-22 and the static runtime (docs/standalone.md).
config.substitutions.append(("%strobe_rt", config.strobe_rt_lib))
if config.strobe_sanitize:
    # Programs linked with the sanitized runtime must crash as themselves: ASan would
    # claim their SIGSEGV (and the runtime's guard-page report) for its own.
    config.environment["ASAN_OPTIONS"] = "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"
# The build tree (cmake --install %strobe_build --prefix P), and the link flags that a
# program linked with an installed runtime needs in this build (the sanitizers').
config.substitutions.append(("%strobe_build", config.strobe_obj_root))
config.substitutions.append(
    ("%strobe_sanitize_ldflags", "-fsanitize=address,undefined" if config.strobe_sanitize else "")
)
config.substitutions.append(("%clang", os.path.join(config.llvm_tools_dir, "clang")))
lldb = os.path.join(config.llvm_tools_dir, "lldb")
if config.strobe_sanitize:
    # LeakSanitizer cannot run under ptrace: a debugged program must not start it.
    lldb = "env ASAN_OPTIONS=detect_leaks=0:" + config.environment["ASAN_OPTIONS"] + " " + lldb
config.substitutions.append(("%lldb", lldb))
config.substitutions.append(("%examples", os.path.join(config.strobe_src_root, "examples")))

# The runtime's layouts as FileCheck numeric variables, from the strobe_abi.py the build
# generates from its header (lldb/strobe_abi_gen.c): `FileCheck %abi_vars` lets a test
# match `i64 [[#ENTRY_WM]]` instead of spelling an offset again.  <RECORD>_<FIELD> is a
# field's offset and <RECORD>_SIZE a record's size, RECORD one of the prefixes below.
def abi_vars():
    path = os.path.join(config.strobe_obj_root, "lldb", "strobe_abi.py")
    if not os.path.exists(path):
        return "--strobe-abi-py-is-missing"  # FileCheck refuses it: build strobe first
    abi = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), abi)
    prefixes = {"StrobeTickDesc": "DESC", "StrobeEntry": "ENTRY", "StrobeCounters": "COUNTERS",
                "StrobeThreadStack": "THREAD", "StrobeDynStackHead": "HEAD",
                "StrobeRegistry": "REGISTRY"}
    out = []
    for record, (size, fields) in abi["LAYOUTS"].items():
        out.append("-D#%s_SIZE=%d" % (prefixes[record], size))
        out += ["-D#%s_%s=%d" % (prefixes[record], name.upper(), offset)
                for name, offset, _, _ in fields]
    return " ".join(out)


config.substitutions.append(("%abi_vars", abi_vars()))

for tool in ["FileCheck", "not", "count", "opt", "llc", "llvm-dwarfdump", "llvm-objdump", "llvm-objcopy", "llvm-readelf"]:
    # Only a word of its own (between spaces, pipes, ...), never part of a path or option.
    config.substitutions.append(
        (r"(?<![^\s|;&(])" + tool + r"(?![^\s|;&)])", os.path.join(config.llvm_tools_dir, tool))
    )

# Tools the system may lack (CI installs them): tests that run them say REQUIRES.
for tool in ["ghc", "valgrind", "gdb"]:
    if shutil.which(tool, path=config.environment.get("PATH")):
        config.available_features.add(tool)
# The GHC strobe is built with (build/ghc-version): tests whose expected text is GHC's
# own and differs between versions say REQUIRES: ghc-9.0, ghc-9.6 or ghc-9.10, or check
# with --check-prefixes=X,X-%ghc_v (X-ghc90, X-ghc96 or X-ghc910 lines for what differs).
with open(os.path.join(config.strobe_obj_root, "ghc-version")) as f:
    ghc_version = f.read().strip().split(".")
if len(ghc_version) >= 2:
    config.available_features.add("ghc-%s.%s" % tuple(ghc_version[:2]))
    config.substitutions.append(("%ghc_v", "ghc%s%s" % tuple(ghc_version[:2])))
# What examples/haskell/shapes prints, as GHC's build of it does: expected_stdout.txt, or
# where the GHC prints otherwise, expected_stdout-ghcXY.txt beside it (9.10's
# displayException of an IOException adds its backtrace).
shapes = os.path.join(config.strobe_src_root, "examples", "haskell", "shapes")
shapes_stdout = os.path.join(shapes, "expected_stdout-ghc%s.txt" % "".join(ghc_version[:2]))
if not os.path.exists(shapes_stdout):
    shapes_stdout = os.path.join(shapes, "expected_stdout.txt")
config.substitutions.append(("%shapes_expected_stdout", shapes_stdout))
# valgrind and gdb tests run the plain build's programs (ASan's shadow memory and
# LeakSanitizer get in their way).
if config.strobe_sanitize:
    config.available_features.add("sanitizers")

# Real Haskell programs (lit-tests/ghc/): strobe-ghc from the build tree.  (Before
# %ghc below, which would otherwise replace the start of %ghc_sanitize_ldflags.)
if shutil.which("cabal", path=config.environment["PATH"]):
    config.available_features.add("cabal")
config.substitutions.append(("%strobe_ghc", os.path.join(config.strobe_tools_dir, "strobe-ghc")))
# What an instrumented GHC program links besides libstrobe-rt.a in this build.
config.substitutions.append(
    ("%ghc_sanitize_ldflags", "-optl-fsanitize=address,undefined" if config.strobe_sanitize else "")
)
# ghc and cabal want a home (the cabal test gives cabal an empty one of its own).
config.environment["HOME"] = os.environ.get("HOME", "/tmp")
# GHC 9.0.2 (CI installs Debian's ghc): the tests in ghc/ compare strobe's objects with
# GHC's own and link them with GHC's runtime and libraries.
ghc = shutil.which("ghc", path=config.environment["PATH"])
if ghc:
    config.substitutions.append(("%ghc-pkg", shutil.which("ghc-pkg", path=config.environment["PATH"]) or "ghc-pkg"))
    config.substitutions.append(("%ghc", ghc))
    if "HOME" in os.environ:  # ghc and ghc-pkg look for the user's package database there
        config.environment["HOME"] = os.environ["HOME"]
config.substitutions.append(
    ("%strobe_package_map", os.path.join(config.strobe_src_root, "driver", "strobe-package-map"))
)
