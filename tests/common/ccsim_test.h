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

// A flat grid of n x n squares of side h [m], two triangles each facing up (+z), centred at
// the origin: (n + 1)^2 vertices into vert (x y z each) and 2 n^2 triangles into tri, both
// the caller's.
static inline void test_grid(int n, double h, double *vert, uint32_t *tri) {
  for (int j = 0; j <= n; j++) {
    for (int i = 0; i <= n; i++) {
      double *v = vert + 3 * (j * (n + 1) + i);
      v[0] = (i - n / 2) * h, v[1] = (j - n / 2) * h, v[2] = 0;
    }
  }
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) {
      uint32_t v00 = (uint32_t)(j * (n + 1) + i), v10 = v00 + 1, v01 = v00 + (uint32_t)n + 1,
               v11 = v01 + 1;
      uint32_t *t = tri + 6 * (j * n + i);
      t[0] = v00, t[1] = v10, t[2] = v11, t[3] = v00, t[4] = v11, t[5] = v01;
    }
  }
}

#endif
