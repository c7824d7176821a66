// Quickhull in 3D (Barber, Dobkin & Huhdanpaa, ACM TOMS 22(4), 1996) with a thick-plane
// tolerance, a flat-hull path for coplanar input, and a compact relocatable output block.
#include "geo_err.h"
#include "geo_hull.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"

// a face while building: vertices are input point ids.
typedef struct qh_face {
  int v[3];      // input point ids, counter-clockwise from outside
  int adj[3];    // face across edge k (v[k] -> v[k+1])
  double n[3];   // unit outward normal
  double d;      // plane offset: n . x = d
  int out_head;  // first point of the outside set (linked through qh.next), -1 if empty
  int alive;     // 0 once replaced
  int mark;      // visit stamp of the visibility search
} qh_face;

typedef struct qh {
  const double *p;  // input points (n x 3)
  int n;
  double tol;
  qh_face *f;
  int nf, capf;
  int *next;        // outside-set links per point (n)
  int *stack;       // work stack of faces
  int nstack, capstack;
  int *by_start;    // new face whose horizon edge starts at a point (n), -1 otherwise
  int *by_end;      // new face whose horizon edge ends at a point (n), -1 otherwise
  int *vis;         // scratch list of visible faces
  int capvis;
  int *newf;        // scratch list of new faces
  int capnew;
  int stamp;
} qh;

static int grow(void **buf, int *cap, int need, size_t elem) {
  if (need <= *cap) {
    return 0;
  }
  int nc = *cap > 0 ? *cap : 16;
  while (nc < need) {
    if (nc > INT32_MAX / 2) {
      return -1;
    }
    nc *= 2;
  }
  void *nb = realloc(*buf, (size_t)nc * elem);
  if (!nb) {
    return -1;
  }
  *buf = nb;
  *cap = nc;
  return 0;
}

static double face_dist(const qh *q, const qh_face *f, int pt) {
  return geo_v3_dot(f->n, q->p + 3 * pt) - f->d;
}

// exact a + b = s + e (Knuth's two-sum; needs no contraction, which C11 mode guarantees).
static void two_sum(double a, double b, double *s, double *e) {
  double x = a + b, bv = x - a, av = x - bv;
  *e = (a - av) + (b - bv);
  *s = x;
}

// add b to the nonoverlapping expansion e[0..n-1] (Shewchuk 1997, Grow-Expansion), dropping
// zero components; returns the new length.
static int grow_expansion(double *e, int n, double b) {
  double q = b;
  int m = 0;
  for (int i = 0; i < n; i++) {
    double h;
    two_sum(q, e[i], &q, &h);
    if (h != 0.0) {
      e[m++] = h;
    }
  }
  if (q != 0.0 || m == 0) {
    e[m++] = q;
  }
  return m;
}

