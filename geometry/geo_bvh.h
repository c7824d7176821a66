// The per-mesh hierarchy (Xavier 1996): a binary tree over a mesh's triangles whose every
// node carries the convex hull of its subtree's vertices, plus two cheap bounds tested
// first (a sphere, then an oriented box). Leaves are single triangles.
//
// Split rule: a node's triangles are split by the plane through the mean of their
// centroids, normal to the longest axis of the node's oriented box (principal axes of the
// area-weighted triangle covariance). Children are therefore spatially compact, which keeps
// both their boxes and their hulls tight; if the mean plane leaves one side empty (all
// centroids on one side up to rounding), the triangles are split at the median count
// along that axis instead, so the tree depth stays O(log n) for any input.
//
// Node tests, cheapest first, and why:
// 1. sphere-sphere gap: |c_a - c_b| - r_a - r_b, one transform of a point; rejects far
//    pairs at the top of the trees;
// 2. oriented-box separating-axis gap (6 face axes give a lower bound that also orders the
//    traversal; the 9 edge-edge axes only prune). Near a contact the hull of a patch of a
//    curved surface bulges past a small gap (a torus patch over a cone), so neither the
//    hull nor a sphere prunes there; a thin box aligned with the patch does, because its
//    face axis is the local normal. Every gap along a unit axis is a lower bound on the
//    Euclidean distance, so pruning on it never drops a pair.
// 3. the convex hull of the subtree, kept as its support mapping: hull_vert lists every
//    hull vertex of the subtree (a superset: candidates from the children minus those
//    proved interior by a tetrahedron of extreme points), so max over the list of d.v is
//    the exact support of the subtree in direction d (Xavier's node volume; for GJK between
//    subtrees by callers). The queries in geo_query.h test hulls only against a single
//    triangle, along its normal and side normals, and only small hulls (at most 16
//    vertices): on the Rock-N-Stack contact web the hull of a curved patch bulges past the
//    0.25 mm gap, and a support-gap test (8 directions) between two subtrees pruned only
//    7-9 % of the node pairs the box passed, while scanning large hulls cost far more than
//    the box test; against one of the 1-ring cone's long triangles the four planes of the
//    triangle prune about a third of the small subtrees the box passes.
//    Per triangle the hierarchy also keeps its side normals (tri_data.m) and their offsets
//    (tri_side_off), so neither test nor the triangle kernel recomputes them for B.
// Leaf pairs are then decided by the exact triangle-triangle kernel (geo_query.c), whose
// first step is the two plane tests, i.e. the box test's face axes for single triangles.
//
// The hierarchy copies everything it needs from the mesh at build (vertices, triangles,
// normals, edge ids), except that it keeps a borrowed pointer to the mesh for callers
// (geo_bvh_mesh); the mesh must outlive the hierarchy only if that pointer is used.
// Immutable after geo_bvh_new: share it freely between threads.
#ifndef GEO_BVH_H
#define GEO_BVH_H

#include <stddef.h>

#include "geo_mesh.h"

#define GEO_BVH_DEPTH_MAX 100  // no hierarchy is deeper (splits turn to median counts at 60)

// Per-triangle data of the query's triangle kernel (geo_query.c), read instead of recomputed
// for every leaf pair a triangle is in. Filled by geo_bvh_tri_data_fill with the very
// operations the kernel would apply, so the values are the same bits either way: for a
// hierarchy's own triangles in its body frame at build (tri_data), for the other body's
// triangles in this body's frame once per query (the query workspace). Side k joins corner
// k to corner (k + 1) % 3.
typedef struct geo_tri_data {
  double m[9];     // side k's in-plane normal n x (v_k+1 - v_k), inward, unnormalised (3 x 3)
  double mn2[3];   // |m_k|^2 [m^2]
  double ed[9];    // side k from its lower vertex id to its higher (3 x 3) [m]
  double en2[3];   // |ed_k|^2 [m^2]
  double mid[9];   // midpoint of side k, v_k + 0.5 (v_k+1 - v_k) (3 x 3) [m]; hierarchy only
  double e1[3];    // v_1 - v_0 [m]
  double e2[3];    // v_2 - v_0 [m]
  double gram[4];  // e1.e1, e1.e2, e2.e2 [m^2] and their determinant [m^4]
} geo_tri_data;

