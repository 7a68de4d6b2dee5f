/* emit.h — the last stage: a lowered LLVM module out as IR, bitcode, assembly or object.
 *
 * The driver's order (strobec.c):
 *
 *   tm = emit_target_machine(opt, pic, &err)  x86-64, PIC or static, the codegen level of -O
 *   emit_optimize(m, tm, opt, &err)           default<O0..O3>, LLVM's new pass manager
 *   emit_module(m, tm, kind, path, &err)      to memory, then to path in one rename
 *
 * emit_optimize and emit_module both begin with emit_prepare_module (triple and data
 * layout from the target machine, the ghccc frame-pointer rule, the verifier), so a
 * module that reaches LLVM's passes or code generator is one they accept.
 *
 * Errors come back as malloc'd strings in *error (free them; error may be NULL); nothing
 * here prints or exits.  While LLVM runs, an error that LLVM reports through the
 * module's context (which by default prints it and calls exit(1)) is caught and
 * returned; warnings and remarks are dropped.  LLVM's fatal errors (report_fatal_error)
 * still end the process: that is a bug in the IR given, not an input error.
 */
#ifndef STROBE_EMIT_H
#define STROBE_EMIT_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

typedef enum {
  EMIT_KIND_LLVM, /* .ll: textual IR */
  EMIT_KIND_BC,   /* .bc: bitcode */
  EMIT_KIND_ASM,  /* .s:  assembly */
  EMIT_KIND_OBJ   /* .o:  an ELF object */
} EmitKind;

/* The kind a file name asks for by its suffix (.ll .bc .s .o); false for any other. */
bool emit_kind_from_suffix(const char *path, EmitKind *kind);

/* A target machine for the host's x86-64 triple: generic CPU (as llc without -mcpu),
 * relocation model PIC if pic (objects link into PIE executables and shared libraries)
 * else static (non-PIE executables only: GHC's programs), default code model, and
 * the code generator's level for -O opt_level (0-3).  NULL and *error if it cannot be
 * made (a host that is not x86-64, a level out of range).  LLVMDisposeTargetMachine it. */
LLVMTargetMachineRef emit_target_machine(int opt_level, bool pic, char **error);

/* Sets m's triple and data layout from tm, then checks m: the verifier, and no ghccc
 * function may keep a frame pointer (Note [ghccc and the frame pointer] in emit.c).
 * Idempotent. */
bool emit_prepare_module(LLVMModuleRef m, LLVMTargetMachineRef tm, char **error);

/* Runs `default<O{opt_level}>` (opt_level 0-3) over m in process, with opt's pipeline
 * tuning (what `opt-22 -passes='default<O2>'` does).  O0 runs only what must run
 * (always-inline and the like); it never adds a frame-pointer attribute. */
bool emit_optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, int opt_level, char **error);

/* Writes m as kind to path ("-": standard output).  The output is built in memory and
 * then written to a temporary file beside path and renamed over it, so path ends up
 * whole or untouched.  Code generation runs on a copy of m: m is left as it was
 * (apart from emit_prepare_module's triple and data layout). */
bool emit_module(LLVMModuleRef m, LLVMTargetMachineRef tm, EmitKind kind, const char *path,
                 char **error);

/* The writing half of emit_module, for any bytes: whole or absent, "-" is stdout. */
bool emit_write_file(const char *path, const void *data, size_t size, char **error);

#endif
