/* instrument.c — the strobe-instrument pass (see instrument.h).
 *
 * The pass works in three steps, each over the whole module:
 *   1. check: every intrinsic of intrinsics.def that m declares has the type the table
 *      gives it and is only ever called directly, and the runtime's head, if m has it,
 *      is thread-local.  Nothing changes before this passed, so an error leaves m as
 *      it was.
 *   2. rewrite, function by function: decide whether it is instrumented, then replace
 *      each intrinsic call by its fast path (rewrite_call) or by nothing.
 *   3. delete the intrinsics' declarations, which have no uses left.
 *
 * Note [The fast paths in IR]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * strobe/dynstack.h §4 gives the fast paths in C; these are the same in IR, with h the
 * address of the thread's head (llvm.threadlocal.address) and the offsets taken from
 * the records themselves (offsetof on intrinsics/abi.h's StrobeDynStackHead and
 * StrobeEntry):
 *
 *   tick(desc, sp):  [h->ticks += 1 (monotonic), with count_ticks]
 *                    t = h->top; br (sp <u t->wm), deeper, same
 *     deeper:        br (t <u h->limit), push, cold                ; weights 2^20-1 : 1
 *     push:          t[1].desc = desc; t[1].wm = sp; h->top += 1 (release); br cont
 *     same:          br (t->wm == sp), top, cold                   ; likewise
 *     top:           br (t->desc == desc), repeat, other
 *     repeat:        t->repeats += 1 (monotonic); br cont           ; rule 2a
 *     other:         at = phi [t, top], [at - 1, next]; d = at->desc
 *                    br (d == c1 | d == c2 | ...), room, sibling   ; desc's constant
 *                                                                  ; parent chain: 2b
 *     sibling:       br (d->function == desc->function), step, cold ; likewise
 *     step:          clear at's repeats, flags and elided (it is popped: 2c)
 *                    br ((at - 1)->wm == sp), next, room
 *     next:          br ((at - 1)->desc == desc), popped, other
 *     popped:        (at - 1)->flags &= ~TAIL; store release at - 1 -> h->top;
 *                    (at - 1)->repeats += 1; br cont                ; 2a after 2c
 *     room:          base = phi [at, other], [at - 1, step]
 *                    br (base <u h->limit), push_on, cold          ; likewise
 *     push_on:       base[1] = {desc, sp}; store release base + 1 -> h->top; br cont
 *   When desc is not a constant flagged STROBE_DESC_NESTED (parent_chain), `top`
 *   branches to cold instead of `other`, which is not made, nor what follows it.
 *   pop(sp):         t = h->top; br (t->wm <u sp), one, cont       ; weights 1 : 2^20-1
 *     one:           br ((t - 1)->wm <u sp), more, set
 *     set:           clear t's repeats, flags and elided; h->top -= 1 (release); br cont
 *     more:          as set, for t, then for at = t - 1, t - 2, ... while (at - 1)->wm <u sp
 *                    (the base's UINTPTR_MAX stops it)
 *   ret(sp):         the same with <=u, and no weights on the first branch (a return
 *                    usually pops what the callee pushed)
 *     cold:          the slow path (below); br cont
 *
 * Each common path is at most 8 x86-64 instructions after LLVM's -O2, as strobec
 * compiles them (bench/dynstack-cost.py counts them): `h->top += 1` is a relaxed load
 * and a release store of the same address, which x86 folds into one `addq` on memory;
 * a field read for one compare folds into it (the tick's two compares of t->wm become
 * one, whose flags both branches use); with local_exec, h is
 * %fs:strobe_dynstack_head@TPOFF itself, and under strobec --relocation-model=static a
 * descriptor's address is an immediate.  What would add an instruction is kept out:
 * the pops move the top once per entry (a single store of the last top, shared by
 * `set` and `more`, would be sunk by LLVM into one block with a phi, which no longer
 * folds), and `more` does not start as `set` does (LLVM would hoist their common code
 * between the read of (t - 1)->wm and its compare).
 *
 * The block of the intrinsic call is split after it (cont gets the rest of the block);
 * cold blocks go to the end of the function.  Every new instruction has the debug
 * location of the call it replaces.
 *
 * Note [The cold calls]
 * ~~~~~~~~~~~~~~~~~~~~~~
 * A C call in a cold block would make LLVM give every instrumented ghccc function a
 * frame (a push and pop around the whole function, for the call's stack alignment)
 * and spill what GHC keeps in the C ABI's scratch registers: two instructions and
 * more on every path, taken or not.  So the cold block calls the slow path through
 * its trampoline instead, `<rts entry>_cold` (rts/trampolines.c), in inline asm that
 * LLVM does not see as a call: the trampoline aligns the stack itself and preserves
 * every register the C ABI lets a callee change, but r10 and r11, which the asm
 * declares clobbered (a PLT stub may use them).  Its arguments go in rax and rdx,
 * which ghccc never uses for GHC's registers.  The asm pushes a return address below
 * rsp, so a function with such a call gets `noredzone`.  Nothing here makes an alloca,
 * so a ghccc function keeps no frame pointer (lowering/emit.c, Note [ghccc and the
 * frame pointer]). */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include "instrument.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "abi.h"
#include "errfmt.h"
#include "llvm_types.h"

/* ---- errors --------------------------------------------------------------------- */

/* Messages are formatted by strobe's one formatter (intrinsics/errfmt.h). */
#define fail strobe_fail

/* ---- options -------------------------------------------------------------------- */

void sp_options_init(SpOptions *o) { memset(o, 0, sizeof *o); }

static void patterns_free(SpPatterns *p) {
  for (size_t i = 0; i < p->count; i++) free(p->items[i]);
  free(p->items);
  memset(p, 0, sizeof *p);
}

void sp_options_free(SpOptions *o) {
  patterns_free(&o->always);
  patterns_free(&o->never);
}

