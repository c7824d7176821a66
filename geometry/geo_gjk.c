// GJK with the signed-volumes sub-algorithm (Montanari et al. 2017, Algorithms 2-4), run in
// A's local frame; B is mapped into it by the relative transform.
#include "geo_gjk.h"

#include "geo_tritri.h"

#include <float.h>
#include <math.h>
#include <string.h>

// a vertex of the Minkowski difference A - B (A's frame) with its origins.
typedef struct gjk_vtx {
  double w[3];  // a - b, with a the support point of A and b that of B in A's frame
  int ia, ib;   // their vertex ids (the points themselves are recomputed at the end)
} gjk_vtx;

typedef struct gjk_simplex {
  int n;
  gjk_vtx v[4];
  double lam[4];  // barycentric coordinates of the closest point
  int sliver;     // 1 when the closest point came from a needle triangle (ill-set plane)
} gjk_simplex;

static int same_sign(double a, double b) { return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0); }

// closest point of a sub-simplex: its vertex indices (into the full simplex) and weights.
typedef struct sub_result {
  int n;
  int idx[4];
  double lam[4];
  int has_v;    // 1 when v below is the closest point, computed more accurately than the
                // weighted sum (a triangle's interior: the projection on its plane)
  double v[3];
  int sliver;   // 1 when that triangle is a needle (sine of its shape below 1e-6)
} sub_result;

static double sub_dist2(const gjk_simplex *S, const sub_result *s) {
  if (s->has_v) {
    return geo_v3_norm2(s->v);
  }
  double v[3] = {0, 0, 0};
  for (int i = 0; i < s->n; i++) {
    geo_v3_madd(v, v, s->lam[i], S->v[s->idx[i]].w);
  }
  return geo_v3_norm2(v);
}

// segment p-q (Montanari Alg. 4): project on the line, decide in the best 1D axis.
static void s1d(const gjk_simplex *S, int ip, int iq, sub_result *out) {
  const double *p = S->v[ip].w, *q = S->v[iq].w;
  out->has_v = 0;
  out->sliver = 0;
  double t[3];
  geo_v3_sub(t, q, p);
  double tt = geo_v3_dot(t, t);
  if (!(tt > 0.0)) {
    out->n = 1;
    out->idx[0] = ip;
    out->lam[0] = 1.0;
    return;
  }
  double o[3];
  geo_v3_madd(o, p, -geo_v3_dot(p, t) / tt, t);
  int I = 0;
  for (int k = 1; k < 3; k++) {
    if (fabs(t[k]) > fabs(t[I])) {
      I = k;
    }
  }
  double mu = q[I] - p[I];
  double cp = q[I] - o[I], cq = o[I] - p[I];
  if (same_sign(mu, cp) && same_sign(mu, cq)) {
    out->n = 2;
    out->idx[0] = ip;
    out->idx[1] = iq;
    out->lam[0] = cp / mu;
    out->lam[1] = cq / mu;
  } else {
    out->n = 1;
    out->idx[0] = same_sign(mu, cp) ? ip : iq;
    out->lam[0] = 1.0;
  }
}

// signed doubled area of 2D triangle (a, b, c) in coordinates (x, y) = (k1, k2).
static double area2(const double *a, const double *b, const double *c, int k1, int k2) {
  return (b[k1] - a[k1]) * (c[k2] - a[k2]) - (b[k2] - a[k2]) * (c[k1] - a[k1]);
}

static void keep_best(const gjk_simplex *S, const sub_result *cand, sub_result *best,
                      double *bd) {
  double d = sub_dist2(S, cand);
  if (d < *bd) {
    *bd = d;
    *best = *cand;
  }
}

