/* instrument.c — the strobe-instrument pass (see instrument.h).
 *
 * The pass works in three steps, each over the whole module:
 *   1. check: every intrinsic of intrinsics.def that m declares has the type the table
 *      gives it and is only ever called directly, and the runtime's slow paths and the
 *      cache, if m has them, have the types the fast paths need.  Nothing changes
 *      before this passed, so an error leaves m as it was.
 *   2. rewrite, function by function: decide whether it is instrumented, then replace
 *      each intrinsic call by its fast path (rewrite_call) or by nothing.
 *   3. delete the intrinsics' declarations, which have no uses left.
 *
 * Note [The fast paths in IR]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * strobe/dynstack.h §4 gives the fast paths in C; these are the same in IR, with h the
 * address of the thread's head (llvm.threadlocal.address) and the offsets taken from
 * dynstack.h itself (offsetof on StrobeDynStackHead and StrobeEntry):
 *
 *   tick(desc, sp):  h->ticks += 1 (monotonic); t = h->top; wm = t->wm
 *                    br (sp <u wm), room, same
 *     same:          br (wm == sp), walk, cold                     ; weights 2^20-1 : 1
 *     walk:          at = phi [t, same], [at - 1, step]; d = at->desc
 *                    br (d == desc), again, other
 *     again:         br (at == t), repeat, popped
 *     popped:        at->flags &= ~TAIL; store release at -> h->top; br repeat
 *     repeat:        at->repeats += 1 (monotonic); br cont
 *     other:         br (d == c1 | d == c2 | ...), room, sibling   ; desc's constant
 *                                                                  ; parent chain
 *     sibling:       br (d->function == desc->function), step, cold ; likewise
 *     step:          br ((at - 1)->wm == sp), walk, room
 *     room:          base = phi [t, entry], [at, other], [at - 1, step]; n = base + 1
 *                    br (n <u h->limit), push, cold                ; likewise
 *     push:          *n = {desc, sp, 0, 0|0}; store release n -> h->top; br cont
 *   When desc is not a constant flagged STROBE_DESC_NESTED (parent_chain), `other`
 *   branches to cold, and sibling and step are not made.
 *   pop(sp):         t0 = h->top; br (t0->wm <u sp), loop, cont    ; weights 1 : 2^20-1
 *     loop:          t = phi [t0, loop's t - 1]; br ((t - 1)->wm <u sp), loop, done
 *     done:          br (t - 1 <u h->base), cold, set              ; weights 1 : 2^20-1
 *     set:           store release t - 1 -> h->top; br cont
 *   ret(sp):         the same with <=u, and no weights on the first branch (a return
 *                    usually pops what the callee pushed)
 *     cold:          call strobe_tick(desc, sp) / strobe_pop(sp) / strobe_ret(sp)
 *                    (C, cold); br cont
 *
 * The block of the intrinsic call is split after it (cont gets the rest of the block);
 * cold blocks go to the end of the function.  Every new instruction has the debug
 * location of the call it replaces.  Nothing here makes an alloca, so a ghccc function
 * keeps no frame pointer (lowering/emit.c, Note [ghccc and the frame pointer]); its cold
 * call is an ordinary C call, as a foreign call is. */
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

#include "errfmt.h"
#include "strobe/dynstack.h"
#include "llvm_types.h"

/* ---- errors --------------------------------------------------------------------- */

/* Messages are formatted by strobe's one formatter (abi/errfmt.h). */
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
  LLVMValueRef slow[SP_NINTRINSICS];    /* their slow paths, declared on first use */
  LLVMTypeRef slow_type[SP_NINTRINSICS];
  LLVMValueRef head;                    /* strobe_dynstack_head, declared on first use */
  LLVMValueRef tls_address;             /* llvm.threadlocal.address.p0 */
  LLVMTypeRef tls_address_type;
  unsigned prof_kind;
  LLVMValueRef weights_then_cold, weights_else_cold; /* !prof branch_weights */
} Pass;

static LLVMTypeRef arg_type(const Pass *p, SpArgKind k) { return k == SP_ARG_DESC ? p->ptr : p->word; }