/* Appends a copy of the n bytes at s; false if memory runs out. */
static bool patterns_add(SpPatterns *p, const char *s, size_t n) {
  if (p->count == p->capacity) {
    size_t cap = p->capacity ? 2 * p->capacity : 8;
    char **items = realloc(p->items, cap * sizeof *items);
    if (!items) return false;
    p->items = items;
    p->capacity = cap;
  }
  char *copy = strndup(s, n);
  if (!copy) return false;
  p->items[p->count++] = copy;
  return true;
}

/* Moves every pattern of from to the end of to; false (and both intact) if memory runs
 * out. */
static bool patterns_take(SpPatterns *to, SpPatterns *from) {
  if (from->count == 0) return true;
  size_t need = to->count + from->count;
  if (need > to->capacity) {
    char **items = realloc(to->items, need * sizeof *items);
    if (!items) return false;
    to->items = items;
    to->capacity = need;
  }
  memcpy(to->items + to->count, from->items, from->count * sizeof *from->items);
  to->count = need;
  from->count = 0;
  return true;
}

static bool patterns_match(const SpPatterns *p, const char *name) {
  for (size_t i = 0; i < p->count; i++)
    if (fnmatch(p->items[i], name, 0) == 0) return true;
  return false;
}

bool sp_options_add_globs(SpOptions *o, const char *globs, char **error) {
  for (const char *s = globs; *s;) {
    size_t n = strcspn(s, ",");
    if (n > 0 && !patterns_add(&o->always, s, n)) return fail(error, "out of memory");
    s += n;
    if (*s == ',') s++;
  }
  return true;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

bool sp_options_parse_list_text(SpOptions *o, const char *text, const char *name,
                                char **error) {
  SpOptions new;
  sp_options_init(&new);
  SpPatterns *section = NULL;
  unsigned line = 0;
  bool ok = true;
  for (const char *s = text; ok && *s;) {
    line++;
    size_t n = strcspn(s, "\n");
    const char *next = s + n + (s[n] == '\n');
    while (n > 0 && is_space(*s)) s++, n--;
    while (n > 0 && is_space(s[n - 1])) n--;
    if (n == 0 || *s == '#') {
      /* blank or comment */
    } else if (*s == '[') {
      if (n == 8 && memcmp(s, "[always]", 8) == 0) {
        section = &new.always;
      } else if (n == 7 && memcmp(s, "[never]", 7) == 0) {
        section = &new.never;
      } else {
        ok = fail(error, "%s:%u: error: unknown section '%.*s', expected '[always]' or '[never]'",
                  name, line, (int)n, s);
      }
    } else if (n < 4 || memcmp(s, "fun:", 4) != 0) {
      ok = fail(error, "%s:%u: error: expected 'fun:PATTERN', got '%.*s'", name, line, (int)n, s);
    } else if (!section) {
      ok = fail(error, "%s:%u: error: '%.*s' is in no section, expected '[always]' or '[never]' before it",
                name, line, (int)n, s);
    } else {
      const char *p = s + 4;
      size_t m = n - 4;
      while (m > 0 && is_space(*p)) p++, m--;
      if (m == 0)
        ok = fail(error, "%s:%u: error: expected a pattern after 'fun:'", name, line);
      else if (!patterns_add(section, p, m))
        ok = fail(error, "out of memory");
    }
    s = next;
  }
  if (ok && !(patterns_take(&o->always, &new.always) && patterns_take(&o->never, &new.never)))
    ok = fail(error, "out of memory");
  sp_options_free(&new);
  return ok;
}

bool sp_options_parse_list(SpOptions *o, const char *path, char **error) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail(error, "%s: error: cannot open the list file: %s", path, strerror(errno));
  char *text = NULL;
  size_t len = 0, cap = 0;
  bool ok = true;
  for (;;) {
    if (cap - len < 4096) {
      char *t = realloc(text, cap = cap ? 2 * cap : 8192);
      if (!t) {
        ok = fail(error, "out of memory");
        break;
      }
      text = t;
    }
    size_t got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  if (ok && ferror(f)) ok = fail(error, "%s: error: cannot read the list file: %s", path, strerror(errno));
  fclose(f);
  if (ok) {
    text[len] = '\0';
    if (memchr(text, '\0', len))
      ok = fail(error, "%s: error: the list file is not text (it has a NUL byte)", path);
    else
      ok = sp_options_parse_list_text(o, text, path, error);
  }
  free(text);
  return ok;
}

bool sp_excluded(const SpOptions *o, const char *haskell_name) {
  return patterns_match(&o->never, haskell_name);
}

bool sp_selected(const SpOptions *o, const char *haskell_name) {
  return patterns_match(&o->always, haskell_name) && !sp_excluded(o, haskell_name);
}

/* ---- which functions ------------------------------------------------------------ */

static LLVMAttributeRef string_attribute(LLVMValueRef f, const char *key) {
  return LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, key, (unsigned)strlen(key));
}

/* The name of a DISubprogram (its operand 2, an MDString), or NULL. */
static char *subprogram_name(LLVMValueRef f) {
  LLVMMetadataRef sp = LLVMGetSubprogram(f);
  if (!sp) return NULL;
  LLVMValueRef node = LLVMMetadataAsValue(LLVMGetModuleContext(LLVMGetGlobalParent(f)), sp);
  unsigned n = LLVMGetMDNodeNumOperands(node);
  if (n < 3) return NULL;
  LLVMValueRef *ops = malloc(n * sizeof *ops);
  if (!ops) return NULL;
  LLVMGetMDNodeOperands(node, ops);
  unsigned len = 0;
  const char *s = ops[2] ? LLVMGetMDString(ops[2], &len) : NULL;
  free(ops);
  return s && len > 0 ? strndup(s, len) : NULL;
}

char *sp_function_name(LLVMValueRef f) {
  LLVMAttributeRef a = string_attribute(f, STROBE_ATTR_NAME);
  if (a) {
    unsigned len;
    const char *v = LLVMGetStringAttributeValue(a, &len);
    if (len > 0) return strndup(v, len);
  }
  char *name = subprogram_name(f);
  if (name) return name;
  size_t len;
  const char *v = LLVMGetValueName2(f, &len);
  return len > 0 ? strndup(v, len) : NULL;
}