static int same_point(const double *a, const double *b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

// exact sign of det[p1 - o; p2 - o; p3 - o] (rows), i.e. of ((p1-o) x (p2-o)) . (p3-o):
// floating-point with Shewchuk's error bound, exact expansion arithmetic when uncertain.
static int orient_sign(const double *o, const double *p1, const double *p2, const double *p3) {
  double A[3], B[3], C[3];
  geo_v3_sub(A, p1, o);
  geo_v3_sub(B, p2, o);
  geo_v3_sub(C, p3, o);
  double t1 = B[1] * C[2], t2 = B[2] * C[1], t3 = B[2] * C[0], t4 = B[0] * C[2];
  double t5 = B[0] * C[1], t6 = B[1] * C[0];
  double det = A[0] * (t1 - t2) + A[1] * (t3 - t4) + A[2] * (t5 - t6);
  double perm = fabs(A[0]) * (fabs(t1) + fabs(t2)) + fabs(A[1]) * (fabs(t3) + fabs(t4)) +
                fabs(A[2]) * (fabs(t5) + fabs(t6));
  double bound = 8.0 * DBL_EPSILON * perm;
  if (det > bound) {
    return 1;
  }
  if (det < -bound) {
    return -1;
  }
  // a repeated point makes the determinant exactly zero (common in the corner test)
  if (perm == 0.0 || same_point(o, p1) || same_point(o, p2) || same_point(o, p3) ||
      same_point(p1, p2) || same_point(p1, p3) || same_point(p2, p3)) {
    return 0;
  }
  // exact: each difference is hi + lo; each of the six signed triple products expands into
  // 8 products of three doubles, each exactly 4 doubles (two nested two-products by fma)
  double d[3][3][2];
  const double *pts[3] = {p1, p2, p3};
  for (int r = 0; r < 3; r++) {
    for (int k = 0; k < 3; k++) {
      two_sum(pts[r][k], -o[k], &d[r][k][0], &d[r][k][1]);
    }
  }
  static const int perms[6][4] = {{0, 1, 2, 1}, {0, 2, 1, -1}, {1, 2, 0, 1},
                                  {1, 0, 2, -1}, {2, 0, 1, 1}, {2, 1, 0, -1}};
  double e[6 * 8 * 4 + 4];
  int n = 0;
  for (int t = 0; t < 6; t++) {
    for (int m = 0; m < 8; m++) {
      double x = d[0][perms[t][0]][m & 1], y = d[1][perms[t][1]][(m >> 1) & 1];
      double z = d[2][perms[t][2]][(m >> 2) & 1] * perms[t][3];
      double p = x * y, pe = fma(x, y, -p);
      double q1 = p * z, q1e = fma(p, z, -q1), q2 = pe * z, q2e = fma(pe, z, -q2);
      n = grow_expansion(e, n, q1);
      n = grow_expansion(e, n, q1e);
      n = grow_expansion(e, n, q2);
      n = grow_expansion(e, n, q2e);
    }
  }
  double top = e[n - 1];
  return (top > 0.0) - (top < 0.0);
}

// exact sign of point pt against face f: 1 above (outside), 0 on its plane, -1 below.
static int face_side(const qh *q, const qh_face *f, int pt) {
  const double *p = q->p;
  return orient_sign(p + 3 * f->v[0], p + 3 * f->v[1], p + 3 * f->v[2], p + 3 * pt);
}

// unit normal n and offset d of the plane through a, b, c (counter-clockwise), in extended
// precision: the cross product of a sliver's edges cancels badly in double.
static void face_plane(const double *a, const double *b, const double *c, double n[3],
                       double *d) {
  long double e1[3], e2[3], m[3], off = 0.0L;
  for (int k = 0; k < 3; k++) {
    e1[k] = (long double)b[k] - a[k];
    e2[k] = (long double)c[k] - a[k];
  }
  m[0] = e1[1] * e2[2] - e1[2] * e2[1];
  m[1] = e1[2] * e2[0] - e1[0] * e2[2];
  m[2] = e1[0] * e2[1] - e1[1] * e2[0];
  // the cancellation is in the cross product; normalising in double loses nothing
  double nd[3] = {(double)m[0], (double)m[1], (double)m[2]};
  double l2 = sqrt(nd[0] * nd[0] + nd[1] * nd[1] + nd[2] * nd[2]);
  for (int k = 0; k < 3; k++) {
    n[k] = l2 > 0.0 ? nd[k] / l2 : 0.0;
    off += (long double)n[k] * (((long double)a[k] + b[k] + c[k]) / 3.0L);
  }
  *d = (double)off;
}

// new face (a, b, c) with its plane; returns its id or -1 on out of memory.
static int add_face(qh *q, int a, int b, int c) {
  if (grow((void **)&q->f, &q->capf, q->nf + 1, sizeof(qh_face))) {
    return -1;
  }
  qh_face *f = &q->f[q->nf];
  memset(f, 0, sizeof(*f));
  f->v[0] = a;
  f->v[1] = b;
  f->v[2] = c;
  f->adj[0] = f->adj[1] = f->adj[2] = -1;
  f->out_head = -1;
  f->alive = 1;
  // a working plane in double (only ranks points; visibility is exact); the output planes
  // are recomputed in extended precision
  const double *pa = q->p + 3 * a, *pb = q->p + 3 * b, *pc = q->p + 3 * c;
  double e1[3], e2[3];
  geo_v3_sub(e1, pb, pa);
  geo_v3_sub(e2, pc, pa);
  geo_v3_cross(f->n, e1, e2);
  geo_v3_normalize(f->n);
  f->d = geo_v3_dot(f->n, pa);
  return q->nf++;
}

// put point pt on the outside set of the face (among cand, ncand) it is farthest above,
// if above one by more than tol.
static void assign_point(qh *q, int pt, const int *cand, int ncand) {
  int best = -1;
  double bd = -DBL_MAX;
  for (int i = 0; i < ncand; i++) {
    double d = face_dist(q, &q->f[cand[i]], pt);
    if (d > bd && face_side(q, &q->f[cand[i]], pt) > 0) {
      bd = d;
      best = cand[i];
    }
  }
  if (best < 0) {
    return;
  }
  qh_face *f = &q->f[best];
  q->next[pt] = f->out_head;
  f->out_head = pt;
}

// 1 if point a is lexicographically greater than point b (x, then y, then z).
static int lex_greater(const double *a, const double *b) {
  for (int k = 0; k < 3; k++) {
    if (a[k] != b[k]) {
      return a[k] > b[k];
    }
  }
  return 0;
}

// the eye of face f: among its outside points within tol of the farthest, the
// lexicographically greatest; exact ties (grids, boxes with points on their faces) then pick
// a true vertex of the hull, not a point in the middle of an edge or face.
static int pick_eye(const qh *q, const qh_face *f) {
  double dmax = -DBL_MAX;
  for (int pt = f->out_head; pt >= 0; pt = q->next[pt]) {
    dmax = fmax(dmax, face_dist(q, f, pt));
  }
  int eye = -1;
  for (int pt = f->out_head; pt >= 0; pt = q->next[pt]) {
    if (face_dist(q, f, pt) >= dmax - q->tol &&
        (eye < 0 || lex_greater(q->p + 3 * pt, q->p + 3 * eye))) {
      eye = pt;
    }
  }
  return eye;
}

static int push_face(qh *q, int fi) {
  if (grow((void **)&q->stack, &q->capstack, q->nstack + 1, sizeof(int))) {
    return -1;
  }
  q->stack[q->nstack++] = fi;
  return 0;
}

// index of v in face f, or -1.
static int face_index(const qh_face *f, int v) {
  return f->v[0] == v ? 0 : f->v[1] == v ? 1 : f->v[2] == v ? 2 : -1;
}

static int mark_visible(qh *q, int g, int *nvis) {
  if (q->f[g].mark == q->stamp) {
    return 0;
  }
  if (grow((void **)&q->vis, &q->capvis, *nvis + 1, sizeof(int))) {
    return -1;
  }
  q->f[g].mark = q->stamp;
  q->vis[(*nvis)++] = g;
  return 1;
}

// mark every face around point v visible, starting from face f that holds it.
static int mark_around(qh *q, int f, int v, int *nvis) {
  int start = f, changed = 0;
  for (int guard = 0; guard < q->nf; guard++) {
    int k = face_index(&q->f[f], v);
    if (k < 0) {
      return -2;
    }
    int rc = mark_visible(q, f, nvis);
    if (rc < 0) {
      return rc;
    }
    changed |= rc;
    f = q->f[f].adj[(k + 2) % 3];
    if (f == start) {
      return changed;
    }
  }
  return -2;
}

// safety net: with exact orientation signs the visible region of a convex hull is a disk;
// should a point still start two horizon edges, swallow the faces around it. Returns 0,
// -1 out of memory, -2 numerical failure.
static int repair_visible(qh *q, int *nvis) {
  for (int round = 0; round < q->nf + 4; round++) {
    int changed = 0;
    for (int i = 0; i < *nvis && !changed; i++) {
      for (int k = 0; k < 3 && !changed; k++) {
        int fv = q->vis[i], g = q->f[fv].adj[k];
        if (q->f[g].mark == q->stamp) {
          continue;
        }
        int a = q->f[fv].v[k];
        if (q->by_start[a] >= 0) {
          int rc = mark_around(q, fv, a, nvis);
          if (rc < 0) {
            return rc;
          }
          changed |= rc;
        }
        q->by_start[a] = 1;
      }
    }
    for (int i = 0; i < *nvis; i++) {
      for (int k = 0; k < 3; k++) {
        q->by_start[q->f[q->vis[i]].v[k]] = -1;
      }
    }
    if (!changed) {
      return 0;
    }
  }
  return -2;
}

// add point eye (on the outside set of face f0). 0 on success, -1 out of memory,
// -2 numerical failure (horizon not a simple loop).
static int add_point(qh *q, int f0, int eye) {
  q->stamp++;
  // visible faces: connected region around f0 whose planes the eye is on or above, by exact
  // signs (coplanar faces join so the cone never folds back over them)
  int nvis = 0;
  if (grow((void **)&q->vis, &q->capvis, 1, sizeof(int))) {
    return -1;
  }
  q->vis[nvis++] = f0;
  q->f[f0].mark = q->stamp;
  for (int i = 0; i < nvis; i++) {
    qh_face *f = &q->f[q->vis[i]];
    for (int k = 0; k < 3; k++) {
      int g = f->adj[k];
      if (q->f[g].mark != q->stamp && face_side(q, &q->f[g], eye) >= 0) {
        if (grow((void **)&q->vis, &q->capvis, nvis + 1, sizeof(int))) {
          return -1;
        }
        q->f[g].mark = q->stamp;
        q->vis[nvis++] = g;
        f = &q->f[q->vis[i]];
      }
    }
  }
  // repair the visible region until the cone over its boundary is convex and the boundary
  // is one simple loop: near-coplanar faces the eye sees within tol join the region
  int rr = repair_visible(q, &nvis);
  if (rr) {
    return rr;
  }
  // a cone of new faces over the horizon edges (edges between visible and hidden faces)
  int nnew = 0, rc = 0;
  for (int i = 0; i < nvis && rc == 0; i++) {
    for (int k = 0; k < 3; k++) {
      int fv = q->vis[i];
      int g = q->f[fv].adj[k];
      if (q->f[g].mark == q->stamp) {
        continue;
      }
      int a = q->f[fv].v[k], b = q->f[fv].v[(k + 1) % 3];
      if (q->by_start[a] >= 0 || q->by_end[b] >= 0) {
        rc = -2;
        break;
      }
      int nf = add_face(q, a, b, eye);
      if (nf < 0 || grow((void **)&q->newf, &q->capnew, nnew + 1, sizeof(int))) {
        rc = -1;
        break;
      }
      q->newf[nnew++] = nf;
      q->f[nf].adj[0] = g;
      int m = face_index(&q->f[g], b);
      q->f[g].adj[m] = nf;
      q->by_start[a] = nf;
      q->by_end[b] = nf;
    }
  }
  // link the new faces to each other around the eye
  for (int i = 0; i < nnew && rc == 0; i++) {
    qh_face *f = &q->f[q->newf[i]];
    int s = q->by_start[f->v[1]], e = q->by_end[f->v[0]];
    if (s < 0 || e < 0) {
      rc = -2;
      break;
    }
    f->adj[1] = s;
    f->adj[2] = e;
  }
  // the cone must be one loop around the eye
  if (rc == 0 && nnew > 0) {
    int len = 0, f = q->newf[0];
    do {
      f = q->f[f].adj[1];
      len++;
    } while (f != q->newf[0] && len <= nnew);
    rc = len == nnew ? 0 : -2;
  }
  for (int i = 0; i < nnew; i++) {
    const qh_face *f = &q->f[q->newf[i]];
    q->by_start[f->v[0]] = -1;
    q->by_end[f->v[1]] = -1;
  }
  if (rc) {
    return rc;
  }
  if (nnew < 3) {
    return -2;
  }
  // hand the outside points of the visible faces to the new faces; drop the eye
  for (int i = 0; i < nvis; i++) {
    qh_face *f = &q->f[q->vis[i]];
    f->alive = 0;
    int pt = f->out_head;
    f->out_head = -1;
    while (pt >= 0) {
      int nx = q->next[pt];
      if (pt != eye) {
        assign_point(q, pt, q->newf, nnew);
      }
      pt = nx;
    }
  }
  for (int i = 0; i < nnew; i++) {
    if (q->f[q->newf[i]].out_head >= 0 && push_face(q, q->newf[i])) {
      return -1;
    }
  }
  return 0;
}

// block layout: header, doubles, then ints; pointers set from the counts.
static size_t layout(geo_hull *h, char *base) {
  size_t off = (sizeof(geo_hull) + 7) & ~(size_t)7;
  size_t nv = (size_t)h->nvert, nf = (size_t)h->nface, ne = (size_t)h->nedge;
#define TAKE(field, type, count)                        \
  do {                                                  \
    if (base) {                                         \
      h->field = (type *)(void *)(base + off);          \
    }                                                   \
    off += (((count) * sizeof(type)) + 7) & ~(size_t)7; \
  } while (0)
  TAKE(vert, double, 3 * nv);
  TAKE(plane, double, 4 * nf);
  TAKE(src, int, nv);
  TAKE(face, int, 3 * nf);
  TAKE(fadj, int, 3 * nf);
  TAKE(fedge, int, 3 * nf);
  TAKE(edge, int, 2 * ne);
  TAKE(vadj_start, int, nv + 1);
  TAKE(vadj, int, 2 * ne);
  TAKE(vadj_face, int, 2 * ne);
  TAKE(vadj_edge, int, 2 * ne);
#undef TAKE
  return off;
}


// compact output from faces given as input point ids with adjacency (fv, fa: nf x 3).
static geo_hull *finish(const double *p, int n, const int *fv, const int *fa,
                        const double *fpl, int nf, int flat, double tol, char *err,
                        size_t err_sz) {
  // vertices: the used input points in increasing input order (map: input -> hull id)
  int *map = malloc(sizeof(int) * (size_t)n);
  if (!map) {
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    map[i] = -1;
  }
  for (int i = 0; i < 3 * nf; i++) {
    map[fv[i]] = 0;
  }
  int nv = 0;
  for (int i = 0; i < n; i++) {
    if (map[i] == 0) {
      map[i] = nv++;
    }
  }
  int ne = 3 * nf / 2;
  if (nv - ne + nf != 2 || 3 * nf != 2 * ne) {
    free(map);
    geo_set_err(err, err_sz, "hull: numerical failure (V - E + F = %d)", nv - ne + nf);
    return NULL;
  }
  geo_hull tmp;
  memset(&tmp, 0, sizeof(tmp));
  tmp.nvert = nv;
  tmp.nface = nf;
  tmp.nedge = ne;
  size_t bytes = layout(&tmp, NULL);
  char *blk = calloc(1, bytes);
  if (!blk) {
    free(map);
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  geo_hull *h = (geo_hull *)(void *)blk;
  *h = tmp;
  layout(h, blk);
  h->bytes = bytes;
  h->flat = flat;
  h->tol = tol;
  for (int i = 0; i < n; i++) {
    if (map[i] >= 0) {
      h->src[map[i]] = i;
      geo_v3_copy(h->vert + 3 * map[i], p + 3 * i);
    }
  }
  for (int i = 0; i < 3 * nf; i++) {
    h->face[i] = map[fv[i]];
    h->fadj[i] = fa[i];
    h->fedge[i] = -1;
  }
  free(map);
  for (int f = 0; f < nf; f++) {
    if (flat) {
      memcpy(h->plane + 4 * f, fpl + 4 * f, 4 * sizeof(double));
    } else {
      const int *v = h->face + 3 * f;
      face_plane(h->vert + 3 * v[0], h->vert + 3 * v[1], h->vert + 3 * v[2], h->plane + 4 * f,
                 h->plane + 4 * f + 3);
    }
  }
  // edges, and a check that adjacency is symmetric and consistent
  int eid = 0;
  for (int f = 0; f < nf; f++) {
    for (int k = 0; k < 3; k++) {
      int a = h->face[3 * f + k], b = h->face[3 * f + (k + 1) % 3], g = h->fadj[3 * f + k];
      int m = -1;
      if (g >= 0 && g < nf) {
        for (int j = 0; j < 3; j++) {
          if (h->face[3 * g + j] == b && h->face[3 * g + (j + 1) % 3] == a) {
            m = j;
          }
        }
      }
      if (m < 0 || h->fadj[3 * g + m] != f) {
        free(h);
        geo_set_err(err, err_sz, "hull: numerical failure (inconsistent face adjacency)");
        return NULL;
      }
      if (a < b) {
        h->edge[2 * eid] = a;
        h->edge[2 * eid + 1] = b;
        h->fedge[3 * f + k] = eid;
        h->fedge[3 * g + m] = eid;
        eid++;
      }
    }
  }
  // vertex rings: walk the faces around each vertex counter-clockwise
  int *first = h->vadj;  // scratch: one incident face and corner per vertex, reuse vadj_face
  for (int i = 0; i < nv; i++) {
    h->vadj_start[i] = 0;
  }
  for (int f = 0; f < nf; f++) {
    for (int k = 0; k < 3; k++) {
      h->vadj_start[h->face[3 * f + k]]++;
    }
  }
  int acc = 0;
  for (int i = 0; i < nv; i++) {
    int deg = h->vadj_start[i];
    h->vadj_start[i] = acc;
    acc += deg;
  }
  h->vadj_start[nv] = acc;
  for (int i = 0; i < nv; i++) {
    first[i] = -1;
  }
  for (int f = nf - 1; f >= 0; f--) {
    for (int k = 0; k < 3; k++) {
      first[h->face[3 * f + k]] = 3 * f + k;
    }
  }
  int *fc = malloc(sizeof(int) * (size_t)nv);
  if (!fc) {
    free(h);
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  memcpy(fc, first, sizeof(int) * (size_t)nv);
  for (int v = 0; v < nv; v++) {
    int f = fc[v] / 3, k = fc[v] % 3, s = h->vadj_start[v], deg = h->vadj_start[v + 1] - s;
    for (int j = 0; j < deg; j++) {
      if (h->face[3 * f + k] != v) {
        free(fc);
        free(h);
        geo_set_err(err, err_sz, "hull: numerical failure (vertex ring)");
        return NULL;
      }
      h->vadj[s + j] = h->face[3 * f + (k + 1) % 3];
      h->vadj_face[s + j] = f;
      h->vadj_edge[s + j] = h->fedge[3 * f + k];
      // next face around v: across the edge entering v
      int g = h->fadj[3 * f + (k + 2) % 3];
      k = (h->face[3 * g] == v) ? 0 : (h->face[3 * g + 1] == v) ? 1 : 2;
      f = g;
    }
    if (f != fc[v] / 3) {
      free(fc);
      free(h);
      geo_set_err(err, err_sz, "hull: numerical failure (vertex ring not closed)");
      return NULL;
    }
  }
  free(fc);
  // bounding sphere about the vertex mean
  double c[3] = {0, 0, 0};
  for (int i = 0; i < nv; i++) {
    geo_v3_add(c, c, h->vert + 3 * i);
  }
  geo_v3_scale(h->center, c, 1.0 / nv);
  double r2 = 0.0;
  for (int i = 0; i < nv; i++) {
    r2 = fmax(r2, geo_v3_dist2(h->center, h->vert + 3 * i));
  }
  h->radius = sqrt(r2);
  return h;
}

// orientation of point c w.r.t. the directed 2D line a -> b (> 0: left).
static double orient2(const double *a, const double *b, const double *c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

typedef struct flat_pt {
  double x[2];
  int id;
} flat_pt;

static int cmp_flat(const void *a, const void *b) {
  const flat_pt *p = a, *q = b;
  if (p->x[0] != q->x[0]) {
    return p->x[0] < q->x[0] ? -1 : 1;
  }
  if (p->x[1] != q->x[1]) {
    return p->x[1] < q->x[1] ? -1 : 1;
  }
  return (p->id > q->id) - (p->id < q->id);
}

// coplanar input: 2D hull (Andrew's monotone chain) in the plane of i0, i1, i2, stored as a
// double-sided fan surface.
static geo_hull *flat_hull(const double *p, int n, int i0, int i1, int i2, double tol,
                           char *err, size_t err_sz) {
  double e1[3], e2[3], nn[3], u[3], w[3];
  geo_v3_sub(e1, p + 3 * i1, p + 3 * i0);
  geo_v3_sub(e2, p + 3 * i2, p + 3 * i0);
  geo_v3_cross(nn, e1, e2);
  geo_v3_normalize(nn);
  geo_v3_copy(u, e1);
  geo_v3_normalize(u);
  geo_v3_cross(w, nn, u);
  flat_pt *fp = malloc(sizeof(flat_pt) * (size_t)n);
  int *hull = malloc(sizeof(int) * (size_t)(2 * n + 2));
  if (!fp || !hull) {
    free(fp);
    free(hull);
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    double d[3];
    geo_v3_sub(d, p + 3 * i, p + 3 * i0);
    fp[i].x[0] = geo_v3_dot(d, u);
    fp[i].x[1] = geo_v3_dot(d, w);
    fp[i].id = i;
  }
  qsort(fp, (size_t)n, sizeof(flat_pt), cmp_flat);
  // lower then upper chain; a turn counts only when clearly left (area > tol * length)
  int m = 0;
  for (int pass = 0; pass < 2; pass++) {
    int base = m;
    for (int j = 0; j < n; j++) {
      int i = pass == 0 ? j : n - 1 - j;
      while (m - base >= 2) {
        const flat_pt *a = &fp[hull[m - 2]], *b = &fp[hull[m - 1]];
        double len = hypot(fp[i].x[0] - a->x[0], fp[i].x[1] - a->x[1]);
        if (orient2(a->x, b->x, fp[i].x) > tol * len) {
          break;
        }
        m--;
      }
      hull[m++] = i;
    }
    m--;  // the last point starts the other chain
  }
  int nv = m;
  if (nv < 3) {
    free(fp);
    free(hull);
    geo_set_err(err, err_sz, "hull: all points collinear");
    return NULL;
  }
  int nf = 2 * (nv - 2);
  int *fv = malloc(sizeof(int) * (size_t)(3 * nf));
  int *fa = malloc(sizeof(int) * (size_t)(3 * nf));
  double *fpl = malloc(sizeof(double) * (size_t)(4 * nf));
  if (!fv || !fa || !fpl) {
    free(fp);
    free(hull);
    free(fv);
    free(fa);
    free(fpl);
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  // ring r[j] = input id of polygon corner j (counter-clockwise about nn)
  int *r = hull;
  for (int j = 0; j < nv; j++) {
    r[j] = fp[hull[j]].id;
  }
  double d0 = geo_v3_dot(nn, p + 3 * i0);
  // top fan from corner 0: face t = (r0, r[t+1], r[t+2]); bottom fan from corner 1,
  // reversed: face b = (r1, r[b+3], r[b+2]) with r indices mod nv
  int nt = nv - 2;
  for (int t = 0; t < nt; t++) {
    int *v = fv + 3 * t, *a = fa + 3 * t;
    v[0] = r[0];
    v[1] = r[t + 1];
    v[2] = r[t + 2];
    // edge 0: r0-r[t+1] (polygon edge if t = 0, else diagonal shared with t-1)
    // edge 1: r[t+1]-r[t+2] polygon edge, shared with the bottom face owning it
    // edge 2: r[t+2]-r0 (polygon edge if t = nt-1, else diagonal shared with t+1)
    a[0] = t == 0 ? -1 : t - 1;
    a[1] = -1;
    a[2] = t == nt - 1 ? -1 : t + 1;
    double *pl = fpl + 4 * t;
    geo_v3_copy(pl, nn);
    pl[3] = d0;
  }
  for (int b = 0; b < nt; b++) {
    int *v = fv + 3 * (nt + b), *a = fa + 3 * (nt + b);
    v[0] = r[1];
    v[1] = r[(b + 3) % nv];
    v[2] = r[b + 2];
    a[0] = b == nt - 1 ? -1 : nt + b + 1;
    a[1] = -1;
    a[2] = b == 0 ? -1 : nt + b - 1;
    double *pl = fpl + 4 * (nt + b);
    geo_v3_scale(pl, nn, -1.0);
    pl[3] = -d0;
  }
  // the polygon edges join a top face to a bottom face: match them by endpoints
  for (int f = 0; f < nf; f++) {
    for (int k = 0; k < 3; k++) {
      if (fa[3 * f + k] >= 0) {
        continue;
      }
      int a = fv[3 * f + k], b = fv[3 * f + (k + 1) % 3];
      for (int g = (f < nt ? nt : 0); g < (f < nt ? nf : nt) && fa[3 * f + k] < 0; g++) {
        for (int j = 0; j < 3; j++) {
          if (fv[3 * g + j] == b && fv[3 * g + (j + 1) % 3] == a) {
            fa[3 * f + k] = g;
            fa[3 * g + j] = f;
          }
        }
      }
    }
  }
  free(fp);
  free(hull);
  geo_hull *h = finish(p, n, fv, fa, fpl, nf, 1, tol, err, err_sz);
  free(fv);
  free(fa);
  free(fpl);
  return h;
}

// distance of p from the line through a with unit direction dir.
static double line_dist(const double p[3], const double a[3], const double dir[3]) {
  double d[3], c[3];
  geo_v3_sub(d, p, a);
  geo_v3_cross(c, d, dir);
  return geo_v3_norm(c);
}

static void qh_free(qh *q) {
  free(q->f);
  free(q->next);
  free(q->stack);
  free(q->by_start);
  free(q->by_end);
  free(q->vis);
  free(q->newf);
}

static geo_hull *hull_build(const double *pts, int n, char *err, size_t err_sz) {
  if (!pts || n < 3) {
    geo_set_err(err, err_sz, "hull: need at least 3 points (got %d)", pts ? n : 0);
    return NULL;
  }
  if (n > INT32_MAX / 8) {
    geo_set_err(err, err_sz, "hull: too many points (%d)", n);
    return NULL;
  }
  double mag[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      if (!isfinite(pts[3 * i + k])) {
        geo_set_err(err, err_sz, "hull: non-finite coordinate at point %d", i);
        return NULL;
      }
      mag[k] = fmax(mag[k], fabs(pts[3 * i + k]));
    }
  }
  // rounding level of plane distances from the coordinate magnitudes (qhull's DISTround);
  // it only decides flatness here, visibility is exact
  double tol = 16.0 * DBL_EPSILON * (mag[0] + mag[1] + mag[2]);
  // initial simplex: the farthest pair among the axis extremes, the point farthest from
  // their line, the point farthest from their plane
  int ext[6];
  for (int k = 0; k < 3; k++) {
    ext[2 * k] = ext[2 * k + 1] = 0;
    for (int i = 1; i < n; i++) {
      // lexicographic in (x_k, x_k+1, x_k+2): the extreme is a hull vertex even with ties
      double a[3] = {pts[3 * i + k], pts[3 * i + (k + 1) % 3], pts[3 * i + (k + 2) % 3]};
      const double *lo = pts + 3 * ext[2 * k], *hi = pts + 3 * ext[2 * k + 1];
      double l[3] = {lo[k], lo[(k + 1) % 3], lo[(k + 2) % 3]};
      double u[3] = {hi[k], hi[(k + 1) % 3], hi[(k + 2) % 3]};
      if (lex_greater(l, a)) {
        ext[2 * k] = i;
      }
      if (lex_greater(a, u)) {
        ext[2 * k + 1] = i;
      }
    }
  }
  int i0 = 0, i1 = 0;
  double best = -1.0;
  for (int a = 0; a < 6; a++) {
    for (int b = a + 1; b < 6; b++) {
      double d = geo_v3_dist2(pts + 3 * ext[a], pts + 3 * ext[b]);
      if (d > best) {
        best = d;
        i0 = ext[a];
        i1 = ext[b];
      }
    }
  }
  double dir[3];
  geo_v3_sub(dir, pts + 3 * i1, pts + 3 * i0);
  double len = geo_v3_normalize(dir);
  // (ties within tol go to the lexicographically greatest point, a hull vertex)
  best = 0.0;
  for (int i = 0; i < n; i++) {
    best = fmax(best, line_dist(pts + 3 * i, pts + 3 * i0, dir));
  }
  int i2 = -1;
  for (int i = 0; i < n && best > tol; i++) {
    if (line_dist(pts + 3 * i, pts + 3 * i0, dir) >= best - tol &&
        (i2 < 0 || lex_greater(pts + 3 * i, pts + 3 * i2))) {
      i2 = i;
    }
  }
  if (!(len > tol) || i2 < 0) {
    geo_set_err(err, err_sz, "hull: all points collinear or coincident");
    return NULL;
  }
  double e2[3], nrm[3];
  geo_v3_sub(e2, pts + 3 * i2, pts + 3 * i0);
  geo_v3_cross(nrm, dir, e2);
  geo_v3_normalize(nrm);
  double off = geo_v3_dot(nrm, pts + 3 * i0);
  best = 0.0;
  for (int i = 0; i < n; i++) {
    best = fmax(best, fabs(geo_v3_dot(nrm, pts + 3 * i) - off));
  }
  int i3 = -1;
  double side = 0.0;
  // flat unless clearly thicker than the plane tolerance: the rim faces of a slab only a few
  // tol thick are needles whose planes are themselves uncertain by about tol
  for (int i = 0; i < n && best > 4.0 * tol; i++) {
    double d = geo_v3_dot(nrm, pts + 3 * i) - off;
    if (fabs(d) >= best - tol && (i3 < 0 || (d > 0) == (side > 0)) &&
        (i3 < 0 || lex_greater(pts + 3 * i, pts + 3 * i3))) {
      i3 = i;
      side = d;
    }
  }
  if (i3 < 0) {
    // the flat hull's two planes hold every input within the measured thickness
    return flat_hull(pts, n, i0, i1, i2, tol + best, err, err_sz);
  }
  // tetrahedron, oriented so the base faces away from i3
  qh q;
  memset(&q, 0, sizeof(q));
  q.p = pts;
  q.n = n;
  q.tol = tol;
  q.next = malloc(sizeof(int) * (size_t)n);
  q.by_start = malloc(sizeof(int) * (size_t)n);
  q.by_end = malloc(sizeof(int) * (size_t)n);
  if (!q.next || !q.by_start || !q.by_end) {
    qh_free(&q);
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    q.next[i] = q.by_start[i] = q.by_end[i] = -1;
  }
  if (geo_v3_dot(nrm, pts + 3 * i3) - off > 0.0) {
    int t = i1;
    i1 = i2;
    i2 = t;
  }
  // faces (a b c) base, then (a d b), (b d c), (c d a) with d = i3
  int tv[4][3] = {{i0, i1, i2}, {i0, i3, i1}, {i1, i3, i2}, {i2, i3, i0}};
  for (int f = 0; f < 4; f++) {
    if (add_face(&q, tv[f][0], tv[f][1], tv[f][2]) < 0) {
      qh_free(&q);
      geo_set_err(err, err_sz, "hull: out of memory");
      return NULL;
    }
  }
  for (int f = 0; f < 4; f++) {
    for (int k = 0; k < 3; k++) {
      int a = q.f[f].v[k], b = q.f[f].v[(k + 1) % 3];
      for (int g = 0; g < 4; g++) {
        int m = face_index(&q.f[g], b);
        if (g != f && m >= 0 && q.f[g].v[(m + 1) % 3] == a) {
          q.f[f].adj[k] = g;
        }
      }
    }
  }
  int cand[4] = {0, 1, 2, 3};
  for (int i = 0; i < n; i++) {
    if (i != i0 && i != i1 && i != i2 && i != i3) {
      assign_point(&q, i, cand, 4);
    }
  }
  for (int f = 0; f < 4; f++) {
    if (q.f[f].out_head >= 0 && push_face(&q, f)) {
      qh_free(&q);
      geo_set_err(err, err_sz, "hull: out of memory");
      return NULL;
    }
  }
  // main loop: the farthest point of a face with outside points joins the hull
  while (q.nstack > 0) {
    int f = q.stack[--q.nstack];
    if (!q.f[f].alive || q.f[f].out_head < 0) {
      continue;
    }
    int rc = add_point(&q, f, pick_eye(&q, &q.f[f]));
    if (rc) {
      qh_free(&q);
      geo_set_err(err, err_sz, rc == -1 ? "hull: out of memory"
                                    : "hull: numerical failure (horizon is not a simple loop)");
      return NULL;
    }
  }
  // gather the live faces with renumbered adjacency
  int *newid = malloc(sizeof(int) * (size_t)q.nf);
  int nf = 0;
  if (newid) {
    for (int f = 0; f < q.nf; f++) {
      newid[f] = q.f[f].alive ? nf++ : -1;
    }
  }
  int *fv = malloc(sizeof(int) * (size_t)(3 * nf + 1));
  int *fa = malloc(sizeof(int) * (size_t)(3 * nf + 1));
  double *fpl = malloc(sizeof(double) * (size_t)(4 * nf + 1));
  if (!newid || !fv || !fa || !fpl) {
    free(newid);
    free(fv);
    free(fa);
    free(fpl);
    qh_free(&q);
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  for (int f = 0; f < q.nf; f++) {
    int g = newid[f];
    if (g < 0) {
      continue;
    }
    for (int k = 0; k < 3; k++) {
      fv[3 * g + k] = q.f[f].v[k];
      fa[3 * g + k] = newid[q.f[f].adj[k]];
    }
    geo_v3_copy(fpl + 4 * g, q.f[f].n);
    fpl[4 * g + 3] = q.f[f].d;
  }
  qh_free(&q);
  free(newid);
  geo_hull *h = finish(pts, n, fv, fa, fpl, nf, 0, tol, err, err_sz);
  free(fv);
  free(fa);
  free(fpl);
  return h;
}

// 1 if hull vertex v is not a corner: each of its faces lies exactly (exact orientation
// signs) in one of at most two planes through v, so v is inside a flat region or on a
// straight crease. Exactness matters: removing points that are only nearly flat could cut
// a shallow bulge of many such points away.
static int vertex_redundant(const geo_hull *h, int v) {
  int s = h->vadj_start[v], e = h->vadj_start[v + 1];
  const double *pv = h->vert + 3 * v;
  const double *pl[2][2] = {{NULL, NULL}, {NULL, NULL}};
  for (int k = s; k < e; k++) {
    const double *w0 = h->vert + 3 * h->vadj[k];
    const double *w1 = h->vert + 3 * h->vadj[k + 1 < e ? k + 1 : s];
    int in = 0;
    for (int j = 0; j < 2 && !in; j++) {
      if (!pl[j][0]) {
        pl[j][0] = w0;
        pl[j][1] = w1;
        in = 1;
        break;
      }
      in = orient_sign(pv, pl[j][0], pl[j][1], w0) == 0 &&
           orient_sign(pv, pl[j][0], pl[j][1], w1) == 0;
    }
    if (!in) {
      return 0;
    }
  }
  return 1;
}

geo_hull *geo_hull_new(const double *pts, int n, char *err, size_t err_sz) {
  geo_hull *h = hull_build(pts, n, err, err_sz);
  if (!h || h->flat) {
    return h;
  }
  // quickhull keeps a point on an edge or face when it was picked as a farthest point
  // before the true corners beyond it; rebuild from the corners alone (same hull)
  int nk = 0;
  for (int v = 0; v < h->nvert; v++) {
    nk += !vertex_redundant(h, v);
  }
  if (nk == h->nvert || nk < 4) {
    return h;
  }
  double *kp = malloc(sizeof(double) * 3 * (size_t)nk);
  int *ks = malloc(sizeof(int) * (size_t)nk);
  if (!kp || !ks) {
    free(kp);
    free(ks);
    return h;
  }
  nk = 0;
  for (int v = 0; v < h->nvert; v++) {
    if (!vertex_redundant(h, v)) {
      geo_v3_copy(kp + 3 * nk, h->vert + 3 * v);
      ks[nk++] = h->src[v];
    }
  }
  geo_hull *h2 = hull_build(kp, nk, NULL, 0);
  if (h2 && !h2->flat) {
    for (int v = 0; v < h2->nvert; v++) {
      h2->src[v] = ks[h2->src[v]];
    }
    h2->tol = h->tol;
    geo_hull_destroy(&h);
    h = h2;
  } else {
    geo_hull_destroy(&h2);
  }
  free(kp);
  free(ks);
  return h;
}

geo_hull *geo_hull_new_indexed(const double *pts, const int *idx, int n, char *err,
                               size_t err_sz) {
  if (!pts || !idx || n < 3 || n > INT32_MAX / 8) {
    geo_set_err(err, err_sz, "hull: need at least 3 points (got %d)", (pts && idx) ? n : 0);
    return NULL;
  }
  double *p = malloc(sizeof(double) * 3 * (size_t)n);
  if (!p) {
    geo_set_err(err, err_sz, "hull: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    geo_v3_copy(p + 3 * i, pts + 3 * (size_t)idx[i]);
  }
  geo_hull *h = geo_hull_new(p, n, err, err_sz);
  free(p);
  if (h) {
    for (int v = 0; v < h->nvert; v++) {
      h->src[v] = idx[h->src[v]];
    }
  }
  return h;
}

void geo_hull_destroy(geo_hull **h) {
  if (h && *h) {
    free(*h);
    *h = NULL;
  }
}

geo_hull *geo_hull_copy(const geo_hull *h, void *mem, size_t bytes) {
  if (!h || !mem || bytes < h->bytes || ((uintptr_t)mem & 7u) != 0) {
    return NULL;
  }
  memcpy(mem, h, h->bytes);
  geo_hull *c = mem;
  layout(c, mem);
  return c;
}

int geo_hull_support_brute(const geo_hull *h, const double dir[3]) {
  int best = 0;
  double bd = geo_v3_dot(h->vert, dir);
  for (int i = 1; i < h->nvert; i++) {
    double d = geo_v3_dot(h->vert + 3 * i, dir);
    if (d > bd) {
      bd = d;
      best = i;
    }
  }
  return best;
}

int geo_hull_support_climb(const geo_hull *h, const double dir[3], int start) {
  int v = (start >= 0 && start < h->nvert) ? start : 0;
  double bd = geo_v3_dot(h->vert + 3 * v, dir);
  // steepest ascent; on a convex polytope a vertex with no higher neighbour is a maximiser
  for (;;) {
    int next = -1;
    for (int k = h->vadj_start[v]; k < h->vadj_start[v + 1]; k++) {
      int w = h->vadj[k];
      double d = geo_v3_dot(h->vert + 3 * w, dir);
      if (d > bd) {
        bd = d;
        next = w;
      }
    }
    if (next < 0) {
      return v;
    }
    v = next;
  }
}

double geo_hull_plane_dist(const geo_hull *h, const double p[3]) {
  double best = -DBL_MAX;
  for (int f = 0; f < h->nface; f++) {
    const double *pl = h->plane + 4 * f;
    best = fmax(best, geo_v3_dot(pl, p) - pl[3]);
  }
  return best;
}
