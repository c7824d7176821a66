// Queries between two placed hierarchies: bounded depth-first traversals over node pairs
// (sphere gap, then oriented-box separating axes), an exact triangle-triangle kernel at
// the leaves, feature naming, the parallel-face rule and the merge by feature identity.
#include "geo_err.h"
#include "geo_query.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"

#define GEO_Q_PI 3.14159265358979323846

typedef struct q_stack_ent {
  int a, b;   // node ids in A and B
  double lb;  // lower bound on their distance when pushed [m] (minimum distance only)
} q_stack_ent;

// one leaf pair in B's frame (valid after geo_q_leaf until the next call)
typedef struct q_leaf {
  int ta, tb;              // triangle ids in A and B
  const double *P[3];      // A's triangle corners (B's frame) [m]
  const double *Q[3];      // B's triangle corners [m]
  int pid[3], qid[3];      // their vertex ids
  const double *np;        // A's triangle normal in B's frame
  const double *nq;        // B's triangle normal
  const geo_tri_data *tp;  // A's triangle's kernel data (B's frame)
  const geo_tri_data *tq;  // B's triangle's kernel data (geo_bvh tri_data)
} q_leaf;

// one triangle of A in B's frame, made once per query (a_tri)
typedef struct q_atri {
  double n[3];     // unit normal
  geo_tri_data d;  // kernel data
} q_atri;

struct geo_query_ws {
  int cap_vert, cap_node, cap_tri, cap_stack, cap_raw;  // capacities (vertices, nodes,
                                                        // triangles, stack, raw)
  unsigned stamp;      // current query id; a stamp equal to it marks a valid cached entry
  unsigned *vstamp;    // (cap_vert) stamps of vx
  double *vx;          // (cap_vert x 3) A's vertices in B's frame [m]
  unsigned *cstamp;    // (cap_node) stamps of cx
  double *cx;          // (cap_node x 3) A's node centres in B's frame [m]
  unsigned *xstamp;    // (cap_node) stamps of axx
  double *axx;         // (cap_node x 9) A's node box axes in B's frame (rows)
  unsigned *tstamp;    // (cap_tri) stamps of atri
  q_atri *atri;        // (cap_tri) A's triangles in B's frame
  q_stack_ent *stack;  // (cap_stack) traversal stack
  geo_pair *raw;       // (cap_raw) raw pairs, B's frame
  int *idx;            // (cap_raw) sort permutation of raw
  unsigned long long *key;  // (cap_raw) merge keys of raw (feat_key)
  int key_ib, key_bits;     // bits of B's feature ids in a key; bits of a whole key
  unsigned long long *skey, *skey2;  // (cap_raw each) radix-sort scratch keys
  int *idx2;           // (cap_raw) radix-sort scratch permutation
  int n_raw;           // raw pairs found (may exceed cap_raw: then only counted)
  double par_cos;      // cosine of the parallel-face angle (> 1 disables the rule)
  const geo_bvh *a, *b;  // the current query's hierarchies (borrowed for the query)
  double R[9], t[3];   // A's body frame -> B's body frame
  geo_xform xa, xb;    // body -> world of A and B
  double slack;        // [m] rounding allowance of the lower bounds
  double lb_tol;       // [m] allowance of a measured leaf distance kept as a lower bound
                       // (rounding, and feature naming's move onto the named feature)
  int n_leaf, n_node;  // counters of the current query
  q_leaf lc;           // the last leaf pair evaluated
};

// one candidate leaf pair of a cache
typedef struct q_cand {
  double d;    // distance at the cache's fill pose (R, t) [m]
  double lb;   // lower bound on the distance at (lbR, lbt) [m]; valid in the first nlb
  int ta, tb;  // the leaf pair (triangle ids in A and B)
  int hint;    // last closest feature pair (ca * 16 + cb, local codes) or -1
} q_cand;

struct geo_query_cache {
  int cap, n;          // capacity and length of cand
  q_cand *cand;        // (cap) leaf pairs closer than thr at (R, t), by increasing (d, ta, tb)
  double margin;       // [m] extra distance collected beyond the standoff
  int valid;           // cand is usable
  double thr;          // [m] the distance cand was collected for
  double R[9], t[3];   // relative transform cand was collected at
  int nlb;             // cand[0 .. nlb) hold a lower bound lb at (lbR, lbt)
  double lbR[9], lbt[3];  // relative transform of the last proximity hit
  const geo_bvh *a, *b;  // the body pair the cache belongs to (borrowed identities)
  int best_valid, best_ta, best_tb;  // last closest leaf pair
  int last_valid;      // lastR, lastt hold the previous minimum-distance query's pose
  double lastR[9], lastt[3];  // relative transform of that query
};

geo_pose geo_pose_identity(void) {
  geo_pose x = {{0, 0, 0}, {1, 0, 0, 0}};
  return x;
}

int geo_pose_valid(const geo_pose *x) {
  if (x == NULL) {
    return 0;
  }
  double n2 = 0.0;
  for (int i = 0; i < 4; i++) {
    if (!isfinite(x->q[i])) {
      return 0;
    }
    n2 += x->q[i] * x->q[i];
  }
  for (int i = 0; i < 3; i++) {
    if (!isfinite(x->p[i])) {
      return 0;
    }
  }
  return n2 > 1e-300 && isfinite(n2);
}

// the rigid transform of a pose (q normalised on the fly; the caller's pose is untouched)
static void geo_q_pose_xform(geo_xform *X, const geo_pose *x) {
  double q[4] = {x->q[0], x->q[1], x->q[2], x->q[3]};
  geo_quat_normalize(q);
  geo_xform_from_pose(X, x->p, q);
}

// ---------------------------------------------------------------------------------------
// workspace and cache

geo_query_ws *geo_query_ws_new(const geo_bvh *a, const geo_bvh *b, int raw_cap, char *err,
                               size_t err_sz) {
  if (a == NULL || b == NULL) {
    geo_set_err(err, err_sz, "geo_query_ws_new: NULL hierarchy");
    return NULL;
  }
  if (raw_cap <= 0) {
    raw_cap = 65536;
  }
  geo_query_ws *ws = calloc(1, sizeof *ws);
  if (ws == NULL) {
    geo_set_err(err, err_sz, "geo_query_ws_new: out of memory");
    return NULL;
  }
  ws->cap_vert = a->nvert > b->nvert ? a->nvert : b->nvert;
  ws->cap_node = a->nnode > b->nnode ? a->nnode : b->nnode;
  ws->cap_tri = a->ntri > b->ntri ? a->ntri : b->ntri;
  // a descent pushes at most 4 and pops 1 per level of either tree
  ws->cap_stack = 3 * 2 * GEO_BVH_DEPTH_MAX + 16;
  ws->cap_raw = raw_cap;
  ws->par_cos = cos(GEO_PARALLEL_ANGLE);
  ws->vstamp = calloc((size_t)ws->cap_vert, sizeof *ws->vstamp);
  ws->vx = malloc((size_t)ws->cap_vert * 3 * sizeof *ws->vx);
  ws->cstamp = calloc((size_t)ws->cap_node, sizeof *ws->cstamp);
  ws->cx = malloc((size_t)ws->cap_node * 3 * sizeof *ws->cx);
  ws->xstamp = calloc((size_t)ws->cap_node, sizeof *ws->xstamp);
  ws->axx = malloc((size_t)ws->cap_node * 9 * sizeof *ws->axx);
  ws->tstamp = calloc((size_t)ws->cap_tri, sizeof *ws->tstamp);
  ws->atri = malloc((size_t)ws->cap_tri * sizeof *ws->atri);
  ws->stack = malloc((size_t)ws->cap_stack * sizeof *ws->stack);
  ws->raw = malloc((size_t)ws->cap_raw * sizeof *ws->raw);
  ws->idx = malloc((size_t)ws->cap_raw * sizeof *ws->idx);
  ws->key = malloc((size_t)ws->cap_raw * sizeof *ws->key);
  ws->skey = malloc((size_t)ws->cap_raw * sizeof *ws->skey);
  ws->skey2 = malloc((size_t)ws->cap_raw * sizeof *ws->skey2);
  ws->idx2 = malloc((size_t)ws->cap_raw * sizeof *ws->idx2);
  if (!ws->vstamp || !ws->vx || !ws->cstamp || !ws->cx || !ws->xstamp || !ws->axx || !ws->tstamp ||
      !ws->atri || !ws->stack || !ws->raw || !ws->idx || !ws->key || !ws->skey || !ws->skey2 ||
      !ws->idx2) {
    geo_query_ws_destroy(&ws);
    geo_set_err(err, err_sz, "geo_query_ws_new: out of memory");
    return NULL;
  }
  return ws;
}

void geo_query_ws_destroy(geo_query_ws **pws) {
  if (pws == NULL || *pws == NULL) {
    return;
  }
  geo_query_ws *ws = *pws;
  free(ws->vstamp);
  free(ws->vx);
  free(ws->cstamp);
  free(ws->cx);
  free(ws->xstamp);
  free(ws->axx);
  free(ws->tstamp);
  free(ws->atri);
  free(ws->stack);
  free(ws->raw);
  free(ws->idx);
  free(ws->key);
  free(ws->skey);
  free(ws->skey2);
  free(ws->idx2);
  free(ws);
  *pws = NULL;
}

int geo_query_ws_set_parallel_angle(geo_query_ws *ws, double angle) {
  if (ws == NULL || !isfinite(angle) || angle < 0.0 || angle > 1.5) {
    return GEO_QEINVAL;
  }
  ws->par_cos = angle == 0.0 ? 2.0 : cos(angle);
  return GEO_QOK;
}

void geo_query_ws_stats(const geo_query_ws *ws, int *n_node, int *n_leaf) {
  if (n_node != NULL) {
    *n_node = ws ? ws->n_node : 0;
  }
  if (n_leaf != NULL) {
    *n_leaf = ws ? ws->n_leaf : 0;
  }
}

geo_query_cache *geo_query_cache_new(int cap, double margin, char *err, size_t err_sz) {
  if (!isfinite(margin) || margin < 0.0) {
    geo_set_err(err, err_sz, "geo_query_cache_new: margin must be finite and >= 0");
    return NULL;
  }
  if (cap <= 0) {
    cap = 65536;
  }
  geo_query_cache *c = calloc(1, sizeof *c);
  if (c != NULL) {
    c->cand = malloc((size_t)cap * sizeof *c->cand);
  }
  if (c == NULL || c->cand == NULL) {
    geo_query_cache_destroy(&c);
    geo_set_err(err, err_sz, "geo_query_cache_new: out of memory");
    return NULL;
  }
  c->cap = cap;
  c->margin = margin;
  return c;
}

