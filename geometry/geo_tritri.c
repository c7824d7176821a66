// Closed-form triangle-triangle distance, closest points of primitives, parallel patches.
// Point-triangle follows Ericson, Real-Time Collision Detection (2005), 5.1.5 (Voronoi
// regions); segment-segment uses the cross-product form of the closest points of two lines,
// accurate for nearly parallel segments, plus the four end-to-segment distances.
#include "geo_tritri.h"

#include <float.h>
#include <string.h>

static double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

static void set_feat(geo_cfeat *f, int type, int id) {
  if (f) {
    f->type = type;
    f->id = id;
  }
}

// closest point to p on segment a-b, parameter in *t; squared distance returned.
static double closest_point_segment(const double p[3], const double a[3], const double b[3],
                                    double c[3], double *t) {
  double ab[3], ap[3];
  geo_v3_sub(ab, b, a);
  geo_v3_sub(ap, p, a);
  double den = geo_v3_dot(ab, ab);
  double s = den > 0.0 ? clamp01(geo_v3_dot(ap, ab) / den) : 0.0;
  geo_v3_madd(c, a, s, ab);
  *t = s;
  return geo_v3_dist2(p, c);
}

double geo_closest_point_triangle(const double p[3], const double T[9], double c[3],
                                  geo_cfeat *f) {
  const double *a = T, *b = T + 3, *cc = T + 6;
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  geo_v3_sub(ab, b, a);
  geo_v3_sub(ac, cc, a);
  geo_v3_sub(ap, p, a);
  // vertex region of a
  double d1 = geo_v3_dot(ab, ap), d2 = geo_v3_dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0) {
    geo_v3_copy(c, a);
    set_feat(f, GEO_CF_VERTEX, 0);
    return geo_v3_dist2(p, c);
  }
  // vertex region of b
  geo_v3_sub(bp, p, b);
  double d3 = geo_v3_dot(ab, bp), d4 = geo_v3_dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) {
    geo_v3_copy(c, b);
    set_feat(f, GEO_CF_VERTEX, 1);
    return geo_v3_dist2(p, c);
  }
  // edge region of ab (edge 0)
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    geo_v3_madd(c, a, d1 / (d1 - d3), ab);
    set_feat(f, GEO_CF_EDGE, 0);
    return geo_v3_dist2(p, c);
  }
  // vertex region of c
  geo_v3_sub(cp, p, cc);
  double d5 = geo_v3_dot(ab, cp), d6 = geo_v3_dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) {
    geo_v3_copy(c, cc);
    set_feat(f, GEO_CF_VERTEX, 2);
    return geo_v3_dist2(p, c);
  }
  // edge region of ca (edge 2)
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    geo_v3_madd(c, a, d2 / (d2 - d6), ac);
    set_feat(f, GEO_CF_EDGE, 2);
    return geo_v3_dist2(p, c);
  }
  // edge region of bc (edge 1)
  double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    geo_v3_lerp(c, b, cc, w);
    set_feat(f, GEO_CF_EDGE, 1);
    return geo_v3_dist2(p, c);
  }
  // face region; a degenerate (zero-area) triangle has no face region: use its edges
  double den = va + vb + vc;
  if (!(den > 0.0)) {
    double best = DBL_MAX, cb[3], t;
    for (int k = 0; k < 3; k++) {
      double d = closest_point_segment(p, T + 3 * k, T + 3 * ((k + 1) % 3), cb, &t);
      if (d < best) {
        best = d;
        geo_v3_copy(c, cb);
        if (t <= 0.0) {
          set_feat(f, GEO_CF_VERTEX, k);
        } else if (t >= 1.0) {
          set_feat(f, GEO_CF_VERTEX, (k + 1) % 3);
        } else {
          set_feat(f, GEO_CF_EDGE, k);
        }
      }
    }
    return best;
  }
  double v = vb / den, w = vc / den;
  for (int i = 0; i < 3; i++) {
    c[i] = a[i] + ab[i] * v + ac[i] * w;
  }
  set_feat(f, GEO_CF_FACE, 0);
  return geo_v3_dist2(p, c);
}

