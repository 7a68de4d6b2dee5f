/* arena.c — memory pools.  Everything a parsed file owns is freed together. */
#include "cmm.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct Chunk {
  struct Chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
  size_t total;
};

enum { CHUNK_SIZE = 64 * 1024 };

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) internal_error("out of memory (%zu bytes)", n);
  return p;
}

Arena *arena_new(void) {
  Arena *a = xmalloc(sizeof *a);
  a->head = NULL;
  a->total = 0;
  return a;
}

void arena_free(Arena *a) {
  if (!a) return;
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a);
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  Chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
    c = xmalloc(sizeof *c + cap);
    c->used = 0;
    c->size = cap;
    /* A big private chunk goes second, so the current chunk keeps filling. */
    if (a->head && cap != CHUNK_SIZE) {
      c->next = a->head->next;
      a->head->next = c;
    } else {
      c->next = a->head;
      a->head = c;
    }
  }
  void *p = c->data + c->used;
  c->used += size;
  a->total += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

size_t arena_bytes(const Arena *a) { return a->total; }

void vec_grow(Arena *a, void **v, uint32_t *cap, size_t elem) {
  uint32_t ncap = *cap ? *cap * 2 : 8;
  void *nv = arena_alloc(a, ncap * elem);
  if (*cap) memcpy(nv, *v, *cap * elem);
  *v = nv;
  *cap = ncap;
}

/* ---- StrMap --------------------------------------------------------------------- */

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

void strmap_init(StrMap *m, Arena *a, uint32_t expected) {
  uint32_t cap = 16;
  while (cap < expected * 2) cap *= 2;
  m->cap = cap;
  m->n = 0;
  m->keys = arena_alloc(a, cap * sizeof *m->keys);
  m->vals = arena_alloc(a, cap * sizeof *m->vals);
}

static uint32_t slot(const StrMap *m, const char *key) {
  uint32_t i = hash_str(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

bool strmap_get(const StrMap *m, const char *key, uint32_t *val) {
  if (!m->cap) return false;
  uint32_t i = slot(m, key);
  if (!m->keys[i]) return false;
  if (val) *val = m->vals[i];
  return true;
}

bool strmap_put(StrMap *m, Arena *a, const char *key, uint32_t val, uint32_t *old_val) {
  if (!m->cap) strmap_init(m, a, 8);
  uint32_t i = slot(m, key);
  if (m->keys[i]) {
    if (old_val) *old_val = m->vals[i];
    m->vals[i] = val;
    return false;
  }
  m->keys[i] = key;
  m->vals[i] = val;
  if (++m->n * 2 > m->cap) { /* rehash into twice the room */
    StrMap bigger;
    strmap_init(&bigger, a, m->cap);
    for (uint32_t j = 0; j < m->cap; j++)
      if (m->keys[j]) {
        uint32_t k = slot(&bigger, m->keys[j]);
        bigger.keys[k] = m->keys[j];
        bigger.vals[k] = m->vals[j];
      }
    bigger.n = m->n;
    *m = bigger;
  }
  return true;
}