void geo_query_cache_destroy(geo_query_cache **pc) {
  if (pc == NULL || *pc == NULL) {
    return;
  }
  free((*pc)->cand);
  free(*pc);
  *pc = NULL;
}

void geo_query_cache_reset(geo_query_cache *c) {
  if (c != NULL) {
    c->valid = 0;
    c->nlb = 0;
    c->best_valid = 0;
    c->last_valid = 0;
    c->a = c->b = NULL;
    c->n = 0;
  }
}

// ---------------------------------------------------------------------------------------
// query set-up: A's body frame -> B's body frame, lazily transformed A data

// bits that hold every feature id (vertex, edge, triangle) of hierarchy h
static int id_bits(const geo_bvh *h) {
  int n = h->nvert > h->nedge ? h->nvert : h->nedge, bits = 1;
  n = h->ntri > n ? h->ntri : n;
  while (bits < 30 && (1 << bits) < n) {
    bits++;
  }
  return bits;
}

static int geo_q_begin(geo_query_ws *ws, const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                const geo_pose *xb) {
  if (ws == NULL || a == NULL || b == NULL || !geo_pose_valid(xa) || !geo_pose_valid(xb)) {
    return GEO_QEINVAL;
  }
  if (a->nvert > ws->cap_vert || a->nnode > ws->cap_node || a->ntri > ws->cap_tri ||
      a->depth + b->depth > 2 * GEO_BVH_DEPTH_MAX) {
    return GEO_QEINVAL;
  }
  geo_xform XA, XB, rel;
  geo_q_pose_xform(&XA, xa);
  geo_q_pose_xform(&XB, xb);
  geo_xform_rel(&rel, &XB, &XA);
  memcpy(ws->R, rel.R, sizeof ws->R);
  memcpy(ws->t, rel.t, sizeof ws->t);
  ws->xb = XB;
  ws->xa = XA;
  ws->a = a;
  ws->b = b;
  ws->slack = 1e-12 * (a->scale + b->scale + geo_v3_norm(rel.t));
  // a point named by a feature moves up to GEO_FEAT_BARY_TOL times a triangle's size
  // (< 2 scale) onto it, so a canonical distance may differ from the exact one by that much
  ws->lb_tol = 4.0 * GEO_FEAT_BARY_TOL * (a->scale + b->scale) + ws->slack;
  ws->n_leaf = 0;
  ws->n_node = 0;
  ws->key_ib = id_bits(b);
  ws->key_bits = id_bits(a) + ws->key_ib + 4;
  // new stamp; on wrap-around clear every stamp so none is stale
  ws->stamp++;
  if (ws->stamp == 0) {
    memset(ws->vstamp, 0, (size_t)ws->cap_vert * sizeof *ws->vstamp);
    memset(ws->cstamp, 0, (size_t)ws->cap_node * sizeof *ws->cstamp);
    memset(ws->xstamp, 0, (size_t)ws->cap_node * sizeof *ws->xstamp);
    memset(ws->tstamp, 0, (size_t)ws->cap_tri * sizeof *ws->tstamp);
    ws->stamp = 1;
  }
  return GEO_QOK;
}

static inline const double *a_vert(geo_query_ws *ws, int v) {
  double *o = ws->vx + 3 * v;
  if (ws->vstamp[v] != ws->stamp) {
    const double *x = ws->a->vert + 3 * v;
    geo_m3_mulv(o, ws->R, x);
    geo_v3_add(o, o, ws->t);
    ws->vstamp[v] = ws->stamp;
  }
  return o;
}

static inline const double *a_centre(geo_query_ws *ws, int id) {
  double *o = ws->cx + 3 * id;
  if (ws->cstamp[id] != ws->stamp) {
    geo_m3_mulv(o, ws->R, ws->a->node[id].c);
    geo_v3_add(o, o, ws->t);
    ws->cstamp[id] = ws->stamp;
  }
  return o;
}

static inline const double *a_axes(geo_query_ws *ws, int id) {
  double *o = ws->axx + 9 * id;
  if (ws->xstamp[id] != ws->stamp) {
    const double *ax = ws->a->node[id].ax;
    geo_m3_mulv(o, ws->R, ax);
    geo_m3_mulv(o + 3, ws->R, ax + 3);
    geo_m3_mulv(o + 6, ws->R, ax + 6);
    ws->xstamp[id] = ws->stamp;
  }
  return o;
}

// A's triangle t in B's frame: normal and kernel data, made on first use in a query (a
// triangle of one body meets many of the other's)
static inline const q_atri *a_tri(geo_query_ws *ws, int t) {
  q_atri *o = &ws->atri[t];
  if (ws->tstamp[t] != ws->stamp) {
    const int *id = ws->a->tri + 3 * t;
    const double *v[3] = {a_vert(ws, id[0]), a_vert(ws, id[1]), a_vert(ws, id[2])};
    geo_m3_mulv(o->n, ws->R, ws->a->tri_normal + 3 * t);
    // the kernel reads only B's side midpoints (to order B's edges)
    geo_bvh_tri_data_fill(v, id, o->n, 0, &o->d);
    ws->tstamp[t] = ws->stamp;
  }
  return o;
}

// Lower bound from the bounding spheres alone, d = B's centre - A's centre (B's frame):
// the sphere gap, then A's sphere against B's box (cheap, and strong when B is a long thin
// patch or a single triangle, whose box is flat). Above thr it only prunes; else it is
// max(0, sphere gap), or -1 when A's centre lies within sqrt(near2) of B's box (near2 < 0:
// never), which tells geo_q_node_lb to pass the pair untested.
static inline double sphere_lb(const geo_bvh_node *A, const geo_bvh_node *B, const double d[3],
                               double thr, double near2) {
  double lb = geo_v3_norm(d) - A->r - B->r;
  if (lb > thr) {
    return lb;
  }
  // written out: this runs for every node pair tested, and -O2 kept the loop (Rock-N-Stack:
  // 2 to 4 % fewer instructions per query)
  const double *bx = B->ax;
  double t0 = fabs(bx[0] * d[0] + bx[1] * d[1] + bx[2] * d[2]) - B->h[0];
  double t1 = fabs(bx[3] * d[0] + bx[4] * d[1] + bx[5] * d[2]) - B->h[1];
  double t2 = fabs(bx[6] * d[0] + bx[7] * d[1] + bx[8] * d[2]) - B->h[2];
  double e2 = 0.0;
  if (t0 > 0.0) e2 += t0 * t0;
  if (t1 > 0.0) e2 += t1 * t1;
  if (t2 > 0.0) e2 += t2 * t2;
  double rr = thr + A->r;
  if (e2 > rr * rr) {
    return sqrt(e2) - A->r;
  }
  if (e2 <= near2) {
    return -1.0;
  }
  return lb < 0.0 ? 0.0 : lb;
}

// Hulls of at most this many vertices are scanned against a single triangle of B (the
// subtrees of a few triangles, where a box of a curved patch bulges most): on the
// Rock-N-Stack the scan prunes about a third of the node pairs the box passes there, while
// larger hulls cost more to scan than the pairs they prune.
#define GEO_Q_HULL_MAX 16

// A's subtree against B's triangle tb along the triangle's normal and its three side
// normals, from the exact support of A's hull vertices: the largest of lb and the gaps
// along those four directions (each a lower bound on the distance).
static inline double hull_tri_lb(geo_query_ws *ws, const geo_bvh_node *A, int tb, double lb) {
  const geo_bvh *b = ws->b;
  const double *nb = b->tri_normal + 3 * tb, *q0 = b->vert + 3 * b->tri[3 * tb];
  const double *m = b->tri_data[tb].m, *mo = b->tri_side_off + 6 * tb;
  const int *hv = ws->a->hull_vert + A->hull_first;
  double lo = INFINITY, hi = -INFINITY, s0 = -INFINITY, s1 = -INFINITY, s2 = -INFINITY;
  for (int k = 0; k < A->hull_n; k++) {
    const double *v = a_vert(ws, hv[k]);
    double w[3];
    geo_v3_sub(w, v, q0);
    double h = geo_v3_dot(nb, w);
    lo = h < lo ? h : lo;
    hi = h > hi ? h : hi;
    double t0 = geo_v3_dot(m, v), t1 = geo_v3_dot(m + 3, v), t2 = geo_v3_dot(m + 6, v);
    s0 = t0 > s0 ? t0 : s0;
    s1 = t1 > s1 ? t1 : s1;
    s2 = t2 > s2 ? t2 : s2;
  }
  lb = lo > lb ? lo : lb;
  lb = -hi > lb ? -hi : lb;
  double g0 = (mo[0] - s0) * mo[1], g1 = (mo[2] - s1) * mo[3], g2 = (mo[4] - s2) * mo[5];
  // the normal is orthogonal to every side normal: a gap along both bounds the distance by
  // their Euclidean sum (see geo_q_node_lb)
  double gn = lo > -hi ? lo : -hi, gs = g0 > g1 ? g0 : g1;
  gs = g2 > gs ? g2 : gs;
  if (gn > 0.0 && gs > 0.0) {
    double e = sqrt(gn * gn + gs * gs);
    return e > lb ? e : lb;
  }
  return gs > lb ? gs : lb;
}