// the interior candidate of the segment-segment distance: s of the closest points of the two
// lines in the cross-product form s = ((q0 - p0) x d2) . n / n.n, n = d1 x d2, whose factors
// are small together when the lines are nearly parallel and close (the normal equations lose
// everything there), clamped to [0, 1]; t is the projection of that point on Q's line, so the
// pair stays consistent where s is ill-determined (the distance is flat in s there). Returns
// the squared distance, or DBL_MAX when t falls outside [0, 1] (an end case).
static double seg_seg_interior(const double p0[3], const double d1[3], const double q0[3],
                               const double d2[3], double *s, double *t, double c1[3],
                               double c2[3]) {
  double n[3], r[3], a[3], w[3];
  geo_v3_cross(n, d1, d2);
  double nn = geo_v3_dot(n, n), e = geo_v3_dot(d2, d2);
  if (!(nn > 0.0 && e > 0.0)) {
    return DBL_MAX;
  }
  geo_v3_sub(r, q0, p0);
  geo_v3_cross(a, r, d2);
  double si = clamp01(geo_v3_dot(a, n) / nn);
  geo_v3_madd(c1, p0, si, d1);
  geo_v3_sub(w, c1, q0);
  double ti = geo_v3_dot(w, d2) / e;
  if (!(ti >= 0.0 && ti <= 1.0)) {
    return DBL_MAX;
  }
  geo_v3_madd(c2, q0, ti, d2);
  *s = si;
  *t = ti;
  return geo_v3_dist2(c1, c2);
}

double geo_closest_seg_seg(const double p0[3], const double p1[3], const double q0[3],
                           const double q1[3], double *s, double *t, double c1[3],
                           double c2[3]) {
  double d1[3], d2[3], x[3], y[3], u, v;
  geo_v3_sub(d1, p1, p0);
  geo_v3_sub(d2, q1, q0);
  double ss = 0.0, tt = 0.0;
  double best = seg_seg_interior(p0, d1, q0, d2, &u, &v, x, y);
  if (best < DBL_MAX) {
    ss = u;
    tt = v;
  }
  // otherwise (and as a guard) the minimum is at an end of one of the segments
  double dd = closest_point_segment(p0, q0, q1, x, &u);
  if (dd < best) { best = dd; ss = 0.0; tt = u; }
  dd = closest_point_segment(p1, q0, q1, x, &u);
  if (dd < best) { best = dd; ss = 1.0; tt = u; }
  dd = closest_point_segment(q0, p0, p1, x, &u);
  if (dd < best) { best = dd; ss = u; tt = 0.0; }
  dd = closest_point_segment(q1, p0, p1, x, &u);
  if (dd < best) { best = dd; ss = u; tt = 1.0; }
  geo_v3_madd(c1, p0, ss, d1);
  geo_v3_madd(c2, q0, tt, d2);
  *s = ss;
  *t = tt;
  return geo_v3_dist2(c1, c2);
}

// feature of a point at parameter u on edge k of a triangle
static geo_cfeat edge_param_feat(int k, double u) {
  geo_cfeat f;
  if (u <= 0.0) {
    f.type = GEO_CF_VERTEX;
    f.id = k;
  } else if (u >= 1.0) {
    f.type = GEO_CF_VERTEX;
    f.id = (k + 1) % 3;
  } else {
    f.type = GEO_CF_EDGE;
    f.id = k;
  }
  return f;
}