// triangle p-q-r (Montanari Alg. 3): project on the plane, decide in the best 2D plane.
static void s2d(const gjk_simplex *S, int ip, int iq, int ir, sub_result *out) {
  const double *p = S->v[ip].w, *q = S->v[iq].w, *r = S->v[ir].w;
  double e1[3], e2[3], n[3];
  geo_v3_sub(e1, q, p);
  geo_v3_sub(e2, r, p);
  geo_v3_cross(n, e1, e2);
  double nn = geo_v3_dot(n, n);
  int idx[3] = {ip, iq, ir};
  sub_result cand = {0};  // initialised: gcc -O3 cannot see every path sets it
  double bd = DBL_MAX;
  // a needle (height below 1e-6 of the longest side) has an ill-set plane: flag it
  double L2 = fmax(fmax(geo_v3_norm2(e1), geo_v3_norm2(e2)), geo_v3_dist2(q, r));
  int thin = !(nn > 1e-12 * L2 * L2);
  // degenerate (collinear) triangle: its closest point is on an edge
  if (!(nn > 1e-26 * geo_v3_norm2(e1) * geo_v3_norm2(e2))) {
    for (int k = 0; k < 3; k++) {
      s1d(S, idx[k], idx[(k + 1) % 3], &cand);
      keep_best(S, &cand, out, &bd);
    }
    out->sliver = 1;
    return;
  }
  double o[3];
  geo_v3_scale(o, n, geo_v3_dot(p, n) / nn);
  int J = 0;
  for (int k = 1; k < 3; k++) {
    if (fabs(n[k]) > fabs(n[J])) {
      J = k;
    }
  }
  int k1 = (J + 1) % 3, k2 = (J + 2) % 3;
  double mu = area2(p, q, r, k1, k2);
  double C[3] = {area2(o, q, r, k1, k2), area2(p, o, r, k1, k2), area2(p, q, o, k1, k2)};
  if (same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2])) {
    out->n = 3;
    for (int k = 0; k < 3; k++) {
      out->idx[k] = idx[k];
      out->lam[k] = C[k] / mu;
    }
    // the projection keeps the direction of the plane normal to rounding even when the
    // plane passes very close to the origin (the weighted sum loses it: near-parallel faces)
    out->has_v = 1;
    out->sliver = thin;
    geo_v3_copy(out->v, o);
    return;
  }
  // outside across the edge opposite vertex k for each k whose weight is not positive
  for (int k = 0; k < 3; k++) {
    if (!same_sign(mu, C[k])) {
      s1d(S, idx[(k + 1) % 3], idx[(k + 2) % 3], &cand);
      keep_best(S, &cand, out, &bd);
    }
  }
  out->sliver = thin;
}

// signed volume of (a, b, c, d): (b - a) . ((c - a) x (d - a)).
static double vol(const double *a, const double *b, const double *c, const double *d) {
  double u[3], v[3], w[3], x[3];
  geo_v3_sub(u, b, a);
  geo_v3_sub(v, c, a);
  geo_v3_sub(w, d, a);
  geo_v3_cross(x, v, w);
  return geo_v3_dot(u, x);
}

// tetrahedron (Montanari Alg. 2): cofactors are the signed volumes with the origin in place
// of each vertex.
static void s3d(const gjk_simplex *S, sub_result *out) {
  const double *s[4] = {S->v[0].w, S->v[1].w, S->v[2].w, S->v[3].w};
  static const double O[3] = {0, 0, 0};
  double C[4] = {vol(O, s[1], s[2], s[3]), vol(s[0], O, s[2], s[3]), vol(s[0], s[1], O, s[3]),
                 vol(s[0], s[1], s[2], O)};
  double mu = C[0] + C[1] + C[2] + C[3];
  double scale = 0.0;
  for (int k = 1; k < 4; k++) {
    scale = fmax(scale, geo_v3_dist2(s[k], s[0]));
  }
  int flat = !(fabs(mu) > 1e-13 * scale * sqrt(scale));
  out->has_v = 0;
  out->sliver = 0;
  if (!flat && same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2]) &&
      same_sign(mu, C[3])) {
    out->n = 4;
    for (int k = 0; k < 4; k++) {
      out->idx[k] = k;
      out->lam[k] = C[k] / mu;
    }
    return;
  }
  // the faces the origin is beyond (all of them for a flat tetrahedron)
  static const int opp[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
  sub_result cand = {0};  // initialised: gcc -O3 cannot see every path sets it
  double bd = DBL_MAX;
  for (int k = 0; k < 4; k++) {
    if (flat || !same_sign(mu, C[k])) {
      s2d(S, opp[k][0], opp[k][1], opp[k][2], &cand);
      keep_best(S, &cand, out, &bd);
    }
  }
  if (bd == DBL_MAX) {
    // inside but nearly flat: report the origin as enclosed
    out->n = 4;
    for (int k = 0; k < 4; k++) {
      out->idx[k] = k;
      out->lam[k] = 0.25;
    }
  }
}