// Lower bound on the distance between the subtrees of node ia (A) and ib (B); returns as
// soon as it exceeds thr (the caller prunes). The sphere bounds (sphere_lb), then the 6 face
// axes of the two boxes (value), then the 9 edge-edge axes (prune only), then, when B is a
// single triangle and A's hull small, the triangle's planes against that hull (value).
// near2 >= 0 (the proximity traversal): a pair whose A centre lies within sqrt(near2) of
// B's box passes untested, with a negative return; < 0: every pair is tested.
static inline double geo_q_node_lb(geo_query_ws *ws, int ia, int ib, double thr, double near2) {
  const geo_bvh_node *A = &ws->a->node[ia], *B = &ws->b->node[ib];
  ws->n_node++;
  const double *ca = a_centre(ws, ia);
  double d[3];
  geo_v3_sub(d, B->c, ca);
  double lb = sphere_lb(A, B, d, thr, near2);
  if (lb > thr || lb < 0.0) {
    return lb;
  }
  const double *aa = a_axes(ws, ia), *ba = B->ax;
  // C = A's axes . B's axes, written out: this runs for most node pairs tested, and -O2
  // kept the loops (Rock-N-Stack: 2 to 11 % fewer instructions per query)
  double C[9], absC[9], tA[3], tB[3];
#define GEO_Q_ROT(i, j)                                                                        \
  do {                                                                                         \
    C[3 * i + j] =                                                                             \
        aa[3 * i] * ba[3 * j] + aa[3 * i + 1] * ba[3 * j + 1] + aa[3 * i + 2] * ba[3 * j + 2]; \
    absC[3 * i + j] = fabs(C[3 * i + j]) + 1e-12;                                              \
  } while (0)
  GEO_Q_ROT(0, 0);
  GEO_Q_ROT(0, 1);
  GEO_Q_ROT(0, 2);
  GEO_Q_ROT(1, 0);
  GEO_Q_ROT(1, 1);
  GEO_Q_ROT(1, 2);
  GEO_Q_ROT(2, 0);
  GEO_Q_ROT(2, 1);
  GEO_Q_ROT(2, 2);
#undef GEO_Q_ROT
  tA[0] = geo_v3_dot(aa, d);
  tA[1] = geo_v3_dot(aa + 3, d);
  tA[2] = geo_v3_dot(aa + 6, d);
  tB[0] = geo_v3_dot(ba, d);
  tB[1] = geo_v3_dot(ba + 3, d);
  tB[2] = geo_v3_dot(ba + 6, d);
  const double *ha = A->h, *hb = B->h;
  double g0 = fabs(tA[0]) - ha[0] - (hb[0] * absC[0] + hb[1] * absC[1] + hb[2] * absC[2]);
  double g1 = fabs(tA[1]) - ha[1] - (hb[0] * absC[3] + hb[1] * absC[4] + hb[2] * absC[5]);
  double g2 = fabs(tA[2]) - ha[2] - (hb[0] * absC[6] + hb[1] * absC[7] + hb[2] * absC[8]);
  double g3 = fabs(tB[0]) - hb[0] - (ha[0] * absC[0] + ha[1] * absC[3] + ha[2] * absC[6]);
  double g4 = fabs(tB[1]) - hb[1] - (ha[0] * absC[1] + ha[1] * absC[4] + ha[2] * absC[7]);
  double g5 = fabs(tB[2]) - hb[2] - (ha[0] * absC[2] + ha[1] * absC[5] + ha[2] * absC[8]);
  // The projections of the two subtrees on a unit axis are disjoint intervals at least
  // g apart, so every pair of points differs by at least g along it: along three orthogonal
  // axes (one box's faces) the squares add up. Laterally offset patches (neighbours along a
  // contact band, the torus over the cone 1 cm up) are then bounded by their diagonal gap,
  // not its largest component (Rock-N-Stack: fewer node pairs expanded).
  double sa = 0.0, sb = 0.0;
  if (g0 > 0.0) sa += g0 * g0;
  if (g1 > 0.0) sa += g1 * g1;
  if (g2 > 0.0) sa += g2 * g2;
  if (g3 > 0.0) sb += g3 * g3;
  if (g4 > 0.0) sb += g4 * g4;
  if (g5 > 0.0) sb += g5 * g5;
  double gb = sqrt(sa > sb ? sa : sb);
  lb = gb > lb ? gb : lb;
  if (lb > thr) {
    return lb;
  }
  // edge-edge axes a_i x b_j, unnormalised: gap * |L| compared with thr * |L|
  double t2 = thr * thr * (1.0 + 1e-9);
#define GEO_Q_CROSS(i, i1, i2, j, j1, j2)                                               \
  do {                                                                                 \
    double L2 = 1.0 - C[3 * i + j] * C[3 * i + j];                                     \
    double g = fabs(tA[i2] * C[3 * i1 + j] - tA[i1] * C[3 * i2 + j]) -                 \
               (ha[i1] * absC[3 * i2 + j] + ha[i2] * absC[3 * i1 + j]) -               \
               (hb[j1] * absC[3 * i + j2] + hb[j2] * absC[3 * i + j1]);                \
    if (g > 0.0 && L2 >= 1e-6 && g * g > t2 * L2) {                                    \
      return g / sqrt(L2);                                                             \
    }                                                                                  \
  } while (0)
  GEO_Q_CROSS(0, 1, 2, 0, 1, 2);
  GEO_Q_CROSS(0, 1, 2, 1, 2, 0);
  GEO_Q_CROSS(0, 1, 2, 2, 0, 1);
  GEO_Q_CROSS(1, 2, 0, 0, 1, 2);
  GEO_Q_CROSS(1, 2, 0, 1, 2, 0);
  GEO_Q_CROSS(1, 2, 0, 2, 0, 1);
  GEO_Q_CROSS(2, 0, 1, 0, 1, 2);
  GEO_Q_CROSS(2, 0, 1, 1, 2, 0);
  GEO_Q_CROSS(2, 0, 1, 2, 0, 1);
#undef GEO_Q_CROSS
  if (B->tri >= 0 && A->hull_n <= GEO_Q_HULL_MAX) {
    return hull_tri_lb(ws, A, B->tri, lb);
  }
  return lb;
}

// ---------------------------------------------------------------------------------------
// leaf kernel: exact distance between two triangles

// closest points p0 + s d1, q0 + t d2 of two segments (Ericson 5.1.9; a = |d1|^2,
// e = |d2|^2 > 0); returns the squared distance
static inline double seg_seg(const double *p0, const double *d1, double a, const double *q0,
                             const double *d2, double e, double *ps, double *pt) {
  double r[3];
  geo_v3_sub(r, p0, q0);
  double f = geo_v3_dot(d2, r);
  double c = geo_v3_dot(d1, r), b = geo_v3_dot(d1, d2);
  double denom = a * e - b * b, s, t;
  if (denom > 1e-14 * a * e) {
    s = (b * f - c * e) / denom;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  } else {
    s = 0.0;
  }
  t = (b * s + f) / e;
  if (t < 0.0) {
    t = 0.0;
    s = -c / a;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  } else if (t > 1.0) {
    t = 1.0;
    s = (b - c) / a;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  }
  *ps = s;
  *pt = t;
  double v[3] = {r[0] + s * d1[0] - t * d2[0], r[1] + s * d1[1] - t * d2[1],
                 r[2] + s * d1[2] - t * d2[2]};
  return geo_v3_dot(v, v);
}

// x inside (or on) triangle T whose unit normal is n (T counter-clockwise about n)
static inline int in_tri(const double x[3], const double *const T[3], const double n[3]) {
  for (int k = 0; k < 3; k++) {
    const double *u = T[k], *v = T[(k + 1) % 3];
    double e[3], w[3], c[3];
    geo_v3_sub(e, v, u);
    geo_v3_sub(w, x, u);
    geo_v3_cross(c, e, w);
    if (geo_v3_dot(c, n) < 0.0) {
      return 0;
    }
  }
  return 1;
}

static inline int straddles(const double s[3]) {
  return !((s[0] > 0 && s[1] > 0 && s[2] > 0) || (s[0] < 0 && s[1] < 0 && s[2] < 0));
}

// an edge of P crossing Q's plane inside Q: the crossing point in x
static int edge_pierces(const double *const P[3], const double sp[3], const double *const Q[3],
                        const double nq[3], double x[3]) {
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3;
    double si = sp[i], sj = sp[j];
    if ((si > 0 && sj > 0) || (si < 0 && sj < 0) || (si == 0 && sj == 0)) {
      continue;
    }
    double u = si / (si - sj);
    geo_v3_lerp(x, P[i], P[j], u);
    if (in_tri(x, Q, nq)) {
      return 1;
    }
  }
  return 0;
}

// o = the indices 0..2 ordered by increasing |v| (ties by index)
static inline void order3(const double v[3], int o[3]) {
  double a0 = fabs(v[0]), a1 = fabs(v[1]), a2 = fabs(v[2]);
  o[0] = 0;
  o[1] = 1;
  o[2] = 2;
  double t[3] = {a0, a1, a2};
  if (t[o[1]] < t[o[0]]) {
    int x = o[0];
    o[0] = o[1];
    o[1] = x;
  }
  if (t[o[2]] < t[o[1]]) {
    int x = o[1];
    o[1] = o[2];
    o[2] = x;
    if (t[o[1]] < t[o[0]]) {
      x = o[0];
      o[0] = o[1];
      o[1] = x;
    }
  }
}

// (pa, pb) is the closest pair of the two triangles (convex sets) when v = pb - pa
// separates them: every vertex of P at or behind pa along v, every vertex of Q at or beyond
// pb; a relative 1e-12 absorbs rounding for vertices on the supporting planes
static inline int closest_ok(const double *const P[3], const double *const Q[3],
                             const double pa[3], const double pb[3]) {
  double v[3], w[3];
  geo_v3_sub(v, pb, pa);
  double vv = geo_v3_dot(v, v);
  if (vv == 0.0) {
    return 0;
  }
  for (int k = 0; k < 3; k++) {
    geo_v3_sub(w, P[k], pa);
    if (geo_v3_dot(w, v) > 1e-12 * (geo_v3_dot(w, w) + vv)) {
      return 0;
    }
    geo_v3_sub(w, Q[k], pb);
    if (geo_v3_dot(w, v) < -1e-12 * (geo_v3_dot(w, w) + vv)) {
      return 0;
    }
  }
  return 1;
}

// Gap between triangles P and Q along v = pb - pa (|v| = vn > 0): min over Q of x.v minus
// max over P of x.v, over vn. A lower bound on their distance for any v (separating axis);
// equal to it when (pa, pb) is their closest pair.
static inline double axis_gap(const double *const P[3], const double *const Q[3],
                              const double pa[3], const double pb[3], double vn) {
  double v[3];
  geo_v3_sub(v, pb, pa);
  double p0 = geo_v3_dot(P[0], v), p1 = geo_v3_dot(P[1], v), p2 = geo_v3_dot(P[2], v);
  double q0 = geo_v3_dot(Q[0], v), q1 = geo_v3_dot(Q[1], v), q2 = geo_v3_dot(Q[2], v);
  double hi = p0 > p1 ? p0 : p1, lo = q0 < q1 ? q0 : q1;
  hi = p2 > hi ? p2 : hi;
  lo = q2 < lo ? q2 : lo;
  return (lo - hi) / vn;
}

#define GEO_Q_MIN3(a, b, c) ((a) < (b) ? ((a) < (c) ? (a) : (c)) : ((b) < (c) ? (b) : (c)))
#define GEO_Q_MAX3(a, b, c) ((a) > (b) ? ((a) > (c) ? (a) : (c)) : ((b) > (c) ? (b) : (c)))