// where segment a-b crosses triangle T (not coplanar with it): 1 and the point x, else 0.
static int segment_crosses_triangle(const double a[3], const double b[3], const double T[9],
                                    double x[3]) {
  double e1[3], e2[3], n[3], da[3], db[3];
  geo_v3_sub(e1, T + 3, T);
  geo_v3_sub(e2, T + 6, T);
  geo_v3_cross(n, e1, e2);
  geo_v3_sub(da, a, T);
  geo_v3_sub(db, b, T);
  double sa = geo_v3_dot(n, da), sb = geo_v3_dot(n, db);
  if ((sa > 0.0 && sb > 0.0) || (sa < 0.0 && sb < 0.0) || sa == sb) {
    return 0;
  }
  geo_v3_lerp(x, a, b, sa / (sa - sb));
  // inside test by the signs of the sub-triangle normals against n
  for (int k = 0; k < 3; k++) {
    double u[3], w[3], m[3];
    geo_v3_sub(u, T + 3 * ((k + 1) % 3), T + 3 * k);
    geo_v3_sub(w, x, T + 3 * k);
    geo_v3_cross(m, u, w);
    if (geo_v3_dot(m, n) < 0.0) {
      return 0;
    }
  }
  return 1;
}

// keep candidate (d2, features) if it is closer, or as close with lower dimensions.
static void consider(geo_tt_result *r, double *best2, int *bestdim, double d2, const double pa[3],
                     const double pb[3], geo_cfeat fa, geo_cfeat fb) {
  int dim = fa.type + fb.type;
  double tol = 1e-12 * *best2;
  if (d2 < *best2 - tol || (d2 <= *best2 + tol && dim < *bestdim)) {
    *best2 = d2;
    *bestdim = dim;
    geo_v3_copy(r->pa, pa);
    geo_v3_copy(r->pb, pb);
    r->fa = fa;
    r->fb = fb;
  }
}

double geo_tritri_dist(const double P[9], const double Q[9], geo_tt_result *r) {
  memset(r, 0, sizeof(*r));
  // crossing: an edge of one triangle pierces the other
  for (int k = 0; k < 3; k++) {
    double x[3];
    if (segment_crosses_triangle(P + 3 * k, P + 3 * ((k + 1) % 3), Q, x)) {
      geo_v3_copy(r->pa, x);
      geo_v3_copy(r->pb, x);
      r->fa.type = GEO_CF_EDGE;
      r->fa.id = k;
      r->fb.type = GEO_CF_FACE;
      r->fb.id = 0;
      r->intersect = 1;
      return 0.0;
    }
    if (segment_crosses_triangle(Q + 3 * k, Q + 3 * ((k + 1) % 3), P, x)) {
      geo_v3_copy(r->pa, x);
      geo_v3_copy(r->pb, x);
      r->fa.type = GEO_CF_FACE;
      r->fa.id = 0;
      r->fb.type = GEO_CF_EDGE;
      r->fb.id = k;
      r->intersect = 1;
      return 0.0;
    }
  }
  double best2 = DBL_MAX;
  int bestdim = 9;
  // six vertex-triangle distances
  for (int k = 0; k < 3; k++) {
    double c[3];
    geo_cfeat f, fv = {GEO_CF_VERTEX, k};
    double d2 = geo_closest_point_triangle(P + 3 * k, Q, c, &f);
    consider(r, &best2, &bestdim, d2, P + 3 * k, c, fv, f);
    d2 = geo_closest_point_triangle(Q + 3 * k, P, c, &f);
    consider(r, &best2, &bestdim, d2, c, Q + 3 * k, f, fv);
  }
  // nine edge-edge distances: their interior candidates (the end cases are vertex-triangle
  // distances above, or no closer than them)
  double dp[3][3], dq[3][3];
  for (int k = 0; k < 3; k++) {
    geo_v3_sub(dp[k], P + 3 * ((k + 1) % 3), P + 3 * k);
    geo_v3_sub(dq[k], Q + 3 * ((k + 1) % 3), Q + 3 * k);
  }
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double s, t, c1[3], c2[3];
      double d2 = seg_seg_interior(P + 3 * i, dp[i], Q + 3 * j, dq[j], &s, &t, c1, c2);
      if (d2 < DBL_MAX) {
        consider(r, &best2, &bestdim, d2, c1, c2, edge_param_feat(i, s),
                 edge_param_feat(j, t));
      }
    }
  }
  r->dist = sqrt(best2);
  r->intersect = r->dist == 0.0;
  // exactly coplanar triangles (as computed) never cross by the edge test: overlapping ones
  // leave a rounding-level distance, which counts as contact
  if (!r->intersect) {
    double e1[3], e2[3], n[3], scale = 0.0;
    geo_v3_sub(e1, P + 3, P);
    geo_v3_sub(e2, P + 6, P);
    geo_v3_cross(n, e1, e2);
    int coplanar = 1;
    for (int k = 0; k < 3; k++) {
      double d[3];
      geo_v3_sub(d, Q + 3 * k, P);
      coplanar &= geo_v3_dot(n, d) == 0.0;
      scale = fmax(scale, fmax(geo_v3_norm(P + 3 * k), geo_v3_norm(Q + 3 * k)));
    }
    if (coplanar && r->dist <= 64.0 * DBL_EPSILON * scale) {
      geo_v3_lerp(r->pa, r->pa, r->pb, 0.5);
      geo_v3_copy(r->pb, r->pa);
      r->dist = 0.0;
      r->intersect = 1;
    }
  }
  return r->dist;
}

