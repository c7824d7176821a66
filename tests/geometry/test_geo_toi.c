// Conservative time of impact against bisection on the brute-force distance: never later
// than the first contact, within 1 % of it for linear motion.
// ctest-label: unit
// ctest-timeout: 120
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "bvh_brute.h"
#include "geo_bvh.h"
#include "geo_prim.h"
#include "geo_query.h"
#include "geo_toi.h"

#ifdef __SANITIZE_ADDRESS__
#define N_CASES 2
#else
#define N_CASES 8
#endif

static unsigned long long rng = 0x1234567887654321ull;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

static geo_mesh *bumpy(double r, int sl, int st) {
  char err[256];
  geo_mesh *s = geo_mesh_sphere(r, sl, st, err, sizeof err);
  assert_non_null(s);
  double *v = malloc((size_t)s->nvert * 3 * sizeof *v);
  for (int i = 0; i < s->nvert; i++) {
    double f = 1.0 + 0.1 * srand1();
    for (int k = 0; k < 3; k++) v[3 * i + k] = f * s->vert[3 * i + k];
  }
  geo_mesh *m = geo_mesh_new(v, s->nvert, s->tri, s->ntri, "bumpy", err, sizeof err);
  assert_non_null(m);
  free(v);
  geo_mesh_destroy(&s);
  return m;
}