// With T's in-plane side normals m[j] (inward; td, geo_tri_data), d[j][k] = m[j] . (X[k] -
// T[j]) for the corners of triangle X. Returns 1 with *gap > thr when X lies wholly outside
// one side of T by more than thr (a lower bound on their distance), else 0; sides are tried
// in order, so d is complete only when 0 is returned.
static inline int side_gap(const double *const X[3], const double *const T[3],
                           const geo_tri_data *td, double thr, double d[3][3], double *gap) {
  for (int j = 0; j < 3; j++) {
    double w[3];
    const double *m = td->m + 3 * j;
    for (int k = 0; k < 3; k++) {
      geo_v3_sub(w, X[k], T[j]);
      d[j][k] = geo_v3_dot(m, w);
    }
    double hi = GEO_Q_MAX3(d[j][0], d[j][1], d[j][2]), mm = td->mn2[j];
    if (hi < 0.0 && hi * hi > thr * thr * mm) {
      *gap = -hi / sqrt(mm);
      if (*gap > thr) {
        return 1;
      }
    }
  }
  return 0;
}

// side k of triangle T (ids tid, kernel data td) from its lower vertex id: returns the
// origin, with the direction in *d and its squared length in *d2
static inline const double *side(const double *const T[3], const int tid[3], const geo_tri_data *td,
                                 int k, const double **d, double *d2) {
  int k1 = k == 2 ? 0 : k + 1;
  *d = td->ed + 3 * k;
  *d2 = td->en2[k];
  return T[tid[k] > tid[k1] ? k1 : k];
}

// Distance between the leaf's triangles P (ids pid, unit normal np, kernel data tp) and Q
// (qid, nq, tq), all in one frame; witness points in pa, pb. Edges are taken from the lower
// vertex id to the higher so the same edge gives bit-identical results from either
// adjacent triangle.
static double geo_q_tri_dist(const q_leaf *lc, double thr, double pa[3], double pb[3]) {
  const double *const *P = lc->P, *const *Q = lc->Q, *np = lc->np, *nq = lc->nq;
  const int *pid = lc->pid, *qid = lc->qid;
  const geo_tri_data *tp = lc->tp, *tq = lc->tq;
  double sp[3], sq[3], w[3];
  for (int k = 0; k < 3; k++) {
    geo_v3_sub(w, P[k], Q[0]);
    sp[k] = geo_v3_dot(nq, w);
  }
  // one triangle entirely beyond thr on one side of the other's plane: a lower bound above
  // thr is all the caller needs (witness points are left unset)
  double lo = GEO_Q_MIN3(sp[0], sp[1], sp[2]), hi = GEO_Q_MAX3(sp[0], sp[1], sp[2]);
  if (lo > thr || hi < -thr) {
    return lo > thr ? lo : -hi;
  }
  for (int k = 0; k < 3; k++) {
    geo_v3_sub(w, Q[k], P[0]);
    sq[k] = geo_v3_dot(np, w);
  }
  lo = GEO_Q_MIN3(sq[0], sq[1], sq[2]);
  hi = GEO_Q_MAX3(sq[0], sq[1], sq[2]);
  if (lo > thr || hi < -thr) {
    return lo > thr ? lo : -hi;
  }
  // one triangle wholly outside one side of the other, by more than thr along that side's
  // in-plane normal m = n x e (pointing inwards): the same kind of lower bound. A long thin
  // triangle's neighbours across its long sides end here, not in the search below.
  // dq[j][k] = mq[j] . (P[k] - Q[j]) is also the vertex-face inside test of P[k] below.
  double dq[3][3], dp[3][3];
  if (side_gap(P, Q, tq, thr, dq, &lo) || side_gap(Q, P, tp, thr, dp, &lo)) {
    return lo;
  }
  double best = INFINITY;
  // try the likeliest features first (those nearest the other plane) so that the proof
  // below usually ends the search at once
  int op[3], oq[3];
  order3(sp, op);
  order3(sq, oq);
  // vertex-face: a vertex whose projection falls inside the other triangle; inside means
  // on the inner side of the three in-plane edge normals m (the projection along n does
  // not change those dot products, so the vertex itself is tested)
  for (int n = 0; n < 3; n++) {
    int k = op[n];
    if (sp[k] * sp[k] < best && dq[0][k] >= 0.0 && dq[1][k] >= 0.0 && dq[2][k] >= 0.0) {
      best = sp[k] * sp[k];
      geo_v3_copy(pa, P[k]);
      geo_v3_madd(pb, P[k], -sp[k], nq);
    }
  }
  for (int n = 0; n < 3; n++) {
    int k = oq[n];
    if (sq[k] * sq[k] < best && dp[0][k] >= 0.0 && dp[1][k] >= 0.0 && dp[2][k] >= 0.0) {
      best = sq[k] * sq[k];
      geo_v3_madd(pa, Q[k], -sq[k], np);
      geo_v3_copy(pb, Q[k]);
    }
  }
  if (best < INFINITY && closest_ok(P, Q, pa, pb)) {
    return sqrt(best);
  }
  // edge-edge, each edge oriented from its lower vertex id; stop at a provably closest pair.
  // Edge k joins vertices k and k+1. A's edges nearest B's plane first; B's edges (often
  // long: the plane says little) by the distance of their midpoints from A's vertex
  // nearest B's plane.
  static const int nx[3] = {1, 2, 0};
  double ep[3], eq[3];
  const double *pv = P[op[0]];
  for (int k = 0; k < 3; k++) {
    ep[k] = fabs(sp[k]) + fabs(sp[nx[k]]);
    eq[k] = geo_v3_dist2(tq->mid + 3 * k, pv);
  }
  order3(ep, op);
  order3(eq, oq);
  const double *qo[3], *qd[3];
  double ql[3];
  for (int n = 0; n < 3; n++) {
    qo[n] = side(Q, qid, tq, oq[n], &qd[n], &ql[n]);
  }
  for (int m = 0; m < 3; m++) {
    const double *pd;
    double pl;
    const double *p0 = side(P, pid, tp, op[m], &pd, &pl);
    for (int j = 0; j < 3; j++) {
      double ss, tt;
      double d2 = seg_seg(p0, pd, pl, qo[j], qd[j], ql[j], &ss, &tt);
      if (d2 < best) {
        best = d2;
        geo_v3_madd(pa, p0, ss, pd);
        geo_v3_madd(pb, qo[j], tt, qd[j]);
        if (closest_ok(P, Q, pa, pb)) {
          return sqrt(best);
        }
      }
    }
  }
  // no separating pair proved: the triangles may cross, which needs each to straddle the
  // other's plane (a verified pair above proves they do not)
  if (straddles(sp) && straddles(sq)) {
    double x[3];
    if (edge_pierces(P, sp, Q, nq, x) || edge_pierces(Q, sq, P, np, x)) {
      geo_v3_copy(pa, x);
      geo_v3_copy(pb, x);
      return 0.0;
    }
  }
  return sqrt(best);
}

// the leaf pair (ta of A, tb of B) in B's frame: vertices, ids, normals
static inline void leaf_setup(geo_query_ws *ws, int ta, int tb) {
  const geo_bvh *a = ws->a, *b = ws->b;
  q_leaf *lc = &ws->lc;
  lc->ta = ta;
  lc->tb = tb;
  for (int k = 0; k < 3; k++) {
    lc->pid[k] = a->tri[3 * ta + k];
    lc->P[k] = a_vert(ws, lc->pid[k]);
    lc->qid[k] = b->tri[3 * tb + k];
    lc->Q[k] = b->vert + 3 * lc->qid[k];
  }
  const q_atri *at = a_tri(ws, ta);
  lc->np = at->n;
  lc->tp = &at->d;
  lc->nq = b->tri_normal + 3 * tb;
  lc->tq = &b->tri_data[tb];
}

// exact distance of leaf pair (ta, tb) (or a lower bound above thr); sets ws->lc
static double geo_q_leaf(geo_query_ws *ws, int ta, int tb, double thr, double pa[3],
                         double pb[3]) {
  leaf_setup(ws, ta, tb);
  ws->n_leaf++;
  return geo_q_tri_dist(&ws->lc, thr, pa, pb);
}

// ---------------------------------------------------------------------------------------
// features, pairs, parallel corners

// Local feature code of point x on triangle T: 4 type + k, with k the vertex (type
// vertex), the side k = (k, k+1) (type edge) or 0 (face); from the barycentric coordinates
// of the 2 x 2 Gram system of the edges from T[0] (td, geo_tri_data), GEO_FEAT_BARY_TOL
// counting as zero.
static int classify_loc(const double *const T[3], const geo_tri_data *td, const double x[3]) {
  double r[3];
  const double *e1 = td->e1, *e2 = td->e2;
  geo_v3_sub(r, x, T[0]);
  double a = td->gram[0], b = td->gram[1], c = td->gram[2], den = td->gram[3];
  double p = geo_v3_dot(e1, r), q = geo_v3_dot(e2, r);
  double w1 = (c * p - b * q) / den, w2 = (a * q - b * p) / den;
  double w[3] = {1.0 - w1 - w2, w1, w2};
  int nz = 0, kmax = 0, kzero = 0;
  for (int k = 0; k < 3; k++) {
    if (w[k] > GEO_FEAT_BARY_TOL) {
      nz++;
    } else {
      kzero = k;
    }
    if (w[k] > w[kmax]) {
      kmax = k;
    }
  }
  if (nz >= 3) {
    return 4 * GEO_FEAT_FACE;
  }
  if (nz == 2) {
    return 4 * GEO_FEAT_EDGE + (kzero + 1) % 3;
  }
  return 4 * GEO_FEAT_VERTEX + kmax;
}

// mesh feature of a local code on triangle t (vertex ids tid, edge ids te)
static inline geo_feature feat_of(int code, const int tid[3], int t, const int *te) {
  geo_feature f;
  f.type = code >> 2;
  f.id = f.type == GEO_FEAT_FACE ? t : (f.type == GEO_FEAT_EDGE ? te[code & 3] : tid[code & 3]);
  return f;
}

