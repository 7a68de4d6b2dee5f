/* cmm.h — strobe's Cmm front end: the IR and the phases that build and read it.
 *
 * The pipeline, one file per phase (see strobec.c's main):
 *
 *   arena.c    memory pools: every IR node of a file lives in that file's arena
 *   diag.c     diagnostics: `file:line:col: error: …`, the source line and a caret;
 *              internal errors (broken invariants) with strobe's own file and line
 *   lex.c      the lexer: GHC's free-form Cmm text into tokens
 *   parse.c    the recursive-descent parser: tokens into CmmFile; by concern (parse.h):
 *     parse_expr.c  expressions, GHC's printing precedence
 *     parse_stmt.c  statements, ticks, tick scopes and blocks
 *     parse_decl.c  statics, info tables, procs, data sections, the file's sections
 *   types.c    width inference: the type of every expression, widths of infix MachOps
 *   print.c    the canonical Cmm printer (--emit=cmm); printing its output is a fixed point
 *   scopes.c   tick-scope analysis: the scope tree of a group and each scope's best note
 *
 * Locations are byte offsets into the file's text (CmmLoc); diag.c turns them into
 * line and column.  No phase keeps global state: two files can be processed at once.
 */
#ifndef STROBE_CMM_H
#define STROBE_CMM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- arena.c ------------------------------------------------------------------ */

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
size_t arena_bytes(const Arena *a); /* bytes handed out so far */

/* A string-keyed hash map (open addressing) whose storage comes from an arena. */
typedef struct StrMap {
  uint32_t cap, n;
  const char **keys;
  uint32_t *vals;
} StrMap;
void strmap_init(StrMap *m, Arena *a, uint32_t expected);
bool strmap_get(const StrMap *m, const char *key, uint32_t *val);
/* Inserts or replaces; returns false if the key was already there (val then holds
 * the old value when old_val is non-NULL). */
bool strmap_put(StrMap *m, Arena *a, const char *key, uint32_t val, uint32_t *old_val);

/* A growable array whose storage comes from an arena (old storage is abandoned). */
#define VEC(T) struct { T *v; uint32_t n, cap; }
#define vec_push(arena, vec, x)                                                   \
  do {                                                                            \
    if ((vec)->n == (vec)->cap)                                                   \
      vec_grow((arena), (void **)&(vec)->v, &(vec)->cap, sizeof *(vec)->v);       \
    (vec)->v[(vec)->n++] = (x);                                                   \
  } while (0)
void vec_grow(Arena *a, void **v, uint32_t *cap, size_t elem);

/* ---- diag.c ------------------------------------------------------------------- */

typedef uint32_t CmmLoc; /* byte offset into CmmSource.text */

typedef struct CmmSource {
  const char *name;  /* as given on the command line */
  const char *text;  /* NUL-terminated; may contain other NULs (an error) */
  size_t len;
  uint32_t *line_starts; /* offsets of each line's first byte */
  uint32_t nlines;
} CmmSource;

/* Reads a whole file; NULL and an error in d (diag_tool_error) if it cannot. */
typedef struct Diag Diag;
CmmSource *cmm_source_read(const char *path, Diag *d);
/* Wraps text already in memory (copied). */
CmmSource *cmm_source_from_memory(const char *name, const char *text, size_t len);
void cmm_source_free(CmmSource *s);
void cmm_source_linecol(const CmmSource *s, CmmLoc loc, uint32_t *line, uint32_t *col);

/* Where diagnostics go; the caller decides what an error means (no exit() here).
 * The front end stops at its first error, so there is one per failed input. */
struct Diag {
  FILE *out;        /* NULL: count only */
  unsigned errors, warnings;
  unsigned refusals; /* errors that are valid GHC Cmm strobe will not lower (also in errors) */
  bool no_warnings; /* count warnings but do not print them */
};

