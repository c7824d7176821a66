// Hierarchy build: top-down split of triangles, oriented boxes from the area-weighted
// covariance, spheres about the box centres, hull vertex sets per node.
#include "geo_err.h"
#include "geo_bvh.h"
#include "geo_mass.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geo_vec.h"

#define BVH_MAX_DEPTH 60  // beyond this depth the split falls back to the median count

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// make the axis rows orthonormal and right-handed (guards against a poor Jacobi result)
static void orthonormalize(double ax[9]) {
  double *a0 = ax, *a1 = ax + 3, *a2 = ax + 6;
  if (geo_v3_normalize(a0) == 0.0) {
    geo_v3_set(a0, 1, 0, 0);
  }
  geo_v3_madd(a1, a1, -geo_v3_dot(a0, a1), a0);
  if (geo_v3_normalize(a1) < 1e-6) {
    double e[3] = {0, 0, 0};
    e[fabs(a0[0]) < 0.6 ? 0 : (fabs(a0[1]) < 0.6 ? 1 : 2)] = 1.0;
    geo_v3_madd(a1, e, -geo_v3_dot(a0, e), a0);
    geo_v3_normalize(a1);
  }
  geo_v3_cross(a2, a0, a1);
  geo_v3_normalize(a2);
}

typedef struct build_ctx {
  geo_bvh *b;
  const double *cen;  // (ntri x 3) triangle centroids
  const double *area; // (ntri) triangle areas
  double *key;        // (ntri) scratch: projection of centroids
  int next;           // next free node id
  int *hull_tmp;      // scratch: candidate vertex ids (ntri x 3)
  int *vmark;         // (nvert) scratch stamps
  int stamp;
} build_ctx;

// the box and sphere of a subtree
static void fit_node(build_ctx *cx, geo_bvh_node *nd) {
  const geo_bvh *b = cx->b;
  const int *ord = b->tri_order + nd->first;
  int n = nd->count;
  double ax[9];
  if (n == 1) {
    // one triangle: longest side, in-plane perpendicular, normal
    const int *t = b->tri + 3 * ord[0];
    const double *v[3] = {b->vert + 3 * t[0], b->vert + 3 * t[1], b->vert + 3 * t[2]};
    int kbest = 0;
    double lbest = -1.0;
    for (int k = 0; k < 3; k++) {
      double l = geo_v3_dist2(v[k], v[(k + 1) % 3]);
      if (l > lbest) {
        lbest = l;
        kbest = k;
      }
    }
    geo_v3_sub(ax, v[(kbest + 1) % 3], v[kbest]);
    geo_v3_copy(ax + 6, b->tri_normal + 3 * ord[0]);
    geo_v3_cross(ax + 3, ax + 6, ax);
    orthonormalize(ax);
  } else {
    // area-weighted covariance of the triangles (Gottschalk's formula)
    double atot = 0.0, mu[3] = {0, 0, 0}, C[9] = {0};
    for (int i = 0; i < n; i++) {
      int t = ord[i];
      double a = cx->area[t] + 1e-300;
      atot += a;
      geo_v3_madd(mu, mu, a, cx->cen + 3 * t);
    }
    geo_v3_scale(mu, mu, 1.0 / atot);
    for (int i = 0; i < n; i++) {
      int t = ord[i];
      double a = cx->area[t] + 1e-300;
      const int *tv = b->tri + 3 * t;
      double p[3][3], m[3];
      for (int k = 0; k < 3; k++) {
        geo_v3_sub(p[k], b->vert + 3 * tv[k], mu);
      }
      geo_v3_sub(m, cx->cen + 3 * t, mu);
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          C[3 * r + c] += a / 12.0 * (9.0 * m[r] * m[c] + p[0][r] * p[0][c] + p[1][r] * p[1][c] +
                                      p[2][r] * p[2][c]);
        }
      }
    }
    double lam[3];
    geo_sym3_eig(C, lam, ax);
    orthonormalize(ax);
  }
  // extents along the axes
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; i++) {
    const int *tv = b->tri + 3 * ord[i];
    for (int k = 0; k < 3; k++) {
      const double *v = b->vert + 3 * tv[k];
      for (int a = 0; a < 3; a++) {
        double s = geo_v3_dot(ax + 3 * a, v);
        lo[a] = fmin(lo[a], s);
        hi[a] = fmax(hi[a], s);
      }
    }
  }
  double c[3] = {0, 0, 0};
  for (int a = 0; a < 3; a++) {
    geo_v3_madd(c, c, 0.5 * (lo[a] + hi[a]), ax + 3 * a);
  }
  double ext = 0.0, mag = 0.0;
  for (int a = 0; a < 3; a++) {
    ext = fmax(ext, hi[a] - lo[a]);
    mag = fmax(mag, fmax(fabs(lo[a]), fabs(hi[a])));
  }
  // inflate by a relative hair (of the size and of the distance from the origin, the
  // rounding of the centre) so rounding never un-contains a vertex
  double pad = 1e-12 * ext + 1e-13 * mag + 1e-300;
  for (int a = 0; a < 3; a++) {
    nd->h[a] = 0.5 * (hi[a] - lo[a]) + pad;
  }
  memcpy(nd->ax, ax, sizeof ax);
  geo_v3_copy(nd->c, c);
  double r2 = 0.0;
  for (int i = 0; i < n; i++) {
    const int *tv = b->tri + 3 * ord[i];
    for (int k = 0; k < 3; k++) {
      r2 = fmax(r2, geo_v3_dist2(c, b->vert + 3 * tv[k]));
    }
  }
  nd->r = sqrt(r2) * (1.0 + 1e-12) + 1e-300;
}