// a polygon corner in P's plane coordinates, with labels of the edge leaving it.
typedef struct tt_corner {
  double x, y;
  int pe, qe;  // P edge / Q edge the outgoing polygon edge lies on, -1 for none
} tt_corner;

// feature of a corner from the labels of its incoming (ein) and outgoing (eout) edges.
static geo_cfeat corner_feat(int ein, int eout) {
  geo_cfeat f;
  if (ein >= 0 && eout >= 0 && ein != eout) {
    // the vertex shared by edges ein and eout
    f.type = GEO_CF_VERTEX;
    f.id = ((ein + 1) % 3 == eout) ? eout : ein;
  } else if (ein >= 0 || eout >= 0) {
    f.type = GEO_CF_EDGE;
    f.id = ein >= 0 ? ein : eout;
  } else {
    f.type = GEO_CF_FACE;
    f.id = 0;
  }
  return f;
}

int geo_tritri_parallel_patch(const double P[9], const double Q[9], double sin_tol,
                              geo_tt_patch *out) {
  out->n = 0;
  out->area = 0.0;
  double e1[3], e2[3], nP[3], nQ[3], cr[3];
  geo_v3_sub(e1, P + 3, P);
  geo_v3_sub(e2, P + 6, P);
  geo_v3_cross(nP, e1, e2);
  geo_v3_sub(e1, Q + 3, Q);
  geo_v3_sub(e2, Q + 6, Q);
  geo_v3_cross(nQ, e1, e2);
  double lp = geo_v3_norm(nP), lq = geo_v3_norm(nQ);
  if (!(lp > 0.0 && lq > 0.0)) {
    return 0;
  }
  geo_v3_cross(cr, nP, nQ);
  if (geo_v3_norm(cr) > sin_tol * lp * lq) {
    return 0;
  }
  // orthonormal frame (u, w, n) of P's plane with origin at P's vertex 0
  double n[3], u[3], w[3];
  geo_v3_scale(n, nP, 1.0 / lp);
  geo_v3_scale(nQ, nQ, 1.0 / lq);
  geo_v3_sub(u, P + 3, P);
  geo_v3_normalize(u);
  geo_v3_cross(w, n, u);
  tt_corner poly[2][GEO_TT_PATCH_MAX + 3];
  int np = 3, cur = 0;
  for (int k = 0; k < 3; k++) {
    double d[3];
    geo_v3_sub(d, P + 3 * k, P);
    poly[0][k] = (tt_corner){geo_v3_dot(d, u), geo_v3_dot(d, w), k, -1};
  }
  double q2[3][2];
  for (int k = 0; k < 3; k++) {
    double d[3];
    geo_v3_sub(d, Q + 3 * k, P);
    q2[k][0] = geo_v3_dot(d, u);
    q2[k][1] = geo_v3_dot(d, w);
  }
  double qarea = (q2[1][0] - q2[0][0]) * (q2[2][1] - q2[0][1]) -
                 (q2[2][0] - q2[0][0]) * (q2[1][1] - q2[0][1]);
  double sgn = qarea > 0.0 ? 1.0 : -1.0;
  // Sutherland-Hodgman: clip P by the inner half-plane of each edge of Q's projection
  for (int j = 0; j < 3 && np > 0; j++) {
    const double *a = q2[j], *b = q2[(j + 1) % 3];
    double ex = b[0] - a[0], ey = b[1] - a[1];
    tt_corner *in = poly[cur], *o = poly[1 - cur];
    int no = 0;
    for (int i = 0; i < np; i++) {
      const tt_corner *c0 = &in[i], *c1 = &in[(i + 1) % np];
      double s0 = sgn * (ex * (c0->y - a[1]) - ey * (c0->x - a[0]));
      double s1 = sgn * (ex * (c1->y - a[1]) - ey * (c1->x - a[0]));
      if (s0 >= 0.0) {
        o[no++] = *c0;
        if (s1 < 0.0) {
          double t = s0 / (s0 - s1);
          o[no++] = (tt_corner){c0->x + t * (c1->x - c0->x), c0->y + t * (c1->y - c0->y), -1, j};
        }
      } else if (s1 >= 0.0) {
        double t = s0 / (s0 - s1);
        o[no++] = (tt_corner){c0->x + t * (c1->x - c0->x), c0->y + t * (c1->y - c0->y), c0->pe,
                              c0->qe};
      }
      if (no > GEO_TT_PATCH_MAX) {
        return 0;
      }
    }
    np = no;
    cur = 1 - cur;
  }
  tt_corner *pc = poly[cur];
  // drop repeated corners (a clip line through a corner): keep the later edge label
  double scale = sqrt(geo_v3_dist2(P, P + 3)) + sqrt(geo_v3_dist2(P, P + 6));
  double eps = 1e-12 * scale;
  for (int i = 0; i < np && np > 0;) {
    tt_corner *a = &pc[i], *b = &pc[(i + 1) % np];
    if (np > 1 && fabs(a->x - b->x) <= eps && fabs(a->y - b->y) <= eps) {
      int keep_p = a->pe >= 0 ? a->pe : b->pe, keep_q = a->qe >= 0 ? a->qe : b->qe;
      b->pe = b->pe >= 0 ? b->pe : keep_p;
      b->qe = b->qe >= 0 ? b->qe : keep_q;
      memmove(&pc[i], &pc[i + 1], (size_t)(np - i - 1) * sizeof(*pc));
      np--;
    } else {
      i++;
    }
  }
  if (np < 3) {
    return 0;
  }
  double area = 0.0;
  for (int i = 0; i < np; i++) {
    const tt_corner *a = &pc[i], *b = &pc[(i + 1) % np];
    area += a->x * b->y - b->x * a->y;
  }
  area *= 0.5;
  if (!(area > 1e-12 * scale * scale)) {
    return 0;
  }
  double nn = geo_v3_dot(n, nQ);
  for (int i = 0; i < np; i++) {
    const tt_corner *c = &pc[i], *prev = &pc[(i + np - 1) % np];
    double *pa = out->pa[i], *pb = out->pb[i], d[3];
    for (int k = 0; k < 3; k++) {
      pa[k] = P[k] + c->x * u[k] + c->y * w[k];
    }
    // move along n onto Q's plane
    geo_v3_sub(d, Q, pa);
    geo_v3_madd(pb, pa, geo_v3_dot(d, nQ) / nn, n);
    out->fa[i] = corner_feat(prev->pe, c->pe);
    out->fb[i] = corner_feat(prev->qe, c->qe);
  }
  out->n = np;
  out->area = area;
  return np;
}

