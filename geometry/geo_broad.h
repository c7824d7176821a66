// Broad phase across the bodies of a scene: sweep and prune on world axis-aligned boxes,
// each inflated by a margin (the standoff), so only near body pairs reach the hierarchy.
// The sweep order along x is kept between calls and repaired by insertion sort, which is
// O(n) when bodies move a little between calls (temporal coherence). Allocation-free after
// geo_broad_new. Output pairs (i < j) in increasing (i, j) order: deterministic.
// A geo_broad is used by one thread at a time.
#ifndef GEO_BROAD_H
#define GEO_BROAD_H

#include <stddef.h>

#include "geo_bvh.h"
#include "geo_query.h"

typedef struct geo_broad geo_broad;

// A broad phase for nbody bodies (ids 0..nbody-1, all boxes unset). Returns it (caller
// owns; geo_broad_destroy) or NULL + message in err (nullable).
geo_broad *geo_broad_new(int nbody, char *err, size_t err_sz);
// Free and set *bp = NULL. NULL-safe.
void geo_broad_destroy(geo_broad **bp);

// Set body i's world box lo <= hi [m]. A body whose box was never set takes no part.
// Returns GEO_QOK or GEO_QEINVAL (bad id, non-finite or lo > hi).
int geo_broad_set_box(geo_broad *bp, int i, const double lo[3], const double hi[3]);
// Mark body i static (1) or moving (0, the default): two static bodies are never paired.
int geo_broad_set_static(geo_broad *bp, int i, int is_static);
// World box of hierarchy b at pose x (from its root oriented box; contains every vertex).
void geo_broad_bvh_box(const geo_bvh *b, const geo_pose *x, double lo[3], double hi[3]);

// Every pair i < j whose boxes, each grown by margin [m] (>= 0) on every side, overlap
// (touching counts), in pairs[2k], pairs[2k+1], k < *npair, sorted by (i, j); pairs holds
// cap pairs (2 cap ints, caller owns). Returns GEO_QOK, GEO_QEINVAL, or GEO_QELIMIT when
// more than cap pairs exist (*npair then holds the number needed; pairs is unspecified).
int geo_broad_pairs(geo_broad *bp, double margin, int *pairs, int cap, int *npair);

#endif