void sp_mark_selected(LLVMModuleRef m, const SpOptions *o) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    char *name = sp_function_name(f);
    if (name && sp_selected(o, name))
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(ctx, STROBE_ATTR_INSTRUMENT,
                                                        STROBE_ATTR_LEN(STROBE_ATTR_INSTRUMENT), "", 0));
    free(name);
  }
}

bool sp_function_instrumented(LLVMValueRef f, const SpOptions *o) {
  char *name = sp_function_name(f);
  bool yes;
  if (name && sp_excluded(o, name))
    yes = false;
  else
    yes = string_attribute(f, STROBE_ATTR_INSTRUMENT) || (name && sp_selected(o, name));
  free(name);
  return yes;
}

/* ---- the intrinsics table ------------------------------------------------------- */

typedef enum SpIntrinsicId {
#define STROBE_INTRINSIC(ID, LLVM_NAME, RTS_ENTRY, NARGS, ARG1, ARG2) SP_##ID,
#include "intrinsics.def"
#undef STROBE_INTRINSIC
  SP_NINTRINSICS
} SpIntrinsicId;

typedef enum SpArgKind { SP_ARG_NONE, SP_ARG_DESC, SP_ARG_SP } SpArgKind;

typedef struct SpIntrinsic {
  const char *name;      /* LLVM_NAME */
  const char *rts_entry; /* the slow path */
  unsigned nargs;
  SpArgKind args[2];
} SpIntrinsic;

static const SpIntrinsic intrinsics[SP_NINTRINSICS] = {
#define STROBE_INTRINSIC(ID, LLVM_NAME, RTS_ENTRY, NARGS, ARG1, ARG2) \
  [SP_##ID] = {LLVM_NAME, #RTS_ENTRY, NARGS, {SP_ARG_##ARG1, SP_ARG_##ARG2}},
#include "intrinsics.def"
#undef STROBE_INTRINSIC
};

/* Whether pops_everywhere keeps the intrinsic in functions that are not instrumented:
 * the checks that only remove entries. */
static bool kept_everywhere(SpIntrinsicId id) {
  switch (id) {
  case SP_TICK: return false;
  case SP_POP:
  case SP_RET: return true;
  case SP_NINTRINSICS: break;
  }
  return false;
}

bool sp_module_has_intrinsics(LLVMModuleRef m) {
  for (int i = 0; i < SP_NINTRINSICS; i++)
    if (LLVMGetNamedFunction(m, intrinsics[i].name)) return true;
  return false;
}

/* ---- step 1: check -------------------------------------------------------------- */

/* What the rewriting of one module needs. */
typedef struct Pass {
  LLVMModuleRef m;
  LLVMContextRef ctx;
  const SpOptions *o;
  LLVMBuilderRef b;
  LLVMTypeRef ptr, word, i32;
  LLVMValueRef fn[SP_NINTRINSICS];      /* the intrinsics m declares, or NULL */
  LLVMValueRef cold[SP_NINTRINSICS];    /* the inline asm calling each one's trampoline */
  LLVMValueRef head;                    /* strobe_dynstack_head, declared on first use */
  LLVMValueRef tls_address;             /* llvm.threadlocal.address.p0 */
  LLVMTypeRef tls_address_type;
  unsigned prof_kind;
  LLVMValueRef weights_then_cold, weights_else_cold; /* !prof branch_weights */
} Pass;

static LLVMTypeRef arg_type(const Pass *p, SpArgKind k) { return k == SP_ARG_DESC ? p->ptr : p->word; }

/* The type of intrinsic id: its slow path's. */
static LLVMTypeRef intrinsic_type(const Pass *p, SpIntrinsicId id) {
  const SpIntrinsic *in = &intrinsics[id];
  LLVMTypeRef params[2];
  for (unsigned i = 0; i < in->nargs; i++) params[i] = arg_type(p, in->args[i]);
  return LLVMFunctionType(LLVMVoidTypeInContext(p->ctx), params, in->nargs, 0);
}

static char *type_string(LLVMTypeRef t) { return LLVMPrintTypeToString(t); }

/* Whether f, a function m already has, has type want; else *error. */
static bool check_type(LLVMValueRef f, LLVMTypeRef want, const char *what, char **error) {
  LLVMTypeRef got = LLVMGlobalGetValueType(f);
  if (got == want) return true;
  char *w = type_string(want), *g = type_string(got);
  fail(error, "strobe-instrument: %s '%s' has type '%s', expected '%s'", what,
       LLVMGetValueName2(f, &(size_t){0}), g, w);
  LLVMDisposeMessage(w);
  LLVMDisposeMessage(g);
  return false;
}

static bool check_module(Pass *p, char **error) {
  for (int id = 0; id < SP_NINTRINSICS; id++) {
    const SpIntrinsic *in = &intrinsics[id];
    LLVMValueRef f = LLVMGetNamedFunction(p->m, in->name);
    p->fn[id] = f;
    if (!f) continue;
    if (LLVMCountBasicBlocks(f) > 0)
      return fail(error, "strobe-instrument: the intrinsic '%s' has a body; it must be only declared",
                  in->name);
    /* The intrinsic's type is its slow path's. */
    if (!check_type(f, intrinsic_type(p, id), "the intrinsic", error)) return false;
    for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      bool direct = LLVMIsACallInst(user) && LLVMGetCalledValue(user) == f;
      for (unsigned i = 0; direct && i < in->nargs; i++)
        if (LLVMGetOperand(user, i) == f) direct = false;
      if (!direct) {
        char *s = LLVMPrintValueToString(user);
        fail(error, "strobe-instrument: the intrinsic '%s' is used other than by a direct call: %s",
             in->name, s);
        LLVMDisposeMessage(s);
        return false;
      }
    }
  }
  LLVMValueRef g = LLVMGetNamedGlobal(p->m, STROBE_DYNSTACK_HEAD_NAME);
  if (!g && LLVMGetNamedFunction(p->m, STROBE_DYNSTACK_HEAD_NAME))
    return fail(error, "strobe-instrument: '%s' is a function, expected the runtime's thread-local head",
                STROBE_DYNSTACK_HEAD_NAME);
  if (g && !LLVMIsThreadLocal(g))
    return fail(error, "strobe-instrument: '%s' is not thread-local", STROBE_DYNSTACK_HEAD_NAME);
  p->head = g;
  return true;
}

