// LCP solver benchmark: random SPD LCPs (n = 10, 50, 100, 300) through ccsim's Dantzig
// and Lemke solvers and a dense Cholesky solve of the same n (Baraff 1994 reports his
// Dantzig at about 3x a linear solve), medians over many problems; then a degenerate set
// at n = 10 (duplicated rows, 20 % of indices with z = w = 0, zero rows) with the count of
// wrong answers (a success status whose z fails the independent check) per solver.
// bench_lcp_ode (built when libode-dev is found) runs the same problems through ODE.
//
// Usage: bench_lcp [scale]   (scale multiplies the problem counts; default 1)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_dantzig.h"
#include "sim_lemke.h"

// the problems of the LCP tests and of the other LCP benchmark, seed for seed
#include "ccsim_test_lcp.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// dense Cholesky factorisation and solve of M x = -q (column-major, in place in L)
static void chol_solve(int n, const double *M, const double *q, double *L, double *x) {
  memcpy(L, M, sizeof(double) * (size_t)n * n);
  for (int j = 0; j < n; j++) {
    double *cj = L + (size_t)j * n;
    for (int k = 0; k < j; k++) {
      const double *ck = L + (size_t)k * n;
      double f = ck[j];
      for (int i = j; i < n; i++) cj[i] -= ck[i] * f;
    }
    double d = sqrt(cj[j]);
    for (int i = j; i < n; i++) cj[i] /= d;
  }
  for (int i = 0; i < n; i++) x[i] = -q[i];
  for (int j = 0; j < n; j++) {
    const double *cj = L + (size_t)j * n;
    x[j] /= cj[j];
    for (int i = j + 1; i < n; i++) x[i] -= cj[i] * x[j];
  }
  for (int j = n - 1; j >= 0; j--) {
    const double *cj = L + (size_t)j * n;
    double s = x[j];
    for (int i = j + 1; i < n; i++) s -= cj[i] * x[i];
    x[j] = s / cj[j];
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int m) {
  qsort(v, (size_t)m, sizeof *v, cmp_double);
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

// best of `reps` timings of one call, so cache and clock noise do not dominate small n
#define TIME_BEST(reps, out, call)      \
  do {                                  \
    double best_ = INFINITY;            \
    for (int r_ = 0; r_ < (reps); r_++) { \
      double t0_ = now();               \
      call;                             \
      double t1_ = now() - t0_;         \
      if (t1_ < best_) best_ = t1_;     \
    }                                   \
    (out) = best_;                      \
  } while (0)

// The velocity-level frictional LCP of Tan et al. (eq. 14, E and mu scaled by dt) for one
// rigid body at rest on p contacts (points r_i relative to the centre of mass, normals
// n_i), d friction directions, gravity along -z, starting at rest. Unknowns (f_n (p),
// f_d (p d), lambda (p)); column-major A. Returns n = p (d + 2). J (6 x (p + p d)) is
// kept for the velocity check.
typedef struct fric_body {
  double m, inv[6], dt, mu, g;
  int p, d;
  double *J;      // 6 x (p + p d), column-major
  double vfree[6];
} fric_body;

static int build_friction_lcp(fric_body *b, const double *r, const double *nrm, double *A,
                              double *q) {
  const int p = b->p, d = b->d, nj = p + p * d, n = p * (d + 2);
  for (int c = 0; c < p; c++) {
    const double *ri = r + 3 * c, *ni = nrm + 3 * c;
    // tangent basis t1, t2 of the contact plane
    double t1[3] = {0, 0, 0}, t2[3];
    if (fabs(ni[2]) < 0.9) {
      t1[0] = -ni[1], t1[1] = ni[0];
    } else {
      t1[1] = -ni[2], t1[2] = ni[1];
    }
    double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    for (int k = 0; k < 3; k++) t1[k] /= l;
    t2[0] = ni[1] * t1[2] - ni[2] * t1[1];
    t2[1] = ni[2] * t1[0] - ni[0] * t1[2];
    t2[2] = ni[0] * t1[1] - ni[1] * t1[0];
    for (int k = -1; k < d; k++) {
      double u[3];
      if (k < 0) {
        for (int e = 0; e < 3; e++) u[e] = ni[e];
      } else {
        double ang = 6.283185307179586 * k / d;
        for (int e = 0; e < 3; e++) u[e] = cos(ang) * t1[e] + sin(ang) * t2[e];
      }
      double *col = b->J + 6 * (k < 0 ? c : p + c * d + k);
      col[0] = u[0], col[1] = u[1], col[2] = u[2];
      col[3] = ri[1] * u[2] - ri[2] * u[1];
      col[4] = ri[2] * u[0] - ri[0] * u[2];
      col[5] = ri[0] * u[1] - ri[1] * u[0];
    }
  }
  for (int k = 0; k < 6; k++) b->vfree[k] = 0.0;
  b->vfree[2] = -b->dt * b->g;
  memset(A, 0, sizeof(double) * (size_t)n * n);
  for (int j = 0; j < nj; j++) {
    for (int i = 0; i < nj; i++) {
      double s = 0.0;
      for (int k = 0; k < 6; k++) s += b->J[6 * i + k] * b->inv[k] * b->J[6 * j + k];
      A[i + (size_t)j * n] = b->dt * s;
    }
    double s = 0.0;
    for (int k = 0; k < 6; k++) s += b->J[6 * j + k] * b->vfree[k];
    q[j] = s;
  }
  for (int c = 0; c < p; c++) {
    int lam = nj + c;
    for (int k = 0; k < d; k++) {
      int fd = p + c * d + k;
      A[fd + (size_t)lam * n] = b->dt;
      A[lam + (size_t)fd * n] = -b->dt;
    }
    A[lam + (size_t)c * n] = b->dt * b->mu;
    q[lam] = 0.0;
  }
  return n;
}

// largest |v+| component after the step, v+ = vfree + dt M^-1 J f
static double friction_residual_velocity(const fric_body *b, const double *z) {
  double worst = 0.0;
  for (int k = 0; k < 6; k++) {
    double s = 0.0;
    for (int j = 0; j < b->p * (b->d + 1); j++) s += b->J[6 * j + k] * z[j];
    worst = fmax(worst, fabs(b->vfree[k] + b->dt * b->inv[k] * s));
  }
  return worst;
}

// Lemke on resting frictional contact: a box on its 4 corners and a torus-like ring of p
// contacts on a cone (normals tilted 30 degrees from vertical), d = 4, mu = 0.5, dt = 1 ms
static void bench_friction(sim_lemke *lk) {
  const int ps[] = {4, 25, 50, 100};
  printf("\nLemke on the frictional LCP (Tan et al. eq. 14, d = 4) of one body at rest\n");
  printf("%8s %5s %6s %12s %8s %14s %8s\n", "contacts", "n", "runs", "lemke_us", "pivots",
         "max|v+| m/s", "status");
  for (int t = 0; t < 4; t++) {
    int p = ps[t], d = 4, n = p * (d + 2);
    if (n > 600) break;
    fric_body b = {.m = 2.0, .dt = 1e-3, .mu = 0.5, .g = 9.81, .p = p, .d = d};
    double *r = malloc(sizeof(double) * 3 * p), *nr = malloc(sizeof(double) * 3 * p);
    double *A = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * n);
    double *z = malloc(sizeof(double) * n);
    b.J = malloc(sizeof(double) * 6 * (size_t)p * (d + 1));
    if (!r || !nr || !A || !q || !z || !b.J) return;
    if (p == 4) {
      // box 1 x 0.6 x 0.5 m on its bottom corners
      for (int c = 0; c < 4; c++) {
        r[3 * c] = (c & 1) ? 0.5 : -0.5;
        r[3 * c + 1] = (c & 2) ? 0.3 : -0.3;
        r[3 * c + 2] = -0.25;
        nr[3 * c] = nr[3 * c + 1] = 0.0;
        nr[3 * c + 2] = 1.0;
      }
      b.inv[3] = 3.0 / (b.m * (0.09 + 0.0625));
      b.inv[4] = 3.0 / (b.m * (0.25 + 0.0625));
      b.inv[5] = 3.0 / (b.m * (0.25 + 0.09));
    } else {
      // ring of radius 0.3 m, 0.1 m below the centre of mass; normals tilted inward
      for (int c = 0; c < p; c++) {
        double th = 6.283185307179586 * c / p, tilt = 0.5235987755982988;
        r[3 * c] = 0.3 * cos(th);
        r[3 * c + 1] = 0.3 * sin(th);
        r[3 * c + 2] = -0.1;
        nr[3 * c] = -sin(tilt) * cos(th);
        nr[3 * c + 1] = -sin(tilt) * sin(th);
        nr[3 * c + 2] = cos(tilt);
      }
      b.inv[3] = b.inv[4] = 1.0 / (b.m * 0.05);
      b.inv[5] = 1.0 / (b.m * 0.09);
    }
    b.inv[0] = b.inv[1] = b.inv[2] = 1.0 / b.m;
    build_friction_lcp(&b, r, nr, A, q);
    int runs = n <= 150 ? 20 : 3;
    double tm[20];
    sim_lcp_info info;
    sim_lcp_status st = SIM_LCP_SOLVED;
    for (int k = 0; k < runs; k++) {
      double t0 = now();
      st = sim_lemke_solve(lk, n, A, q, z, NULL, &info);
      tm[k] = now() - t0;
    }
    printf("%8d %5d %6d %12.1f %8d %14.2e %8s\n", p, n, runs, 1e6 * median(tm, runs),
           info.pivots, st == SIM_LCP_SOLVED ? friction_residual_velocity(&b, z) : NAN,
           st == SIM_LCP_SOLVED && is_solution(n, A, q, z) ? "ok" : sim_lcp_status_name(st));
    free(r);
    free(nr);
    free(A);
    free(q);
    free(z);
    free(b.J);
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  if (scale < 1) scale = 1;
  if (scale > 5) scale = 5;  // the per-size arrays hold 1000 problems
  const int sizes[] = {10, 50, 100, 300};
  const int nmax = 300;
  double *G = malloc(sizeof(double) * nmax * nmax), *M = malloc(sizeof(double) * nmax * nmax);
  double *L = malloc(sizeof(double) * nmax * nmax), *q = malloc(sizeof(double) * nmax);
  double *z = malloc(sizeof(double) * nmax), *w = malloc(sizeof(double) * nmax);
  double *x = malloc(sizeof(double) * nmax);
  double *td = malloc(sizeof(double) * 1000), *tc = malloc(sizeof(double) * 1000);
  double *tl = malloc(sizeof(double) * 1000), *rd = malloc(sizeof(double) * 1000);
  double *pv = malloc(sizeof(double) * 1000);
  sim_dantzig *dz = sim_dantzig_new(nmax, NULL, NULL, 0);
  sim_lemke *lk = sim_lemke_new(600, NULL, NULL, 0);
  if (!G || !M || !L || !q || !z || !w || !x || !td || !tc || !tl || !rd || !pv || !dz || !lk) {
    fprintf(stderr, "bench_lcp: out of memory\n");
    return 1;
  }
  printf("random SPD LCPs (M = G G^T/n + 0.1 I, q ~ N(0,1)); medians over problems, each the\n"
         "best of several repetitions; times in microseconds\n");
  printf("%5s %6s %12s %12s %12s %10s %14s %8s\n", "n", "probs", "dantzig_us", "cholesky_us",
         "lemke_us", "dz/chol", "pivots(dz)", "wrong");
  for (int s = 0; s < 4; s++) {
    int n = sizes[s];
    int probs = scale * (n <= 50 ? 200 : n <= 100 ? 60 : 12);
    int reps = n <= 10 ? 50 : n <= 50 ? 10 : 3;
    int wrong = 0;
    rng r = {1000u + (unsigned)n};
    for (int p = 0; p < probs; p++) {
      sim_lcp_info info;
      sim_lcp_status st = SIM_LCP_SOLVED;
      make_spd(&r, n, G, M, q);
      TIME_BEST(reps, td[p], st = sim_dantzig_solve(dz, n, M, q, z, w, NULL, NULL, &info));
      if (st != SIM_LCP_SOLVED || !is_solution(n, M, q, z)) wrong++;
      pv[p] = info.pivots;
      TIME_BEST(reps, tc[p], chol_solve(n, M, q, L, x));
      TIME_BEST(reps, tl[p], st = sim_lemke_solve(lk, n, M, q, z, w, NULL));
      if (st != SIM_LCP_SOLVED || !is_solution(n, M, q, z)) wrong++;
      rd[p] = td[p] / tc[p];
    }
    double mrd = median(rd, probs);
    printf("%5d %6d %12.2f %12.2f %12.2f %10.2f %14.0f %8d\n", n, probs, 1e6 * median(td, probs),
           1e6 * median(tc, probs), 1e6 * median(tl, probs), mrd, median(pv, probs), wrong);
  }

  // degenerate set at n = 10
  const int n = 10, count = 1000 * scale;
  int dz_wrong = 0, dz_status[5] = {0}, lk_wrong = 0, lk_status[5] = {0};
  rng r = {77};
  for (int p = 0; p < count; p++) {
    make_degenerate(&r, n, p % 4, G, M, q);
    sim_lcp_status st = sim_dantzig_solve(dz, n, M, q, z, w, NULL, NULL, NULL);
    dz_status[st]++;
    if (st == SIM_LCP_SOLVED && !is_solution(n, M, q, z)) dz_wrong++;
    st = sim_lemke_solve(lk, n, M, q, z, w, NULL);
    lk_status[st]++;
    if (st == SIM_LCP_SOLVED && !is_solution(n, M, q, z)) lk_wrong++;
  }
  printf("\ndegenerate set, n = %d, %d feasible problems (duplicated rows, 20%% z = w = 0, zero "
         "rows):\n",
         n, count);
  printf("  dantzig: %d wrong answers; solved %d, ray %d, pivot limit %d, numerical %d\n",
         dz_wrong, dz_status[SIM_LCP_SOLVED], dz_status[SIM_LCP_RAY],
         dz_status[SIM_LCP_PIVOT_LIMIT], dz_status[SIM_LCP_NUMERICAL]);
  printf("  lemke:   %d wrong answers; solved %d, ray %d, pivot limit %d, numerical %d\n",
         lk_wrong, lk_status[SIM_LCP_SOLVED], lk_status[SIM_LCP_RAY],
         lk_status[SIM_LCP_PIVOT_LIMIT], lk_status[SIM_LCP_NUMERICAL]);

  bench_friction(lk);

  sim_dantzig_destroy(&dz);
  sim_lemke_destroy(&lk);
  free(G);
  free(M);
  free(L);
  free(q);
  free(z);
  free(w);
  free(x);
  free(td);
  free(tc);
  free(tl);
  free(rd);
  free(pv);
  return 0;
}
