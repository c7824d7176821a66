// The cache of compiled models shared by sessions of the same scene (srv_models.h).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccsim_pb.h"
#include "srv_internal.h"
#include "srv_models.h"
#include "wire.h"

struct srv_model {
  srv_model *prev, *next;  // in the cache's list, most recently used first (not when private)
  srv_models *cache;       // the cache it belongs to (borrowed)
  uint64_t hash;           // digest (64 bit) of the packed scene
  size_t scene_len;        // packed scene [bytes]
  size_t bytes;            // estimated memory: scene and compiled model [bytes]
  int refs;                // sessions holding it, and creates waiting for its compile
  int building;            // its compile runs now (creates of the same scene wait on cv)
  int failed;              // the compile failed: code and err say why; out of the list
  int listed;              // in the list (a private model, after a collision, is not)
  int code;
  char err[1024];           // a failed compile's message (key path first)
  sim_model *m;            // owned
  Ccsim__Scene *scene;     // owned (protobuf-c's allocator)
};

struct srv_models {
  pthread_mutex_t mu;  // a leaf lock: guards everything below and every model's list fields
  pthread_cond_t cv;   // a compile ended
  srv_model *head, *tail;
  size_t limit;
  srv_models_stat st;
};

// A 64-bit digest of p[0, n): four lanes of multiply-xorshift over 8-byte words (a few
// times faster than FNV-1a's byte at a time on a scene of tens of megabytes), folded with
// splitmix64's finaliser. It only picks the candidate: every byte is compared on a hit.
static uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t digest(const uint8_t *p, size_t n) {
  uint64_t lane[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                      0x27d4eb2f165667c5ull};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; k++) {
      uint64_t w;
      memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * 0xff51afd7ed558ccdull;
      lane[k] ^= lane[k] >> 29;
    }
  }
  uint64_t h = (uint64_t)n;
  for (int k = 0; k < 4; k++) h = mix(h ^ lane[k]);
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return mix(h);
}

// what a model holds, from the sizes of its arrays (geo_mesh.h, geo_bvh.h): enough to
// budget the cache, not an exact count of the allocator's bytes
static size_t model_bytes(const sim_model *m) {
  size_t n = sizeof *m + (size_t)m->nbody * (SIM_NAME_MAX + 64 * sizeof(double));
  for (int b = 0; b < m->nbody; b++) {
    const geo_mesh *g = m->mesh[b];
    if (g) {
      size_t v = (size_t)g->nvert, t = (size_t)g->ntri, e = (size_t)g->nedge;
      n += sizeof *g + v * (3 * sizeof(double) + 2 * sizeof(int)) +
           t * (6 * sizeof(int) + 4 * sizeof(double) + 6 * sizeof(int)) + e * 4 * sizeof(int);
    }
    const geo_bvh *h = m->bvh[b];
    if (h) {
      size_t v = (size_t)h->nvert, t = (size_t)h->ntri;
      n += sizeof *h + (size_t)h->nnode * sizeof *h->node + (size_t)h->nhull_vert * sizeof(int) +
           t * (sizeof(int) + 6 * sizeof(int) + 9 * sizeof(double) + sizeof *h->tri_data) +
           v * 3 * sizeof(double);
    }
    n += (size_t)m->path_n[b] * SIM_PATH_STRIDE * sizeof(double);
  }
  return n;
}

srv_models *srv_models_new(size_t limit_bytes) {
  srv_models *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->limit = limit_bytes;
  c->st.limit = limit_bytes;
  return c;
}

static void model_free(srv_model *r) {
  sim_model_destroy(&r->m);
  if (r->scene) ccsim__scene__free_unpacked(r->scene, NULL);
  free(r);
}

static void unlink_model(srv_models *c, srv_model *r) {
  if (!r->listed) return;
  if (r->prev) r->prev->next = r->next; else c->head = r->next;
  if (r->next) r->next->prev = r->prev; else c->tail = r->prev;
  r->prev = r->next = NULL;
  r->listed = 0;
  c->st.models--;
  c->st.bytes -= r->bytes;
}

static void push_front(srv_models *c, srv_model *r) {
  r->prev = NULL;
  r->next = c->head;
  if (c->head) c->head->prev = r; else c->tail = r;
  c->head = r;
  r->listed = 1;
  c->st.models++;
  c->st.bytes += r->bytes;
}

// Under mu: take unused models off the list, least recently used first, until the unused
// ones fit the budget; they are chained by next into *gone for the caller to free after
// unlocking (freeing a large model takes milliseconds).
static void evict(srv_models *c, srv_model **gone) {
  size_t unused = 0;
  for (srv_model *r = c->head; r; r = r->next) {
    if (r->refs == 0 && !r->building) unused += r->bytes;
  }
  for (srv_model *r = c->tail; r && unused > c->limit;) {
    srv_model *prev = r->prev;
    if (r->refs == 0 && !r->building) {
      unused -= r->bytes;
      unlink_model(c, r);
      c->st.evictions++;
      r->next = *gone;
      *gone = r;
    }
    r = prev;
  }
}

static void free_chain(srv_model *r) {
  while (r) {
    srv_model *next = r->next;
    model_free(r);
    r = next;
  }
}

void srv_models_destroy(srv_models **pc) {
  if (!pc || !*pc) return;
  srv_models *c = *pc;
  srv_model *r = c->head;
  while (r) {
    srv_model *next = r->next;
    model_free(r);
    r = next;
  }
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  free(c);
  *pc = NULL;
}

