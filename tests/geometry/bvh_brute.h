// Independent brute-force reference for the geometry query tests: triangle-triangle
// distance by a different construction than the engine's (Ericson's point-triangle
// regions, a segment-segment minimiser over the parameter square's boundary and interior,
// Cramer's-rule segment-triangle intersection), feature naming by the documented
// barycentric rule, the merge by feature identity. Header-only, test use only.
#ifndef BVH_BRUTE_H
#define BVH_BRUTE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geo_mesh.h"
#include "geo_query.h"

typedef struct bf_pair {
  double pa[3], pb[3], dist;  // world
  int fat, fai, fbt, fbi;     // features
  int ta, tb;
} bf_pair;

static inline void bf_sub(double o[3], const double a[3], const double b[3]) {
  o[0] = a[0] - b[0];
  o[1] = a[1] - b[1];
  o[2] = a[2] - b[2];
}
static inline double bf_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline void bf_cross(double o[3], const double a[3], const double b[3]) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}
static inline double bf_d2(const double a[3], const double b[3]) {
  double d[3];
  bf_sub(d, a, b);
  return bf_dot(d, d);
}

// world point of body point x under pose (quaternion w,x,y,z, normalised here)
static inline void bf_apply(double o[3], const geo_pose *X, const double x[3]) {
  double w = X->q[0], a = X->q[1], b = X->q[2], c = X->q[3];
  double n = sqrt(w * w + a * a + b * b + c * c);
  w /= n;
  a /= n;
  b /= n;
  c /= n;
  // v' = v + 2 w (u x v) + 2 u x (u x v), u = (a, b, c)
  double u[3] = {a, b, c}, t[3], t2[3];
  bf_cross(t, u, x);
  bf_cross(t2, u, t);
  for (int i = 0; i < 3; i++) {
    o[i] = x[i] + 2.0 * w * t[i] + 2.0 * t2[i] + X->p[i];
  }
}

// Ericson's closest point on triangle abc to p (Voronoi regions)
static inline void bf_closest_pt_tri(const double p[3], const double a[3], const double b[3],
                                     const double c[3], double out[3]) {
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  bf_sub(ab, b, a);
  bf_sub(ac, c, a);
  bf_sub(ap, p, a);
  double d1 = bf_dot(ab, ap), d2 = bf_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) {
    memcpy(out, a, 3 * sizeof(double));
    return;
  }
  bf_sub(bp, p, b);
  double d3 = bf_dot(ab, bp), d4 = bf_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) {
    memcpy(out, b, 3 * sizeof(double));
    return;
  }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 / (d1 - d3);
    for (int i = 0; i < 3; i++) out[i] = a[i] + v * ab[i];
    return;
  }
  bf_sub(cp, p, c);
  double d5 = bf_dot(ab, cp), d6 = bf_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) {
    memcpy(out, c, 3 * sizeof(double));
    return;
  }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 / (d2 - d6);
    for (int i = 0; i < 3; i++) out[i] = a[i] + w * ac[i];
    return;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int i = 0; i < 3; i++) out[i] = b[i] + w * (c[i] - b[i]);
    return;
  }
  double den = 1.0 / (va + vb + vc);
  double v = vb * den, w = vc * den;
  for (int i = 0; i < 3; i++) out[i] = a[i] + ab[i] * v + ac[i] * w;
}

// closest point on segment ab to p, parameter returned
static inline double bf_pt_seg(const double p[3], const double a[3], const double b[3],
                               double out[3]) {
  double ab[3], ap[3];
  bf_sub(ab, b, a);
  bf_sub(ap, p, a);
  double t = bf_dot(ap, ab) / bf_dot(ab, ab);
  t = t < 0 ? 0 : (t > 1 ? 1 : t);
  for (int i = 0; i < 3; i++) out[i] = a[i] + t * ab[i];
  return t;
}

// segment-segment: the interior stationary point if inside the unit square, else the best
// of the four boundary cases (each a point-segment problem)
static inline double bf_seg_seg(const double p0[3], const double p1[3], const double q0[3],
                                const double q1[3], double c1[3], double c2[3]) {
  double u[3], v[3], w[3];
  bf_sub(u, p1, p0);
  bf_sub(v, q1, q0);
  bf_sub(w, p0, q0);
  double a = bf_dot(u, u), b = bf_dot(u, v), c = bf_dot(v, v), d = bf_dot(u, w),
         e = bf_dot(v, w);
  double den = a * c - b * b, best = INFINITY;
  if (den > 1e-12 * a * c) {
    double s = (b * e - c * d) / den, t = (a * e - b * d) / den;
    if (s > 0 && s < 1 && t > 0 && t < 1) {
      for (int i = 0; i < 3; i++) {
        c1[i] = p0[i] + s * u[i];
        c2[i] = q0[i] + t * v[i];
      }
      return bf_d2(c1, c2);
    }
  }
  double x[3];
  const double *ends[4][3] = {{p0, q0, q1}, {p1, q0, q1}, {q0, p0, p1}, {q1, p0, p1}};
  for (int k = 0; k < 4; k++) {
    bf_pt_seg(ends[k][0], ends[k][1], ends[k][2], x);
    double d2 = bf_d2(ends[k][0], x);
    if (d2 < best) {
      best = d2;
      if (k < 2) {
        memcpy(c1, ends[k][0], sizeof x);
        memcpy(c2, x, sizeof x);
      } else {
        memcpy(c2, ends[k][0], sizeof x);
        memcpy(c1, x, sizeof x);
      }
    }
  }
  return best;
}

