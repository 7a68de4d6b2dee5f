/* trampolines.c — the slow paths as instrumented code calls them.
 *
 * The plugin's cold blocks call `<slow path>_cold` in inline asm that LLVM does not
 * see as a call (plugin/instrument.c, Note [The cold calls]), so that an instrumented
 * ghccc function keeps no frame and spills nothing for a path it rarely takes.  The
 * convention, one trampoline per row of intrinsics.def:
 *   arguments   the first in rax, the second (if any) in rdx;
 *   preserved   every register but r10, r11 and the flags: rax, rcx, rdx, rsi, rdi,
 *               r8, r9 and xmm0-xmm15, which the C slow path may change, are saved
 *               here; the rest the C ABI keeps;
 *   stack       any alignment: the trampoline aligns it for the C call.
 * r10 and r11 are left to the PLT stub that a lazily bound call may go through.
 * ymm's upper halves are not saved: strobec's code is for the generic x86-64 CPU and
 * keeps nothing there. */
#include "strobe/dynstack.h"

/* The frame: rbp saved at 0(%rbp); below the 16-aligned rsp, 7 words of registers at
 * 0..48 and 16 xmm registers at 64..304: 320 bytes. */
#define STROBE_TRAMPOLINE(entry)                                                         \
  ".globl " #entry "_cold\n"                                                             \
  ".type " #entry "_cold, @function\n"                                                   \
  #entry "_cold:\n"                                                                      \
  ".cfi_startproc\n"                                                                     \
  "  pushq %rbp\n"                                                                       \
  ".cfi_def_cfa_offset 16\n"                                                             \
  ".cfi_offset %rbp, -16\n"                                                              \
  "  movq %rsp, %rbp\n"                                                                  \
  ".cfi_def_cfa_register %rbp\n"                                                         \
  "  andq $-16, %rsp\n"                                                                  \
  "  subq $320, %rsp\n"                                                                  \
  "  movq %rax, 0(%rsp)\n  movq %rcx, 8(%rsp)\n  movq %rdx, 16(%rsp)\n"                   \
  "  movq %rsi, 24(%rsp)\n  movq %rdi, 32(%rsp)\n  movq %r8, 40(%rsp)\n"                  \
  "  movq %r9, 48(%rsp)\n"                                                               \
  "  movaps %xmm0, 64(%rsp)\n  movaps %xmm1, 80(%rsp)\n  movaps %xmm2, 96(%rsp)\n"        \
  "  movaps %xmm3, 112(%rsp)\n  movaps %xmm4, 128(%rsp)\n  movaps %xmm5, 144(%rsp)\n"     \
  "  movaps %xmm6, 160(%rsp)\n  movaps %xmm7, 176(%rsp)\n  movaps %xmm8, 192(%rsp)\n"     \
  "  movaps %xmm9, 208(%rsp)\n  movaps %xmm10, 224(%rsp)\n  movaps %xmm11, 240(%rsp)\n"   \
  "  movaps %xmm12, 256(%rsp)\n  movaps %xmm13, 272(%rsp)\n  movaps %xmm14, 288(%rsp)\n"  \
  "  movaps %xmm15, 304(%rsp)\n"                                                         \
  "  movq %rax, %rdi\n"                                                                  \
  "  movq %rdx, %rsi\n"                                                                  \
  "  call " #entry "@PLT\n"                                                              \
  "  movaps 64(%rsp), %xmm0\n  movaps 80(%rsp), %xmm1\n  movaps 96(%rsp), %xmm2\n"        \
  "  movaps 112(%rsp), %xmm3\n  movaps 128(%rsp), %xmm4\n  movaps 144(%rsp), %xmm5\n"     \
  "  movaps 160(%rsp), %xmm6\n  movaps 176(%rsp), %xmm7\n  movaps 192(%rsp), %xmm8\n"     \
  "  movaps 208(%rsp), %xmm9\n  movaps 224(%rsp), %xmm10\n  movaps 240(%rsp), %xmm11\n"   \
  "  movaps 256(%rsp), %xmm12\n  movaps 272(%rsp), %xmm13\n  movaps 288(%rsp), %xmm14\n"  \
  "  movaps 304(%rsp), %xmm15\n"                                                         \
  "  movq 0(%rsp), %rax\n  movq 8(%rsp), %rcx\n  movq 16(%rsp), %rdx\n"                   \
  "  movq 24(%rsp), %rsi\n  movq 32(%rsp), %rdi\n  movq 40(%rsp), %r8\n"                  \
  "  movq 48(%rsp), %r9\n"                                                               \
  "  movq %rbp, %rsp\n"                                                                  \
  "  popq %rbp\n"                                                                        \
  ".cfi_def_cfa %rsp, 8\n"                                                               \
  "  ret\n"                                                                              \
  ".cfi_endproc\n"                                                                       \
  ".size " #entry "_cold, . - " #entry "_cold\n"

__asm__(".pushsection .text\n"
#define STROBE_INTRINSIC(ID, LLVM_NAME, RTS_ENTRY, NARGS, ARG1, ARG2) STROBE_TRAMPOLINE(RTS_ENTRY)
#include "intrinsics.def"
#undef STROBE_INTRINSIC
        ".popsection\n");
