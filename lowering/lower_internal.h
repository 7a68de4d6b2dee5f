/* lower_internal.h — what the files of the lowering share (docs/design.md, "Lowering").
 *
 * The lowering is one Lowering over a module, one Fn per LLVM function, split by concern
 * into these files; each section below names the file that implements it:
 *
 *   lower.c     the lowering proper: proc points, functions, blocks, statements,
 *               expressions, registers; lw_new, lw_add_file, lw_finish; the errors
 *   primcall.c  GHC's CallishMachOps (`call MO_PopCnt W64(…)`), from primops.def
 *   data.c      statics: data sections and info tables as constants, prefix data
 *   symtab.c    the module's symbols: definitions, declarations, linkage
 *   tickemit.c  the dynamic stack's intrinsic calls and tick descriptors, as the ticks
 *               stage (ticks.c) decided them
 *   entry.c     the standalone --entry glue
 *   debuginfo.c the DWARF (debuginfo.h), symbols.c labels to symbols (lower.h)
 *
 * Errors: a user error inside lw_add_file is lw_fail_at, which reports it and unwinds
 * (Note [Unwinding] in lower.c).
 */
#ifndef STROBE_LOWER_INTERNAL_H
#define STROBE_LOWER_INTERNAL_H

#include "lower.h"

#include <setjmp.h>
#include <stddef.h>

#include "debuginfo.h"
#include "infotable.h"
#include "scopes.h"
#include "ticks.h"
#include "abi.h"
#include "attributes.h"
#include "llvm_types.h"

/* The pseudo-intrinsics (intrinsics/intrinsics.def), and the tick descriptor whose fields
 * intrinsics/tickdesc.def gives (StrobeTickDesc, STROBE_DESC_IDX_*). */
enum {
#define STROBE_INTRINSIC(id, name, rts, nargs, a1, a2) LW_##id,
#include "intrinsics.def"
#undef STROBE_INTRINSIC
  LW_NINTRINSICS
};


/* A tick descriptor of the module, the global of the ticks stage's descriptor of the
 * same index; its initializer is set at the end (lw_finish), when the stage has given
 * every descriptor its parent. */
typedef struct Desc Desc;
struct Desc {
  LLVMValueRef g;
  LLVMValueRef fields[STROBE_DESC_NFIELDS];
  LLVMValueRef function, file; /* the string constants, one per text */
};

/* The parameters of every function (Note [One function type] in lower.c). */
enum { NO_BLOCK = UINT32_MAX }; /* Fn.cur before the first block */
enum { NPARAMS = 16, P_BASE = 0, P_SP, P_HP, P_R1, P_SPLIM = P_R1 + 6, P_XMM1 };

struct Lowering {
  LLVMContextRef ctx;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMBuilderRef alloca_at; /* each function's, before its entry block's branch */
  const LowerOptions *o;
  Diag *d;
  Arena *a;             /* lives as long as the Lowering */
  DebugInfo *dw;
  LLVMTypeRef i1, i8, i32, i64, f32, f64, ptr, void_t, fn_type;
  bool failed;
  /* per file */
  const CmmFile *f;
  const char *module;   /* the Haskell module, for names of module-internal code */
  jmp_buf fail;
  StrMap defs;          /* label -> index into def */
  VEC(LLVMValueRef) def;
  LLVMValueRef entry_fn; /* --entry's function, once a file defines it */
  StrMap symbols;        /* every symbol defined so far, over all files */
  LwInfoCtx info;        /* info-table layout context for the file */
  LLVMValueRef intrinsic[LW_NINTRINSICS]; /* declared on first use */
  LLVMTypeRef desc_type;
  StrMap strings;        /* a private string constant per distinct text */
  Ticks *ticks;          /* the ticks stage: which descriptors, their parents and flags */
  const TkPlan *plan;    /* per file: the binding each proc's ticks count for */
  VEC(Desc) desc;        /* desc.v[i]: the global of tk_get(ticks, i) */
  VEC(LLVMValueRef) string;
};

/* Per proc: its proc points and the LLVM function of each. */
typedef struct ProcInfo {
  bool *pp;
  LLVMValueRef *fn;      /* per block: its function if it is a proc point */
  const char *name;      /* the Haskell name of the proc */
  const char *function;  /* the Haskell function its code belongs to, for tick
                            descriptors: a thunk's or continuation's is its binding's */
  bool continuation;     /* GHC's -fllvm split continuation (`_c1JV`) */
  TkFrames frames;       /* where its ticks' watermarks are (tk_frames) */
  bool *definitions;     /* per block: a definition ticks there (tk_definition_blocks) */
} ProcInfo;

/* ---- one LLVM function ---------------------------------------------------------- */