/* ---- step 2: rewrite ------------------------------------------------------------ */

/* The inline asm that calls id's slow path through its trampoline (Note [The cold
 * calls]), made on first use. */
static LLVMValueRef cold_asm(Pass *p, SpIntrinsicId id) {
  if (p->cold[id]) return p->cold[id];
  char text[64];
  snprintf(text, sizeof text, "call %s_cold@PLT", intrinsics[id].rts_entry);
  static const char *const inputs[] = {"{rax},", "{rax},{rdx},"};
  char constraints[128];
  snprintf(constraints, sizeof constraints, "%s~{r10},~{r11},~{memory},~{dirflag},~{fpsr},~{flags}",
           inputs[intrinsics[id].nargs - 1]);
  p->cold[id] = LLVMGetInlineAsm(intrinsic_type(p, id), text, strlen(text), constraints,
                                 strlen(constraints), /*HasSideEffects=*/1, /*IsAlignStack=*/0,
                                 LLVMInlineAsmDialectATT, /*CanThrow=*/0);
  return p->cold[id];
}

/* The address of this thread's head, computed at the builder. */
static LLVMValueRef head_address(Pass *p) {
  if (!p->head) {
    p->head = LLVMAddGlobal(p->m, strobe_head_llvm_type(p->ctx), STROBE_DYNSTACK_HEAD_NAME);
    LLVMSetLinkage(p->head, LLVMExternalLinkage);
    LLVMSetThreadLocal(p->head, 1);
    LLVMSetThreadLocalMode(p->head, p->o->local_exec ? LLVMLocalExecTLSModel : LLVMInitialExecTLSModel);
    LLVMSetAlignment(p->head, _Alignof(StrobeDynStackHead));
  }
  if (!p->tls_address) {
    static const char name[] = "llvm.threadlocal.address";
    unsigned iid = LLVMLookupIntrinsicID(name, sizeof name - 1);
    LLVMTypeRef overload = LLVMTypeOf(p->head);
    p->tls_address = LLVMGetIntrinsicDeclaration(p->m, iid, &overload, 1);
    p->tls_address_type = LLVMIntrinsicGetType(p->ctx, iid, &overload, 1);
  }
  LLVMValueRef arg = p->head;
  return LLVMBuildCall2(p->b, p->tls_address_type, p->tls_address, &arg, 1, "dyn.head");
}

/* base + offset, as a byte GEP. */
static LLVMValueRef field(Pass *p, LLVMValueRef base, size_t offset, const char *name) {
  if (offset == 0) return base;
  LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(p->ctx), offset, 0);
  return LLVMBuildInBoundsGEP2(p->b, LLVMInt8TypeInContext(p->ctx), base, &idx, 1, name);
}

static LLVMValueRef load(Pass *p, LLVMTypeRef t, LLVMValueRef addr, const char *name) {
  LLVMValueRef v = LLVMBuildLoad2(p->b, t, addr, name);
  LLVMSetAlignment(v, 8);
  return v;
}

/* br cond, then, otherwise, weighted so that the cold one of the two is taken about
 * once in a million: LLVM's "unlikely" (MDBuilder::createUnlikelyBranchWeights). */
static void branch(Pass *p, LLVMValueRef cond, LLVMBasicBlockRef then, LLVMBasicBlockRef otherwise,
                   bool then_is_cold) {
  LLVMValueRef br = LLVMBuildCondBr(p->b, cond, then, otherwise);
  LLVMSetMetadata(br, p->prof_kind, then_is_cold ? p->weights_then_cold : p->weights_else_cold);
}

/* The instructions of bb after `after` (but the static allocas of the entry block) move
 * to a new block placed right after bb, which is returned; bb has no terminator then.  The phis of bb's successors that named bb
 * name the new block instead. */
static LLVMBasicBlockRef split_after(Pass *p, LLVMValueRef after, const char *name) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(after);
  LLVMBasicBlockRef tail = LLVMAppendBasicBlockInContext(p->ctx, LLVMGetBasicBlockParent(bb), name);
  LLVMMoveBasicBlockAfter(tail, bb);
  LLVMPositionBuilderAtEnd(p->b, tail);
  bool entry = bb == LLVMGetEntryBasicBlock(LLVMGetBasicBlockParent(bb));
  for (LLVMValueRef i = LLVMGetNextInstruction(after), next; i; i = next) {
    next = LLVMGetNextInstruction(i);
    /* A static alloca stays in the entry block: elsewhere it would be dynamic, and a
     * ghccc function would get a frame pointer. */
    if (entry && LLVMIsAAllocaInst(i) && LLVMIsAConstantInt(LLVMGetOperand(i, 0))) continue;
    size_t len;
    const char *s = LLVMGetValueName2(i, &len);
    char *iname = strndup(s, len);
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilderWithName(p->b, i, iname ? iname : "");
    free(iname);
  }
  LLVMValueRef term = LLVMGetBasicBlockTerminator(tail);
  unsigned nsucc = term ? LLVMGetNumSuccessors(term) : 0;
  for (unsigned k = 0; k < nsucc; k++) {
    LLVMBasicBlockRef succ = LLVMGetSuccessor(term, k);
    for (LLVMValueRef phi = LLVMGetFirstInstruction(succ), next; phi && LLVMIsAPHINode(phi); phi = next) {
      next = LLVMGetNextInstruction(phi);
      unsigned n = LLVMCountIncoming(phi);
      bool names_bb = false;
      for (unsigned j = 0; j < n; j++) names_bb |= LLVMGetIncomingBlock(phi, j) == bb;
      if (!names_bb) continue;
      /* The C API cannot set an incoming block: build the phi again. */
      LLVMPositionBuilderBefore(p->b, phi);
      LLVMValueRef fresh = LLVMBuildPhi(p->b, LLVMTypeOf(phi), "");
      for (unsigned j = 0; j < n; j++) {
        LLVMValueRef v = LLVMGetIncomingValue(phi, j);
        LLVMBasicBlockRef from = LLVMGetIncomingBlock(phi, j);
        if (from == bb) from = tail;
        LLVMAddIncoming(fresh, &v, &from, 1);
      }
      LLVMInstructionSetDebugLoc(fresh, LLVMInstructionGetDebugLoc(phi));
      size_t len;
      const char *s = LLVMGetValueName2(phi, &len);
      char *pname = strndup(s, len);
      LLVMReplaceAllUsesWith(phi, fresh);
      LLVMInstructionEraseFromParent(phi);
      if (pname) LLVMSetValueName2(fresh, pname, len);
      free(pname);
    }
  }
  return tail;
}