// One node. Leaves have left == right == -1 and tri >= 0.
typedef struct geo_bvh_node {
  double c[3];     // oriented box centre, body frame [m]; also the sphere centre
  double ax[9];    // box axes, row i = unit axis i, body frame (3 x 3), right-handed
  double h[3];     // box half extents along ax rows [m], slightly inflated for rounding
  double r;        // bounding sphere radius about c [m]
  int left, right; // children node ids, -1 for a leaf
  int tri;         // leaf: triangle id; interior: -1
  int first, count;// triangles of the subtree: tri_order[first .. first+count-1]
  int hull_first, hull_n; // hull vertices (superset): hull_vert[hull_first .. +hull_n-1]
} geo_bvh_node;

typedef struct geo_bvh {
  int nnode;             // 2 ntri - 1
  int depth;             // longest root-leaf path, counted in nodes (a leaf-only tree has 1)
  geo_bvh_node *node;    // (nnode) node 0 is the root
  int *tri_order;        // (ntri) triangle ids in subtree order
  int *hull_vert;        // vertex ids of every node's hull (sum of hull_n)
  int nhull_vert;        // length of hull_vert
  // copied mesh data (body frame)
  int nvert, ntri, nedge;
  double *vert;          // (nvert x 3) [m]
  int *tri;              // (ntri x 3) vertex ids, counter-clockwise from outside
  double *tri_normal;    // (ntri x 3) unit outward normals
  int *tri_edge;         // (ntri x 3) edge id of side k = (tri[3t+k], tri[3t+(k+1)%3])
  double *tri_side_off;  // (ntri x 3 x 2) per side k, with m_k = tri_data.m (side k's inward
                         // normal, |m_k| = side length): m_k . v_k [m^2] and 1 / |m_k| [1/m]
                         // (0 for a side of length 0); the triangle lies in m_k . x >= m_k . v_k
  geo_tri_data *tri_data;  // (ntri) kernel data of each triangle (body frame)
  int closed;            // mesh was closed (watertight, consistently oriented)
  double scale;          // root sphere radius [m], sets relative tolerances
  double build_seconds;  // wall time spent in geo_bvh_new [s]
  const geo_mesh *mesh;  // borrowed; the mesh given to geo_bvh_new (may dangle after)
} geo_bvh;

// Build the hierarchy of m (borrowed for the call; data is copied). Returns a new
// immutable hierarchy (caller owns; geo_bvh_destroy) or NULL + message in err (nullable).
geo_bvh *geo_bvh_new(const geo_mesh *m, char *err, size_t err_sz);
// Free and set *b = NULL. NULL-safe.
void geo_bvh_destroy(geo_bvh **b);
// Fill *out for the triangle with corners v, vertex ids id and unit normal n (any one
// frame; all borrowed for the call); with_mid 0 leaves mid unset (the kernel reads only the
// second triangle's midpoints). Pure and thread-safe.
void geo_bvh_tri_data_fill(const double *const v[3], const int id[3], const double n[3],
                           int with_mid, geo_tri_data *out);
// The mesh given at build time (borrowed; valid while the caller keeps that mesh).
const geo_mesh *geo_bvh_mesh(const geo_bvh *b);
// Check the structural invariants (every triangle in exactly one leaf, boxes, spheres and
// hulls contain their subtree's vertices). Returns 0 or -1 + message. For tests.
int geo_bvh_check(const geo_bvh *b, char *err, size_t err_sz);

#endif