// segment p0p1 against triangle abc by Cramer's rule: 1 + point when they meet
static inline int bf_seg_tri(const double p0[3], const double p1[3], const double a[3],
                             const double b[3], const double c[3], double x[3]) {
  double d[3], e1[3], e2[3], s[3], h[3], q[3];
  bf_sub(d, p1, p0);
  bf_sub(e1, b, a);
  bf_sub(e2, c, a);
  bf_cross(h, d, e2);
  double det = bf_dot(e1, h);
  if (fabs(det) < 1e-300) {
    return 0;
  }
  bf_sub(s, p0, a);
  double u = bf_dot(s, h) / det;
  bf_cross(q, s, e1);
  double v = bf_dot(d, q) / det;
  double t = bf_dot(e2, q) / det;
  if (u < 0 || v < 0 || u + v > 1 || t < 0 || t > 1) {
    return 0;
  }
  for (int i = 0; i < 3; i++) x[i] = p0[i] + t * d[i];
  return 1;
}

// distance between triangles P and Q (world points), witness points
static inline double bf_tri_tri(double P[3][3], double Q[3][3], double pa[3],
                                double pb[3], int *intersect) {
  double x[3];
  *intersect = 0;
  for (int k = 0; k < 3; k++) {
    if (bf_seg_tri(P[k], P[(k + 1) % 3], Q[0], Q[1], Q[2], x) ||
        bf_seg_tri(Q[k], Q[(k + 1) % 3], P[0], P[1], P[2], x)) {
      memcpy(pa, x, sizeof x);
      memcpy(pb, x, sizeof x);
      *intersect = 1;
      return 0.0;
    }
  }
  double best = INFINITY, c1[3], c2[3];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double d2 = bf_seg_seg(P[i], P[(i + 1) % 3], Q[j], Q[(j + 1) % 3], c1, c2);
      if (d2 < best) {
        best = d2;
        memcpy(pa, c1, sizeof c1);
        memcpy(pb, c2, sizeof c2);
      }
    }
  }
  for (int k = 0; k < 3; k++) {
    bf_closest_pt_tri(P[k], Q[0], Q[1], Q[2], c2);
    double d2 = bf_d2(P[k], c2);
    if (d2 < best) {
      best = d2;
      memcpy(pa, P[k], sizeof c2);
      memcpy(pb, c2, sizeof c2);
    }
    bf_closest_pt_tri(Q[k], P[0], P[1], P[2], c1);
    d2 = bf_d2(Q[k], c1);
    if (d2 < best) {
      best = d2;
      memcpy(pb, Q[k], sizeof c1);
      memcpy(pa, c1, sizeof c1);
    }
  }
  return sqrt(best);
}

// barycentric rule: solve the 2x2 Gram system for x = v0 + s e1 + t e2
static inline void bf_feature(const geo_mesh *m, int t, double T[3][3], const double x[3],
                              int *type, int *id) {
  double e1[3], e2[3], r[3];
  bf_sub(e1, T[1], T[0]);
  bf_sub(e2, T[2], T[0]);
  bf_sub(r, x, T[0]);
  double a = bf_dot(e1, e1), b = bf_dot(e1, e2), c = bf_dot(e2, e2);
  double p = bf_dot(e1, r), q = bf_dot(e2, r), den = a * c - b * b;
  double w1 = (c * p - b * q) / den, w2 = (a * q - b * p) / den, w0 = 1.0 - w1 - w2;
  double w[3] = {w0, w1, w2};
  int nz = 0, kzero = 0, kmax = 0;
  for (int k = 0; k < 3; k++) {
    if (w[k] > GEO_FEAT_BARY_TOL) {
      nz++;
    } else {
      kzero = k;
    }
    if (w[k] > w[kmax]) kmax = k;
  }
  if (nz == 3) {
    *type = GEO_FEAT_FACE;
    *id = t;
  } else if (nz == 2) {
    // the edge joining the two non-zero corners, looked up in the mesh's edge list
    int u = m->tri[3 * t + (kzero + 1) % 3], v = m->tri[3 * t + (kzero + 2) % 3];
    int lo = u < v ? u : v, hi = u < v ? v : u;
    *type = GEO_FEAT_EDGE;
    *id = -1;
    for (int e = 0; e < m->nedge; e++) {
      if (m->edge[2 * e] == lo && m->edge[2 * e + 1] == hi) {
        *id = e;
        break;
      }
    }
  } else {
    *type = GEO_FEAT_VERTEX;
    *id = m->tri[3 * t + kmax];
  }
}