// feature of a point at parameter t of edge k, with ends snapped within tol
static geo_cfeat edge_point_feat(int k, double t, double tol) {
  return edge_param_feat(k, t <= tol ? 0.0 : (t >= 1.0 - tol ? 1.0 : t));
}

// clip segment a + t (b - a), t in [t0, t1], to triangle T's prism (T's plane normal n): the
// half-spaces inside each edge. Records the last clipping edge at each end (-1 if none).
static int clip_to_prism(const double a[3], const double b[3], const double T[9],
                         const double n[3], double *t0, double *t1, int *e0, int *e1) {
  *e0 = *e1 = -1;
  for (int k = 0; k < 3; k++) {
    const double *p = T + 3 * k, *q = T + 3 * ((k + 1) % 3);
    double ed[3], in[3], da[3], db[3];
    geo_v3_sub(ed, q, p);
    geo_v3_cross(in, n, ed);  // points into the triangle
    geo_v3_sub(da, a, p);
    geo_v3_sub(db, b, p);
    double sa = geo_v3_dot(in, da), sb = geo_v3_dot(in, db);
    if (sa < 0.0 && sb < 0.0) {
      return 0;
    }
    if (sa < 0.0 || sb < 0.0) {
      double t = sa / (sa - sb);
      if (sa < 0.0 && t > *t0) {
        *t0 = t;
        *e0 = k;
      } else if (sb < 0.0 && t < *t1) {
        *t1 = t;
        *e1 = k;
      }
    }
  }
  return *t1 > *t0;
}