// sort helper: partition ord[0..n) by key (ascending) around position m (quickselect)
static void select_nth(int *ord, double *key, int n, int m) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    double piv = key[ord[(lo + hi) / 2]];
    int i = lo, j = hi;
    while (i <= j) {
      while (key[ord[i]] < piv) {
        i++;
      }
      while (key[ord[j]] > piv) {
        j--;
      }
      if (i <= j) {
        int t = ord[i];
        ord[i] = ord[j];
        ord[j] = t;
        i++;
        j--;
      }
    }
    if (m <= j) {
      hi = j;
    } else if (m >= i) {
      lo = i;
    } else {
      break;
    }
  }
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int build_node(build_ctx *cx, int first, int count, int depth) {
  geo_bvh *b = cx->b;
  int id = cx->next++;
  geo_bvh_node *nd = &b->node[id];
  nd->first = first;
  nd->count = count;
  nd->left = nd->right = -1;
  nd->tri = -1;
  nd->hull_first = 0;
  nd->hull_n = 0;
  fit_node(cx, nd);
  if (depth > b->depth) {
    b->depth = depth;
  }
  if (count == 1) {
    nd->tri = b->tri_order[first];
    return id;
  }
  // split plane: the mean of the centroids along the longest box axis
  int a = 0;
  for (int k = 1; k < 3; k++) {
    if (nd->h[k] > nd->h[a]) {
      a = k;
    }
  }
  int *ord = b->tri_order + first;
  double axis[3];
  geo_v3_copy(axis, nd->ax + 3 * a);
  double mean = 0.0;
  for (int i = 0; i < count; i++) {
    cx->key[ord[i]] = geo_v3_dot(axis, cx->cen + 3 * ord[i]);
    mean += cx->key[ord[i]];
  }
  mean /= count;
  int i = 0, j = count - 1;
  while (i <= j) {
    if (cx->key[ord[i]] < mean) {
      i++;
    } else {
      int t = ord[i];
      ord[i] = ord[j];
      ord[j] = t;
      j--;
    }
  }
  int nleft = i;
  if (nleft == 0 || nleft == count || depth >= BVH_MAX_DEPTH) {
    nleft = count / 2;
    select_nth(ord, cx->key, count, nleft);
  }
  // left subtree first so ids follow depth-first order
  int l = build_node(cx, first, nleft, depth + 1);
  int r = build_node(cx, first + nleft, count - nleft, depth + 1);
  nd = &b->node[id];
  nd->left = l;
  nd->right = r;
  return id;
}

// hull vertex sets, bottom-up (children have larger ids than parents): a candidate vertex
// (from the children's sets) is dropped when it lies strictly inside the convex hull of
// the others, tested with a conservative sufficient condition: inside the tetrahedron
// spanned by four extreme candidates along +-box axes. What remains is a superset of the
// hull's vertices (exactly the hull vertices for the leaves), so every support query on it
// returns the true support value of the subtree.
static int inside_tet(const double *p, const double *t0, const double *t1, const double *t2,
                      const double *t3) {
  const double *T[4] = {t0, t1, t2, t3};
  for (int f = 0; f < 4; f++) {
    const double *a = T[f], *bb = T[(f + 1) % 4], *c = T[(f + 2) % 4], *o = T[(f + 3) % 4];
    double e1[3], e2[3], n[3], d[3], dp[3];
    geo_v3_sub(e1, bb, a);
    geo_v3_sub(e2, c, a);
    geo_v3_cross(n, e1, e2);
    geo_v3_sub(d, o, a);
    geo_v3_sub(dp, p, a);
    double so = geo_v3_dot(n, d), sp = geo_v3_dot(n, dp);
    double tol = 1e-9 * geo_v3_norm(n) * sqrt(geo_v3_norm2(dp) + geo_v3_norm2(d));
    if (so == 0.0 || !(so > 0 ? sp > tol : sp < -tol)) {
      return 0;
    }
  }
  return 1;
}