// Canonical witness points of the leaf pair for the feature pair (ca, cb): vertex-vertex,
// vertex-edge, vertex-face and (non-parallel) edge-edge closest points by one fixed
// formula each, so the same features give bit-identical points however they were found.
// Returns 0 (points untouched) for the other pairs (touching, parallel edges).
static int canon(const q_leaf *lc, int ca, int cb, double pa[3], double pb[3]) {
  int ta = ca >> 2, tb = cb >> 2, ka = ca & 3, kb = cb & 3;
  const double *d1, *d2;
  double w[3], l1, l2;
  if (ta == GEO_FEAT_VERTEX && tb == GEO_FEAT_VERTEX) {
    geo_v3_copy(pa, lc->P[ka]);
    geo_v3_copy(pb, lc->Q[kb]);
    return 1;
  }
  if (ta == GEO_FEAT_VERTEX && tb == GEO_FEAT_EDGE) {
    const double *o = side(lc->Q, lc->qid, lc->tq, kb, &d2, &l2);
    geo_v3_sub(w, lc->P[ka], o);
    geo_v3_copy(pa, lc->P[ka]);
    geo_v3_madd(pb, o, geo_v3_dot(w, d2) / l2, d2);
    return 1;
  }
  if (ta == GEO_FEAT_EDGE && tb == GEO_FEAT_VERTEX) {
    const double *o = side(lc->P, lc->pid, lc->tp, ka, &d1, &l1);
    geo_v3_sub(w, lc->Q[kb], o);
    geo_v3_copy(pb, lc->Q[kb]);
    geo_v3_madd(pa, o, geo_v3_dot(w, d1) / l1, d1);
    return 1;
  }
  if (ta == GEO_FEAT_VERTEX && tb == GEO_FEAT_FACE) {
    geo_v3_sub(w, lc->P[ka], lc->Q[0]);
    geo_v3_copy(pa, lc->P[ka]);
    geo_v3_madd(pb, lc->P[ka], -geo_v3_dot(lc->nq, w), lc->nq);
    return 1;
  }
  if (ta == GEO_FEAT_FACE && tb == GEO_FEAT_VERTEX) {
    geo_v3_sub(w, lc->Q[kb], lc->P[0]);
    geo_v3_copy(pb, lc->Q[kb]);
    geo_v3_madd(pa, lc->Q[kb], -geo_v3_dot(lc->np, w), lc->np);
    return 1;
  }
  if (ta == GEO_FEAT_EDGE && tb == GEO_FEAT_EDGE) {
    const double *p0 = side(lc->P, lc->pid, lc->tp, ka, &d1, &l1);
    const double *q0 = side(lc->Q, lc->qid, lc->tq, kb, &d2, &l2);
    geo_v3_sub(w, p0, q0);
    double a = l1, e = l2, b = geo_v3_dot(d1, d2);
    double c = geo_v3_dot(d1, w), f = geo_v3_dot(d2, w), den = a * e - b * b;
    if (!(den > 1e-10 * a * e)) {
      return 0;
    }
    geo_v3_madd(pa, p0, (b * f - c * e) / den, d1);
    geo_v3_madd(pb, q0, (a * f - b * c) / den, d2);
    return 1;
  }
  return 0;
}

// The merge key of a pair: (fa.type, fa.id, fb.type, fb.id) packed in that order, each id in
// as few bits as the ids of its mesh need (key_ib for B's; ids < 2^30, so at most 64 bits in
// all), so the radix sort of the keys makes as few passes as the meshes allow.
static inline unsigned long long feat_key(const geo_query_ws *ws, const geo_pair *r) {
  unsigned long long kb = ((unsigned long long)r->fb.type << ws->key_ib) | (unsigned)r->fb.id;
  unsigned long long ka =
      ((unsigned long long)r->fa.type << (ws->key_bits - ws->key_ib - 4)) | (unsigned)r->fa.id;
  return (ka << (ws->key_ib + 2)) | kb;
}

// store a raw pair of the current leaf (B frame points, local feature codes ca, cb);
// counts even when full
static void push_raw(geo_query_ws *ws, int ca, int cb, const double pa[3], const double pb[3],
                     double dist, int flags) {
  int i = ws->n_raw++;
  if (i >= ws->cap_raw) {
    return;
  }
  const q_leaf *lc = &ws->lc;
  geo_pair *r = &ws->raw[i];
  geo_v3_copy(r->pa, pa);
  geo_v3_copy(r->pb, pb);
  r->dist = dist;
  r->tri_a = lc->ta;
  r->tri_b = lc->tb;
  r->fa = feat_of(ca, lc->pid, lc->ta, ws->a->tri_edge + 3 * lc->ta);
  r->fb = feat_of(cb, lc->qid, lc->tb, ws->b->tri_edge + 3 * lc->tb);
  ws->key[i] = feat_key(ws, r);
  if (dist == 0.0) {
    flags |= GEO_PAIR_TOUCH;
  }
  r->flags = flags;
  // Normal in B's frame (made world at output), by a rule that names the bodies only
  // through their features, so that swapping A and B flips it: the direction between the
  // points when they are apart; touching, the one face's normal of a vertex/edge-face
  // pair, else the facets' mean axis (both faces, or edge and vertex features; taking B's
  // face there would make the order matter).
  double nrm[3];
  int fa_face = r->fa.type == GEO_FEAT_FACE, fb_face = r->fb.type == GEO_FEAT_FACE;
  if (dist > ws->slack) {
    geo_v3_sub(nrm, pb, pa);
    geo_v3_scale(nrm, nrm, 1.0 / dist);
  } else if (fb_face && !fa_face) {
    geo_v3_scale(nrm, lc->nq, -1.0);
  } else if (fa_face && !fb_face) {
    geo_v3_copy(nrm, lc->np);
  } else if (geo_v3_dot(lc->np, lc->nq) < 0.0) {
    geo_v3_sub(nrm, lc->np, lc->nq);
    geo_v3_normalize(nrm);
  } else {
    geo_v3_scale(nrm, lc->nq, -1.0);  // facets facing the same way: no order-free choice
  }
  geo_v3_copy(r->normal, nrm);
}

// Sutherland-Hodgman: clip polygon poly (n points) by the half-plane left of edge u->v
// about normal n; returns the new count (out must hold n + 1 points)
static int clip_edge(const double (*poly)[3], int np, const double u[3], const double v[3],
                     const double n[3], double (*out)[3]) {
  double e[3], en[3];
  geo_v3_sub(e, v, u);
  geo_v3_cross(en, n, e);  // inward normal of the edge
  int m = 0;
  for (int i = 0; i < np; i++) {
    const double *p = poly[i], *q = poly[(i + 1) % np];
    double w[3];
    geo_v3_sub(w, p, u);
    double sp = geo_v3_dot(en, w);
    geo_v3_sub(w, q, u);
    double sq = geo_v3_dot(en, w);
    if (sp >= 0) {
      geo_v3_copy(out[m++], p);
    }
    if ((sp >= 0) != (sq >= 0)) {
      geo_v3_lerp(out[m++], p, q, sp / (sp - sq));
    }
  }
  return m;
}

// 1 when the current leaf's triangles count as parallel
static inline int leaf_parallel(const geo_query_ws *ws) {
  return fabs(geo_v3_dot(ws->lc.np, ws->lc.nq)) >= ws->par_cos;
}

// corners of the overlap of the current (parallel) leaf pair below ds as raw pairs;
// returns how many were emitted (0: no overlap with area, or none below ds)
static int parallel_corners(geo_query_ws *ws, double ds) {
  const q_leaf *lc = &ws->lc;
  const double *const *P = lc->P, *const *Q = lc->Q, *nq = lc->nq, *np = lc->np;
  // The facets' mean axis m (n_a - n_b when they face each other; the same line whichever
  // body is A): the overlap of the two triangles' shadows along m is one polygon, seen in
  // either plane, so its corners and their features do not depend on the order. Project
  // A's triangle onto B's plane along m and clip it by B's triangle
  double m[3];
  geo_v3_madd(m, np, geo_v3_dot(np, nq) < 0.0 ? -1.0 : 1.0, nq);
  geo_v3_normalize(m);
  double mq = geo_v3_dot(nq, m), mp = geo_v3_dot(np, m);
  double buf[2][12][3];
  int n = 3;
  for (int k = 0; k < 3; k++) {
    double w[3];
    geo_v3_sub(w, P[k], Q[0]);
    geo_v3_madd(buf[0][k], P[k], -geo_v3_dot(nq, w) / mq, m);
  }
  int cur = 0;
  for (int k = 0; k < 3 && n > 0; k++) {
    n = clip_edge((const double(*)[3])buf[cur], n, Q[k], Q[(k + 1) % 3], nq, buf[1 - cur]);
    cur = 1 - cur;
  }
  // a polygon with area: emit its corners below ds (lifted back onto A along m)
  double area2 = 0.0;
  for (int i = 1; i + 1 < n; i++) {
    double e1[3], e2[3], c[3];
    geo_v3_sub(e1, buf[cur][i], buf[cur][0]);
    geo_v3_sub(e2, buf[cur][i + 1], buf[cur][0]);
    geo_v3_cross(c, e1, e2);
    area2 += geo_v3_dot(c, nq);
  }
  // an overlap with area relative to the smaller triangle (either order gives the same)
  double ca[3], cb[3];
  geo_v3_cross(ca, lc->tp->e1, lc->tp->e2);  // A's triangle: P1 - P0, P2 - P0
  geo_v3_cross(cb, lc->tq->e1, lc->tq->e2);
  int emitted = 0;
  if (n >= 3 && fabs(area2) > 1e-9 * fmin(geo_v3_norm(ca), geo_v3_norm(cb))) {
    for (int i = 0; i < n; i++) {
      double *x = buf[cur][i], w[3], qa[3];
      geo_v3_sub(w, P[0], x);
      geo_v3_madd(qa, x, geo_v3_dot(np, w) / mp, m);
      int fa = classify_loc(P, lc->tp, qa), fb = classify_loc(Q, lc->tq, x);
      // A vertex over a face meets it along that face's normal, at the features' canonical
      // points (B's vertices over A's face too: taking B's normal there pushed a ball
      // listed second sideways by its facets' slope). Crossing edges keep the corner's own
      // points, along m: their common perpendicular, e_a x e_b, tilts far from both
      // normals when the edges cross at a small angle (a torus on the Rock-N-Stack's cone
      // no longer settled).
      double pa[3], pb[3];
      int crossing = (fa >> 2) == GEO_FEAT_EDGE && (fb >> 2) == GEO_FEAT_EDGE;
      if (crossing || !canon(lc, fa, fb, pa, pb)) {
        geo_v3_copy(pa, qa);
        geo_v3_copy(pb, x);
      }
      double d = geo_v3_dist(pa, pb);
      if (d < ds) {
        push_raw(ws, fa, fb, pa, pb, d, GEO_PAIR_PARALLEL);
        emitted++;
      }
    }
  }
  return emitted;
}