// an edge of X parallel to Y's face at the minimum distance d: the overlap segment. swap
// says X is the second triangle (features and points go to the other side).
static int edge_on_face(const double X[9], const double Y[9], int swap, double sin_tol,
                        double d, double dist_tol, geo_tt_patch *out) {
  double e1[3], e2[3], n[3];
  geo_v3_sub(e1, Y + 3, Y);
  geo_v3_sub(e2, Y + 6, Y);
  geo_v3_cross(n, e1, e2);
  if (geo_v3_normalize(n) == 0.0) {
    return 0;
  }
  for (int k = 0; k < 3; k++) {
    const double *a = X + 3 * k, *b = X + 3 * ((k + 1) % 3);
    double ed[3], da[3], db[3];
    geo_v3_sub(ed, b, a);
    double len = geo_v3_norm(ed);
    if (!(len > 0.0) || fabs(geo_v3_dot(ed, n)) > sin_tol * len) {
      continue;
    }
    geo_v3_sub(da, a, Y);
    geo_v3_sub(db, b, Y);
    double ha = geo_v3_dot(da, n), hb = geo_v3_dot(db, n);
    if (fabs(fabs(ha) - d) > dist_tol || fabs(fabs(hb) - d) > dist_tol) {
      continue;
    }
    double t0 = 0.0, t1 = 1.0;
    int c0, c1;
    if (!clip_to_prism(a, b, Y, n, &t0, &t1, &c0, &c1) || (t1 - t0) * len <= dist_tol) {
      continue;
    }
    double tt[2] = {t0, t1};
    int cl[2] = {c0, c1};
    for (int m = 0; m < 2; m++) {
      double x[3], y[3];
      geo_v3_lerp(x, a, b, tt[m]);
      geo_v3_madd(y, x, -geo_v3_dot(n, x) + geo_v3_dot(n, Y), n);
      geo_cfeat fx = edge_point_feat(k, tt[m], 1e-12);
      geo_cfeat fy = {cl[m] >= 0 ? GEO_CF_EDGE : GEO_CF_FACE, cl[m] >= 0 ? cl[m] : 0};
      geo_v3_copy(swap ? out->pb[m] : out->pa[m], x);
      geo_v3_copy(swap ? out->pa[m] : out->pb[m], y);
      out->fa[m] = swap ? fy : fx;
      out->fb[m] = swap ? fx : fy;
    }
    out->n = 2;
    return 2;
  }
  return 0;
}

