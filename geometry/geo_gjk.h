// GJK distance (Gilbert, Johnson & Keerthi 1988) between two convex sets, each the convex
// hull of finitely many points placed by a rigid transform: hulls (support by hill-climbing
// on the vertex adjacency above GEO_GJK_CLIMB_MIN vertices, exhaustive below), point sets,
// triangles, segments and points. The closest point of each simplex is found with the
// signed-volumes sub-algorithm of Montanari, Petrinic & Barbieri (ACM TOG 36(3), 2017),
// which stays accurate on the thin and degenerate simplices of touching and parallel cases.
//
// Accuracy: the distance agrees with the exact one to 1e-9 relative or 1e-14 of the sets'
// size, whichever is larger, including touching, nested and (near-)parallel faces and edges.
// Near contact the direction of v is only good to eps |w| / |v|; when a neighbour of a
// witness vertex is tied within that uncertainty, when the sets nearly touch, or when the
// final simplex is a needle or a diagonal of a flat piece of A - B, the pair is recomputed
// in closed form (geo_tritri) from the faces around the witness features.
// Termination: relative gap |v|^2 - v.w <= eps_rel |v|^2, a repeated support pair, no
// further decrease of |v|, or the iteration cap. Touching/overlap: |v| < 1e-14 max |w|, or
// the origin inside a tetrahedron of the simplex.
//
// Queries never allocate and only read the sets: any number of threads may query the same
// hulls concurrently (each with its own cache).
#ifndef GEO_GJK_H
#define GEO_GJK_H

#include "geo_hull.h"
#include "geo_vec.h"

// Hulls with more vertices than this use hill-climbing support.
#define GEO_GJK_CLIMB_MIN 16

enum {
  GEO_CONVEX_POINTS = 0,  // the convex hull of n points (1 point, 2 segment, 3 triangle)
  GEO_CONVEX_HULL = 1,    // a geo_hull
  GEO_CONVEX_INDEXED = 2  // the convex hull of the points pts[idx[i]] (e.g. mesh vertices
                          // listed by id: a BVH node's hull vertex set, a mesh triangle)
};

// A convex set in its local frame. Vertex ids are the point indices (POINTS), the hull's
// vertex ids (HULL; h->src maps them to input points) or the listed ids idx[i] (INDEXED, so
// mesh vertex ids come back as they are). For sets of 2 and 3 points the edges and the face
// follow the triangle convention of geo_tritri.h (edge k joins points k and k+1, in list
// order); other point sets report edge and face ids as -1 (the vertex ids still name them).
typedef struct geo_convex {
  int kind;               // GEO_CONVEX_POINTS, GEO_CONVEX_HULL or GEO_CONVEX_INDEXED
  int n;                  // number of points (POINTS, INDEXED) or vertices (HULL)
  const double *pts;      // vertex coordinates [m] (n x 3, INDEXED: any x 3); borrowed
  const geo_hull *hull;   // the hull (HULL), else NULL; borrowed
  const int *idx;         // point ids into pts (INDEXED: n), else NULL; borrowed
} geo_convex;

// The convex hull of n points pts (n x 3, borrowed: must outlive the queries).
static inline geo_convex geo_convex_points(const double *pts, int n) {
  geo_convex c = {GEO_CONVEX_POINTS, n, pts, NULL, NULL};
  return c;
}

// The hull h (borrowed: must outlive the queries).
static inline geo_convex geo_convex_of_hull(const geo_hull *h) {
  geo_convex c = {GEO_CONVEX_HULL, h->nvert, h->vert, h, NULL};
  return c;
}

// The convex hull of the n points pts[3 idx[i] ..] (both borrowed; ids must be valid).
static inline geo_convex geo_convex_indexed(const double *pts, const int *idx, int n) {
  geo_convex c = {GEO_CONVEX_INDEXED, n, pts, NULL, idx};
  return c;
}

// Warm-start state owned by the caller, one per pair of sets; zero it (or call
// geo_gjk_cache_reset) before first use. Invalid contents are ignored, never trusted.
typedef struct geo_gjk_cache {
  int n;       // simplex size of the last query (0 = cold)
  int ia[4];   // vertex ids in A of the last simplex
  int ib[4];   // vertex ids in B of the last simplex
  int seed_a;  // last support vertex of A (hill-climbing start)
  int seed_b;  // last support vertex of B
} geo_gjk_cache;

// Tolerances and early exits; pass NULL for the defaults.
typedef struct geo_gjk_opts {
  double eps_rel;     // stop when |v|^2 - v.w <= eps_rel |v|^2 (default 1e-14)
  int max_iter;       // iteration cap (default 128)
  double stop_above;  // > 0: stop as soon as the distance is proven > stop_above [m]
  double stop_below;  // > 0: stop as soon as a pair closer than stop_below is found [m]
} geo_gjk_opts;

// Outcome of a query (the int returned by geo_gjk).
enum {
  GEO_GJK_OK = 0,        // converged: dist and witnesses are the closest pair
  GEO_GJK_ABOVE = 1,     // stopped early: r->lower > stop_above proves the distance is
                         // larger; dist and the witnesses are the current (upper-bound) pair
  GEO_GJK_BELOW = 2,     // stopped early: the witnesses are closer than stop_below
  GEO_GJK_MAXITER = 3,   // iteration cap reached: dist is the best upper bound found
  GEO_GJK_EINVAL = -1    // a set is empty or lacks its arrays: nothing computed
};

// Result of a query.
typedef struct geo_gjk_result {
  double dist;      // distance [m] (0 when intersecting)
  double lower;     // proven lower bound of the distance [m]
  double pa[3];     // witness point on A, world frame [m]
  double pb[3];     // witness point on B, world frame [m]; = pa when intersecting
  int intersect;    // 1 when the sets touch or overlap (distance below numerical resolution)
  geo_cfeat fa;     // feature of A that pa lies on (id -1 if A has no such feature id)
  geo_cfeat fb;     // feature of B that pb lies on
  int nva, nvb;     // number of vertices of A / B spanning the witness (1..3)
  int va[3], vb[3]; // those vertex ids (the sets' own ids, see geo_convex)
  int iters;        // GJK iterations used
} geo_gjk_result;

// Set a cache to cold.
static inline void geo_gjk_cache_reset(geo_gjk_cache *c) {
  c->n = 0;
  c->seed_a = c->seed_b = 0;
}

// Distance between A placed by XA and B placed by XB. cache (nullable) warm-starts the
// query and is updated; opts may be NULL. Fills r; returns GEO_GJK_OK or another outcome
// above. Allocation-free; thread-safe for distinct caches.
int geo_gjk(const geo_convex *A, const geo_xform *XA, const geo_convex *B,
            const geo_xform *XB, const geo_gjk_opts *opts, geo_gjk_cache *cache,
            geo_gjk_result *r);

#endif