// The current leaf pair, whose kernel gave (dist, pa, pb): parallel corners, or the
// closest pair named by its features and moved to the canonical points of those features;
// emitted when that distance is below ds. Returns the feature pair (ca * 16 + cb) as a
// hint for the cache, or -1 (parallel, or no canonical form).
static int close_pair(geo_query_ws *ws, double dist, double pa_in[3], double pb_in[3],
                      double ds) {
  if (leaf_parallel(ws) && parallel_corners(ws, ds) > 0) {
    return -1;
  }
  const q_leaf *lc = &ws->lc;
  double pa[3], pb[3];
  geo_v3_copy(pa, pa_in);
  geo_v3_copy(pb, pb_in);
  int ca = classify_loc(lc->P, lc->tp, pa), cb = classify_loc(lc->Q, lc->tq, pb);
  int hint = -1;
  if (dist > 0.0 && canon(lc, ca, cb, pa, pb)) {
    dist = geo_v3_dist(pa, pb);
    hint = ca * 16 + cb;
  }
  if (dist < ds) {
    push_raw(ws, ca, cb, pa, pb, dist, 0);
  }
  return leaf_parallel(ws) ? -1 : hint;
}

// The cached feature pair of the current leaf, when it still gives the closest pair: its
// canonical points name the same features and provably separate the triangles. Then they
// are what close_pair would produce. When they are clearly beyond ds, the gap of the
// triangles along pb - pa may prove the pair beyond ds instead (the cold query would not
// emit it either; naming and proving the features is then not needed). Returns 1, emits
// (when below ds) and sets *dist_out to the proved distance or lower bound, else 0.
static int try_hint(geo_query_ws *ws, int hint, double ds, double *dist_out) {
  const q_leaf *lc = &ws->lc;
  if (hint < 0 || leaf_parallel(ws)) {
    return 0;
  }
  int ca = hint >> 4, cb = hint & 15;
  double pa[3], pb[3];
  if (!canon(lc, ca, cb, pa, pb)) {
    return 0;
  }
  double dist = geo_v3_dist(pa, pb);
  double far = ds + ws->lb_tol;
  if (dist >= far) {
    double g = axis_gap(lc->P, lc->Q, pa, pb, dist);
    if (g >= far) {
      *dist_out = g;
      return 1;
    }
  }
  if (!(dist > 0.0) || classify_loc(lc->P, lc->tp, pa) != ca ||
      classify_loc(lc->Q, lc->tq, pb) != cb || !closest_ok(lc->P, lc->Q, pa, pb)) {
    return 0;
  }
  if (dist < ds) {
    push_raw(ws, ca, cb, pa, pb, dist, 0);
  }
  *dist_out = dist;
  return 1;
}

// ---------------------------------------------------------------------------------------
// traversals

// Push the children of node pair (ia, ib) onto the traversal stack at sp: split A when B
// is a leaf or A is the larger inner node, else B. Returns the new stack size.
static int push_split(geo_query_ws *ws, int sp, int ia, int ib, const geo_bvh_node *A,
                      const geo_bvh_node *B) {
  if (B->tri >= 0 || (A->tri < 0 && A->r >= B->r)) {
    ws->stack[sp].a = A->right;
    ws->stack[sp].b = ib;
    ws->stack[sp + 1].a = A->left;
    ws->stack[sp + 1].b = ib;
  } else {
    ws->stack[sp].a = ia;
    ws->stack[sp].b = B->right;
    ws->stack[sp + 1].a = ia;
    ws->stack[sp + 1].b = B->left;
  }
  return sp + 2;
}

#define GEO_Q_SKIP_LEVELS 2  // A's levels skipped at once against a single triangle of B
#define GEO_Q_DESC_MAX (1 << (GEO_Q_SKIP_LEVELS + 1))  // most descendants one step yields

// 1 when the traversals expand the node pair (A, B) to A's descendants several levels down
// (a_descendants) instead of its children: B is a single triangle and A an inner node less
// than half its size. Why: such a triangle (the 1-ring cone's long thin sides) spans far
// past A's subtree, so A's intermediate levels are rarely separated from it and testing
// them costs more than the few descendants they prune (Rock-N-Stack, 1-ring: proximity -13 %
// and minimum distance -7 to -12 % instructions; 16-ring within +-2 %).
static inline int skip_levels(const geo_bvh_node *A, const geo_bvh_node *B) {
  return B->tri >= 0 && A->tri < 0 && A->r < 0.5 * B->r;
}

// The descendants of A's inner node ia GEO_Q_SKIP_LEVELS + 1 levels down (or the leaves
// above that), left to right, in out, less the children of a node of the last level
// skipped that the sphere bounds (sphere_lb) alone prove beyond thr from B's node ib;
// returns their count. Why that filter: where the trees are apart (the 1-ring cone 1 cm
// under the torus) many of those nodes are, and their sphere test (a cached transform and
// a few dot products) costs a fraction of the box tests of their two children; the upper
// skipped levels rarely prune, so they stay untested (Rock-N-Stack, 1-ring 1 cm up:
// proximity -8 %, minimum distance -1 % instructions; other cases within +-2 %). One step
// pushes at most GEO_Q_DESC_MAX - 1 more entries while descending 3 levels, within the
// stack bound.
static int a_descendants(geo_query_ws *ws, int ia, int ib, double thr, int out[GEO_Q_DESC_MAX]) {
  const geo_bvh_node *node = ws->a->node, *B = &ws->b->node[ib];
  // level by level between two buffers, the last level straight into out
  int buf[2][GEO_Q_DESC_MAX], *src = buf[0], n = 1;
  src[0] = ia;
  for (int lev = 0; lev <= GEO_Q_SKIP_LEVELS; lev++) {
    int *dst = lev == GEO_Q_SKIP_LEVELS ? out : buf[(lev + 1) & 1], m = 0;
    for (int i = 0; i < n; i++) {
      const geo_bvh_node *X = &node[src[i]];
      if (lev == GEO_Q_SKIP_LEVELS) {
        double d[3];
        geo_v3_sub(d, B->c, a_centre(ws, src[i]));
        if (sphere_lb(X, B, d, thr, -1.0) > thr) {
          continue;
        }
      }
      if (X->tri >= 0) {
        dst[m++] = src[i];
      } else {
        dst[m++] = X->left;
        dst[m++] = X->right;
      }
    }
    src = dst;
    n = m;
  }
  return n;
}

// every leaf pair with distance < thr; pairs below ds become raw pairs; candidates (when
// cand != NULL) receive every leaf pair below thr (up to cap; *ncand counts all)
static void traverse_prox(geo_query_ws *ws, double thr, double ds, q_cand *cand, int cap,
                          int *ncand) {
  const geo_bvh *a = ws->a, *b = ws->b;
  double lim = thr + ws->slack;
  int sp = 0;
  ws->stack[sp].a = 0;
  ws->stack[sp].b = 0;
  sp++;
  // a node pair whose A centre lies within 2 lim of B's box passes on its sphere bounds
  // alone. Why: in a contact web such pairs nearly all pass the box test anyway, and
  // skipping a test never drops a pair, it only leaves the pruning to the children (the
  // minimum distance keeps every test: it orders by their values) (Rock-N-Stack contact
  // proximity -5 % instructions, separated -1 to -2 %)
  const double near2 = 4.0 * lim * lim;
  while (sp > 0) {
    sp--;
    int ia = ws->stack[sp].a, ib = ws->stack[sp].b;
    const geo_bvh_node *A = &a->node[ia], *B = &b->node[ib];
    if (A->tri >= 0 && B->tri >= 0) {
      // two triangles: the sphere gap, then the kernel (its plane test is the box test's
      // face axis, cheaper)
      double dc[3];
      geo_v3_sub(dc, B->c, a_centre(ws, ia));
      if (sphere_lb(A, B, dc, lim, -1.0) > lim) {
        continue;
      }
      double pa[3], pb[3];
      double d = geo_q_leaf(ws, A->tri, B->tri, lim, pa, pb);
      if (d < lim) {
        // within ds (up to rounding): close_pair decides on the canonical distance
        int hint = -1;
        if (d < ds + ws->slack) {
          hint = close_pair(ws, d, pa, pb, ds);
        } else if (cand != NULL && !leaf_parallel(ws)) {
          hint = classify_loc(ws->lc.P, ws->lc.tp, pa) * 16 + classify_loc(ws->lc.Q, ws->lc.tq, pb);
        }
        if (cand != NULL) {
          if (*ncand < cap) {
            q_cand *c = &cand[*ncand];
            c->d = d;
            c->ta = A->tri;
            c->tb = B->tri;
            c->hint = hint;
          }
          (*ncand)++;
        }
      }
      continue;
    }
    if (geo_q_node_lb(ws, ia, ib, lim, near2) > lim) {
      continue;
    }
    if (A->tri < 0 && B->tri < 0 && A->r < 2.0 * B->r && B->r < 2.0 * A->r) {
      // similar sizes: descend both at once (skips the half-way tests, which rarely prune
      // in a contact web)
      ws->stack[sp].a = A->right;
      ws->stack[sp].b = B->right;
      ws->stack[sp + 1].a = A->right;
      ws->stack[sp + 1].b = B->left;
      ws->stack[sp + 2].a = A->left;
      ws->stack[sp + 2].b = B->right;
      ws->stack[sp + 3].a = A->left;
      ws->stack[sp + 3].b = B->left;
      sp += 4;
      continue;
    }
    if (skip_levels(A, B)) {
      // rightmost first, so the leftmost is popped first
      int d[GEO_Q_DESC_MAX], nd = a_descendants(ws, ia, ib, lim, d);
      for (int i = nd - 1; i >= 0; i--) {
        ws->stack[sp].a = d[i];
        ws->stack[sp].b = ib;
        sp++;
      }
      continue;
    }
    sp = push_split(ws, sp, ia, ib, A, B);
  }
}

// total order of raw pairs i, j: merge key, then distance, then leaf pair
static inline int raw_less(const geo_query_ws *ws, int i, int j) {
  unsigned long long ki = ws->key[i], kj = ws->key[j];
  if (ki != kj) {
    return ki < kj;
  }
  const geo_pair *x = &ws->raw[i], *y = &ws->raw[j];
  if (x->dist != y->dist) {
    return x->dist < y->dist;
  }
  if (x->tri_a != y->tri_a) {
    return x->tri_a < y->tri_a;
  }
  return x->tri_b < y->tri_b;
}

// Raw pairs up to this many are sorted by insertion: a contact web's few dozen pairs cost
// far less that way than the radix sort's passes over its 2048 counters.
#define GEO_Q_SORT_SMALL 64