// reduce S to the sub-simplex holding its closest point to the origin; v = that point.
static void closest(gjk_simplex *S, double v[3]) {
  sub_result sr;
  sr.has_v = 0;
  sr.sliver = 0;
  switch (S->n) {
    case 1:
      sr.n = 1;
      sr.idx[0] = 0;
      sr.lam[0] = 1.0;
      sr.has_v = 0;
      sr.sliver = 0;
      break;
    case 2:
      s1d(S, 0, 1, &sr);
      break;
    case 3:
      s2d(S, 0, 1, 2, &sr);
      break;
    default:
      s3d(S, &sr);
      break;
  }
  gjk_simplex T;
  T.n = sr.n;
  T.sliver = sr.sliver;
  for (int i = 0; i < sr.n; i++) {
    T.v[i] = S->v[sr.idx[i]];
    T.lam[i] = sr.lam[i];
  }
  *S = T;
  if (sr.has_v) {
    geo_v3_copy(v, sr.v);
    return;
  }
  geo_v3_set(v, 0, 0, 0);
  for (int i = 0; i < S->n; i++) {
    geo_v3_madd(v, v, S->lam[i], S->v[i].w);
  }
}

// coordinates of local vertex i of a set
static inline const double *cvx_vert(const geo_convex *c, int i) {
  return c->kind == GEO_CONVEX_INDEXED ? c->pts + 3 * c->idx[i] : c->pts + 3 * i;
}

static int support(const geo_convex *c, const double d[3], int seed) {
  if (c->kind == GEO_CONVEX_HULL && c->hull->nvert > GEO_GJK_CLIMB_MIN) {
    return geo_hull_support_climb(c->hull, d, seed);
  }
  if (c->kind == GEO_CONVEX_INDEXED) {
    int best = 0;
    double bd = geo_v3_dot(c->pts + 3 * c->idx[0], d);
    for (int i = 1; i < c->n; i++) {
      double x = geo_v3_dot(c->pts + 3 * c->idx[i], d);
      if (x > bd) {
        bd = x;
        best = i;
      }
    }
    return best;
  }
  int best = 0;
  double bd = geo_v3_dot(c->pts, d);
  for (int i = 1; i < c->n; i++) {
    double x = geo_v3_dot(c->pts + 3 * i, d);
    if (x > bd) {
      bd = x;
      best = i;
    }
  }
  return best;
}

// Minkowski vertex from vertex ids: a in A's frame, b mapped by the relative transform.
static void make_vtx(gjk_vtx *x, const geo_convex *A, const geo_convex *B, const geo_xform *rel,
                     int ia, int ib) {
  x->ia = ia;
  x->ib = ib;
  double b[3];
  geo_xform_point(b, rel, cvx_vert(B, ib));
  geo_v3_sub(x->w, cvx_vert(A, ia), b);
}

