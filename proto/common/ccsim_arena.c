#include "ccsim_arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ccsim_arena_block {
  ccsim_arena_block *prev;
  size_t size;  // usable bytes in data
  size_t used;
  alignas(max_align_t) unsigned char data[];
};

void ccsim_arena_init(ccsim_arena *a, size_t block_size, size_t limit) {
  a->head = NULL;
  a->block_size = block_size ? block_size : 64 * 1024;
  a->limit = limit;
  a->total = 0;
  a->over_limit = 0;
  a->out_of_memory = 0;
}

void *ccsim_arena_alloc(ccsim_arena *a, size_t n) {
  const size_t align = alignof(max_align_t);
  size_t need = (n + align - 1) & ~(align - 1);
  if (need < n) {
    return NULL;  // overflow
  }
  if (need > SIZE_MAX - sizeof(ccsim_arena_block)) {
    return NULL;  // no block header fits beside it
  }
  ccsim_arena_block *b = a->head;
  if (!b || b->size - b->used < need) {
    size_t size = need > a->block_size ? need : a->block_size;
    if (a->limit && (size > a->limit || a->total > a->limit - size)) {
      a->over_limit = 1;
      return NULL;
    }
    b = malloc(sizeof *b + size);
    if (!b) {
      a->out_of_memory = 1;
      return NULL;
    }
    b->prev = a->head;
    b->size = size;
    b->used = 0;
    a->head = b;
    a->total += size;
  }
  void *p = b->data + b->used;
  b->used += need;
  memset(p, 0, n);
  return p;
}

char *ccsim_arena_strdup(ccsim_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = ccsim_arena_alloc(a, n);
  if (p) {
    memcpy(p, s, n);
  }
  return p;
}

void ccsim_arena_reset(ccsim_arena *a) {
  a->over_limit = 0;
  a->out_of_memory = 0;
  if (!a->head) {
    return;
  }
  ccsim_arena_block *b = a->head->prev;
  while (b) {
    ccsim_arena_block *prev = b->prev;
    a->total -= b->size;
    free(b);
    b = prev;
  }
  a->head->prev = NULL;
  a->head->used = 0;
}

void ccsim_arena_fini(ccsim_arena *a) {
  ccsim_arena_block *b = a->head;
  while (b) {
    ccsim_arena_block *prev = b->prev;
    free(b);
    b = prev;
  }
  a->head = NULL;
  a->total = 0;
}