// ws->idx = the raw pairs 0..n-1 in raw_less order. Few pairs: insertion sort. Else a
// least-significant-digit radix sort on the merge keys (8-bit digits below 2048 pairs, whose
// 256 counters cost less to clear and sum than 2048 do; 11-bit above; only the key's
// key_bits, and of those the digits that vary) first, so that the insertion pass only
// orders each run of equal keys by (dist, tri_a, tri_b).
// Linear in n, allocation-free.
static void sort_raw(geo_query_ws *ws, int n) {
  int *idx = ws->idx;
  if (n <= GEO_Q_SORT_SMALL) {
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
  } else {
    unsigned long long *k0 = ws->skey, *k1 = ws->skey2;
    int *i0 = ws->idx, *i1 = ws->idx2;
    for (int i = 0; i < n; i++) {
      k0[i] = ws->key[i];
      i0[i] = i;
    }
    unsigned cnt[2048];
    int bits = n < 2048 ? 8 : 11;
    unsigned nd = 1u << bits, mask = nd - 1u;
    for (int shift = 0; shift < ws->key_bits; shift += bits) {
      memset(cnt, 0, nd * sizeof *cnt);
      for (int i = 0; i < n; i++) {
        cnt[(k0[i] >> shift) & mask]++;
      }
      if (cnt[(k0[0] >> shift) & mask] == (unsigned)n) {
        continue;
      }
      unsigned sum = 0;
      for (unsigned d = 0; d < nd; d++) {
        unsigned c = cnt[d];
        cnt[d] = sum;
        sum += c;
      }
      for (int i = 0; i < n; i++) {
        unsigned pos = cnt[(k0[i] >> shift) & mask]++;
        k1[pos] = k0[i];
        i1[pos] = i0[i];
      }
      unsigned long long *tk = k0;
      k0 = k1;
      k1 = tk;
      int *ti = i0;
      i0 = i1;
      i1 = ti;
    }
    if (i0 != idx) {
      memcpy(idx, i0, (size_t)n * sizeof *i0);
    }
  }
  // raw_less compares the keys first: after the radix sort nothing moves across a key
  for (int i = 1; i < n; i++) {
    int v = idx[i], j = i - 1;
    while (j >= 0 && raw_less(ws, v, idx[j])) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = v;
  }
}

// a pair from B's frame to the world
static void pair_to_world(geo_query_ws *ws, const geo_pair *in, geo_pair *out) {
  // field by field over a zeroed struct: padding bytes are zero too, so equal answers
  // compare equal byte for byte
  memset(out, 0, sizeof *out);
  out->dist = in->dist;
  out->fa = in->fa;
  out->fb = in->fb;
  out->tri_a = in->tri_a;
  out->tri_b = in->tri_b;
  out->flags = in->flags;
  geo_xform_point(out->pa, &ws->xb, in->pa);
  geo_xform_point(out->pb, &ws->xb, in->pb);
  geo_m3_mulv(out->normal, ws->xb.R, in->normal);
}

// Bound on how far any point of A moved relative to B between two relative transforms: the
// move of A's root sphere centre plus the sphere radius times the spectral norm of dR.
// For rotations, dR = (R1 R0^T - I) R0 and R1 R0^T turns by some angle th, so
// |dR|_2 = 2 sin(th / 2) while the Frobenius norm is |dR|_F^2 = 8 sin^2(th / 2): hence
// sqrt(|dR|_F^2 / 2), plus 1e-12 for R0, R1 being orthonormal only up to rounding.
static double motion_bound(const geo_bvh *a, const double R0[9], const double t0[3],
                           const double R1[9], const double t1[3]) {
  double dR[9], f = 0.0, v[3];
  for (int i = 0; i < 9; i++) {
    dR[i] = R1[i] - R0[i];
    f += dR[i] * dR[i];
  }
  geo_m3_mulv(v, dR, a->node[0].c);
  for (int i = 0; i < 3; i++) {
    v[i] += t1[i] - t0[i];
  }
  return (sqrt(0.5 * f) + 1e-12) * a->node[0].r + geo_v3_norm(v);
}

static inline int cand_less(const q_cand *x, const q_cand *y) {
  if (x->d != y->d) {
    return x->d < y->d;
  }
  return x->ta != y->ta ? x->ta < y->ta : x->tb < y->tb;
}

// sift c[i] down the max-heap c[0 .. n) ordered by cand_less
static void cand_sift(q_cand *c, int i, int n) {
  q_cand x = c[i];
  for (;;) {
    int k = 2 * i + 1;
    if (k >= n) {
      break;
    }
    if (k + 1 < n && cand_less(&c[k], &c[k + 1])) {
      k++;
    }
    if (!cand_less(&x, &c[k])) {
      break;
    }
    c[i] = c[k];
    i = k;
  }
  c[i] = x;
}

// Record a fill of the cache's list (ncand candidates below thr at the query's pose) and
// sort it by increasing distance (heap sort: in place, allocation-free), so a query stops
// at the first candidate too far to matter instead of scanning the whole list.
static void cache_filled(const geo_query_ws *ws, geo_query_cache *cache, double thr, int ncand) {
  cache->valid = ncand <= cache->cap;
  cache->n = ncand <= cache->cap ? ncand : 0;
  cache->thr = thr;
  cache->nlb = 0;
  memcpy(cache->R, ws->R, sizeof cache->R);
  memcpy(cache->t, ws->t, sizeof cache->t);
  q_cand *c = cache->cand;
  int n = cache->n;
  for (int i = n / 2 - 1; i >= 0; i--) {
    cand_sift(c, i, n);
  }
  for (int end = n - 1; end > 0; end--) {
    q_cand top = c[0];
    c[0] = c[end];
    c[end] = top;
    cand_sift(c, 0, end);
  }
}

int geo_proximity(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b, const geo_pose *xb,
                  double ds, geo_query_ws *ws, geo_query_cache *cache, geo_pair *out, int cap,
                  geo_prox_info *info) {
  geo_prox_info dummy;
  if (info == NULL) {
    info = &dummy;
  }
  memset(info, 0, sizeof *info);
  if (!isfinite(ds) || ds < 0.0 || (out == NULL && cap > 0) || cap < 0) {
    return GEO_QEINVAL;
  }
  int rc = geo_q_begin(ws, a, xa, b, xb);
  if (rc != GEO_QOK) {
    return rc;
  }
  ws->n_raw = 0;
  if (cache != NULL && (cache->a != a || cache->b != b)) {
    geo_query_cache_reset(cache);
    cache->a = a;
    cache->b = b;
  }
  int hit = 0;
  double delta = 0.0;
  if (cache != NULL && cache->valid) {
    delta = motion_bound(a, cache->R, cache->t, ws->R, ws->t);
    if (ds + delta + ws->slack <= cache->thr) {
      hit = 1;
    }
  }
  if (hit) {
    // re-evaluate the candidates, a superset of the pairs within ds at this pose. Each has
    // two lower bounds: its distance when collected less the motion since (delta), and its
    // bound at the last hit less the motion since that one (delta1, usually far smaller:
    // consecutive right-hand sides are close). A candidate whose bound is at least ds
    // cannot be within ds now; the rest are measured, which renews their bound. The list
    // is sorted by collected distance: the first too far for the first bound ends it, and
    // the candidates visited are those holding a bound at this pose.
    double skip = ds + ws->slack;
    double delta1 = motion_bound(a, cache->lbR, cache->lbt, ws->R, ws->t);
    int i = 0;
    for (; i < cache->n; i++) {
      q_cand *c = &cache->cand[i];
      if (c->d - delta >= skip) {
        break;
      }
      if (i < cache->nlb && c->lb - delta1 >= skip) {
        c->lb -= delta1;  // still out of range by the bound the last query left
        continue;
      }
      // the last closest features first (a proof of separation confirms them), else the
      // kernel; both give what the cold query gives
      leaf_setup(ws, c->ta, c->tb);
      ws->n_leaf++;
      double d;
      if (!try_hint(ws, c->hint, ds, &d)) {
        double pa[3], pb[3], lim = ds + ws->slack;
        d = geo_q_tri_dist(&ws->lc, lim, pa, pb);
        if (d < lim) {
          c->hint = close_pair(ws, d, pa, pb, ds);
        }
      }
      c->lb = d - ws->lb_tol;
    }
    cache->nlb = i;
    memcpy(cache->lbR, ws->R, sizeof cache->lbR);
    memcpy(cache->lbt, ws->t, sizeof cache->lbt);
  } else if (cache != NULL) {
    int ncand = 0;
    double thr = ds + cache->margin;
    traverse_prox(ws, thr, ds, cache->cand, cache->cap, &ncand);
    cache_filled(ws, cache, thr, ncand);
  } else {
    traverse_prox(ws, ds, ds, NULL, 0, NULL);
  }
  info->cache_hit = hit;
  info->n_leaf = ws->n_leaf;
  info->n_node = ws->n_node;
  info->n_raw = ws->n_raw;
  if (ws->n_raw > ws->cap_raw) {
    return GEO_QELIMIT;
  }
  // merge by feature identity: sort, keep the first of each feature key
  int n = ws->n_raw;
  sort_raw(ws, n);
  int m = 0;
  for (int i = 0; i < n;) {
    const geo_pair *keep = &ws->raw[ws->idx[i]];
    int flags = 0, j = i;
    while (j < n && ws->key[ws->idx[j]] == ws->key[ws->idx[i]]) {
      flags |= ws->raw[ws->idx[j]].flags;
      j++;
    }
    if (m < cap) {
      pair_to_world(ws, keep, &out[m]);
      out[m].flags = flags;
    }
    m++;
    i = j;
  }
  info->n = m;
  return m > cap ? GEO_QELIMIT : GEO_QOK;
}

// ---------------------------------------------------------------------------------------
// minimum distance

static inline int better(double d, int ta, int tb, double bd, int bta, int btb) {
  if (d != bd) {
    return d < bd;
  }
  return ta != bta ? ta < bta : tb < btb;
}