// the distinct vertex ids of one side of the simplex carrying weight, ascending.
static int side_vertices(const gjk_simplex *S, int side, int out[3]) {
  int ids[4];
  double w[4];
  int m = 0;
  for (int i = 0; i < S->n; i++) {
    int id = side == 0 ? S->v[i].ia : S->v[i].ib;
    int j = 0;
    while (j < m && ids[j] != id) {
      j++;
    }
    if (j == m) {
      ids[m] = id;
      w[m++] = 0.0;
    }
    w[j] += S->lam[i];
  }
  int k = 0;
  for (int j = 0; j < m; j++) {
    if (w[j] > 1e-10 && k < 3) {
      out[k++] = ids[j];
    }
  }
  if (k == 0) {
    out[k++] = ids[0];
  }
  // ascending
  for (int i = 1; i < k; i++) {
    for (int j = i; j > 0 && out[j] < out[j - 1]; j--) {
      int t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  }
  return k;
}

// the face of hull h holding vertices v[0..nv-1] (nv = 2 or 3); edge search for nv = 2.
static geo_cfeat hull_feature(const geo_hull *h, const int *v, int nv) {
  geo_cfeat f = {GEO_CF_FACE, -1};
  int s = h->vadj_start[v[0]], e = h->vadj_start[v[0] + 1];
  if (nv == 2) {
    for (int k = s; k < e; k++) {
      if (h->vadj[k] == v[1]) {
        f.type = GEO_CF_EDGE;
        f.id = h->vadj_edge[k];
        return f;
      }
    }
  }
  // a face around v[0] whose plane holds the other vertices (coplanar faces: first one)
  double bestoff = DBL_MAX;
  for (int k = s; k < e; k++) {
    int fi = h->vadj_face[k];
    const double *pl = h->plane + 4 * fi;
    double off = 0.0;
    for (int j = 1; j < nv; j++) {
      off = fmax(off, fabs(geo_v3_dot(pl, h->vert + 3 * v[j]) - pl[3]));
    }
    if (off < bestoff) {
      bestoff = off;
      f.id = fi;
    }
  }
  return f;
}

static geo_cfeat feature_of(const geo_convex *c, const int *v, int nv) {
  geo_cfeat f = {GEO_CF_VERTEX, v[0]};
  if (nv == 1) {
    return f;
  }
  if (c->kind == GEO_CONVEX_HULL) {
    return hull_feature(c->hull, v, nv);
  }
  if (c->n == 2 || (c->n == 3 && nv == 2)) {
    f.type = GEO_CF_EDGE;
    f.id = (v[0] == 0 && v[1] == 2) ? 2 : v[0];
  } else if (c->n == 3) {
    f.type = GEO_CF_FACE;
    f.id = 0;
  } else {
    f.type = nv == 2 ? GEO_CF_EDGE : GEO_CF_FACE;
    f.id = -1;
  }
  return f;
}

// a few triangles of a set (local vertex id triples, possibly degenerate): the faces around
// its witness vertices, or the witness feature itself. At most PATCH_MAX are kept.
#define PATCH_MAX 48
typedef struct patch {
  int n;
  int tri[PATCH_MAX][3];
} patch;

static void patch_add(patch *p, int a, int b, int c) {
  for (int i = 0; i < p->n; i++) {
    if (p->tri[i][0] == a && p->tri[i][1] == b && p->tri[i][2] == c) {
      return;
    }
  }
  if (p->n < PATCH_MAX) {
    p->tri[p->n][0] = a;
    p->tri[p->n][1] = b;
    p->tri[p->n][2] = c;
    p->n++;
  }
}

static void make_patch(const geo_convex *c, const int *vs, int nv, int full, patch *p) {
  p->n = 0;
  if (!full) {
    // the witness feature itself, as a (possibly degenerate) triangle
    patch_add(p, vs[0], vs[nv > 1 ? 1 : 0], vs[nv - 1]);
  } else if (c->kind == GEO_CONVEX_HULL) {
    const geo_hull *h = c->hull;
    for (int i = 0; i < nv; i++) {
      for (int k = h->vadj_start[vs[i]]; k < h->vadj_start[vs[i] + 1]; k++) {
        const int *f = h->face + 3 * h->vadj_face[k];
        patch_add(p, f[0], f[1], f[2]);
      }
    }
  } else if (c->n <= 3) {
    patch_add(p, 0, c->n > 1 ? 1 : 0, c->n > 2 ? 2 : c->n - 1);
  } else {
    patch_add(p, vs[0], vs[nv > 1 ? 1 : 0], vs[nv - 1]);
  }
}

// the set's feature for the tri-tri feature f of triangle t (local ids); fills ids.
static geo_cfeat patch_feature(const geo_convex *c, const int t[3], geo_cfeat f, int ids[3],
                               int *nid) {
  int m = 0, cand[3];
  if (f.type == GEO_CF_VERTEX) {
    cand[m++] = t[f.id];
  } else if (f.type == GEO_CF_EDGE) {
    cand[m++] = t[f.id];
    cand[m++] = t[(f.id + 1) % 3];
  } else {
    cand[m++] = t[0];
    cand[m++] = t[1];
    cand[m++] = t[2];
  }
  // distinct, ascending
  int k = 0;
  for (int i = 0; i < m; i++) {
    int dup = 0;
    for (int j = 0; j < k; j++) {
      dup |= ids[j] == cand[i];
    }
    if (!dup) {
      ids[k++] = cand[i];
    }
  }
  for (int i = 1; i < k; i++) {
    for (int j = i; j > 0 && ids[j] < ids[j - 1]; j--) {
      int tmp = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = tmp;
    }
  }
  *nid = k;
  return feature_of(c, ids, k);
}

// closed-form minimum between the witness features (full = 0) or over the face pairs
// around them (full = 1); replaces the result when closer. pa, pb in A's frame.
static void polish(const geo_convex *A, const geo_convex *B, const geo_xform *rel, int full,
                   geo_gjk_result *r, double *dist, double pa[3], double pb[3],
                   int *intersect) {
  patch P, Q;
  make_patch(A, r->va, r->nva, full, &P);
  make_patch(B, r->vb, r->nvb, full, &Q);
  double TB[PATCH_MAX][9];
  for (int j = 0; j < Q.n; j++) {
    for (int k = 0; k < 3; k++) {
      geo_xform_point(TB[j] + 3 * k, rel, cvx_vert(B, Q.tri[j][k]));
    }
  }
  double best = *dist;
  int bi = -1, bj = -1;
  geo_tt_result bt, tt;
  for (int i = 0; i < P.n; i++) {
    double TA[9];
    for (int k = 0; k < 3; k++) {
      geo_v3_copy(TA + 3 * k, cvx_vert(A, P.tri[i][k]));
    }
    for (int j = 0; j < Q.n; j++) {
      double d = geo_tritri_dist(TA, TB[j], &tt);
      if (d < best) {
        best = d;
        bi = i;
        bj = j;
        bt = tt;
      }
    }
  }
  if (bi < 0) {
    return;
  }
  *dist = best;
  geo_v3_copy(pa, bt.pa);
  geo_v3_copy(pb, bt.pb);
  *intersect = bt.intersect;
  r->fa = patch_feature(A, P.tri[bi], bt.fa, r->va, &r->nva);
  r->fb = patch_feature(B, Q.tri[bj], bt.fb, r->vb, &r->nvb);
}

// 1 if a vertex next to the witness vertices ids of set c is within the direction
// uncertainty tau [rad] of being as far along the unit direction u (in c's frame):
// u . (x_j - x_i) > -tau (|x_j - x_i| + |x_i|) for a neighbour j of a witness vertex i
// (tested without square roots, erring towards a tie).
static int near_tie(const geo_convex *c, const int *ids, int nid, const double u[3],
                    double tau) {
  double t2 = 2.0 * tau * tau;
  for (int a = 0; a < nid; a++) {
    int i = ids[a];
    const double *xi = cvx_vert(c, i);
    double xi2 = geo_v3_norm2(xi);
    int from = 0, to = c->n;
    const int *nb = NULL;
    if (c->kind == GEO_CONVEX_HULL) {
      from = c->hull->vadj_start[i];
      to = c->hull->vadj_start[i + 1];
      nb = c->hull->vadj;
    }
    for (int k = from; k < to; k++) {
      int j = nb ? nb[k] : k;
      int mine = 0;
      for (int b = 0; b < nid; b++) {
        mine |= ids[b] == j;
      }
      if (mine) {
        continue;
      }
      double d[3];
      geo_v3_sub(d, cvx_vert(c, j), xi);
      double ud = geo_v3_dot(u, d);
      if (!(ud < 0.0 && ud * ud > t2 * (geo_v3_norm2(d) + xi2))) {
        return 1;
      }
    }
  }
  return 0;
}

static int has_pair(const gjk_simplex *S, int ia, int ib) {
  for (int i = 0; i < S->n; i++) {
    if (S->v[i].ia == ia && S->v[i].ib == ib) {
      return 1;
    }
  }
  return 0;
}

int geo_gjk(const geo_convex *A, const geo_xform *XA, const geo_convex *B,
            const geo_xform *XB, const geo_gjk_opts *opts, geo_gjk_cache *cache,
            geo_gjk_result *r) {
  double eps_rel = 1e-14, stop_above = 0.0, stop_below = 0.0;
  int max_iter = 128;
  if (opts) {
    eps_rel = opts->eps_rel > 0.0 ? opts->eps_rel : eps_rel;
    max_iter = opts->max_iter > 0 ? opts->max_iter : max_iter;
    stop_above = opts->stop_above;
    stop_below = opts->stop_below;
  }
  memset(r, 0, sizeof(*r));
  if (!A || !B || A->n < 1 || B->n < 1 || !A->pts || !B->pts ||
      (A->kind == GEO_CONVEX_HULL && !A->hull) || (B->kind == GEO_CONVEX_HULL && !B->hull) ||
      (A->kind == GEO_CONVEX_INDEXED && !A->idx) || (B->kind == GEO_CONVEX_INDEXED && !B->idx)) {
    r->dist = INFINITY;
    return GEO_GJK_EINVAL;
  }
  // work in A's frame
  geo_xform rel;
  geo_xform_rel(&rel, XA, XB);
  int seed_a = 0, seed_b = 0;
  gjk_simplex S;
  S.n = 0;
  S.sliver = 0;
  if (cache) {
    seed_a = (cache->seed_a >= 0 && cache->seed_a < A->n) ? cache->seed_a : 0;
    seed_b = (cache->seed_b >= 0 && cache->seed_b < B->n) ? cache->seed_b : 0;
    if (cache->n >= 1 && cache->n <= 4) {
      int ok = 1;
      for (int i = 0; i < cache->n; i++) {
        ok = ok && cache->ia[i] >= 0 && cache->ia[i] < A->n && cache->ib[i] >= 0 &&
             cache->ib[i] < B->n && !has_pair(&S, cache->ia[i], cache->ib[i]);
        if (ok) {
          make_vtx(&S.v[S.n++], A, B, &rel, cache->ia[i], cache->ib[i]);
        }
      }
      if (!ok) {
        S.n = 0;
      }
    }
  }
  if (S.n == 0) {
    // cold: the vertices facing each other along the line between the sets' centres
    double ca[3], cb[3], d[3], db[3];
    geo_v3_copy(ca, A->kind == GEO_CONVEX_HULL ? A->hull->center : cvx_vert(A, 0));
    geo_xform_point(cb, &rel, B->kind == GEO_CONVEX_HULL ? B->hull->center : cvx_vert(B, 0));
    geo_v3_sub(d, cb, ca);
    if (geo_v3_norm2(d) > 0.0) {
      seed_a = support(A, d, seed_a);
      geo_v3_scale(d, d, -1.0);
      geo_m3_tmulv(db, rel.R, d);
      seed_b = support(B, db, seed_b);
    }
    make_vtx(&S.v[0], A, B, &rel, seed_a, seed_b);
    S.n = 1;
  }
  double v[3];
  closest(&S, v);
  double vv = geo_v3_norm2(v), lower = 0.0;
  int status = GEO_GJK_MAXITER, intersect = 0, it = 0;
  double maxw2 = 0.0;
  for (int i = 0; i < S.n; i++) {
    maxw2 = fmax(maxw2, geo_v3_norm2(S.v[i].w));
  }
  // Montanari et al. Alg. 1: support in -v, stop on relative gap, containment or no progress
  while (it < max_iter) {
    if (S.n == 4 || vv <= 1e-28 * maxw2) {
      intersect = 1;
      status = GEO_GJK_OK;
      break;
    }
    if (stop_below > 0.0 && vv < stop_below * stop_below) {
      status = GEO_GJK_BELOW;
      break;
    }
    it++;
    double d[3], db[3];
    geo_v3_scale(d, v, -1.0);
    int ia = support(A, d, seed_a);
    geo_m3_tmulv(db, rel.R, v);
    int ib = support(B, db, seed_b);
    seed_a = ia;
    seed_b = ib;
    gjk_vtx x;
    make_vtx(&x, A, B, &rel, ia, ib);
    double vw = geo_v3_dot(v, x.w);
    if (vw > 0.0) {
      lower = fmax(lower, vw / sqrt(vv));
    }
    if (stop_above > 0.0 && lower > stop_above) {
      status = GEO_GJK_ABOVE;
      break;
    }
    if (has_pair(&S, ia, ib) || vv - vw <= eps_rel * vv) {
      status = GEO_GJK_OK;
      break;
    }
    gjk_simplex prev = S;
    S.v[S.n++] = x;
    maxw2 = fmax(maxw2, geo_v3_norm2(x.w));
    double nv[3];
    closest(&S, nv);
    double nvv = geo_v3_norm2(nv);
    if (S.n < 4 && !(nvv < vv)) {
      // no progress in floating point: keep the previous simplex, it is as good
      S = prev;
      status = GEO_GJK_OK;
      break;
    }
    geo_v3_copy(v, nv);
    vv = nvv;
  }
  // witnesses and features from the final simplex
  double pa[3] = {0, 0, 0}, pb[3] = {0, 0, 0};
  for (int i = 0; i < S.n; i++) {
    double b[3];
    geo_xform_point(b, &rel, cvx_vert(B, S.v[i].ib));
    geo_v3_madd(pa, pa, S.lam[i], cvx_vert(A, S.v[i].ia));
    geo_v3_madd(pb, pb, S.lam[i], b);
  }
  r->nva = side_vertices(&S, 0, r->va);
  r->nvb = side_vertices(&S, 1, r->vb);
  r->fa = feature_of(A, r->va, r->nva);
  r->fb = feature_of(B, r->vb, r->nvb);
  double dist = intersect ? 0.0 : geo_v3_dist(pa, pb);
  // the direction of v is only good to about eps |w| / |v|; among nearly tied vertices
  // (near-parallel faces and edges) GJK may then stop on a neighbour of the closest feature.
  // When a neighbour of a witness vertex is tied within that uncertainty (or the sets nearly
  // touch), polish with the closed-form triangle distance over the faces around the witnesses
  // Within the witness features the closed form is also better conditioned than the
  // Minkowski simplex when that ended on a needle triangle or on a diagonal of a flat piece
  // of A - B (twisted, nearly parallel edges): the pair is then recomputed from the
  // features themselves.
  if (!intersect && status != GEO_GJK_ABOVE && vv > 0.0) {
    double vn = sqrt(vv), u[3], ub[3];
    double tau = 64.0 * DBL_EPSILON * sqrt(maxw2) / vn;  // direction uncertainty [rad]
    geo_v3_scale(u, v, -1.0 / vn);
    geo_m3_tmulv(ub, rel.R, v);
    geo_v3_scale(ub, ub, 1.0 / vn);
    int full = vv < 1e-12 * maxw2 || near_tie(A, r->va, r->nva, u, tau) ||
               near_tie(B, r->vb, r->nvb, ub, tau);
    // more witness vertices than a simplex of that size spans generically: parallel
    // features (the simplex holds a diagonal of a flat piece of A - B)
    int parallel = r->nva + r->nvb > S.n + 1;
    if (full || S.sliver || parallel) {
      polish(A, B, &rel, full, r, &dist, pa, pb, &intersect);
    }
  }
  if (intersect) {
    // a common point: the same weights give a point of A and a point of B that coincide
    geo_v3_scale(pa, pa, 0.5);
    geo_v3_madd(pa, pa, 0.5, pb);
    geo_v3_copy(pb, pa);
    dist = 0.0;
    lower = 0.0;
  }
  r->dist = dist;
  r->lower = fmin(lower, r->dist);
  r->intersect = intersect;
  r->iters = it;
  geo_xform_point(r->pa, XA, pa);
  geo_xform_point(r->pb, XA, pb);
  // indexed sets answer in their listed ids
  for (int i = 0; i < r->nva && A->kind == GEO_CONVEX_INDEXED; i++) {
    r->va[i] = A->idx[r->va[i]];
  }
  for (int i = 0; i < r->nvb && B->kind == GEO_CONVEX_INDEXED; i++) {
    r->vb[i] = B->idx[r->vb[i]];
  }
  if (A->kind == GEO_CONVEX_INDEXED && r->fa.type == GEO_CF_VERTEX) {
    r->fa.id = r->va[0];
  }
  if (B->kind == GEO_CONVEX_INDEXED && r->fb.type == GEO_CF_VERTEX) {
    r->fb.id = r->vb[0];
  }
  if (cache) {
    cache->n = S.n;
    for (int i = 0; i < S.n; i++) {
      cache->ia[i] = S.v[i].ia;
      cache->ib[i] = S.v[i].ib;
    }
    cache->seed_a = seed_a;
    cache->seed_b = seed_b;
  }
  return status;
}