static LLVMTypeRef slow_path_type(const Pass *p, SpIntrinsicId id) {
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
    LLVMValueRef slow = LLVMGetNamedFunction(p->m, in->rts_entry);
    if (slow && !check_type(slow, slow_path_type(p, id), "the runtime function", error))
      return false;
    if (!f) continue;
    if (LLVMCountBasicBlocks(f) > 0)
      return fail(error, "strobe-instrument: the intrinsic '%s' has a body; it must be only declared",
                  in->name);
    /* The intrinsic's type is its slow path's. */
    if (!check_type(f, slow_path_type(p, id), "the intrinsic", error)) return false;
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

static LLVMValueRef get_slow_path(Pass *p, SpIntrinsicId id) {
  if (p->slow[id]) return p->slow[id];
  const char *name = intrinsics[id].rts_entry;
  LLVMTypeRef t = slow_path_type(p, id);
  LLVMValueRef f = LLVMGetNamedFunction(p->m, name);
  if (!f) {
    f = LLVMAddFunction(p->m, name, t);
    const char *attrs[] = {"cold", "nounwind"};
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
      unsigned kind = LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i]));
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                              LLVMCreateEnumAttribute(p->ctx, kind, 0));
    }
  }
  p->slow[id] = f;
  p->slow_type[id] = t;
  return f;
}