/* A cold block at the end of the function that calls id's slow path with args (Note
 * [The cold calls]) and branches to cont. */
static LLVMBasicBlockRef cold_block(Pass *p, SpIntrinsicId id, LLVMValueRef *args,
                                    LLVMBasicBlockRef cont, const char *name) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(p->b);
  LLVMBasicBlockRef cold = LLVMAppendBasicBlockInContext(p->ctx, LLVMGetBasicBlockParent(cont), name);
  LLVMPositionBuilderAtEnd(p->b, cold);
  LLVMBuildCall2(p->b, intrinsic_type(p, id), cold_asm(p, id), args, intrinsics[id].nargs, "");
  LLVMBuildBr(p->b, cont);
  LLVMPositionBuilderAtEnd(p->b, here);
  return cold;
}

/* Names a new block `<short name>.<what>`: `tick.cold`, `pop.cont`. */
static void block_name(char *buf, size_t size, SpIntrinsicId id, const char *what) {
  const char *s = strrchr(intrinsics[id].name, '.');
  snprintf(buf, size, "%s.%s", s ? s + 1 : intrinsics[id].name, what);
}

/* A new block named for id, placed before cont. */
static LLVMBasicBlockRef new_block(Pass *p, SpIntrinsicId id, const char *what, LLVMBasicBlockRef cont) {
  char name[32];
  block_name(name, sizeof name, id, what);
  return LLVMInsertBasicBlockInContext(p->ctx, cont, name);
}

static void store(Pass *p, LLVMValueRef v, LLVMValueRef addr, LLVMAtomicOrdering ordering) {
  LLVMValueRef st = LLVMBuildStore(p->b, v, addr);
  LLVMSetAlignment(st, 8);
  if (ordering != LLVMAtomicOrderingNotAtomic) LLVMSetOrdering(st, ordering);
}

static LLVMValueRef relaxed_load(Pass *p, LLVMTypeRef t, LLVMValueRef addr, const char *name) {
  LLVMValueRef v = load(p, t, addr, name);
  LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
  return v;
}

/* *addr += 1, a relaxed (monotonic) load and store: see dynstack.h §4. */
static void count(Pass *p, LLVMValueRef addr, const char *name) {
  LLVMValueRef v = relaxed_load(p, p->word, addr, name);
  store(p, LLVMBuildAdd(p->b, v, LLVMConstInt(p->word, 1, 0), ""), addr, LLVMAtomicOrderingMonotonic);
}

/* The entry n slots from e. */
static LLVMValueRef entry_at(Pass *p, LLVMValueRef e, long n, const char *name) {
  LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(p->ctx), (unsigned long long)(n * (long)sizeof(StrobeEntry)), 1);
  return LLVMBuildInBoundsGEP2(p->b, LLVMInt8TypeInContext(p->ctx), e, &idx, 1, name);
}

/* e->wm, loaded for one compare (Note [The fast paths in IR]). */
static LLVMValueRef wm_of(Pass *p, LLVMValueRef e, const char *name) {
  return load(p, p->word, field(p, e, offsetof(StrobeEntry, wm), ""), name);
}

/* The slot above e gets {desc, sp}: its other fields are 0 already (Note [The entries
 * and their sentinels] in strobe/dynstack.h). */
static void store_entry_above(Pass *p, LLVMValueRef e, LLVMValueRef desc, LLVMValueRef sp) {
  store(p, desc, field(p, e, sizeof(StrobeEntry) + offsetof(StrobeEntry, desc), ""), LLVMAtomicOrderingNotAtomic);
  store(p, sp, field(p, e, sizeof(StrobeEntry) + offsetof(StrobeEntry, wm), ""), LLVMAtomicOrderingNotAtomic);
}

/* e is popped: its repeats, flags and elided go back to 0. */
static void clear_entry(Pass *p, LLVMValueRef e) {
  _Static_assert(offsetof(StrobeEntry, elided) == offsetof(StrobeEntry, flags) + 4 &&
                     sizeof(StrobeEntry) == offsetof(StrobeEntry, flags) + 8 &&
                     offsetof(StrobeEntry, flags) == offsetof(StrobeEntry, repeats) + 8,
                 "repeats, then flags and elided, are the entry's last two words");
  LLVMValueRef zero = LLVMConstInt(p->word, 0, 0);
  store(p, zero, field(p, e, offsetof(StrobeEntry, repeats), ""), LLVMAtomicOrderingNotAtomic);
  store(p, zero, field(p, e, offsetof(StrobeEntry, flags), ""), LLVMAtomicOrderingNotAtomic);
}

/* h->top += n slots, as one read-modify-write (Note [The fast paths in IR]). */
static void move_top(Pass *p, LLVMValueRef h, long n) {
  LLVMValueRef top_addr = field(p, h, offsetof(StrobeDynStackHead, top), "");
  LLVMValueRef t = relaxed_load(p, p->ptr, top_addr, "dyn.top.again");
  store(p, entry_at(p, t, n, "dyn.top.moved"), top_addr, LLVMAtomicOrderingRelease);
}

/* desc's parent chain, if desc is a constant descriptor whose flags say the chain has
 * every descriptor that contains it (STROBE_DESC_NESTED): its length, with the chain
 * in chain[0..], nearest first; -1 if it is not known (desc not a constant, not NESTED,
 * or the chain longer than max). */
