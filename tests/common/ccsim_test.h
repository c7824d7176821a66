// Shared helpers for the cmocka tests. Include after <cmocka.h>'s prerequisites.
#ifndef CCSIM_TEST_H
#define CCSIM_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

// cmocka 1.1.5's assert_float_equal casts to float; this compares doubles and prints
// both values and the tolerance on failure. |a - b| <= tol, NaN always fails.
#define assert_double_near(a, b, tol)                                                  \
  do {                                                                                 \
    double ccsim_a_ = (a), ccsim_b_ = (b), ccsim_t_ = (tol);                           \
    if (!(fabs(ccsim_a_ - ccsim_b_) <= ccsim_t_)) {                                    \
      print_error("%s = %.17g, %s = %.17g, |diff| = %.3g > tol %.3g\n", #a, ccsim_a_,  \
                  #b, ccsim_b_, fabs(ccsim_a_ - ccsim_b_), ccsim_t_);                  \
      fail();                                                                          \
    }                                                                                  \
  } while (0)

// Relative comparison: |a - b| <= rel * max(|a|, |b|, floor).
#define assert_double_rel(a, b, rel, floor_)                                           \
  do {                                                                                 \
    double ccsim_ra_ = (a), ccsim_rb_ = (b);                                           \
    double ccsim_s_ = fmax(fmax(fabs(ccsim_ra_), fabs(ccsim_rb_)), (floor_));          \
    assert_double_near(ccsim_ra_, ccsim_rb_, (rel) * ccsim_s_);                        \
  } while (0)

// A slab whose top is a flat grid of n x n squares of side h [m] (two triangles each, facing
// up, +z) centred at the origin, closed below by four sides (fans from the bottom corners)
// and a bottom at z = -n h / 2, as contact wants a solid: grid vertex (i, j) is
// vert[j (n + 1) + i], the grid's triangles come first. TEST_GRID_NVERT(n) vertices (x y z
// each) into vert and TEST_GRID_NTRI(n) triangles into tri, both the caller's.
#define TEST_GRID_NVERT(n) (((n) + 1) * ((n) + 1) + 4)
#define TEST_GRID_NTRI(n) (2 * (n) * (n) + 4 * ((n) + 1) + 2)
static inline void test_grid(int n, double h, double *vert, uint32_t *tri) {
  for (int j = 0; j <= n; j++) {
    for (int i = 0; i <= n; i++) {
      double *v = vert + 3 * (j * (n + 1) + i);
      v[0] = (i - n / 2) * h, v[1] = (j - n / 2) * h, v[2] = 0;
    }
  }
  uint32_t *t = tri;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) {
      uint32_t v00 = (uint32_t)(j * (n + 1) + i), v10 = v00 + 1, v01 = v00 + (uint32_t)n + 1,
               v11 = v01 + 1;
      t[0] = v00, t[1] = v10, t[2] = v11, t[3] = v00, t[4] = v11, t[5] = v01;
      t += 6;
    }
  }
  // bottom corners c[k] below the grid's corners, counter-clockwise seen from above
  uint32_t g = (uint32_t)((n + 1) * (n + 1)), c[4] = {g, g + 1, g + 2, g + 3};
  uint32_t top[4] = {0, (uint32_t)n, (uint32_t)((n + 1) * (n + 1) - 1), (uint32_t)(n * (n + 1))};
  for (int k = 0; k < 4; k++) {
    const double *v = vert + 3 * top[k];
    double *b = vert + 3 * c[k];
    b[0] = v[0], b[1] = v[1], b[2] = -0.5 * n * h;
  }
  // side k runs the top border from corner k to corner k + 1: a fan from c[k]
  for (int k = 0; k < 4; k++) {
    uint32_t p[2] = {0, 0};
    for (int s = 0; s < n; s++) {
      for (int e = 0; e < 2; e++) {
        int a = s + e, i = k == 0 ? a : k == 1 ? n : k == 2 ? n - a : 0;
        int j = k == 0 ? 0 : k == 1 ? a : k == 2 ? n : n - a;
        p[e] = (uint32_t)(j * (n + 1) + i);
      }
      t[0] = c[k], t[1] = p[1], t[2] = p[0];
      t += 3;
    }
    t[0] = c[k], t[1] = c[(k + 1) % 4], t[2] = top[(k + 1) % 4];
    t += 3;
  }
  t[0] = c[0], t[1] = c[2], t[2] = c[1];
  t[3] = c[0], t[4] = c[3], t[5] = c[2];
}

#endif