static int build_hulls(build_ctx *cx) {
  geo_bvh *b = cx->b;
  // total capacity: leaves 3 each, interior at most the sum of children's; we grow lists
  size_t cap = (size_t)b->ntri * 3 * 4 + 64, len = 0;
  int *hv = malloc(cap * sizeof *hv);
  if (hv == NULL) {
    return -1;
  }
  for (int id = b->nnode - 1; id >= 0; id--) {
    geo_bvh_node *nd = &b->node[id];
    int nc = 0;
    int *cand = cx->hull_tmp;
    if (nd->tri >= 0) {
      for (int k = 0; k < 3; k++) {
        cand[nc++] = b->tri[3 * nd->tri + k];
      }
    } else {
      const geo_bvh_node *ch[2] = {&b->node[nd->left], &b->node[nd->right]};
      cx->stamp++;
      for (int s = 0; s < 2; s++) {
        for (int k = 0; k < ch[s]->hull_n; k++) {
          int v = hv[ch[s]->hull_first + k];
          if (cx->vmark[v] != cx->stamp) {
            cx->vmark[v] = cx->stamp;
            cand[nc++] = v;
          }
        }
      }
      // extreme candidates along the 6 box directions span a tetrahedron (or more)
      int ext[6];
      for (int a = 0; a < 3; a++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < nc; k++) {
          double s = geo_v3_dot(nd->ax + 3 * a, b->vert + 3 * cand[k]);
          if (s < lo) {
            lo = s;
            ext[2 * a] = cand[k];
          }
          if (s > hi) {
            hi = s;
            ext[2 * a + 1] = cand[k];
          }
        }
      }
      int keep = 0;
      for (int k = 0; k < nc; k++) {
        const double *p = b->vert + 3 * cand[k];
        int in = 0;
        // two tetrahedra covering the octahedron of the 6 extremes
        const double *e[6];
        for (int q = 0; q < 6; q++) {
          e[q] = b->vert + 3 * ext[q];
        }
        if (inside_tet(p, e[0], e[1], e[2], e[4]) || inside_tet(p, e[0], e[1], e[3], e[4]) ||
            inside_tet(p, e[0], e[1], e[2], e[5]) || inside_tet(p, e[0], e[1], e[3], e[5])) {
          in = 1;
        }
        if (!in) {
          cand[keep++] = cand[k];
        }
      }
      nc = keep;
      qsort(cand, (size_t)nc, sizeof *cand, cmp_int);
    }
    if (len + (size_t)nc > cap) {
      size_t ncap = 2 * cap + (size_t)nc;
      int *tmp = realloc(hv, ncap * sizeof *hv);
      if (tmp == NULL) {
        free(hv);
        return -1;
      }
      hv = tmp;
      cap = ncap;
    }
    memcpy(hv + len, cand, (size_t)nc * sizeof *cand);
    nd->hull_first = (int)len;
    nd->hull_n = nc;
    len += (size_t)nc;
  }
  b->hull_vert = hv;
  b->nhull_vert = (int)len;
  return 0;
}

void geo_bvh_tri_data_fill(const double *const v[3], const int id[3], const double n[3],
                           int with_mid, geo_tri_data *out) {
  for (int k = 0; k < 3; k++) {
    int k1 = k == 2 ? 0 : k + 1, i0 = k, i1 = k1;
    double e[3], *mk = out->m + 3 * k, *ek = out->ed + 3 * k;
    geo_v3_sub(e, v[k1], v[k]);
    geo_v3_cross(mk, n, e);
    out->mn2[k] = geo_v3_dot(mk, mk);
    if (id[i0] > id[i1]) {
      i0 = k1;
      i1 = k;
    }
    geo_v3_sub(ek, v[i1], v[i0]);
    out->en2[k] = geo_v3_dot(ek, ek);
    if (with_mid) {
      geo_v3_lerp(out->mid + 3 * k, v[k], v[k1], 0.5);
    }
  }
  geo_v3_sub(out->e1, v[1], v[0]);
  geo_v3_sub(out->e2, v[2], v[0]);
  double a = geo_v3_dot(out->e1, out->e1), b = geo_v3_dot(out->e1, out->e2);
  double c = geo_v3_dot(out->e2, out->e2);
  out->gram[0] = a;
  out->gram[1] = b;
  out->gram[2] = c;
  out->gram[3] = a * c - b * b;
}