static int parent_chain(LLVMValueRef desc, LLVMValueRef *chain, int max) {
  int n = 0;
  for (LLVMValueRef d = desc; d; n++) {
    if (!LLVMIsAGlobalVariable(d) || !LLVMIsGlobalConstant(d)) return -1;
    LLVMValueRef init = LLVMGetInitializer(d);
    if (!init || !LLVMIsAConstantStruct(init) || LLVMGetNumOperands(init) != STROBE_DESC_NFIELDS) return -1;
    LLVMValueRef flags = LLVMGetOperand(init, STROBE_DESC_IDX_FLAGS);
    if (d == desc && (!LLVMIsAConstantInt(flags) || !(LLVMConstIntGetZExtValue(flags) & STROBE_DESC_NESTED)))
      return -1;
    LLVMValueRef parent = LLVMGetOperand(init, STROBE_DESC_IDX_PARENT);
    if (LLVMIsNull(parent)) break;
    if (n == max) return -1;
    chain[n] = parent;
    d = parent;
  }
  return n;
}

/* br (e <u h->limit), push, cold: whether there is a slot above e. */
static void branch_room(Pass *p, LLVMValueRef h, LLVMValueRef e, LLVMBasicBlockRef push,
                        LLVMBasicBlockRef cold) {
  LLVMValueRef limit = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, limit), "dyn.limit.addr"),
                            "dyn.limit");
  branch(p, LLVMBuildICmp(p->b, LLVMIntULT, e, limit, "dyn.room"), push, cold, false);
}

/* at->flags &= ~TAIL: at runs again, not a tail caller (rule 2a). */
static void untail(Pass *p, LLVMValueRef at) {
  LLVMValueRef flags_addr = field(p, at, offsetof(StrobeEntry, flags), "dyn.flags.addr");
  LLVMValueRef flags = LLVMBuildLoad2(p->b, p->i32, flags_addr, "dyn.flags");
  LLVMSetAlignment(flags, 8);
  flags = LLVMBuildAnd(p->b, flags, LLVMConstInt(p->i32, ~(uint32_t)STROBE_ENTRY_TAIL, 0), "dyn.flags.untail");
  LLVMSetAlignment(LLVMBuildStore(p->b, flags, flags_addr), 8);
}

/* The tick fast path at the watermark of the top entry t, from `same` on: the walk
 * over the entries at sp (Note [The fast paths in IR]). */
static void build_walk(Pass *p, LLVMValueRef h, LLVMValueRef desc, LLVMValueRef sp, LLVMValueRef t,
                       LLVMBasicBlockRef same, LLVMBasicBlockRef cold, LLVMBasicBlockRef cont) {
  enum { MAX_CHAIN = 32 };
  LLVMValueRef chain[MAX_CHAIN];
  int nchain = parent_chain(desc, chain, MAX_CHAIN);
  LLVMBasicBlockRef top = new_block(p, SP_TICK, "top", cont), repeat = new_block(p, SP_TICK, "repeat", cont);

  LLVMPositionBuilderAtEnd(p->b, same); /* sp >= t->wm; sp > t->wm: stale entries */
  branch(p, LLVMBuildICmp(p->b, LLVMIntEQ, sp, wm_of(p, t, "dyn.wm"), "dyn.same_wm"), top, cold, false);

  LLVMPositionBuilderAtEnd(p->b, top); /* the top entry is at sp */
  LLVMValueRef d0 = load(p, p->ptr, field(p, t, offsetof(StrobeEntry, desc), ""), "dyn.desc");
  LLVMBasicBlockRef other = nchain < 0 ? cold : new_block(p, SP_TICK, "other", cont);
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntEQ, d0, desc, "dyn.again"), repeat, other);
  LLVMPositionBuilderAtEnd(p->b, repeat); /* rule 2a on the top */
  count(p, field(p, t, offsetof(StrobeEntry, repeats), "dyn.repeats.addr"), "dyn.repeats");
  LLVMBuildBr(p->b, cont);
  if (nchain < 0) return; /* the chain is not known: the runtime tells the entries apart */

  LLVMBasicBlockRef sibling = new_block(p, SP_TICK, "sibling", cont), step = new_block(p, SP_TICK, "step", cont),
                    next = new_block(p, SP_TICK, "next", cont), popped = new_block(p, SP_TICK, "popped", cont),
                    room = new_block(p, SP_TICK, "room", cont), push_on = new_block(p, SP_TICK, "push_on", cont);
  LLVMPositionBuilderAtEnd(p->b, other); /* at is an entry at sp, not desc */
  LLVMValueRef at = LLVMBuildPhi(p->b, p->ptr, "dyn.at");
  LLVMAddIncoming(at, &t, &top, 1);
  LLVMValueRef d = load(p, p->ptr, field(p, at, offsetof(StrobeEntry, desc), ""), "dyn.at.desc");
  LLVMValueRef on_chain = NULL; /* rule 2b: at contains desc */
  for (int i = 0; i < nchain; i++) {
    LLVMValueRef is = LLVMBuildICmp(p->b, LLVMIntEQ, d, chain[i], "dyn.encloses");
    on_chain = on_chain ? LLVMBuildOr(p->b, on_chain, is, "dyn.encloses") : is;
  }
  if (on_chain) LLVMBuildCondBr(p->b, on_chain, room, sibling);
  else LLVMBuildBr(p->b, sibling);

  LLVMPositionBuilderAtEnd(p->b, sibling); /* rule 2c, or another function's (2d: cold) */
  LLVMValueRef d_function = load(p, p->ptr, field(p, d, offsetof(StrobeTickDesc, function), ""), "dyn.desc.function");
  LLVMValueRef function = load(p, p->ptr, field(p, desc, offsetof(StrobeTickDesc, function), ""), "dyn.function");
  branch(p, LLVMBuildICmp(p->b, LLVMIntEQ, d_function, function, "dyn.same_function"), step, cold, false);

  LLVMPositionBuilderAtEnd(p->b, step); /* pop it; rule 3 if nothing else is at sp */
  clear_entry(p, at);
  LLVMValueRef below = entry_at(p, at, -1, "dyn.below");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntEQ, wm_of(p, below, "dyn.below.wm"), sp, "dyn.below.same_wm"),
                  next, room);

  LLVMPositionBuilderAtEnd(p->b, next); /* the entry below, at sp too */
  LLVMValueRef d1 = load(p, p->ptr, field(p, below, offsetof(StrobeEntry, desc), ""), "dyn.below.desc");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntEQ, d1, desc, "dyn.again"), popped, other);
  LLVMAddIncoming(at, &below, &next, 1);
  LLVMPositionBuilderAtEnd(p->b, popped); /* rule 2a, after rule 2c popped what was above */
  untail(p, below);
  store(p, below, field(p, h, offsetof(StrobeDynStackHead, top), ""), LLVMAtomicOrderingRelease);
  count(p, field(p, below, offsetof(StrobeEntry, repeats), "dyn.repeats.addr"), "dyn.repeats");
  LLVMBuildBr(p->b, cont);

  LLVMPositionBuilderAtEnd(p->b, room); /* push on base */
  LLVMValueRef base = LLVMBuildPhi(p->b, p->ptr, "dyn.base");
  LLVMAddIncoming(base, &below, &step, 1);
  if (on_chain) LLVMAddIncoming(base, &at, &other, 1);
  branch_room(p, h, base, push_on, cold);
  LLVMPositionBuilderAtEnd(p->b, push_on);
  store_entry_above(p, base, desc, sp);
  store(p, entry_at(p, base, 1, "dyn.next"), field(p, h, offsetof(StrobeDynStackHead, top), ""),
        LLVMAtomicOrderingRelease);
  LLVMBuildBr(p->b, cont);
}

