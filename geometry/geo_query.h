// Queries between two placed meshes (their hierarchies, geo_bvh.h): minimum distance,
// proximity within a standoff, interference. Allocation-free: scratch lives in a
// caller-owned workspace created once (geo_query_ws_new); results go to caller arrays
// with a capacity, and running out of room is GEO_QELIMIT, never a silent truncation.
//
// Frames. A pose maps body to world: x_world = R(q) x_body + p. Internally everything is
// computed in B's body frame (A's vertices are moved there lazily); results are world.
//
// Leaf pairs. Leaves are triangles. The distance of a leaf pair is the exact Euclidean
// distance between the two closed triangles (0 when they touch or intersect). Each
// witness point is named by the feature it lies on, read from its barycentric coordinates
// in its triangle: a coordinate below GEO_FEAT_BARY_TOL counts as zero; one non-zero
// coordinate -> that vertex, two -> the edge between them, three -> the face (the
// triangle). Feature ids are the mesh's vertex / edge / triangle ids (geo_mesh.h).
// The reported points are then the canonical closest points of that feature pair (vertex-
// vertex, vertex-edge, vertex-face, non-parallel edge-edge; each edge taken from its lower
// vertex id), and dist = |pb - pa| of those, so one feature pair always gives the same bits
// whichever leaf pair or code path found it. Touching pairs and parallel edges keep the
// kernel's points.
//
// Parallel faces. When a leaf pair's triangles are parallel up to the workspace's angle
// tolerance (default GEO_PARALLEL_ANGLE; |n_a . n_b| >= cos(angle)) and their shadows
// along the facets' mean axis m (n_a - n_b normalised when they face each other, else
// n_a + n_b) overlap, the pair yields every corner of that overlap polygon whose distance
// is below the standoff, instead of one closest pair; those pairs carry
// GEO_PAIR_PARALLEL. Corners are vertices of either triangle or crossings of their edges,
// so their features follow from the same barycentric rule. A vertex over a face takes the
// canonical points of that pair (along the face's normal); edge crossings keep the
// corner's points on A's and B's planes along m (the common perpendicular of two edges
// crossing at a small angle tilts far from both faces).
// Swapping A and B swaps the points and flips the normal (up to rounding).
//
// Merge rule (proximity). Raw pairs (one per non-parallel leaf pair within the standoff,
// one per qualifying corner for parallel ones) are merged by feature identity: two raw
// pairs with the same (fa.type, fa.id, fb.type, fb.id) are one pair. The one kept has the
// smallest (dist, tri_a, tri_b); with the flag bits of all merged pairs OR-ed. Example: a
// vertex of A closest to a face of B is reached from every triangle of A around that
// vertex: one pair. Output order: increasing (fa.type, fa.id, fb.type, fb.id), so the same
// input gives the same pairs in the same order, with or without a cache.
//
// Thread safety: hierarchies are shared read-only; a workspace and a cache are used by
// one thread at a time.
#ifndef GEO_QUERY_H
#define GEO_QUERY_H

#include <stddef.h>

#include "geo_bvh.h"
#include "geo_mesh.h"

// A rigid placement: body -> world.
typedef struct geo_pose {
  double p[3];  // position of the body origin in the world [m]
  double q[4];  // unit quaternion (w, x, y, z), body -> world rotation
} geo_pose;

// Return codes of the query functions (the same values as CCSIM_OK / CCSIM_EINVAL /
// CCSIM_ENOMEM / CCSIM_ELIMIT).
enum {
  GEO_QOK = 0,       // success
  GEO_QEINVAL = -1,  // bad argument (NULL, non-finite pose, negative standoff, workspace
                     // too small for these hierarchies)
  GEO_QENOMEM = -2,  // out of memory (constructors only)
  GEO_QELIMIT = -3   // an output or scratch capacity was exceeded; counts say how much
};

#define GEO_FEAT_BARY_TOL 1e-9     // barycentric coordinate treated as zero (feature naming)
#define GEO_PARALLEL_ANGLE 1e-3    // [rad] default angle below which two triangles are parallel

#define GEO_PAIR_TOUCH 1     // dist == 0: the triangles touch or intersect
#define GEO_PAIR_PARALLEL 2  // a corner of a parallel-face overlap polygon

// One witness pair, world frame.
typedef struct geo_pair {
  double pa[3];       // witness point on A [m]
  double pb[3];       // witness point on B [m]
  double dist;        // |pb - pa| [m]
  double normal[3];   // unit, from A towards B: (pb - pa) / dist; when dist is 0 (or below
                      // 1e-12 of the meshes' size): the face's normal of a pair with one
                      // face (-n_b or +n_a), else n_a - n_b normalised (the triangles'
                      // normals), or -n_b when those face the same way
  geo_feature fa, fb; // features of pa on A and pb on B (mesh ids)
  int tri_a, tri_b;   // the leaf pair (triangle ids) the pair came from
  int flags;          // GEO_PAIR_* bits
} geo_pair;

// Statistics of the last proximity query.
typedef struct geo_prox_info {
  int n;            // pairs after merging (the needed capacity when GEO_QELIMIT)
  int n_raw;        // raw pairs before merging
  int n_leaf;       // leaf pairs whose exact distance was computed
  int n_node;       // node pairs tested
  int cache_hit;    // 1 when the candidate list of the cache answered the query
} geo_prox_info;