typedef struct Fn {
  Lowering *L;
  const CmmProc *proc;
  const ProcInfo *pi;
  uint32_t pp;                /* the proc point it starts at */
  LLVMValueRef fn;
  LLVMBuilderRef alloca_at;  /* in the entry block, before its branch */
  LLVMValueRef slot[NPARAMS]; /* an alloca per pinned register */
  StrMap locals;              /* local register -> index into local */
  VEC(LLVMValueRef) local;
  LLVMBasicBlockRef *bb;      /* per block: its basic block here, or NULL */
  LLVMBasicBlockRef *jump;    /* per proc point: a block that jumps to its function */
  /* ticks a loop repeats (tk_repeats): per block, the rest of it after its first tick,
   * where the edges go that may skip that tick; the block being lowered, whose edges */
  TkFnTicks ticks; /* which notes tick */
  TkRepeats repeats;
  LLVMBasicBlockRef *after_tick;
  uint32_t cur;
  /* debug info */
  const ScopeTree *tree;
  uint32_t decl;
  DwFunction dwf;
  LLVMMetadataRef scope;
} Fn;

/* ---- lower.c ----------------------------------------------------------------------- */

/* Reports a user error at loc of the current file and unwinds to lw_add_file. */
_Noreturn void lw_fail_at(Lowering *L, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

LLVMTypeRef lw_type_of(Lowering *L, CmmType t);
LLVMTypeRef lw_param_type(Lowering *L, int slot);
LLVMValueRef lw_word(Lowering *L, int64_t v);
/* A literal of a static or an expression as a constant of its printed width. */
LLVMValueRef lw_const_int(Lowering *L, const CmmExpr *e);
/* A label's address as a word, plus offset. */
LLVMValueRef lw_label_word(Lowering *L, const char *label, int64_t offset);
/* A new ghccc function of the one type, without a name. */
LLVMValueRef lw_new_function(Lowering *L);

LLVMValueRef lw_expr(Fn *F, const CmmExpr *e);
LLVMValueRef lw_read_global(Fn *F, int reg, CmmLoc loc);
void lw_assign(Fn *F, const CmmExpr *lhs, LLVMValueRef v);
/* A value into a result register, at the register's width. */
void lw_assign_result(Fn *F, const CmmExpr *reg, LLVMValueRef v);
/* An integer operand at width w (shift amounts may be wider or narrower). */
LLVMValueRef lw_int_at(Fn *F, LLVMValueRef v, unsigned w);
/* A call of the LLVM intrinsic `name` overloaded at over[0..nover). */
LLVMValueRef lw_llvm_intrinsic(Lowering *L, const char *name, LLVMTypeRef *over, size_t nover,
                               LLVMValueRef *args, unsigned nargs);

/* ---- primcall.c --------------------------------------------------------------------- */

/* A `call MO_…` statement. */
void lw_primcall(Fn *F, const CmmStmt *s);

/* ---- data.c --------------------------------------------------------------------------- */

LLVMValueRef lw_static_lit(Lowering *L, const CmmExpr *e);
/* Statics as a packed struct, one field per static, and its type. */
LLVMValueRef lw_statics_const(Lowering *L, const CmmStatic *st, uint32_t n);
LLVMTypeRef lw_statics_type(Lowering *L, const CmmStatic *st, uint32_t n);
/* The words of info table it of p as fn's prefix data (and the data they refer to). */
void lw_prefix_data(Lowering *L, const CmmProc *p, const CmmInfoTable *it, LLVMValueRef fn);
/* The global of a data section, named and defined; its initializer comes later. */
LLVMValueRef lw_declare_data(Lowering *L, const CmmData *dt);

/* ---- symtab.c ------------------------------------------------------------------------- */

/* The address of a label: this file's definition, or an external declaration. */
LLVMValueRef lw_label_ref(Lowering *L, const char *label);
/* From now on, lw_label_ref(label) in this file is v. */
LLVMValueRef lw_define(Lowering *L, const char *label, LLVMValueRef v);
/* Gives v the symbol and linkage of label, replacing any declaration made so far. */
void lw_name_definition(Lowering *L, CmmLoc loc, const char *label, LLVMValueRef v);

/* ---- tickemit.c ----------------------------------------------------------------------- */

/* A call of intrinsic id (LW_TICK, LW_POP, LW_RET) with the current Sp, and for a tick
 * the descriptor of note; nothing with --no-intrinsics. */
void lw_call_intrinsic(Fn *F, int id, const CmmSrcNote *note, int64_t sp_offset);
/* Every descriptor's initializer, with the parent and flags of the (linked) ticks stage. */
void lw_set_parents(Lowering *L);

/* ---- entry.c -------------------------------------------------------------------------- */

/* With --entry: the stop frame and strobe_entry (Note [Standalone glue]); false after
 * reporting that no function of that name was lowered. */
bool lw_entry_glue(Lowering *L);

#endif