/* The tick fast path, at the builder (Note [The fast paths in IR]). */
static void build_tick(Pass *p, LLVMValueRef h, LLVMValueRef desc, LLVMValueRef sp,
                       LLVMBasicBlockRef cold, LLVMBasicBlockRef cont) {
  LLVMBasicBlockRef deeper = new_block(p, SP_TICK, "deeper", cont), push = new_block(p, SP_TICK, "push", cont),
                    same = new_block(p, SP_TICK, "same", cont);
  if (p->o->count_ticks) count(p, field(p, h, offsetof(StrobeDynStackHead, ticks), "dyn.ticks.addr"), "dyn.ticks");
  LLVMValueRef t = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, top), ""), "dyn.top");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntULT, sp, wm_of(p, t, "dyn.wm"), "dyn.deeper"), deeper, same);

  LLVMPositionBuilderAtEnd(p->b, deeper); /* rule 3 with nothing stale: push on t */
  branch_room(p, h, t, push, cold);
  LLVMPositionBuilderAtEnd(p->b, push);
  store_entry_above(p, t, desc, sp);
  move_top(p, h, 1);
  LLVMBuildBr(p->b, cont);

  build_walk(p, h, desc, sp, t, same, cold, cont);
}

/* The pop and ret fast paths, at the builder: pred is how a stale watermark compares
 * with sp (Note [The fast paths in IR]). */
static void build_pop(Pass *p, SpIntrinsicId id, LLVMValueRef h, LLVMValueRef sp, LLVMBasicBlockRef cont) {
  LLVMIntPredicate pred = id == SP_POP ? LLVMIntULT : LLVMIntULE;
  LLVMBasicBlockRef one = new_block(p, id, "one", cont), set = new_block(p, id, "set", cont),
                    more = new_block(p, id, "more", cont);
  LLVMValueRef t = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, top), ""), "dyn.top");
  LLVMValueRef stale = LLVMBuildICmp(p->b, pred, wm_of(p, t, "dyn.wm"), sp, "dyn.stale");
  if (id == SP_POP) branch(p, stale, one, cont, true); /* pops are rare; returns pop */
  else LLVMBuildCondBr(p->b, stale, one, cont);

  LLVMPositionBuilderAtEnd(p->b, one); /* t goes; does the one below? */
  LLVMValueRef below = entry_at(p, t, -1, "dyn.below");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, pred, wm_of(p, below, "dyn.below.wm"), sp, "dyn.below.stale"),
                  more, set);
  LLVMPositionBuilderAtEnd(p->b, set);
  clear_entry(p, t);
  move_top(p, h, -1);
  LLVMBuildBr(p->b, cont);

  /* More than one: each stale one, t first, is cleared and popped as `set` pops t.
   * (One store of the last top would be shorter for many, but LLVM would sink it and
   * set's into one block, breaking set's read-modify-write; and set's code would be
   * hoisted into `one`, between the read of below->wm and its compare, were `more` to
   * start as set does.) */
  LLVMPositionBuilderAtEnd(p->b, more);
  LLVMValueRef at = LLVMBuildPhi(p->b, p->ptr, "dyn.at");
  clear_entry(p, at);
  move_top(p, h, -1);
  LLVMValueRef next = entry_at(p, at, -1, "dyn.next");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, pred, wm_of(p, next, "dyn.next.wm"), sp, "dyn.next.stale"), more, cont);
  LLVMValueRef in_values[] = {t, next};
  LLVMBasicBlockRef in_blocks[] = {one, more};
  LLVMAddIncoming(at, in_values, in_blocks, 2);
}

/* Replaces call, a call of intrinsic id, by its fast path (Note [The fast paths in IR]). */
static void rewrite_call(Pass *p, LLVMValueRef call, SpIntrinsicId id) {
  LLVMValueRef args[2];
  for (unsigned i = 0; i < intrinsics[id].nargs; i++) args[i] = LLVMGetOperand(call, i);
  char cont_name[32], cold_name[32];
  block_name(cont_name, sizeof cont_name, id, "cont");
  block_name(cold_name, sizeof cold_name, id, "cold");

  LLVMBasicBlockRef head = LLVMGetInstructionParent(call);
  LLVMBasicBlockRef cont = split_after(p, call, cont_name);
  LLVMPositionBuilderAtEnd(p->b, head);
  LLVMSetCurrentDebugLocation2(p->b, LLVMInstructionGetDebugLoc(call));
  LLVMInstructionEraseFromParent(call);

  LLVMValueRef h = head_address(p);
  switch (id) {
  case SP_TICK: {
    LLVMValueRef f = LLVMGetBasicBlockParent(head);
    unsigned kind = LLVMGetEnumAttributeKindForName("noredzone", 9); /* Note [The cold calls] */
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(p->ctx, kind, 0));
    build_tick(p, h, args[0], args[1], cold_block(p, id, args, cont, cold_name), cont);
    break;
  }
  case SP_POP:
  case SP_RET: build_pop(p, id, h, args[0], cont); break; /* no slow path: pops stop at the base */
  case SP_NINTRINSICS: break;
  }
  LLVMSetCurrentDebugLocation2(p->b, NULL);
}