// Compile r's scene from its packed bytes (r->building, one reference held): unpacking the
// bytes gives the copy the model keeps for checkpoints, as ccsim_pb_copy would.
static void build(srv_model *r, const uint8_t *bytes, size_t len) {
  r->scene = ccsim__scene__unpack(NULL, len, bytes);
  if (!r->scene) {
    // protobuf-c reads an unknown field numbered 0 written in two bytes, writes it back in
    // one and then refuses it (ccsim_pb_copy); memory runs out in the packing as a rule
    r->code = CCSIM_EINVAL;
    snprintf(r->err, sizeof r->err,
             "the scene does not parse back once written (an unknown field numbered 0?)");
    return;
  }
  r->m = wire_scene_compile(r->scene, r->err, sizeof r->err);
  if (!r->m) {
    r->code = CCSIM_EINVAL;
    return;
  }
  r->bytes = len + model_bytes(r->m);
}

static srv_model *model_new(srv_models *c, uint64_t hash, size_t len) {
  srv_model *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->cache = c;
  r->hash = hash;
  r->scene_len = len;
  r->refs = 1;
  r->building = 1;
  return r;
}

// 1 when r's scene packs to bytes[0, len)
static int same_bytes(const srv_model *r, const uint8_t *bytes, size_t len) {
  size_t n = 0;
  uint8_t *mine = ccsim_pb_pack_new(&r->scene->base, 0, &n);
  int same = mine && n == len && memcmp(mine, bytes, len) == 0;
  free(mine);
  return same;
}

srv_model *srv_models_acquire(srv_models *c, const Ccsim__Scene *scene, int *code, char *err,
                              size_t err_sz) {
  *code = CCSIM_ENOMEM;
  size_t len = 0;
  uint8_t *bytes = ccsim_pb_pack_new(&scene->base, 0, &len);
  if (!bytes) {
    ccsim_set_err(err, err_sz, "out of memory for the scene");
    return NULL;
  }
  uint64_t hash = digest(bytes, len);
  srv_model *r = NULL, *gone = NULL;
  int private = 0;  // a digest matched other bytes: compile apart, share with nobody
  pthread_mutex_lock(&c->mu);
  for (r = c->head; r; r = r->next) {
    if (r->hash == hash && r->scene_len == len) break;
  }
  if (r) {
    // a hit: wait for its compile when it is running, then compare every byte
    r->refs++;
    while (r->building) pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    int same = !r->failed && same_bytes(r, bytes, len);
    pthread_mutex_lock(&c->mu);
    if (r->failed) {
      *code = r->code;
      ccsim_set_err(err, err_sz, "%s", r->err);
      c->st.hits++;
      int last = --r->refs == 0;
      pthread_mutex_unlock(&c->mu);
      if (last) model_free(r);
      free(bytes);
      return NULL;
    }
    if (same) {
      c->st.hits++;
      if (r != c->head) {
        unlink_model(c, r);
        push_front(c, r);
      }
      pthread_mutex_unlock(&c->mu);
      free(bytes);
      *code = CCSIM_OK;
      return r;
    }
    c->st.collisions++;
    r->refs--;
    evict(c, &gone);
    private = 1;
  }
  c->st.misses++;
  r = model_new(c, hash, len);
  if (r && !private) push_front(c, r);  // bytes 0 until built: others find it and wait
  pthread_mutex_unlock(&c->mu);
  free_chain(gone);
  gone = NULL;
  if (!r) {
    free(bytes);
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  build(r, bytes, len);
  free(bytes);
  pthread_mutex_lock(&c->mu);
  r->building = 0;
  if (r->m) {
    if (r->listed) {
      c->st.bytes += r->bytes;  // it was listed with 0 bytes
    }
    evict(c, &gone);
  } else {
    r->failed = 1;
    unlink_model(c, r);
  }
  // what the caller is told is read under mu: once it lets go of a failed model, a create
  // that waited for this compile may drop the last reference and free it
  int ok = r->m != NULL;
  if (!ok) {
    *code = r->code;
    ccsim_set_err(err, err_sz, "%s", r->err);
  }
  int last = !ok && --r->refs == 0;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  free_chain(gone);
  if (ok) {
    *code = CCSIM_OK;
    return r;
  }
  if (last) model_free(r);
  return NULL;
}

void srv_model_release(srv_model **pr) {
  if (!pr || !*pr) return;
  srv_model *r = *pr;
  *pr = NULL;
  srv_models *c = r->cache;
  srv_model *gone = NULL;
  pthread_mutex_lock(&c->mu);
  int last = --r->refs == 0;
  if (last && !r->listed) {
    gone = r;  // a private model (after a collision): nobody else can find it
    r->next = NULL;
  } else if (last) {
    evict(c, &gone);
  }
  pthread_mutex_unlock(&c->mu);
  free_chain(gone);
}

const sim_model *srv_model_sim(const srv_model *r) { return r->m; }

const Ccsim__Scene *srv_model_scene(const srv_model *r) { return r->scene; }

void srv_models_stats(srv_models *c, srv_models_stat *out) {
  pthread_mutex_lock(&c->mu);
  *out = c->st;
  out->unused = 0;
  for (srv_model *r = c->head; r; r = r->next) {
    if (r->refs == 0 && !r->building) out->unused++;
  }
  pthread_mutex_unlock(&c->mu);
}

srv_models *srv_models_of(struct srv *s) { return s->models; }