// brute-force distance at time t (independent of the engine, its own pose integration:
// rotation by angle |w| t about w, Rodrigues, after the initial rotation)
static void pose_at(const geo_motion *m, double t, geo_pose *x) {
  double wn = sqrt(bf_dot(m->w, m->w));
  for (int i = 0; i < 3; i++) x->p[i] = m->x0.p[i] + m->v[i] * t;
  if (wn == 0.0) {
    memcpy(x->q, m->x0.q, sizeof x->q);
    return;
  }
  double h = 0.5 * wn * t, s = sin(h) / wn;
  double a[4] = {cos(h), s * m->w[0], s * m->w[1], s * m->w[2]};
  const double *b = m->x0.q;
  x->q[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  x->q[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  x->q[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  x->q[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

static double brute_dist(const geo_mesh *A, const geo_motion *ma, const geo_mesh *B,
                         const geo_motion *mb, double t) {
  geo_pose xa, xb;
  pose_at(ma, t, &xa);
  pose_at(mb, t, &xb);
  int n, nraw, ninter;
  double d;
  bf_pair *p = bf_proximity(A, &xa, B, &xb, 0.0, &n, &nraw, &ninter, &d);
  free(p);
  return d;
}

// first time the brute distance falls to d_min: scan, then bisect the first bracket
static double bisect_toi(const geo_mesh *A, const geo_motion *ma, const geo_mesh *B,
                         const geo_motion *mb, double T, double d_min, int *found) {
  int ns = 64;
  double prev = 0.0;
  *found = 0;
  if (brute_dist(A, ma, B, mb, 0.0) <= d_min) {
    *found = 1;
    return 0.0;
  }
  for (int i = 1; i <= ns; i++) {
    double t = T * i / ns;
    if (brute_dist(A, ma, B, mb, t) <= d_min) {
      double lo = prev, hi = t;
      for (int k = 0; k < 50; k++) {
        double mid = 0.5 * (lo + hi);
        if (brute_dist(A, ma, B, mb, mid) <= d_min) {
          hi = mid;
        } else {
          lo = mid;
        }
      }
      *found = 1;
      return hi;
    }
    prev = t;
  }
  return T;
}

static int n_found;

static void run_case(int angular, double d_min) {
  geo_mesh *A = bumpy(0.3, 8, 5), *B = bumpy(0.4, 9, 5);
  char err[256];
  geo_bvh *ba = geo_bvh_new(A, err, sizeof err), *bb = geo_bvh_new(B, err, sizeof err);
  geo_query_ws *ws = geo_query_ws_new(ba, bb, 0, err, sizeof err);
  assert_non_null(ws);
  geo_motion ma, mb;
  memset(&ma, 0, sizeof ma);
  memset(&mb, 0, sizeof mb);
  ma.x0.q[0] = mb.x0.q[0] = 1.0;
  // A starts 1.5 m away from B in a random direction and heads roughly at B
  double dir[3] = {srand1(), srand1(), srand1()};
  double dn = sqrt(bf_dot(dir, dir));
  for (int k = 0; k < 3; k++) {
    ma.x0.p[k] = 1.5 * dir[k] / dn;
    ma.v[k] = -1.0 * dir[k] / dn + 0.15 * srand1();
    mb.v[k] = 0.1 * srand1();
    if (angular) {
      ma.w[k] = 2.0 * srand1();
      mb.w[k] = 1.0 * srand1();
    }
  }
  double T = 2.0;
  geo_toi_result r, rc;
  assert_int_equal(geo_toi(ba, &ma, bb, &mb, T, d_min, 0.0, 0, ws, NULL, &r), GEO_QOK);
  // with a coherence cache the same answer, bit for bit
  geo_query_cache *cache = geo_query_cache_new(0, 0.01, err, sizeof err);
  assert_non_null(cache);
  assert_int_equal(geo_toi(ba, &ma, bb, &mb, T, d_min, 0.0, 0, ws, cache, &rc), GEO_QOK);
  assert_memory_equal(&r, &rc, sizeof r);
  geo_query_cache_destroy(&cache);
  int found;
  double tb = bisect_toi(A, &ma, B, &mb, T, d_min, &found);
  if (found) {
    n_found++;
    assert_int_equal(r.hit, 1);
    // never later than the first contact
    assert_true(r.t <= tb + 1e-12);
    if (!angular) {
      assert_true(r.t >= 0.99 * tb);
    }
    // the engine's own distance at its answer is consistent with the brute force
    assert_double_near(r.dist, brute_dist(A, &ma, B, &mb, r.t), 1e-9);
  } else {
    // the brute scan saw no contact: the engine may still find a brief one between samples,
    // never one the scan's samples contradict
    if (r.hit) {
      assert_true(brute_dist(A, &ma, B, &mb, r.t) <= d_min + 1e-6);
    }
  }
  geo_query_ws_destroy(&ws);
  geo_bvh_destroy(&ba);
  geo_bvh_destroy(&bb);
  geo_mesh_destroy(&A);
  geo_mesh_destroy(&B);
}

static void test_linear(void **state) {
  (void)state;
  n_found = 0;
  for (int i = 0; i < N_CASES; i++) run_case(0, i % 2 ? 0.02 : 0.0);
  assert_true(n_found >= N_CASES / 2);
}

static void test_angular(void **state) {
  (void)state;
  n_found = 0;
  for (int i = 0; i < N_CASES; i++) run_case(1, i % 2 ? 0.02 : 0.0);
  assert_true(n_found >= N_CASES / 2);
}

// two boxes: head-on at 1 m/s from 1 m apart (gap 0.8 m): analytic contact at 0.8 s
static void test_boxes_analytic(void **state) {
  (void)state;
  char err[256];
  geo_mesh *m = geo_mesh_box(0.2, 0.2, 0.2, err, sizeof err);
  geo_bvh *b = geo_bvh_new(m, err, sizeof err);
  geo_query_ws *ws = geo_query_ws_new(b, b, 0, err, sizeof err);
  geo_motion ma = {{{0, 0, 0}, {1, 0, 0, 0}}, {1, 0, 0}, {0, 0, 0}};
  geo_motion mb = {{{1, 0.05, 0}, {1, 0, 0, 0}}, {0, 0, 0}, {0, 0, 0}};
  geo_toi_result r;
  assert_int_equal(geo_toi(b, &ma, b, &mb, 2.0, 0.0, 1e-12, 0, ws, NULL, &r), GEO_QOK);
  assert_int_equal(r.hit, 1);
  assert_true(r.t <= 0.8);
  assert_double_near(r.t, 0.8, 1e-9);
  // with a standoff of 1 cm: 0.79 s
  assert_int_equal(geo_toi(b, &ma, b, &mb, 2.0, 0.01, 1e-12, 0, ws, NULL, &r), GEO_QOK);
  assert_true(r.t <= 0.79);
  assert_double_near(r.t, 0.79, 1e-9);
  // too short an interval: no hit, t = T, distance at T
  assert_int_equal(geo_toi(b, &ma, b, &mb, 0.5, 0.0, 0.0, 0, ws, NULL, &r), GEO_QOK);
  assert_int_equal(r.hit, 0);
  assert_double_near(r.t, 0.5, 0.0);
  assert_double_near(r.dist, 0.3, 1e-12);
  // moving apart: never
  ma.v[0] = -1.0;
  assert_int_equal(geo_toi(b, &ma, b, &mb, 10.0, 0.0, 0.0, 0, ws, NULL, &r), GEO_QOK);
  assert_int_equal(r.hit, 0);
  // bad input
  ma.v[1] = NAN;
  assert_int_equal(geo_toi(b, &ma, b, &mb, 1.0, 0.0, 0.0, 0, ws, NULL, &r), GEO_QEINVAL);
  ma.v[1] = 0.0;
  assert_int_equal(geo_toi(b, &ma, b, &mb, -1.0, 0.0, 0.0, 0, ws, NULL, &r), GEO_QEINVAL);
  geo_query_ws_destroy(&ws);
  geo_bvh_destroy(&b);
  geo_mesh_destroy(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_boxes_analytic),
      cmocka_unit_test(test_linear),
      cmocka_unit_test(test_angular),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
