// Sweep and prune along x with a persistent order repaired by insertion sort.
#include "geo_err.h"
#include "geo_broad.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"

struct geo_broad {
  int nbody;       // number of bodies
  double *lo, *hi; // (nbody x 3) world boxes [m]
  int *set;        // (nbody) 1 once a box was given
  int *fixed;      // (nbody) 1 for static bodies
  int *order;      // (nbody) body ids sorted by lo[x] (kept between calls)
};

geo_broad *geo_broad_new(int nbody, char *err, size_t err_sz) {
  if (nbody < 0 || nbody > (1 << 26)) {
    geo_set_err(err, err_sz, "geo_broad_new: body count %d out of range", nbody);
    return NULL;
  }
  geo_broad *bp = calloc(1, sizeof *bp);
  size_t n = (size_t)(nbody > 0 ? nbody : 1);
  if (bp != NULL) {
    bp->nbody = nbody;
    bp->lo = calloc(3 * n, sizeof *bp->lo);
    bp->hi = calloc(3 * n, sizeof *bp->hi);
    bp->set = calloc(n, sizeof *bp->set);
    bp->fixed = calloc(n, sizeof *bp->fixed);
    bp->order = calloc(n, sizeof *bp->order);
  }
  if (bp == NULL || !bp->lo || !bp->hi || !bp->set || !bp->fixed || !bp->order) {
    geo_broad_destroy(&bp);
    geo_set_err(err, err_sz, "geo_broad_new: out of memory");
    return NULL;
  }
  for (int i = 0; i < nbody; i++) {
    bp->order[i] = i;
  }
  return bp;
}

void geo_broad_destroy(geo_broad **pbp) {
  if (pbp == NULL || *pbp == NULL) {
    return;
  }
  geo_broad *bp = *pbp;
  free(bp->lo);
  free(bp->hi);
  free(bp->set);
  free(bp->fixed);
  free(bp->order);
  free(bp);
  *pbp = NULL;
}

int geo_broad_set_box(geo_broad *bp, int i, const double lo[3], const double hi[3]) {
  if (bp == NULL || i < 0 || i >= bp->nbody || lo == NULL || hi == NULL) {
    return GEO_QEINVAL;
  }
  for (int k = 0; k < 3; k++) {
    if (!isfinite(lo[k]) || !isfinite(hi[k]) || lo[k] > hi[k]) {
      return GEO_QEINVAL;
    }
  }
  memcpy(bp->lo + 3 * i, lo, 3 * sizeof *lo);
  memcpy(bp->hi + 3 * i, hi, 3 * sizeof *hi);
  bp->set[i] = 1;
  return GEO_QOK;
}

int geo_broad_set_static(geo_broad *bp, int i, int is_static) {
  if (bp == NULL || i < 0 || i >= bp->nbody) {
    return GEO_QEINVAL;
  }
  bp->fixed[i] = is_static != 0;
  return GEO_QOK;
}

void geo_broad_bvh_box(const geo_bvh *b, const geo_pose *x, double lo[3], double hi[3]) {
  // the root box in the world: centre R c + p, half widths sum_a h_a |R ax_a|
  double q[4] = {x->q[0], x->q[1], x->q[2], x->q[3]}, R[9], c[3];
  geo_quat_normalize(q);
  geo_quat_to_mat(R, q);
  const geo_bvh_node *nd = &b->node[0];
  geo_m3_mulv(c, R, nd->c);
  double half[3] = {0, 0, 0};
  for (int a = 0; a < 3; a++) {
    double u[3];
    geo_m3_mulv(u, R, nd->ax + 3 * a);
    for (int k = 0; k < 3; k++) {
      half[k] += nd->h[a] * fabs(u[k]);
    }
  }
  for (int k = 0; k < 3; k++) {
    // a relative hair for the rounding of the rotation
    double pad = 1e-12 * (fabs(c[k] + x->p[k]) + half[k]);
    lo[k] = c[k] + x->p[k] - half[k] - pad;
    hi[k] = c[k] + x->p[k] + half[k] + pad;
  }
}

// pair keys i * 2^32 + j sorted by heapsort (allocation-free)
static void sift(int *p, int root, int n) {
  for (;;) {
    int ch = 2 * root + 1;
    if (ch >= n) {
      return;
    }
    long long kc = (long long)p[2 * ch] << 32 | (unsigned)p[2 * ch + 1];
    if (ch + 1 < n) {
      long long k2 = (long long)p[2 * ch + 2] << 32 | (unsigned)p[2 * ch + 3];
      if (k2 > kc) {
        ch++;
        kc = k2;
      }
    }
    long long kr = (long long)p[2 * root] << 32 | (unsigned)p[2 * root + 1];
    if (kr >= kc) {
      return;
    }
    int t0 = p[2 * root], t1 = p[2 * root + 1];
    p[2 * root] = p[2 * ch];
    p[2 * root + 1] = p[2 * ch + 1];
    p[2 * ch] = t0;
    p[2 * ch + 1] = t1;
    root = ch;
  }
}

static void sort_pairs(int *p, int n) {
  for (int s = n / 2 - 1; s >= 0; s--) {
    sift(p, s, n);
  }
  for (int e = n - 1; e > 0; e--) {
    int t0 = p[0], t1 = p[1];
    p[0] = p[2 * e];
    p[1] = p[2 * e + 1];
    p[2 * e] = t0;
    p[2 * e + 1] = t1;
    sift(p, 0, e);
  }
}

int geo_broad_pairs(geo_broad *bp, double margin, int *pairs, int cap, int *npair) {
  if (bp == NULL || npair == NULL || !isfinite(margin) || margin < 0.0 || cap < 0 ||
      (pairs == NULL && cap > 0)) {
    return GEO_QEINVAL;
  }
  int n = bp->nbody;
  const double *lo = bp->lo, *hi = bp->hi;
  // repair the x order (insertion sort: linear when little changed; ties by id)
  int *ord = bp->order;
  for (int i = 1; i < n; i++) {
    int id = ord[i], j = i - 1;
    double key = lo[3 * id];
    while (j >= 0 && (lo[3 * ord[j]] > key || (lo[3 * ord[j]] == key && ord[j] > id))) {
      ord[j + 1] = ord[j];
      j--;
    }
    ord[j + 1] = id;
  }
  // sweep: a body pairs with the later ones whose x interval starts before its own ends
  double m2 = 2.0 * margin;
  int cnt = 0;
  for (int i = 0; i < n; i++) {
    int u = ord[i];
    if (!bp->set[u]) {
      continue;
    }
    double end = hi[3 * u] + m2;
    for (int j = i + 1; j < n; j++) {
      int v = ord[j];
      if (lo[3 * v] > end) {
        break;
      }
      if (!bp->set[v] || (bp->fixed[u] && bp->fixed[v])) {
        continue;
      }
      if (lo[3 * v + 1] > hi[3 * u + 1] + m2 || lo[3 * u + 1] > hi[3 * v + 1] + m2 ||
          lo[3 * v + 2] > hi[3 * u + 2] + m2 || lo[3 * u + 2] > hi[3 * v + 2] + m2) {
        continue;
      }
      if (cnt < cap) {
        pairs[2 * cnt] = u < v ? u : v;
        pairs[2 * cnt + 1] = u < v ? v : u;
      }
      cnt++;
    }
  }
  *npair = cnt;
  if (cnt > cap) {
    return GEO_QELIMIT;
  }
  sort_pairs(pairs, cnt);
  return GEO_QOK;
}