void diag_error(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_verror(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, va_list ap);
/* An error for valid GHC Cmm that strobe refuses to lower faithfully (an ambiguous
 * bitwise chain): strobec exits with status 2 when every error was one of these. */
void diag_refusal(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_warning(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_note(Diag *d, const CmmSource *s, CmmLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An error of no place in a source: `strobec: error: message`.  Every phase's error
 * without a location reaches the user through here (a phase formats it with
 * intrinsics/errfmt.h's strobe_fail; strobec passes it on). */
void diag_tool_error(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Broken invariants: strobe's own file and line, exit status 70 (EX_SOFTWARE). */
_Noreturn void internal_error_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define internal_error(...) internal_error_at(__FILE__, __LINE__, __VA_ARGS__)
#define cmm_assert(c) ((c) ? (void)0 : internal_error("assertion failed: %s", #c))

/* ---- the IR ------------------------------------------------------------------- */

/* Types: I8..I64 bits, P64 a GC pointer, F32/F64 floats. */
typedef enum { CMM_BITS, CMM_GCPTR, CMM_FLOAT } CmmTypeCat;
typedef struct CmmType {
  uint16_t cat;   /* CmmTypeCat (16 bits: no padding byte for memcheck to trip on) */
  uint16_t width; /* in bits: 8, 16, 32, 64, 128, 256, 512 */
} CmmType;

#define CMM_WORD_WIDTH 64

typedef enum {
#define X(id, name, type, offset) CMM_REG_##id,
#include "globalregs.def"
#undef X
  CMM_NUM_GLOBAL_REGS
} CmmGlobalReg;

typedef enum {
#define X(id, name, arity, nw, infix, prec, result) CMM_MO_##id,
#include "machops.def"
#undef X
  CMM_NUM_MACHOPS
} CmmMachOpId;

typedef enum {
#define X(id, name, arg, how, fn, nargs) CMM_PRIM_##id,
#include "primops.def"
#undef X
  CMM_NUM_PRIMOPS
} CmmPrimOpId;

typedef struct CmmMachOpInfo {
  const char *name, *infix;
  uint8_t arity, nwidths, prec, result, infix_len;
} CmmMachOpInfo;
enum { CMM_RES_OPND, CMM_RES_BITS, CMM_RES_FLOAT, CMM_RES_CMP, CMM_RES_TO_BITS, CMM_RES_TO_FLOAT };
extern const CmmMachOpInfo cmm_machops[CMM_NUM_MACHOPS];

typedef struct CmmPrimOpInfo { const char *name; uint8_t arg; } CmmPrimOpInfo;
enum { CMM_PRIMARG_NONE, CMM_PRIMARG_WIDTH, CMM_PRIMARG_INT, CMM_PRIMARG_WIDTH_AMO,
       CMM_PRIMARG_WIDTH_ORDER };
/* An atomic's memory order (GHC 9.6's MemoryOrdering); NONE: not printed (GHC 9.0). */
typedef enum {
  CMM_ORDER_NONE, CMM_ORDER_RELAXED, CMM_ORDER_ACQUIRE, CMM_ORDER_RELEASE, CMM_ORDER_SEQCST,
  CMM_NUM_ORDERS
} CmmMemOrder;
extern const char *const cmm_order_names[CMM_NUM_ORDERS]; /* "MemOrderAcquire", … */
extern const CmmPrimOpInfo cmm_primops[CMM_NUM_PRIMOPS];

typedef struct CmmGlobalRegInfo {
  const char *name;
  uint8_t len;
  CmmType type;
  int32_t offset; /* from BaseReg; -1: none */
} CmmGlobalRegInfo;
extern const CmmGlobalRegInfo cmm_global_regs[CMM_NUM_GLOBAL_REGS];

/* What a bare name in value position refers to; decided per proc (parse_stmt.c). */
typedef enum {
  CMM_LABEL_FOREIGN, /* any label not a block of the enclosing proc */
  CMM_LABEL_BLOCK,   /* a block of the enclosing proc, used as a value */
} CmmLabelKind;

/* An integer as printed: a magnitude and a sign (ranges reach 2^64-1 and -2^63). */
typedef struct CmmInt { uint64_t mag; bool neg; } CmmInt;

/* A reference to a block of the enclosing proc; index is set once the proc is parsed. */
typedef struct CmmBlockRef { const char *name; CmmLoc loc; uint32_t index; } CmmBlockRef;

typedef enum {
  CMM_E_INT,        /* int: value, neg, type (width printed iff not the word) */
  CMM_E_FLOAT,      /* flt: spelling and value, type */
  CMM_E_LABEL,      /* label: name (+ offset), kind */
  CMM_E_LABEL_DIFF, /* label - label2 (+ offset): only in statics */
  CMM_E_LOAD,       /* load: type[addr] */
  CMM_E_GLOBAL,     /* global register */
  CMM_E_LOCAL,      /* local register: name::type */
  CMM_E_REGOFF,     /* (reg + off): a register and a constant offset, printed nested */
  CMM_E_MACHOP,     /* machop: op, widths, args */
} CmmExprKind;

typedef struct CmmExpr CmmExpr;
struct CmmExpr {
  uint8_t kind;  /* CmmExprKind */
  CmmType type;  /* of the value; set by the parser where printed, by types.c elsewhere */
  CmmLoc loc;
  union {
    CmmInt i;                                          /* CMM_E_INT */
    struct { const char *spelling; double value; } f;  /* CMM_E_FLOAT */
    struct {                                           /* CMM_E_LABEL, CMM_E_LABEL_DIFF */
      const char *name, *name2; /* name2: the subtrahend of a difference */
      int64_t offset;
      uint8_t kind;             /* CmmLabelKind of name */
      uint32_t block;           /* CMM_LABEL_BLOCK: its index in the proc */
    } label;
    struct { CmmExpr *addr; bool unaligned, relaxed; } load; /* CMM_E_LOAD (type: the loaded
                                                          type); unaligned: I64^[e], GHC 9.4;
                                                          relaxed: an atomic load with no
                                                          order, I64![e], GHC 9.10 */
    struct { uint8_t reg; } global;                    /* CMM_E_GLOBAL */
    struct { const char *name; } local;                /* CMM_E_LOCAL (type: declared) */
    struct { CmmExpr *reg; int64_t offset; } regoff;   /* CMM_E_REGOFF: reg is GLOBAL/LOCAL */
    struct {                                           /* CMM_E_MACHOP */
      uint8_t op;        /* CmmMachOpId */
      bool named;        /* printed %MO_…: widths are in the text */
      uint16_t w, w2;    /* operation width; w2: the result width of a conversion */
      uint8_t nargs;
      CmmExpr **args;
    } mo;
  } u;
};

/* A source note, `//tick src<file:span> ["name"]`; lines and columns as printed.  The
 * name is the binding the note belongs to, as strobe's GHC plugin writes it (GHC's
 * dumps leave it out): `Main.stepB.go`, qualified when the note is in its module's
 * own source, else as GHC holds it (`go`, inlined from another module). */
typedef struct CmmSrcNote {
  const char *file;
  const char *name;  /* NULL: none printed */
  uint32_t line1, col1, line2, col2;
  CmmLoc loc;
} CmmSrcNote;

/* A tick scope, as printed after a block label. */
typedef struct CmmScopePath { uint32_t n; const char **comps; } CmmScopePath; /* root first */
typedef struct CmmScope {
  uint32_t npaths;      /* 0: `global`; 1: a path `a/b/c`; 2+: combined `(p+q)` */
  CmmScopePath *paths;
  CmmLoc loc;
} CmmScope;

typedef struct CmmHint { const char *text; } CmmHint; /* "" for NoHint, PtrHint, ‘signed’ */

typedef enum {
  CMM_S_TICK,      /* tick: //tick src<…> */
  CMM_S_COMMENT,   /* comment: // text */
  CMM_S_UNWIND,    /* unwind: reg = Just expr | Nothing, … */
  CMM_S_ASSIGN,    /* assign: reg = expr */
  CMM_S_STORE,     /* store: type[addr] = expr */
  CMM_S_CCALL,     /* ccall: (results) = call "conv" hints target(args) [never returns] */
  CMM_S_PRIMCALL,  /* prim: (results) = call MO_X [W](args) */
  /* terminators */
  CMM_S_GOTO,      /* goto_: target */
  CMM_S_IF,        /* if_: cond, likely, then, else */
  CMM_S_SWITCH,    /* sw */
  CMM_S_CALL,      /* call: target(regs) [returns to L,] args:, res:, upd: */
} CmmStmtKind;

static inline bool cmm_is_terminator(int kind) { return kind >= CMM_S_GOTO; }

typedef struct CmmUnwind { uint8_t reg; CmmExpr *expr; /* NULL: Nothing */ } CmmUnwind;
typedef struct CmmSwitchCase {
  uint32_t nvalues;
  CmmInt *values;
  CmmBlockRef target;
} CmmSwitchCase;

typedef struct CmmStmt CmmStmt;
struct CmmStmt {
  uint8_t kind; /* CmmStmtKind */
  CmmLoc loc;
  union {
    CmmSrcNote tick;
    struct { const char *text; } comment;
    struct { uint32_t n; CmmUnwind *regs; } unwind;
    struct { CmmExpr *lhs; CmmExpr *rhs; } assign; /* lhs: GLOBAL or LOCAL */
    struct { CmmExpr *addr, *rhs; CmmType type; bool unaligned; } store; /* I64^[e] = v; */
    struct {
      uint32_t nresults, nargs;
      CmmExpr **results;   /* LOCAL (or GLOBAL) registers */
      CmmExpr **args;
      CmmExpr *target;     /* label or expression */
      const char *conv;    /* "ccall", "stdcall", "prim", "capi" */
      uint32_t narg_hints, nres_hints;
      CmmHint *arg_hints, *res_hints;
      bool never_returns;
    } ccall;
    struct {
      uint32_t nresults, nargs;
      CmmExpr **results, **args;
      uint8_t op;          /* CmmPrimOpId */
      uint16_t width;      /* WIDTH, WIDTH_AMO */
      int64_t intarg;      /* INT */
      const char *amo;     /* WIDTH_AMO: AMO_Add, … */
      uint8_t order;       /* WIDTH_ORDER: CmmMemOrder */
    } prim;
    struct { CmmBlockRef target; } goto_;
    struct {
      CmmExpr *cond;
      int8_t likely;       /* -1 not printed, 0 False, 1 True */
      CmmBlockRef then_, else_;
    } if_;
    struct {
      CmmExpr *scrut;
      CmmInt lo, hi;       /* the range as printed */
      uint32_t ncases;
      CmmSwitchCase *cases;
      bool has_default;
      CmmBlockRef default_;
    } sw;
    struct {
      CmmExpr *target;     /* LABEL printed bare; anything else in parentheses */
      uint32_t nregs;
      uint8_t *regs;       /* CmmGlobalReg, the registers live into the target */
      bool returns;        /* false: a jump */
      CmmBlockRef returns_to;
      int64_t args, res, upd;
    } call;
  } u;
};

typedef struct CmmBlock {
  const char *label;
  CmmScope scope;
  uint32_t nstmts;
  CmmStmt *stmts;
  CmmLoc loc;
} CmmBlock;

/* One static datum of a data section or a raw info table. */
typedef enum {
  CMM_STATIC_LIT,    /* const lit; */
  CMM_STATIC_STRING, /* I8[] "…": bytes without the implicit NUL */
  CMM_STATIC_UNINIT, /* I8[N] */
} CmmStaticKind;
typedef struct CmmStatic {
  uint8_t kind;
  CmmLoc loc;
  CmmExpr *lit;          /* LIT: INT, FLOAT, LABEL or LABEL_DIFF */
  const uint8_t *bytes;  /* STRING */
  uint32_t len;          /* STRING: bytes; UNINIT: size */
} CmmStatic;

/* The symbolic `rep:` of an info table (-ddump-cmm). */
typedef enum { CMM_REP_HEAP, CMM_REP_STACK, CMM_REP_RTS } CmmRepKind;
typedef enum {
  CMM_CLOSURE_THUNK, CMM_CLOSURE_FUN, CMM_CLOSURE_CON, CMM_CLOSURE_THUNK_SELECTOR,
  CMM_CLOSURE_BLACKHOLE, CMM_CLOSURE_INDSTATIC,
} CmmClosureKind;
typedef struct CmmRep CmmRep;
struct CmmRep {
  uint8_t kind;           /* CmmRepKind */
  /* HEAP */
  bool is_static;
  uint32_t ptrs, nonptrs;
  uint8_t closure;        /* CmmClosureKind */
  uint32_t arity;         /* FUN */
  bool arg_gen;           /* FUN: ArgGen [bits] rather than ArgSpec n */
  uint32_t arg_spec;      /* FUN, ArgSpec */
  uint32_t tag;           /* CON */
  const char *descr;      /* CON */
  uint32_t selector;      /* THUNK_SELECTOR */
  /* STACK and FUN/ArgGen: the bitmap, True = non-pointer */
  uint32_t nbits;
  bool *bits;
  /* RTS */
  uint32_t rts_type;
  CmmRep *inner;
};

typedef struct CmmInfoTable {
  CmmBlockRef block;      /* the block it belongs to */
  const char *label;
  CmmLoc loc;
  /* symbolic (-ddump-cmm) */
  CmmRep rep;
  const char *srt;        /* NULL: Nothing */
  /* raw (-ddump-cmm-raw) */
  uint32_t nstatics;
  CmmStatic *statics;
} CmmInfoTable;

typedef struct CmmProc {
  const char *label;
  uint32_t nlive;
  uint8_t *live;          /* live global registers on entry, as printed */
  bool raw;               /* info tables as words */
  uint32_t ntables;
  CmmInfoTable *tables;
  bool has_arg_space;
  int64_t arg_space;      /* symbolic only */
  uint32_t nblocks;
  CmmBlock *blocks;
  CmmLoc loc;
} CmmProc;

typedef struct CmmData {
  const char *section;    /* data, cstring, relreadonly, … */
  const char *label;
  uint32_t nstatics;
  CmmStatic *statics;
  CmmLoc loc;
} CmmData;

typedef enum { CMM_DECL_PROC, CMM_DECL_DATA } CmmDeclKind;
typedef struct CmmDecl {
  uint8_t kind;
  union { CmmProc proc; CmmData data; } u;
} CmmDecl;

/* One dump section: a title, a timestamp, and a group of declarations in [ … ]. */
typedef struct CmmGroup {
  const char *title;      /* NULL: no `==== title ====` line */
  const char *timestamp;  /* NULL: none */
  uint32_t ndecls;
  CmmDecl *decls;
  CmmLoc loc;
} CmmGroup;

/* A row of the `symbols` table that strobe's GHC plugin writes after the groups: a
 * label as the text spells it, the symbol GHC's object gives it (GHC's assembly
 * spelling, `.L…` for an assembler-local one), and whether it is global. */
typedef struct CmmSymbol {
  const char *label, *symbol;
  bool global;
  CmmLoc loc;
} CmmSymbol;

typedef struct CmmFile {
  const CmmSource *src;
  Arena *arena;
  uint32_t ngroups;
  CmmGroup *groups;
  uint32_t nsymbols;      /* the `symbols` table; 0 in GHC's own dumps */
  CmmSymbol *symbols;
} CmmFile;

/* ---- lex.c -------------------------------------------------------------------- */

typedef enum {
  TK_EOF, TK_TITLE, TK_NAME, TK_STRING, TK_COMMENT,
  TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE,
  TK_COMMA, TK_SEMI, TK_ERROR,
} CmmTokKind;

/* NAME is a maximal run of label characters: labels, registers, numbers and operators
 * alike (binary operators are always surrounded by spaces); the parser classifies it.
 * TITLE is a `==== title ====` line (p/len: the title); COMMENT is `//` to the end of
 * the line (p/len: after the `//`); STRING includes its quotes. */
typedef struct CmmToken {
  uint8_t kind;   /* CmmTokKind */
  CmmLoc loc;
  uint32_t len;
  const char *p;
} CmmToken;

typedef struct CmmLexer {
  const CmmSource *src;
  const char *p, *end;
  Diag *d;
} CmmLexer;

void cmm_lex_init(CmmLexer *lx, const CmmSource *src, Diag *d);
CmmToken cmm_lex_next(CmmLexer *lx); /* TK_ERROR: already reported */
bool cmm_is_label_char(int c);
/* The rest of the current line, without its newline; the lexer moves past it. */
CmmToken cmm_lex_line(CmmLexer *lx);
/* Decodes a STRING token's Haskell escapes; false (and a diagnostic) if malformed. */
bool cmm_decode_string(const CmmSource *src, CmmToken t, Arena *a, Diag *d,
                       uint8_t **bytes, uint32_t *len);
/* Prints bytes as Haskell's `show` prints a String. */
void cmm_print_string(FILE *out, const uint8_t *bytes, uint32_t len);

/* ---- parse.c (parse_expr.c, parse_stmt.c, parse_decl.c) ------------------------- */

/* Parses a whole dump.  On error: diagnostics in d, and NULL.  The file's arena is
 * owned by the result (cmm_file_free). */
CmmFile *cmm_parse(const CmmSource *src, Diag *d);
void cmm_file_free(CmmFile *f);
/* Parses one expression (tests and tools). Arena-allocated; NULL on error. */
CmmExpr *cmm_parse_expr(const CmmSource *src, Arena *a, Diag *d);

/* ---- types.c ------------------------------------------------------------------ */

/* Infers every expression's type and every infix MachOp's width; reports mismatched
 * widths as errors.  Returns false on error. */
bool cmm_infer_types(CmmFile *f, Diag *d);
bool cmm_infer_expr(const CmmSource *src, CmmExpr *e, Diag *d);
const char *cmm_type_name(CmmType t); /* "I64", "P64", "F32" (static storage) */

/* ---- print.c ------------------------------------------------------------------ */

void cmm_print_file(FILE *out, const CmmFile *f);
void cmm_print_expr(FILE *out, const CmmExpr *e);
void cmm_print_scope(FILE *out, const CmmScope *s);
void cmm_print_srcnote(FILE *out, const CmmSrcNote *n); /* src<file:span> */

#endif