// branch and bound over node pairs, nearer child pair first; best (in/out) is the leaf
// pair with the smallest (dist, tri_a, tri_b) so far
static void geo_q_min_traverse(geo_query_ws *ws, double *best, int *bta, int *btb, double pa[3],
                        double pb[3]) {
  const geo_bvh *a = ws->a, *b = ws->b;
  int sp = 0;
  double lb0 = geo_q_node_lb(ws, 0, 0, *best + ws->slack, -1.0);
  ws->stack[sp].a = 0;
  ws->stack[sp].b = 0;
  ws->stack[sp].lb = lb0;
  sp++;
  while (sp > 0) {
    sp--;
    int ia = ws->stack[sp].a, ib = ws->stack[sp].b;
    if (ws->stack[sp].lb > *best + ws->slack) {
      continue;
    }
    const geo_bvh_node *A = &a->node[ia], *B = &b->node[ib];
    if (A->tri >= 0 && B->tri >= 0) {
      double qa[3], qb[3];
      double d = geo_q_leaf(ws, A->tri, B->tri, *best + ws->slack, qa, qb);
      if (better(d, A->tri, B->tri, *best, *bta, *btb)) {
        *best = d;
        *bta = A->tri;
        *btb = B->tri;
        geo_v3_copy(pa, qa);
        geo_v3_copy(pb, qb);
      }
      continue;
    }
    int c[GEO_Q_DESC_MAX][2], nc;
    if (skip_levels(A, B)) {
      int d[GEO_Q_DESC_MAX];
      nc = a_descendants(ws, ia, ib, *best + ws->slack, d);
      for (int k = 0; k < nc; k++) {
        c[k][0] = d[k];
        c[k][1] = ib;
      }
    } else if (A->tri < 0 && B->tri < 0 && A->r < 2.0 * B->r && B->r < 2.0 * A->r) {
      // similar sizes: all four grandchild pairs at once
      c[0][0] = A->left;
      c[0][1] = B->left;
      c[1][0] = A->left;
      c[1][1] = B->right;
      c[2][0] = A->right;
      c[2][1] = B->left;
      c[3][0] = A->right;
      c[3][1] = B->right;
      nc = 4;
    } else if (B->tri >= 0 || (A->tri < 0 && A->r >= B->r)) {
      c[0][0] = A->left;
      c[0][1] = ib;
      c[1][0] = A->right;
      c[1][1] = ib;
      nc = 2;
    } else {
      c[0][0] = ia;
      c[0][1] = B->left;
      c[1][0] = ia;
      c[1][1] = B->right;
      nc = 2;
    }
    double lim = *best + ws->slack, l[GEO_Q_DESC_MAX];
    int o[GEO_Q_DESC_MAX];
    for (int k = 0; k < nc; k++) {
      l[k] = geo_q_node_lb(ws, c[k][0], c[k][1], lim, -1.0);
      o[k] = k;
    }
    // push the farther first so the nearer is explored first (insertion sort, ties by index)
    for (int k = 1; k < nc; k++) {
      int v = o[k], j = k - 1;
      while (j >= 0 && l[o[j]] < l[v]) {
        o[j + 1] = o[j];
        j--;
      }
      o[j + 1] = v;
    }
    for (int k = 0; k < nc; k++) {
      int q = o[k];
      if (l[q] <= lim) {
        ws->stack[sp].a = c[q][0];
        ws->stack[sp].b = c[q][1];
        ws->stack[sp].lb = l[q];
        sp++;
      }
    }
  }
}

int geo_min_distance(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                     const geo_pose *xb, geo_query_ws *ws, geo_query_cache *cache,
                     geo_pair *out) {
  return geo_min_distance_below(a, xa, b, xb, INFINITY, ws, cache, out);
}

int geo_min_distance_below(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                           const geo_pose *xb, double below, geo_query_ws *ws,
                           geo_query_cache *cache, geo_pair *out) {
  if (out == NULL || isnan(below)) {
    return GEO_QEINVAL;
  }
  int rc = geo_q_begin(ws, a, xa, b, xb);
  if (rc != GEO_QOK) {
    return rc;
  }
  if (cache != NULL && (cache->a != a || cache->b != b)) {
    geo_query_cache_reset(cache);
    cache->a = a;
    cache->b = b;
  }
  double best = INFINITY, pa[3] = {0, 0, 0}, pb[3] = {0, 0, 0};
  int bta = -1, btb = -1;
  if (cache != NULL && cache->best_valid) {
    bta = cache->best_ta;
    btb = cache->best_tb;
    best = geo_q_leaf(ws, bta, btb, INFINITY, pa, pb);
  }
  if (!(best < below)) {
    // no pair yet: a leaf pair must beat the bound (a tie does not, by better()), and
    // every node pair farther than it is pruned - the whole saving for a far pair
    best = below;
    bta = btb = -1;
  }
  int done = 0;
  if (cache != NULL && cache->valid) {
    // the candidates hold every leaf pair closer than cache->thr at the cached pose, so
    // every other pair is now at least thr - delta away: when the best candidate beats
    // that, it is the answer (the same leaf pair a full traversal picks)
    // (sorted by collected distance: the first beyond best ends the scan, as best only
    // decreases; the last proximity hit's bounds prove out more)
    double delta = motion_bound(a, cache->R, cache->t, ws->R, ws->t);
    double delta1 = cache->nlb > 0 ? motion_bound(a, cache->lbR, cache->lbt, ws->R, ws->t) : 0;
    for (int i = 0; i < cache->n; i++) {
      const q_cand *c = &cache->cand[i];
      if (c->d - delta > best + ws->slack) {
        break;
      }
      if (i < cache->nlb && c->lb - delta1 > best + ws->slack) {
        continue;
      }
      double qa[3], qb[3];
      int ta = c->ta, tb = c->tb;
      double d = geo_q_leaf(ws, ta, tb, best + ws->slack, qa, qb);
      if (better(d, ta, tb, best, bta, btb)) {
        best = d;
        bta = ta;
        btb = tb;
        geo_v3_copy(pa, qa);
        geo_v3_copy(pb, qb);
      }
    }
    done = best + 2.0 * ws->slack < cache->thr - delta;
  }
  if (!done) {
    geo_q_min_traverse(ws, &best, &bta, &btb, pa, pb);
    // when consecutive queries are coherent (moved less than half the margin), collect the
    // candidates within best + margin for the next ones (not past the bound: a pair that
    // far is not asked for its exact distance, and collecting is most of a query's cost)
    if (bta >= 0 && cache != NULL && cache->last_valid &&
        motion_bound(a, cache->lastR, cache->lastt, ws->R, ws->t) < 0.5 * cache->margin) {
      int ncand = 0;
      double thr = best + cache->margin;
      ws->n_raw = 0;
      traverse_prox(ws, thr, -INFINITY, cache->cand, cache->cap, &ncand);
      cache_filled(ws, cache, thr, ncand);
    }
  }
  if (cache != NULL) {
    cache->last_valid = 1;
    memcpy(cache->lastR, ws->R, sizeof cache->lastR);
    memcpy(cache->lastt, ws->t, sizeof cache->lastt);
    if (bta >= 0) {
      cache->best_valid = 1;
      cache->best_ta = bta;
      cache->best_tb = btb;
    }
  }
  if (bta < 0) {
    memset(out, 0, sizeof *out);
    out->dist = INFINITY;
    out->tri_a = out->tri_b = -1;
    return GEO_QOK;
  }
  // describe the pair: features, canonical points, normal (B frame), then world
  leaf_setup(ws, bta, btb);
  int ca = classify_loc(ws->lc.P, ws->lc.tp, pa), cb = classify_loc(ws->lc.Q, ws->lc.tq, pb);
  if (best > 0.0 && canon(&ws->lc, ca, cb, pa, pb)) {
    best = geo_v3_dist(pa, pb);
  }
  int save_n = ws->n_raw, save_cap = ws->cap_raw;
  geo_pair tmp;
  // reuse push_raw's description logic on a one-slot buffer
  geo_pair *save_raw = ws->raw;
  ws->raw = &tmp;
  ws->n_raw = 0;
  ws->cap_raw = 1;
  push_raw(ws, ca, cb, pa, pb, best, 0);
  ws->raw = save_raw;
  ws->n_raw = save_n;
  ws->cap_raw = save_cap;
  pair_to_world(ws, &tmp, out);
  return GEO_QOK;
}

// ---------------------------------------------------------------------------------------
// interference

// any leaf pair at distance 0
static int traverse_touch(geo_query_ws *ws) {
  const geo_bvh *a = ws->a, *b = ws->b;
  int sp = 0;
  ws->stack[sp].a = 0;
  ws->stack[sp].b = 0;
  sp++;
  while (sp > 0) {
    sp--;
    int ia = ws->stack[sp].a, ib = ws->stack[sp].b;
    if (geo_q_node_lb(ws, ia, ib, ws->slack, -1.0) > ws->slack) {
      continue;
    }
    const geo_bvh_node *A = &a->node[ia], *B = &b->node[ib];
    if (A->tri >= 0 && B->tri >= 0) {
      double pa[3], pb[3];
      if (geo_q_leaf(ws, A->tri, B->tri, ws->slack, pa, pb) == 0.0) {
        return 1;
      }
      continue;
    }
    sp = push_split(ws, sp, ia, ib, A, B);
  }
  return 0;
}

// generalised winding number of closed mesh m about point x (m's frame): ~1 inside
static double winding(const geo_bvh *m, const double x[3]) {
  double total = 0.0;
  for (int t = 0; t < m->ntri; t++) {
    double u[3], v[3], w[3], c[3];
    geo_v3_sub(u, m->vert + 3 * m->tri[3 * t], x);
    geo_v3_sub(v, m->vert + 3 * m->tri[3 * t + 1], x);
    geo_v3_sub(w, m->vert + 3 * m->tri[3 * t + 2], x);
    double lu = geo_v3_norm(u), lv = geo_v3_norm(v), lw = geo_v3_norm(w);
    geo_v3_cross(c, v, w);
    double num = geo_v3_dot(u, c);
    double den = lu * lv * lw + geo_v3_dot(u, v) * lw + geo_v3_dot(u, w) * lv +
                 geo_v3_dot(v, w) * lu;
    total += 2.0 * atan2(num, den);
  }
  return total / (4.0 * GEO_Q_PI);
}

int geo_interference(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                     const geo_pose *xb, geo_query_ws *ws, int *overlap) {
  if (overlap == NULL) {
    return GEO_QEINVAL;
  }
  int rc = geo_q_begin(ws, a, xa, b, xb);
  if (rc != GEO_QOK) {
    return rc;
  }
  *overlap = traverse_touch(ws);
  if (*overlap || !a->closed || !b->closed) {
    return GEO_QOK;
  }
  // no surface contact: one closed mesh inside the other?
  const double *va = a_vert(ws, 0);
  if (fabs(winding(b, va)) > 0.5) {
    *overlap = 1;
    return GEO_QOK;
  }
  double vb[3];
  geo_v3_sub(vb, b->vert, ws->t);
  double x[3];
  geo_m3_tmulv(x, ws->R, vb);
  if (fabs(winding(a, x)) > 0.5) {
    *overlap = 1;
  }
  return GEO_QOK;
}