// two parallel edges at the minimum distance d: the overlap segment of their projections.
static int edge_edge_parallel(const double P[9], const double Q[9], double sin_tol, double d,
                              double dist_tol, geo_tt_patch *out) {
  for (int i = 0; i < 3; i++) {
    const double *a = P + 3 * i, *b = P + 3 * ((i + 1) % 3);
    double u[3], cr[3];
    geo_v3_sub(u, b, a);
    double lu = geo_v3_normalize(u);
    if (!(lu > 0.0)) {
      continue;
    }
    for (int j = 0; j < 3; j++) {
      const double *c = Q + 3 * j, *e = Q + 3 * ((j + 1) % 3);
      double v[3];
      geo_v3_sub(v, e, c);
      double lv = geo_v3_normalize(v);
      geo_v3_cross(cr, u, v);
      if (!(lv > 0.0) || geo_v3_norm(cr) > sin_tol) {
        continue;
      }
      // Q's ends in P's edge parameter (along u from a)
      double dc[3], de[3];
      geo_v3_sub(dc, c, a);
      geo_v3_sub(de, e, a);
      double sc = geo_v3_dot(dc, u), se = geo_v3_dot(de, u);
      double lo = fmax(0.0, fmin(sc, se)), hi = fmin(lu, fmax(sc, se));
      if (hi - lo <= dist_tol) {
        continue;
      }
      double sx[2] = {lo, hi};
      int ok = 1;
      geo_tt_patch tmp;
      for (int m = 0; m < 2 && ok; m++) {
        double x[3], y[3], t;
        geo_v3_madd(x, a, sx[m], u);
        // partner on Q's edge: the closest point of the segment c-e
        double dd = closest_point_segment(x, c, e, y, &t);
        ok = fabs(sqrt(dd) - d) <= dist_tol;
        geo_v3_copy(tmp.pa[m], x);
        geo_v3_copy(tmp.pb[m], y);
        tmp.fa[m] = edge_point_feat(i, sx[m] / lu, 1e-12);
        tmp.fb[m] = edge_point_feat(j, t, 1e-12);
      }
      if (ok) {
        *out = tmp;
        out->n = 2;
        out->area = 0.0;
        return 2;
      }
    }
  }
  return 0;
}

int geo_tritri_closest_set(const double P[9], const double Q[9], double sin_tol,
                           double dist_tol, geo_tt_patch *out) {
  out->n = 0;
  out->area = 0.0;
  geo_tt_result r;
  double d = geo_tritri_dist(P, Q, &r);
  if (r.intersect) {
    return 0;
  }
  // a face resting on a face: every corner pair at the minimum distance
  geo_tt_patch tmp;
  if (geo_tritri_parallel_patch(P, Q, sin_tol, &tmp) >= 3) {
    int ok = 1;
    for (int i = 0; i < tmp.n && ok; i++) {
      ok = fabs(geo_v3_dist(tmp.pa[i], tmp.pb[i]) - d) <= dist_tol;
    }
    if (ok) {
      *out = tmp;
      return out->n;
    }
  }
  // an edge resting on a face, or two parallel edges
  if (edge_on_face(P, Q, 0, sin_tol, d, dist_tol, out) ||
      edge_on_face(Q, P, 1, sin_tol, d, dist_tol, out) ||
      edge_edge_parallel(P, Q, sin_tol, d, dist_tol, out)) {
    return out->n;
  }
  // a unique closest pair
  geo_v3_copy(out->pa[0], r.pa);
  geo_v3_copy(out->pb[0], r.pb);
  out->fa[0] = r.fa;
  out->fb[0] = r.fb;
  out->n = 1;
  return 1;
}
