// A bump allocator shared by the service and the client: building a protobuf-c message
// tree (a reply, a scene) takes many small allocations that all die together.
// Not thread-safe; one arena per thread or per object.
#ifndef CCSIM_ARENA_H
#define CCSIM_ARENA_H

#include <stddef.h>

typedef struct ccsim_arena_block ccsim_arena_block;

typedef struct ccsim_arena {
  ccsim_arena_block *head;  // current block (owned); older blocks chain behind it
  size_t block_size;        // size of new blocks [bytes]
  size_t limit;             // total bytes the arena may hold (0: unlimited)
  size_t total;             // bytes held now
  int over_limit;           // an allocation was refused by limit (until reset)
  int out_of_memory;        // an allocation failed for want of memory (until reset)
} ccsim_arena;

// Prepare an empty arena; nothing is allocated until the first ccsim_arena_alloc.
void ccsim_arena_init(ccsim_arena *a, size_t block_size, size_t limit);

// Zeroed memory of n bytes, aligned for any type, valid until reset/fini; NULL when out
// of memory or past the limit.
void *ccsim_arena_alloc(ccsim_arena *a, size_t n);

// Copy of a NUL-terminated string into the arena (NULL on failure).
char *ccsim_arena_strdup(ccsim_arena *a, const char *s);

// Forget everything allocated; keeps the newest block for reuse.
void ccsim_arena_reset(ccsim_arena *a);

// Free all blocks. The arena may be initialised again afterwards.
void ccsim_arena_fini(ccsim_arena *a);

#endif