/* The address of this thread's head, computed at the builder. */
static LLVMValueRef head_address(Pass *p) {
  if (!p->head) {
    p->head = LLVMAddGlobal(p->m, strobe_head_llvm_type(p->ctx), STROBE_DYNSTACK_HEAD_NAME);
    LLVMSetLinkage(p->head, LLVMExternalLinkage);
    LLVMSetThreadLocal(p->head, 1);
    LLVMSetThreadLocalMode(p->head, LLVMInitialExecTLSModel);
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

/* A cold block at the end of the function that calls id's slow path with args and
 * branches to cont. */
static LLVMBasicBlockRef cold_block(Pass *p, SpIntrinsicId id, LLVMValueRef *args,
                                    LLVMBasicBlockRef cont, const char *name) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(p->b);
  LLVMBasicBlockRef cold = LLVMAppendBasicBlockInContext(p->ctx, LLVMGetBasicBlockParent(cont), name);
  LLVMPositionBuilderAtEnd(p->b, cold);
  LLVMValueRef slow = get_slow_path(p, id);
  LLVMValueRef call = LLVMBuildCall2(p->b, p->slow_type[id], slow, args, intrinsics[id].nargs, "");
  unsigned cold_kind = LLVMGetEnumAttributeKindForName("cold", 4);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(p->ctx, cold_kind, 0));
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

/* *addr += 1, a relaxed (monotonic) load and store: see dynstack.h §4. */
static void count(Pass *p, LLVMValueRef addr, const char *name) {
  LLVMValueRef v = load(p, p->word, addr, name);
  LLVMSetOrdering(v, LLVMAtomicOrderingMonotonic);
  store(p, LLVMBuildAdd(p->b, v, LLVMConstInt(p->word, 1, 0), ""), addr, LLVMAtomicOrderingMonotonic);
}

/* *e = {desc, sp, 0, 0, 0}: the entry's fields in order, each once. */
static void store_entry(Pass *p, LLVMValueRef e, LLVMValueRef desc, LLVMValueRef sp) {
  _Static_assert(offsetof(StrobeEntry, elided) == offsetof(StrobeEntry, flags) + 4 &&
                     sizeof(StrobeEntry) == offsetof(StrobeEntry, flags) + 8,
                 "flags and elided are the entry's last word");
  LLVMValueRef zero = LLVMConstInt(p->word, 0, 0);
  store(p, desc, field(p, e, offsetof(StrobeEntry, desc), ""), LLVMAtomicOrderingNotAtomic);
  store(p, sp, field(p, e, offsetof(StrobeEntry, wm), ""), LLVMAtomicOrderingNotAtomic);
  store(p, zero, field(p, e, offsetof(StrobeEntry, repeats), ""), LLVMAtomicOrderingNotAtomic);
  store(p, zero, field(p, e, offsetof(StrobeEntry, flags), ""), LLVMAtomicOrderingNotAtomic);
}

/* The entry n slots from e. */
static LLVMValueRef entry_at(Pass *p, LLVMValueRef e, long n, const char *name) {
  LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(p->ctx), (unsigned long long)(n * (long)sizeof(StrobeEntry)), 1);
  return LLVMBuildInBoundsGEP2(p->b, LLVMInt8TypeInContext(p->ctx), e, &idx, 1, name);
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

/* The tick fast path, at the builder (Note [The fast paths in IR]). */
static void build_tick(Pass *p, LLVMValueRef h, LLVMValueRef desc, LLVMValueRef sp,
                       LLVMBasicBlockRef cold, LLVMBasicBlockRef cont) {
  enum { MAX_CHAIN = 32 };
  LLVMValueRef chain[MAX_CHAIN];
  int nchain = parent_chain(desc, chain, MAX_CHAIN);
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(p->b);
  LLVMBasicBlockRef same = new_block(p, SP_TICK, "same", cont), walk = new_block(p, SP_TICK, "walk", cont),
                    again = new_block(p, SP_TICK, "again", cont), popped = new_block(p, SP_TICK, "popped", cont),
                    repeat = new_block(p, SP_TICK, "repeat", cont), other = new_block(p, SP_TICK, "other", cont),
                    sibling = new_block(p, SP_TICK, "sibling", cont), step = new_block(p, SP_TICK, "step", cont),
                    room = new_block(p, SP_TICK, "room", cont), push = new_block(p, SP_TICK, "push", cont);

  count(p, field(p, h, offsetof(StrobeDynStackHead, ticks), "dyn.ticks.addr"), "dyn.ticks");
  LLVMValueRef t = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, top), ""), "dyn.top");
  LLVMValueRef wm = load(p, p->word, field(p, t, offsetof(StrobeEntry, wm), "dyn.wm.addr"), "dyn.wm");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntULT, sp, wm, "dyn.deeper"), room, same);

  LLVMPositionBuilderAtEnd(p->b, same); /* sp > wm: stale entries, for the runtime */
  branch(p, LLVMBuildICmp(p->b, LLVMIntEQ, wm, sp, "dyn.same_wm"), walk, cold, false);

  LLVMPositionBuilderAtEnd(p->b, walk); /* the entries at sp, from the top */
  LLVMValueRef at = LLVMBuildPhi(p->b, p->ptr, "dyn.at");
  LLVMValueRef d = load(p, p->ptr, field(p, at, offsetof(StrobeEntry, desc), ""), "dyn.desc");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntEQ, d, desc, "dyn.again"), again, other);

  LLVMPositionBuilderAtEnd(p->b, again); /* rule 2a */
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntEQ, at, t, "dyn.at_top"), repeat, popped);
  LLVMPositionBuilderAtEnd(p->b, popped); /* after rule 2c: at runs again, not a tail caller */
  LLVMValueRef flags_addr = field(p, at, offsetof(StrobeEntry, flags), "dyn.flags.addr");
  LLVMValueRef flags = LLVMBuildLoad2(p->b, p->i32, flags_addr, "dyn.flags");
  LLVMSetAlignment(flags, 8);
  flags = LLVMBuildAnd(p->b, flags, LLVMConstInt(p->i32, ~(uint32_t)STROBE_ENTRY_TAIL, 0), "dyn.flags.untail");
  LLVMSetAlignment(LLVMBuildStore(p->b, flags, flags_addr), 8);
  store(p, at, field(p, h, offsetof(StrobeDynStackHead, top), ""), LLVMAtomicOrderingRelease);
  LLVMBuildBr(p->b, repeat);
  LLVMPositionBuilderAtEnd(p->b, repeat);
  count(p, field(p, at, offsetof(StrobeEntry, repeats), "dyn.repeats.addr"), "dyn.repeats");
  LLVMBuildBr(p->b, cont);

  LLVMPositionBuilderAtEnd(p->b, room); /* push on base */
  LLVMValueRef base = LLVMBuildPhi(p->b, p->ptr, "dyn.base");
  LLVMAddIncoming(base, &t, &entry, 1);
  LLVMValueRef n = entry_at(p, base, 1, "dyn.next");
  LLVMValueRef limit = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, limit), "dyn.limit.addr"),
                            "dyn.limit");
  branch(p, LLVMBuildICmp(p->b, LLVMIntULT, n, limit, "dyn.room"), push, cold, false);
  LLVMAddIncoming(at, &t, &same, 1);

  LLVMPositionBuilderAtEnd(p->b, other);
  if (nchain < 0) { /* the chain is not known: the runtime tells the entries apart */
    LLVMBuildBr(p->b, cold);
    LLVMDeleteBasicBlock(sibling);
    LLVMDeleteBasicBlock(step);
  } else {
    LLVMValueRef on_chain = NULL; /* rule 2b: at contains desc */
    for (int i = 0; i < nchain; i++) {
      LLVMValueRef is = LLVMBuildICmp(p->b, LLVMIntEQ, d, chain[i], "dyn.encloses");
      on_chain = on_chain ? LLVMBuildOr(p->b, on_chain, is, "dyn.encloses") : is;
    }
    if (on_chain) {
      LLVMBuildCondBr(p->b, on_chain, room, sibling);
      LLVMAddIncoming(base, &at, &other, 1);
    } else {
      LLVMBuildBr(p->b, sibling);
    }

    LLVMPositionBuilderAtEnd(p->b, sibling); /* rule 2c, or another function's (2d: cold) */
    LLVMValueRef d_function = load(p, p->ptr, field(p, d, offsetof(StrobeTickDesc, function), ""), "dyn.desc.function");
    LLVMValueRef function = load(p, p->ptr, field(p, desc, offsetof(StrobeTickDesc, function), ""), "dyn.function");
    branch(p, LLVMBuildICmp(p->b, LLVMIntEQ, d_function, function, "dyn.same_function"), step, cold, false);

    LLVMPositionBuilderAtEnd(p->b, step); /* pop it; rule 3 if nothing else is at sp */
    LLVMValueRef below = entry_at(p, at, -1, "dyn.below");
    LLVMValueRef below_wm = load(p, p->word, field(p, below, offsetof(StrobeEntry, wm), ""), "dyn.below.wm");
    LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, LLVMIntEQ, below_wm, sp, "dyn.below.same_wm"), walk, room);
    LLVMAddIncoming(at, &below, &step, 1);
    LLVMAddIncoming(base, &below, &step, 1);
  }

  LLVMPositionBuilderAtEnd(p->b, push);
  store_entry(p, n, desc, sp);
  store(p, n, field(p, h, offsetof(StrobeDynStackHead, top), ""), LLVMAtomicOrderingRelease);
  LLVMBuildBr(p->b, cont);
}