/* Whether an instruction that has no uses may go: it computes a value only. */
static bool pure(LLVMValueRef i) {
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMLoad: return !LLVMGetVolatile(i) && LLVMGetOrdering(i) == LLVMAtomicOrderingNotAtomic;
  case LLVMGetElementPtr:
  case LLVMTrunc: case LLVMZExt: case LLVMSExt: case LLVMPtrToInt: case LLVMIntToPtr:
  case LLVMBitCast: case LLVMAddrSpaceCast:
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: case LLVMLShr: case LLVMAShr:
  case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMICmp: case LLVMSelect:
    return true;
  default: return false;
  }
}

/* Erases call, and then the instructions that only computed its arguments, so that a
 * function that is not instrumented is what it would have been without intrinsics. */
static void delete_call(LLVMValueRef call) {
  LLVMValueRef work[16];
  size_t n = 0;
  unsigned nops = (unsigned)LLVMGetNumOperands(call);
  for (unsigned i = 0; i < nops && n < 16; i++) {
    LLVMValueRef op = LLVMGetOperand(call, i);
    bool seen = false;
    for (size_t q = 0; q < n; q++) seen |= work[q] == op;
    if (!seen && LLVMIsAInstruction(op)) work[n++] = op;
  }
  LLVMInstructionEraseFromParent(call);
  while (n > 0) {
    LLVMValueRef i = work[--n];
    if (LLVMGetFirstUse(i) || !pure(i)) continue;
    /* Operands that appear twice are pushed once and only erased once unused. */
    int k = LLVMGetNumOperands(i);
    for (int j = 0; j < k; j++) {
      LLVMValueRef op = LLVMGetOperand(i, (unsigned)j);
      bool seen = false;
      for (size_t q = 0; q < n; q++) seen |= work[q] == op;
      if (!seen && n < 16 && LLVMIsAInstruction(op)) work[n++] = op;
    }
    LLVMInstructionEraseFromParent(i);
  }
}

/* Which intrinsic i calls, or -1. */
static int intrinsic_of(const Pass *p, LLVMValueRef i) {
  if (!LLVMIsACallInst(i)) return -1;
  LLVMValueRef callee = LLVMGetCalledValue(i);
  for (int id = 0; id < SP_NINTRINSICS; id++)
    if (p->fn[id] && callee == p->fn[id]) return id;
  return -1;
}

static bool rewrite_function(Pass *p, LLVMValueRef f, char **error) {
  /* The calls first: rewriting splits blocks. */
  size_t n = 0, cap = 0;
  LLVMValueRef *calls = NULL;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (intrinsic_of(p, i) < 0) continue;
      if (n == cap) {
        LLVMValueRef *c = realloc(calls, (cap = cap ? 2 * cap : 16) * sizeof *c);
        if (!c) {
          free(calls);
          return fail(error, "out of memory");
        }
        calls = c;
      }
      calls[n++] = i;
    }
  if (n == 0) return true;
  bool instrumented = sp_function_instrumented(f, p->o);
  for (size_t k = 0; k < n; k++) {
    SpIntrinsicId id = (SpIntrinsicId)intrinsic_of(p, calls[k]);
    if (instrumented || (p->o->pops_everywhere && kept_everywhere(id)))
      rewrite_call(p, calls[k], id);
    else
      delete_call(calls[k]);
  }
  free(calls);
  return true;
}

/* ---- the pass ------------------------------------------------------------------- */

bool sp_instrument_module(LLVMModuleRef m, const SpOptions *o, char **error) {
  if (error) *error = NULL;
  Pass p = {.m = m, .o = o, .ctx = LLVMGetModuleContext(m)};
  p.ptr = LLVMPointerTypeInContext(p.ctx, 0);
  p.word = LLVMIntTypeInContext(p.ctx, 8 * sizeof(uintptr_t));
  p.i32 = LLVMInt32TypeInContext(p.ctx);
  if (!check_module(&p, error)) return false;
  if (!sp_module_has_intrinsics(m)) return true;

  p.b = LLVMCreateBuilderInContext(p.ctx);
  p.prof_kind = LLVMGetMDKindIDInContext(p.ctx, "prof", 4);
  LLVMMetadataRef weights[3] = {LLVMMDStringInContext2(p.ctx, "branch_weights", 14)};
  LLVMMetadataRef rare = LLVMValueAsMetadata(LLVMConstInt(p.i32, 1, 0));
  LLVMMetadataRef usual = LLVMValueAsMetadata(LLVMConstInt(p.i32, (1u << 20) - 1, 0));
  weights[1] = rare, weights[2] = usual;
  p.weights_then_cold = LLVMMetadataAsValue(p.ctx, LLVMMDNodeInContext2(p.ctx, weights, 3));
  weights[1] = usual, weights[2] = rare;
  p.weights_else_cold = LLVMMetadataAsValue(p.ctx, LLVMMDNodeInContext2(p.ctx, weights, 3));

  bool ok = true;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); ok && f; f = LLVMGetNextFunction(f))
    ok = rewrite_function(&p, f, error);
  LLVMDisposeBuilder(p.b);
  if (!ok) return false;

  for (int id = 0; id < SP_NINTRINSICS; id++)
    if (p.fn[id]) LLVMDeleteFunction(p.fn[id]); /* check_module: only calls used it */
  return true;
}
