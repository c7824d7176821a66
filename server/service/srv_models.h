// The service's cache of compiled models: sessions of the same scene share one immutable,
// reference-counted sim_model (meshes, hierarchies) and the decoded scene their checkpoints
// carry, so a second session of a large scene neither compiles it again nor holds its meshes
// twice. Keyed by the packed Scene's bytes: a 64-bit digest finds the candidate and a
// full comparison of the bytes confirms it, so a collision never shares the wrong model.
// Models no session uses stay cached up to a byte budget and are evicted least recently used
// first; a model in use is never evicted. Thread-safe (one leaf mutex; compiles run outside it,
// and a second create of a scene being compiled waits for that compile instead of repeating it).
#ifndef SRV_MODELS_H
#define SRV_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "ccsim.pb-c.h"
#include "sim_model.h"


typedef struct srv_models srv_models;
typedef struct srv_model srv_model;  // one shared compiled scene; a session holds a reference

// Counters of a cache (a consistent copy taken under its lock).
typedef struct srv_models_stat {
  uint64_t hits;       // acquires answered by a cached (or being compiled) model
  uint64_t misses;     // acquires that compiled (including failed compiles)
  uint64_t evictions;  // unused models freed to stay within the budget
  uint64_t collisions; // digests that matched with other bytes (compiled apart, never shared)
  int models;          // models held (in use or not)
  int unused;          // of them, held by no session
  size_t bytes;        // estimated memory of the models held (scene and compiled) [bytes]
  size_t limit;        // the budget for models held by no session [bytes]
} srv_models_stat;

// A cache keeping unused models up to limit_bytes (0: free each as its last session goes).
// NULL when out of memory. Free with srv_models_destroy once every reference is released.
srv_models *srv_models_new(size_t limit_bytes);

// Free the cache and every model it keeps; set *c = NULL. NULL-safe. No reference may be held.
void srv_models_destroy(srv_models **c);

// A reference to the compiled model of scene (borrowed for the call), compiling it unless a
// model of the same bytes is cached. NULL with *code (CCSIM_EINVAL, CCSIM_ENOMEM) and a
// message naming the field in err when the scene does not compile. Thread-safe; release with
// srv_model_release.
srv_model *srv_models_acquire(srv_models *c, const Ccsim__Scene *scene, int *code, char *err,
                              size_t err_sz);

// Drop a reference and set *r = NULL (NULL-safe). The last one leaves the model cached as
// unused, or frees it when the budget is exceeded. Thread-safe.
void srv_model_release(srv_model **r);

// The compiled model (borrowed; immutable; valid while the reference is held).
const sim_model *srv_model_sim(const srv_model *r);

// The decoded scene it was compiled from (borrowed; immutable; valid while the reference is
// held): what a checkpoint of a session of it carries.
const Ccsim__Scene *srv_model_scene(const srv_model *r);

// The cache's counters into *out. Thread-safe.
void srv_models_stats(srv_models *c, srv_models_stat *out);

// The model cache of a service (borrowed; valid while s lives): for tests and tuning.
srv_models *srv_models_of(struct srv *s);

#endif