geo_bvh *geo_bvh_new(const geo_mesh *m, char *err, size_t err_sz) {
  double t0 = now_seconds();
  if (m == NULL || m->ntri < 1 || m->nvert < 3 || m->vert == NULL || m->tri == NULL ||
      m->tri_normal == NULL || m->tri_edge == NULL) {
    geo_set_err(err, err_sz, "geo_bvh_new: empty or incomplete mesh");
    return NULL;
  }
  geo_bvh *b = calloc(1, sizeof *b);
  build_ctx cx = {0};
  double *cen = NULL, *area = NULL;
  if (b == NULL) {
    goto oom;
  }
  b->nvert = m->nvert;
  b->ntri = m->ntri;
  b->nedge = m->nedge;
  b->closed = m->closed;
  b->mesh = m;
  b->nnode = 2 * m->ntri - 1;
  b->vert = malloc((size_t)m->nvert * 3 * sizeof *b->vert);
  b->tri = malloc((size_t)m->ntri * 3 * sizeof *b->tri);
  b->tri_normal = malloc((size_t)m->ntri * 3 * sizeof *b->tri_normal);
  b->tri_edge = malloc((size_t)m->ntri * 3 * sizeof *b->tri_edge);
  b->tri_side_off = malloc((size_t)m->ntri * 6 * sizeof *b->tri_side_off);
  b->tri_data = malloc((size_t)m->ntri * sizeof *b->tri_data);
  b->node = calloc((size_t)b->nnode, sizeof *b->node);
  b->tri_order = malloc((size_t)m->ntri * sizeof *b->tri_order);
  cen = malloc((size_t)m->ntri * 3 * sizeof *cen);
  area = malloc((size_t)m->ntri * sizeof *area);
  cx.key = malloc((size_t)m->ntri * sizeof *cx.key);
  cx.hull_tmp = malloc((size_t)m->ntri * 3 * sizeof *cx.hull_tmp + 16);
  cx.vmark = calloc((size_t)m->nvert, sizeof *cx.vmark);
  if (!b->vert || !b->tri || !b->tri_normal || !b->tri_edge || !b->tri_side_off ||
      !b->tri_data || !b->node || !b->tri_order || !cen || !area || !cx.key || !cx.hull_tmp ||
      !cx.vmark) {
    goto oom;
  }
  memcpy(b->vert, m->vert, (size_t)m->nvert * 3 * sizeof *b->vert);
  memcpy(b->tri, m->tri, (size_t)m->ntri * 3 * sizeof *b->tri);
  memcpy(b->tri_normal, m->tri_normal, (size_t)m->ntri * 3 * sizeof *b->tri_normal);
  memcpy(b->tri_edge, m->tri_edge, (size_t)m->ntri * 3 * sizeof *b->tri_edge);
  // centroids and areas
  for (int t = 0; t < m->ntri; t++) {
    const int *tv = b->tri + 3 * t;
    for (int k = 0; k < 3; k++) {
      if (tv[k] < 0 || tv[k] >= m->nvert) {
        geo_set_err(err, err_sz, "geo_bvh_new: triangle %d: vertex index out of range", t);
        goto fail;
      }
    }
    const double *v0 = b->vert + 3 * tv[0], *v1 = b->vert + 3 * tv[1], *v2 = b->vert + 3 * tv[2];
    for (int k = 0; k < 3; k++) {
      cen[3 * t + k] = (v0[k] + v1[k] + v2[k]) / 3.0;
    }
    // the kernel data by the very operations the query's triangle kernel would apply to
    // B's (untransformed) triangles, so the kernel may read it instead, bit for bit
    const double *v[3] = {v0, v1, v2};
    geo_tri_data *td = &b->tri_data[t];
    geo_bvh_tri_data_fill(v, tv, b->tri_normal + 3 * t, 1, td);
    double n[3];
    geo_v3_cross(n, td->e1, td->e2);  // e1 = v1 - v0, e2 = v2 - v0
    area[t] = 0.5 * geo_v3_norm(n);
    b->tri_order[t] = t;
    for (int k = 0; k < 3; k++) {
      b->tri_side_off[6 * t + 2 * k] = geo_v3_dot(td->m + 3 * k, v[k]);
      b->tri_side_off[6 * t + 2 * k + 1] = td->mn2[k] > 0.0 ? 1.0 / sqrt(td->mn2[k]) : 0.0;
    }
  }
  cx.b = b;
  cx.cen = cen;
  cx.area = area;
  build_node(&cx, 0, m->ntri, 1);
  if (b->depth > GEO_BVH_DEPTH_MAX) {
    geo_set_err(err, err_sz, "geo_bvh_new: hierarchy deeper than %d", GEO_BVH_DEPTH_MAX);
    goto fail;
  }
  if (build_hulls(&cx) != 0) {
    goto oom;
  }
  b->scale = b->node[0].r;
  free(cen);
  free(area);
  free(cx.key);
  free(cx.hull_tmp);
  free(cx.vmark);
  b->build_seconds = now_seconds() - t0;
  return b;
oom:
  geo_set_err(err, err_sz, "geo_bvh_new: out of memory");
fail:
  free(cen);
  free(area);
  free(cx.key);
  free(cx.hull_tmp);
  free(cx.vmark);
  geo_bvh_destroy(&b);
  return NULL;
}

