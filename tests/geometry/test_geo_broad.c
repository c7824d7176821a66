// Broad phase against the all-pairs box test, over coherent motion and jumps.
// ctest-label: unit
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_broad.h"
#include "geo_prim.h"

static unsigned long long rng = 0xDEADBEEFCAFEF00Dull;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

#define NB 300

static int brute(const double (*lo)[3], const double (*hi)[3], const int *fixed, double m,
                 int *out) {
  int c = 0;
  for (int i = 0; i < NB; i++) {
    for (int j = i + 1; j < NB; j++) {
      if (fixed[i] && fixed[j]) continue;
      int ok = 1;
      for (int k = 0; k < 3; k++) {
        ok &= (lo[i][k] - m <= hi[j][k] + m) && (lo[j][k] - m <= hi[i][k] + m);
      }
      if (ok) {
        out[2 * c] = i;
        out[2 * c + 1] = j;
        c++;
      }
    }
  }
  return c;
}

static void test_against_all_pairs(void **state) {
  (void)state;
  char err[128];
  geo_broad *bp = geo_broad_new(NB, err, sizeof err);
  assert_non_null(bp);
  static double lo[NB][3], hi[NB][3], vel[NB][3];
  static int fixed[NB], got[2 * NB * NB], ref[2 * NB * NB];
  for (int i = 0; i < NB; i++) {
    for (int k = 0; k < 3; k++) {
      lo[i][k] = 10.0 * urand();
      hi[i][k] = lo[i][k] + 0.05 + 0.6 * urand();
      vel[i][k] = 0.05 * (urand() - 0.5);
    }
    fixed[i] = i % 7 == 0;
    assert_int_equal(geo_broad_set_static(bp, i, fixed[i]), GEO_QOK);
  }
  for (int step = 0; step < 40; step++) {
    for (int i = 0; i < NB; i++) {
      if (step > 0 && !fixed[i]) {
        // small coherent moves, and a jump now and then
        double jump = (step % 13 == 0 && i % 5 == 0) ? 3.0 * (urand() - 0.5) : 0.0;
        for (int k = 0; k < 3; k++) {
          lo[i][k] += vel[i][k] + jump;
          hi[i][k] += vel[i][k] + jump;
        }
      }
      assert_int_equal(geo_broad_set_box(bp, i, lo[i], hi[i]), GEO_QOK);
    }
    double m = step % 2 ? 0.0 : 0.02;
    int n = 0;
    assert_int_equal(geo_broad_pairs(bp, m, got, NB * NB, &n), GEO_QOK);
    int nr = brute((const double(*)[3])lo, (const double(*)[3])hi, fixed, m, ref);
    assert_int_equal(n, nr);
    assert_memory_equal(got, ref, (size_t)n * 2 * sizeof *got);
    assert_true(n > 0);
    // capacity too small: a distinct code and the number needed
    int n2 = 0;
    assert_int_equal(geo_broad_pairs(bp, m, got, n - 1, &n2), GEO_QELIMIT);
    assert_int_equal(n2, n);
  }
  double bad_lo[3] = {0, 0, 0}, bad_hi[3] = {-1, 1, 1};
  assert_int_equal(geo_broad_set_box(bp, 0, bad_lo, bad_hi), GEO_QEINVAL);
  assert_int_equal(geo_broad_set_box(bp, NB, bad_lo, bad_lo), GEO_QEINVAL);
  geo_broad_destroy(&bp);
  assert_null(bp);
}

// the world box of a hierarchy contains every vertex at random poses
static void test_bvh_box(void **state) {
  (void)state;
  char err[128];
  geo_mesh *m = geo_mesh_torus(0.05, 0.015, 24, 12, err, sizeof err);
  geo_bvh *b = geo_bvh_new(m, err, sizeof err);
  assert_non_null(b);
  for (int trial = 0; trial < 50; trial++) {
    geo_pose x;
    double n = 0;
    for (int k = 0; k < 4; k++) {
      x.q[k] = urand() - 0.5;
      n += x.q[k] * x.q[k];
    }
    for (int k = 0; k < 4; k++) x.q[k] /= sqrt(n);
    for (int k = 0; k < 3; k++) x.p[k] = urand() - 0.5;
    double lo[3], hi[3], R[9];
    geo_broad_bvh_box(b, &x, lo, hi);
    double w = x.q[0], a = x.q[1], bb = x.q[2], c = x.q[3];
    R[0] = 1 - 2 * (bb * bb + c * c);
    R[1] = 2 * (a * bb - w * c);
    R[2] = 2 * (a * c + w * bb);
    R[3] = 2 * (a * bb + w * c);
    R[4] = 1 - 2 * (a * a + c * c);
    R[5] = 2 * (bb * c - w * a);
    R[6] = 2 * (a * c - w * bb);
    R[7] = 2 * (bb * c + w * a);
    R[8] = 1 - 2 * (a * a + bb * bb);
    double span = 0.0;
    for (int v = 0; v < m->nvert; v++) {
      const double *p = m->vert + 3 * v;
      for (int k = 0; k < 3; k++) {
        double y = R[3 * k] * p[0] + R[3 * k + 1] * p[1] + R[3 * k + 2] * p[2] + x.p[k];
        assert_true(y >= lo[k] && y <= hi[k]);
      }
    }
    for (int k = 0; k < 3; k++) span += hi[k] - lo[k];
    // and is not absurdly loose (the torus is 0.13 m across)
    assert_true(span < 3 * 0.13 * 1.8);
  }
  geo_bvh_destroy(&b);
  geo_mesh_destroy(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_all_pairs),
      cmocka_unit_test(test_bvh_box),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
