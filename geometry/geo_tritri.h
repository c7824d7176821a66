// Closed-form distance between two triangles (leaf pairs of the hierarchy), with witness
// points and the features they lie on, plus the overlap polygon of parallel faces.
// Triangle conventions: a triangle is 9 doubles (3 vertices x 3 coordinates); vertex k has
// local id k, edge k joins vertex k to vertex (k + 1) % 3, the face has id 0.
// All functions are pure, allocation-free and thread-safe.
#ifndef GEO_TRITRI_H
#define GEO_TRITRI_H

#include "geo_vec.h"

// Largest number of corners of the overlap of two triangles (a triangle clipped by three
// half-planes has at most 6; the buffers are a little larger).
#define GEO_TT_PATCH_MAX 9

// Result of a triangle-triangle distance query.
typedef struct geo_tt_result {
  double dist;     // distance [m]; 0 when the triangles touch or intersect
  double pa[3];    // witness point on the first triangle [m]
  double pb[3];    // witness point on the second triangle [m]; pa = pb when intersecting
  geo_cfeat fa;    // feature of the first triangle pa lies on (local ids, see above)
  geo_cfeat fb;    // feature of the second triangle pb lies on
  int intersect;   // 1 when the triangles cross (an edge pierces the other triangle)
} geo_tt_result;

// Corners of the region of closest points of two parallel triangles.
typedef struct geo_tt_patch {
  int n;                           // number of corners (0 when there is no patch)
  double pa[GEO_TT_PATCH_MAX][3];  // corners on the first triangle [m], counter-clockwise
                                   // about the first triangle's normal
  double pb[GEO_TT_PATCH_MAX][3];  // the matching points on the second triangle's plane [m]
  geo_cfeat fa[GEO_TT_PATCH_MAX];  // feature of the first triangle each corner lies on
  geo_cfeat fb[GEO_TT_PATCH_MAX];  // feature of the second triangle each corner lies on
  double area;                     // area of the overlap polygon [m^2]
} geo_tt_patch;

// Closest point c on triangle T to point p; returns the squared distance and, if f is not
// NULL, the feature of T that c lies on. Degenerate triangles fall back to their edges.
double geo_closest_point_triangle(const double p[3], const double T[9], double c[3],
                                  geo_cfeat *f);

// Closest points c1 = p0 + s (p1 - p0) and c2 = q0 + t (q1 - q0) of two segments; returns
// the squared distance. Accurate for nearly parallel segments (error ~ eps, not eps/angle^2);
// parallel segments get a pair from the segment ends.
double geo_closest_seg_seg(const double p0[3], const double p1[3], const double q0[3],
                           const double q1[3], double *s, double *t, double c1[3], double c2[3]);

// Distance between triangles P and Q: min over the 6 vertex-triangle and 9 edge-edge
// distances, or 0 with intersect = 1 when they cross. Ties prefer lower-dimensional feature
// pairs. Returns r->dist.
double geo_tritri_dist(const double P[9], const double Q[9], geo_tt_result *r);

// When P and Q are parallel (sine of the angle between their normals <= sin_tol) and Q's
// projection onto P's plane overlaps P with positive area, fill out with the corners of the
// overlap polygon on P, the matching points on Q's plane (projection along P's normal) and
// the features of both; returns the corner count (3..6), or 0 with out->n = 0 otherwise.
// The pairs are closest pairs only when the triangles are separated along the normal.
int geo_tritri_parallel_patch(const double P[9], const double Q[9], double sin_tol,
                              geo_tt_patch *out);

// The set of closest points of P and Q, by its corners: the overlap polygon of parallel
// faces (3..6 corners, as geo_tritri_parallel_patch), else the overlap segment of an edge
// parallel to the other triangle's face or of two parallel edges (2 corners), else the
// unique closest pair (1 corner). A candidate set counts only if every corner pair is at
// the minimum distance within dist_tol [m]; parallel means a sine below sin_tol. Returns the
// corner count (out->area is 0 below 3 corners), or 0 when the triangles intersect.
int geo_tritri_closest_set(const double P[9], const double Q[9], double sin_tol,
                           double dist_tol, geo_tt_patch *out);

#endif