static inline void bf_world_tri(const geo_mesh *m, const geo_pose *X, int t, double T[3][3]) {
  for (int k = 0; k < 3; k++) {
    bf_apply(T[k], X, m->vert + 3 * m->tri[3 * t + k]);
  }
}

static inline int bf_cmp_key(const void *x, const void *y) {
  const bf_pair *a = x, *b = y;
  int ka[4] = {a->fat, a->fai, a->fbt, a->fbi}, kb[4] = {b->fat, b->fai, b->fbt, b->fbi};
  for (int i = 0; i < 4; i++) {
    if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
  }
  if (a->dist != b->dist) return a->dist < b->dist ? -1 : 1;
  if (a->ta != b->ta) return a->ta < b->ta ? -1 : 1;
  return (a->tb > b->tb) - (a->tb < b->tb);
}

// All leaf pairs closer than ds, merged by features (smallest dist kept), sorted by key.
// Leaf pairs are pre-filtered by world AABBs inflated by ds (an exact necessary test).
// *n_raw = leaf pairs below ds, *n_inter = intersecting leaf pairs, *min_d = min distance.
// Returns a malloc'd array of *n merged pairs (caller frees).
static inline bf_pair *bf_proximity(const geo_mesh *A, const geo_pose *XA, const geo_mesh *B,
                                    const geo_pose *XB, double ds, int *n, int *n_raw,
                                    int *n_inter, double *min_d) {
  double (*ta)[3][3] = malloc((size_t)A->ntri * sizeof *ta);
  double (*tb)[3][3] = malloc((size_t)B->ntri * sizeof *tb);
  double (*ba)[6] = malloc((size_t)A->ntri * sizeof *ba);
  double (*bb)[6] = malloc((size_t)B->ntri * sizeof *bb);
  for (int t = 0; t < A->ntri; t++) {
    bf_world_tri(A, XA, t, ta[t]);
    for (int i = 0; i < 3; i++) {
      ba[t][i] = fmin(fmin(ta[t][0][i], ta[t][1][i]), ta[t][2][i]) - ds;
      ba[t][3 + i] = fmax(fmax(ta[t][0][i], ta[t][1][i]), ta[t][2][i]) + ds;
    }
  }
  for (int t = 0; t < B->ntri; t++) {
    bf_world_tri(B, XB, t, tb[t]);
    for (int i = 0; i < 3; i++) {
      bb[t][i] = fmin(fmin(tb[t][0][i], tb[t][1][i]), tb[t][2][i]);
      bb[t][3 + i] = fmax(fmax(tb[t][0][i], tb[t][1][i]), tb[t][2][i]);
    }
  }
  int cap = 1024, cnt = 0;
  bf_pair *out = malloc((size_t)cap * sizeof *out);
  *n_inter = 0;
  for (int i = 0; i < A->ntri; i++) {
    for (int j = 0; j < B->ntri; j++) {
      int ok = 1;
      for (int k = 0; k < 3 && ok; k++) {
        ok = ba[i][k] <= bb[j][3 + k] && bb[j][k] <= ba[i][3 + k];
      }
      if (!ok) continue;
      double pa[3], pb[3];
      int inter;
      double d = bf_tri_tri(ta[i], tb[j], pa, pb, &inter);
      if (d >= ds) continue;
      *n_inter += inter;
      if (cnt == cap) {
        cap *= 2;
        out = realloc(out, (size_t)cap * sizeof *out);
      }
      bf_pair *r = &out[cnt++];
      memcpy(r->pa, pa, sizeof pa);
      memcpy(r->pb, pb, sizeof pb);
      r->dist = d;
      r->ta = i;
      r->tb = j;
      bf_feature(A, i, ta[i], pa, &r->fat, &r->fai);
      bf_feature(B, j, tb[j], pb, &r->fbt, &r->fbi);
    }
  }
  *n_raw = cnt;
  qsort(out, (size_t)cnt, sizeof *out, bf_cmp_key);
  int m = 0;
  for (int i = 0; i < cnt; i++) {
    if (m > 0 && out[m - 1].fat == out[i].fat && out[m - 1].fai == out[i].fai &&
        out[m - 1].fbt == out[i].fbt && out[m - 1].fbi == out[i].fbi) {
      continue;
    }
    out[m++] = out[i];
  }
  *n = m;
  // minimum distance over all pairs (no prefilter)
  if (min_d != NULL) {
    double best = INFINITY;
    for (int i = 0; i < A->ntri; i++) {
      for (int j = 0; j < B->ntri; j++) {
        double lo = 0.0;
        for (int k = 0; k < 3; k++) {
          double g = fmax(ba[i][k] + ds - bb[j][3 + k], bb[j][k] - ba[i][3 + k] + ds);
          if (g > 0) lo += g * g;
        }
        if (lo >= best * best) continue;
        double pa[3], pb[3];
        int inter;
        double d = bf_tri_tri(ta[i], tb[j], pa, pb, &inter);
        if (d < best) best = d;
      }
    }
    *min_d = best;
  }
  free(ta);
  free(tb);
  free(ba);
  free(bb);
  return out;
}

#endif
