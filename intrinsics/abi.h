/* abi.h — what compiled code and the runtime share, in C: the tick descriptor the
 * lowering emits, the entry and the thread's head that the inline fast paths change,
 * and the constants their fields hold (docs/design.md, "The ABI").
 *
 * The records expand the tables of tickdesc.def and registry.def, every offset and
 * size pinned by _Static_assert; nothing else defines them.  Included by:
 *   rts/strobe/dynstack.h   the runtime, which says what each record is for and the
 *                           rules they keep, and adds the records of the registry
 *   lowering/ (lower_internal.h), plugin/instrument.c   the compiler, which reads no
 *                           runtime header
 * The LLVM types of the same records are in llvm_types.h.  x86-64 (LP64) only. */
#ifndef STROBE_ABI_H
#define STROBE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define STROBE_STATIC_ASSERT static_assert
#define STROBE_THREAD_LOCAL thread_local
#else
#define STROBE_STATIC_ASSERT _Static_assert
#define STROBE_THREAD_LOCAL _Thread_local
#endif

/* The layouts are those of registry.def and tickdesc.def: a struct's fields from its
 * rows (STROBE_MEMBER), each offset pinned (STROBE_PIN). */
#include "registry.def"
#define STROBE_MEMBER(type, name, ctype, ...) ctype name;
#define STROBE_PIN(type, name, ctype, ...)                                                \
  STROBE_STATIC_ASSERT(offsetof(type, name) == STROBE_OFFSET_(__VA_ARGS__, 0),            \
                       #type "." #name " is where intrinsics/registry.def puts it");
#define STROBE_OFFSET_(offset, ...) (offset) /* a row's OFFSET (its LLVM column aside) */

typedef struct StrobeThreadStack StrobeThreadStack; /* the runtime's (strobe/dynstack.h) */

/* ---- the tick descriptor (strobe/dynstack.h §1) ---------------------------------

   One per Haskell function and source note, emitted by the lowering as a constant
   (the LLVM struct of llvm_types.h, `align 8`) in the section STROBE_TICK_SECTION,
   which MUST hold descriptors only, each 8-aligned (56 bytes, so they follow each
   other without padding). */

#define STROBE_TICK_SECTION "strobe_ticks"

typedef enum StrobeTickKind {
  /* 0 is no kind: zero-filled memory is not a descriptor */
  STROBE_TICK_SOURCE_NOTE = 1, /* a `//tick src<file:span>`: the full span is valid */
  STROBE_TICK_ENTRY = 2,       /* reserved: the entry of a function with no source note;
                                  the span is all 0, file may be NULL */
  STROBE_TICK_DROPPED = 3,     /* strobe_dynstack_dropped_desc: the marker of the
                                  entries a full array dropped (Note [The entries and
                                  their sentinels]); no span, no file */
} StrobeTickKind;

enum {
  /* Every descriptor of the module with this one's function and file whose span
     strictly contains this one's is on its parent chain (they nest, as the notes of a
     Haskell binding do): the inline tick may then tell an enclosing entry from a
     sibling by the chain alone (strobe/dynstack.h §4). */
  STROBE_DESC_NESTED = 1u << 0,
};

/* The fields, one row each, are those of tickdesc.def (with what each holds). */
typedef struct StrobeTickDesc {
#define STROBE_DESC_FIELD(id, name, ctype, llvm, offset) ctype name;
#include "tickdesc.def"
#undef STROBE_DESC_FIELD
} StrobeTickDesc;

#define STROBE_DESC_FIELD(id, name, ctype, llvm, offset)                                 \
  STROBE_STATIC_ASSERT(offsetof(StrobeTickDesc, name) == (offset), "StrobeTickDesc." #name);
#include "tickdesc.def"
#undef STROBE_DESC_FIELD
STROBE_STATIC_ASSERT(sizeof(StrobeTickDesc) == 56, "StrobeTickDesc is 56 bytes");

/* ---- an entry of the dynamic stack (strobe/dynstack.h §2) ---------------------- */

enum {
  STROBE_ENTRY_TAIL = 1u << 0, /* this entry's expression tail-called the one above it */
};

typedef struct StrobeEntry {
  STROBE_ENTRY_FIELDS(STROBE_MEMBER)
} StrobeEntry;

STROBE_ENTRY_FIELDS(STROBE_PIN)
STROBE_STATIC_ASSERT(sizeof(StrobeEntry) == 32, "StrobeEntry is 32 bytes");

/* ---- the thread's head (strobe/dynstack.h §3) ---------------------------------- */

/* The thread-local variable the inline fast paths reach it by; the plugin declares it
 * `@strobe_dynstack_head = external thread_local global`. */
#define STROBE_DYNSTACK_HEAD_NAME "strobe_dynstack_head"

typedef struct StrobeDynStackHead {
  STROBE_DYNSTACK_HEAD_FIELDS(STROBE_MEMBER)
} StrobeDynStackHead;

STROBE_DYNSTACK_HEAD_FIELDS(STROBE_PIN)
STROBE_STATIC_ASSERT(sizeof(StrobeDynStackHead) == 40, "StrobeDynStackHead is 40 bytes");

#endif