void geo_bvh_destroy(geo_bvh **pb) {
  if (pb == NULL || *pb == NULL) {
    return;
  }
  geo_bvh *b = *pb;
  free(b->node);
  free(b->tri_order);
  free(b->hull_vert);
  free(b->vert);
  free(b->tri);
  free(b->tri_normal);
  free(b->tri_edge);
  free(b->tri_side_off);
  free(b->tri_data);
  free(b);
  *pb = NULL;
}

const geo_mesh *geo_bvh_mesh(const geo_bvh *b) { return b ? b->mesh : NULL; }

int geo_bvh_check(const geo_bvh *b, char *err, size_t err_sz) {
  int *seen = calloc((size_t)b->ntri, sizeof *seen);
  if (seen == NULL) {
    geo_set_err(err, err_sz, "geo_bvh_check: out of memory");
    return -1;
  }
  int rc = 0;
  for (int id = 0; id < b->nnode && rc == 0; id++) {
    const geo_bvh_node *nd = &b->node[id];
    if ((nd->left < 0) != (nd->right < 0) || (nd->left < 0) != (nd->tri >= 0)) {
      geo_set_err(err, err_sz, "node %d: inconsistent leaf/child fields", id);
      rc = -1;
      break;
    }
    if (nd->tri >= 0) {
      seen[nd->tri]++;
    } else if (b->node[nd->left].count + b->node[nd->right].count != nd->count ||
               nd->left <= id || nd->right <= id) {
      geo_set_err(err, err_sz, "node %d: children do not partition the node", id);
      rc = -1;
      break;
    }
    for (int i = 0; i < nd->count && rc == 0; i++) {
      const int *tv = b->tri + 3 * b->tri_order[nd->first + i];
      for (int k = 0; k < 3; k++) {
        const double *v = b->vert + 3 * tv[k];
        double d[3];
        geo_v3_sub(d, v, nd->c);
        if (geo_v3_norm(d) > nd->r) {
          geo_set_err(err, err_sz, "node %d: vertex %d outside the sphere", id, tv[k]);
          rc = -1;
        }
        for (int a = 0; a < 3; a++) {
          if (fabs(geo_v3_dot(d, nd->ax + 3 * a)) > nd->h[a] * (1 + 1e-9)) {
            geo_set_err(err, err_sz, "node %d: vertex %d outside the box", id, tv[k]);
            rc = -1;
          }
        }
      }
    }
    if (rc == 0) {
      for (int a = 0; a < 6 && rc == 0; a++) {
        double dir[3];
        geo_v3_scale(dir, nd->ax + 3 * (a % 3), a < 3 ? 1.0 : -1.0);
        double sub = -INFINITY, hull = -INFINITY;
        for (int i = 0; i < nd->count; i++) {
          const int *tv = b->tri + 3 * b->tri_order[nd->first + i];
          for (int k = 0; k < 3; k++) {
            sub = fmax(sub, geo_v3_dot(dir, b->vert + 3 * tv[k]));
          }
        }
        for (int k = 0; k < nd->hull_n; k++) {
          hull = fmax(hull, geo_v3_dot(dir, b->vert + 3 * b->hull_vert[nd->hull_first + k]));
        }
        if (!(hull >= sub - 1e-12 * (1 + fabs(sub)))) {
          geo_set_err(err, err_sz, "node %d: hull support below subtree support", id);
          rc = -1;
        }
      }
    }
  }
  for (int t = 0; t < b->ntri && rc == 0; t++) {
    if (seen[t] != 1) {
      geo_set_err(err, err_sz, "triangle %d in %d leaves", t, seen[t]);
      rc = -1;
    }
  }
  free(seen);
  return rc;
}