typedef struct geo_query_ws geo_query_ws;

// Workspace for queries between hierarchies no larger than a and b (either order): the
// first hierarchy of a query must have at most max(a, b) vertices and nodes (nodes =
// 2 ntri - 1), so a workspace made from the scene's largest mesh serves every pair.
// raw_cap bounds the raw (pre-merge) pairs of one proximity query (<= 0: 65536).
// Returns a new workspace (caller owns; geo_query_ws_destroy) or NULL + message.
geo_query_ws *geo_query_ws_new(const geo_bvh *a, const geo_bvh *b, int raw_cap, char *err,
                               size_t err_sz);
// Free and set *ws = NULL. NULL-safe.
void geo_query_ws_destroy(geo_query_ws **ws);
// Set the parallel-face angle tolerance [rad] (0 disables the parallel rule). Returns
// GEO_QOK or GEO_QEINVAL (negative or non-finite).
int geo_query_ws_set_parallel_angle(geo_query_ws *ws, double angle);

// Node pairs and leaf pairs tested by the last query run with ws (either may be NULL).
void geo_query_ws_stats(const geo_query_ws *ws, int *n_node, int *n_leaf);

typedef struct geo_query_cache geo_query_cache;

// Temporal-coherence cache for one ordered body pair. It holds a candidate list: every
// leaf pair closer than thr at some relative pose, with its distance and last closest
// feature pair. Proximity fills it with thr = d_s + margin [m] and reuses it while the
// relative motion since then (a bound delta on how far any point of A moved relative to B)
// keeps d_s + delta <= thr: only candidates that were closer than d_s + delta are
// considered (the list is sorted by distance), and of those only the ones whose lower
// bound from the last hit, less the motion since, is below d_s; each is first decided by
// its last feature pair (proved out by the gap between the triangles along it when
// clearly beyond d_s, else re-proved: canonical points + a separating-direction check),
// else by the full kernel. Minimum distance starts from the
// previous closest pair and answers from the list when its best candidate is provably
// below thr - delta; after two coherent queries (moved < margin / 2) it fills the list with
// thr = best + margin. Results are the contacts a cold query finds, bit-identical in the
// geometry tests; but proximity from a warm cache can differ in the last bits (a box
// sliding on a plate, stepped on from a warm and from a cold cache, parts after a step:
// tests/core/test_sim_contact.c), so a caller that must replay starts its caches cold
// at the same points (sim_restart does, at every checkpoint). One
// cache per ordered body pair; proximity and minimum distance may share it. cap bounds the
// list (<= 0: 65536); on overflow the list is not used for that pose. Returns the cache
// (caller owns; geo_query_cache_destroy) or NULL + message.
geo_query_cache *geo_query_cache_new(int cap, double margin, char *err, size_t err_sz);
// Free and set *c = NULL. NULL-safe.
void geo_query_cache_destroy(geo_query_cache **c);
// Forget everything cached (the next query is cold). NULL-safe.
void geo_query_cache_reset(geo_query_cache *c);

// Minimum distance between A at xa and B at xb: the leaf pair with the smallest
// (dist, tri_a, tri_b), its witness points, features and normal in *out. cache nullable.
// Allocation-free. Returns GEO_QOK or GEO_QEINVAL.
int geo_min_distance(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                     const geo_pose *xb, geo_query_ws *ws, geo_query_cache *cache,
                     geo_pair *out);

// geo_min_distance when some leaf pair is closer than below [m] (then *out is exactly what
// geo_min_distance gives); otherwise out->dist = INFINITY, tri_a = tri_b = -1, the rest
// zero. A far pair costs only the node pairs its bound does not prune. The reported dist
// comes from the pair's canonical points and may differ from the leaf kernel's by rounding:
// compare it with a threshold a little below `below`. below may be
// INFINITY; NaN gives GEO_QEINVAL. Allocation-free. Returns GEO_QOK or GEO_QEINVAL.
int geo_min_distance_below(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                           const geo_pose *xb, double below, geo_query_ws *ws,
                           geo_query_cache *cache, geo_pair *out);

// Every leaf pair closer than ds [m] (ds >= 0), merged by the rule above, in out[0..n)
// (cap entries, caller owns), n in info->n. cache nullable; info nullable.
// Allocation-free. Returns GEO_QOK, GEO_QEINVAL, or GEO_QELIMIT when cap or the
// workspace's raw_cap is too small (info->n or info->n_raw then give the sizes needed).
int geo_proximity(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b, const geo_pose *xb,
                  double ds, geo_query_ws *ws, geo_query_cache *cache, geo_pair *out, int cap,
                  geo_prox_info *info);

// Interference: *overlap = 1 when the surfaces touch or intersect, or when both meshes are
// closed and one contains the other (generalised winding number of one vertex, O(ntri));
// else 0. Allocation-free. Returns GEO_QOK or GEO_QEINVAL.
int geo_interference(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                     const geo_pose *xb, geo_query_ws *ws, int *overlap);

// Identity pose (origin, no rotation).
geo_pose geo_pose_identity(void);
// 1 when p is finite and q has a finite non-zero norm, else 0.
int geo_pose_valid(const geo_pose *x);

#endif