/* The pop and ret fast paths, at the builder: pred is how a stale watermark compares
 * with sp (Note [The fast paths in IR]). */
static void build_pop(Pass *p, SpIntrinsicId id, LLVMValueRef h, LLVMValueRef sp,
                      LLVMBasicBlockRef cold, LLVMBasicBlockRef cont) {
  LLVMIntPredicate pred = id == SP_POP ? LLVMIntULT : LLVMIntULE;
  LLVMBasicBlockRef here = LLVMGetInsertBlock(p->b);
  LLVMValueRef t0 = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, top), ""), "dyn.top");
  LLVMValueRef wm0 = load(p, p->word, field(p, t0, offsetof(StrobeEntry, wm), "dyn.wm.addr"), "dyn.wm");
  LLVMBasicBlockRef loop = new_block(p, id, "loop", cont), done = new_block(p, id, "done", cont),
                    set = new_block(p, id, "set", cont);
  LLVMValueRef stale = LLVMBuildICmp(p->b, pred, wm0, sp, "dyn.stale");
  if (id == SP_POP) branch(p, stale, loop, cont, true); /* pops are rare; returns pop */
  else LLVMBuildCondBr(p->b, stale, loop, cont);

  LLVMPositionBuilderAtEnd(p->b, loop);
  LLVMValueRef t = LLVMBuildPhi(p->b, p->ptr, "dyn.t");
  LLVMValueRef below = entry_at(p, t, -1, "dyn.below");
  LLVMValueRef wm = load(p, p->word, field(p, below, offsetof(StrobeEntry, wm), "dyn.below.wm.addr"),
                         "dyn.below.wm");
  LLVMBuildCondBr(p->b, LLVMBuildICmp(p->b, pred, wm, sp, "dyn.below.stale"), loop, done);
  LLVMValueRef in_values[] = {t0, below};
  LLVMBasicBlockRef in_blocks[] = {here, loop};
  LLVMAddIncoming(t, in_values, in_blocks, 2);

  LLVMPositionBuilderAtEnd(p->b, done);
  LLVMValueRef base = load(p, p->ptr, field(p, h, offsetof(StrobeDynStackHead, base), "dyn.base.addr"),
                           "dyn.base");
  branch(p, LLVMBuildICmp(p->b, LLVMIntULT, below, base, "dyn.under"), cold, set, true);

  LLVMPositionBuilderAtEnd(p->b, set);
  store(p, below, field(p, h, offsetof(StrobeDynStackHead, top), ""), LLVMAtomicOrderingRelease);
  LLVMBuildBr(p->b, cont);
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
  LLVMBasicBlockRef cold = cold_block(p, id, args, cont, cold_name);
  switch (id) {
  case SP_TICK: build_tick(p, h, args[0], args[1], cold, cont); break;
  case SP_POP:
  case SP_RET: build_pop(p, id, h, args[0], cold, cont); break;
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
