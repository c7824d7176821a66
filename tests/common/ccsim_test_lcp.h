// Random LCP test problems, shared by the LCP tests and benchmarks so every program draws
// the same problems for the same seed (with ccsim_test_rng.h), and issue 6's acceptance
// test of a solution, computed from M, q and z alone. M is column-major. C and C++.
#ifndef CCSIM_TEST_LCP_H
#define CCSIM_TEST_LCP_H

#include <math.h>

#include "ccsim_test_rng.h"

#define CCSIM_LCP_TOL 1e-9  // issue 6: w >= -1e-9, z >= -1e-9, |w^T z| <= 1e-9 scale

// SPD: M = G G^T / n + 0.1 I, q ~ N(0, 1) (about half the indices clamped)
static inline void make_spd(rng *r, int n, double *G, double *M, double *q) {
  for (int i = 0; i < n * n; i++) G[i] = nrand(r);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i <= j; i++) {
      double s = 0.0;
      for (int c = 0; c < n; c++) s += G[i + c * n] * G[j + c * n];
      s = s / n + (i == j ? 0.1 : 0.0);
      M[i + j * n] = s;
      M[j + i * n] = s;
    }
  }
  for (int i = 0; i < n; i++) q[i] = nrand(r);
}

// degenerate PSD problem with a solution built in: kind 0 = 20 % of indices with z = w = 0
// on a rank-n/2 Gram matrix, 1 = duplicated rows too, 2 = zero rows too, 3 = both
static inline void make_degenerate(rng *r, int n, int kind, double *G, double *M, double *q) {
  int k = kind == 0 ? n : (n + 1) / 2;
  for (int i = 0; i < n * k; i++) G[i] = nrand(r);
  if (kind == 1 || kind == 3) {
    for (int i = 1; i < n; i += 3) {
      int src = (int)(urand(r) * i);
      for (int c = 0; c < k; c++) G[i + c * n] = G[src + c * n];
    }
  }
  if (kind == 2 || kind == 3) {
    for (int i = 0; i < n; i += 5) {
      for (int c = 0; c < k; c++) G[i + c * n] = 0.0;
    }
  }
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int c = 0; c < k; c++) s += G[i + c * n] * G[j + c * n];
      M[i + j * n] = s / k;
    }
  }
  double zs[64], ws[64];
  for (int i = 0; i < n; i++) {
    zs[i] = ws[i] = 0.0;
    if (urand(r) < 0.2) continue;
    if (urand(r) < 0.5) {
      zs[i] = 0.1 + urand(r);
    } else {
      ws[i] = 0.1 + urand(r);
    }
  }
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += M[i + j * n] * zs[j];
    q[i] = ws[i] - s;
  }
}

// issue 6's acceptance test from M, q and z alone (1 = a solution)
static inline int is_solution(int n, const double *M, const double *q, const double *z) {
  double qn = 1.0, zn = 1.0;
  for (int i = 0; i < n; i++) {
    qn = fmax(qn, fabs(q[i]));
    zn = fmax(zn, fabs(z[i]));
  }
  long double wz = 0.0L;
  for (int i = 0; i < n; i++) {
    long double wi = q[i];
    for (int j = 0; j < n; j++) wi += (long double)M[i + j * n] * z[j];
    if (!(z[i] >= -1e-9) || !((double)wi >= -1e-9 * qn)) return 0;
    wz += wi * z[i];
  }
  return fabsl(wz) <= 1e-9 * qn * zn;
}

#ifdef CCSIM_TEST_H
// cmocka's version of is_solution, printing what fails
// The acceptance test of issue 6, computed here from M, q and z alone:
// w >= -CCSIM_LCP_TOL sw, z >= -CCSIM_LCP_TOL, |w^T z| <= CCSIM_LCP_TOL * max(1, ||q||_inf) * max(1, ||z||_inf),
// with sw = max(1, ||q||_inf) (absolute 1e-9 for the unit-scale problems here).
static inline void assert_lcp_solution(int n, const double *M, const double *q, const double *z) {
  double qn = 1.0, zn = 1.0;
  for (int i = 0; i < n; i++) {
    qn = fmax(qn, fabs(q[i]));
    zn = fmax(zn, fabs(z[i]));
  }
  long double wz = 0.0L;
  for (int i = 0; i < n; i++) {
    long double wi = q[i];
    for (int j = 0; j < n; j++) wi += (long double)M[i + j * n] * z[j];
    if (!(z[i] >= -CCSIM_LCP_TOL)) {
      print_error("n=%d: z[%d] = %.17g < -%g\n", n, i, z[i], CCSIM_LCP_TOL);
      fail();
    }
    if (!((double)wi >= -CCSIM_LCP_TOL * qn)) {
      print_error("n=%d: w[%d] = %.17g < -%g\n", n, i, (double)wi, CCSIM_LCP_TOL * qn);
      fail();
    }
    wz += wi * z[i];
  }
  if (!(fabsl(wz) <= CCSIM_LCP_TOL * qn * zn)) {
    print_error("n=%d: |w^T z| = %.3g > %.3g\n", n, (double)fabsl(wz), CCSIM_LCP_TOL * qn * zn);
    fail();
  }
}
#endif

#endif
