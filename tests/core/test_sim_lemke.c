// Lemke's algorithm (sim_lemke): random non-symmetric P-matrix problems with solutions
// known by construction, SPD / PSD problems, degenerate ties, rays, the pivot cap,
// Murty's exponential example and bad input. Every solution is checked here against
// the original data, never against numbers the solver reports.
// ctest-label: unit
// ctest-timeout: 60
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "sim_lemke.h"

#include "ccsim_test_heap.h"
#include "ccsim_test_lcp.h"

#define NMAX 300
#define TOL 1e-9

// P-matrix, kind 0: S + K with S = G G^T / n + 0.1 I (SPD) and K skew-symmetric, so
// x^T M x = x^T S x > 0: positive definite, hence a P-matrix. Kind 1: strictly row
// diagonally dominant with a positive diagonal (also a P-matrix). Column-major.
static void make_pmatrix(rng *r, int n, int kind, double *G, double *M) {
  if (kind == 0) {
    for (int i = 0; i < n * n; i++) G[i] = nrand(r);
    for (int j = 0; j < n; j++) {
      for (int i = 0; i <= j; i++) {
        double s = 0.0;
        for (int c = 0; c < n; c++) s += G[i + c * n] * G[j + c * n];
        s /= n;
        double k = i == j ? 0.0 : nrand(r);
        M[i + j * n] = s + k + (i == j ? 0.1 : 0.0);
        M[j + i * n] = s - k + (i == j ? 0.1 : 0.0);
      }
    }
  } else {
    for (int i = 0; i < n; i++) {
      double off = 0.0;
      for (int j = 0; j < n; j++) {
        if (j == i) continue;
        M[i + j * n] = 2.0 * urand(r) - 1.0;
        off += fabs(M[i + j * n]);
      }
      M[i + i * n] = off + 0.1 + urand(r);
    }
  }
}

// M = G G^T / k (+ shift I), symmetric PSD of rank k (or SPD with shift > 0)
static void make_gram(rng *r, int n, int k, double shift, double *G, double *M) {
  for (int i = 0; i < n * k; i++) G[i] = nrand(r);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i <= j; i++) {
      double s = 0.0;
      for (int c = 0; c < k; c++) s += G[i + c * n] * G[j + c * n];
      s = s / k + (i == j ? shift : 0.0);
      M[i + j * n] = s;
      M[j + i * n] = s;
    }
  }
}

// a complementary pair (zs, ws), frac_both of the indices with z = w = 0; q = ws - M zs
static void make_solution(rng *r, int n, const double *M, double frac_both, double *zs,
                          double *ws, double *q) {
  for (int i = 0; i < n; i++) {
    zs[i] = ws[i] = 0.0;
    if (urand(r) < frac_both) continue;
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

typedef struct fixture {
  sim_lemke *lk;
  double *M, *G, *q, *z, *w, *zs, *ws;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  if (!fx) return -1;
  fx->lk = sim_lemke_new(NMAX, NULL, NULL, 0);
  fx->M = malloc(sizeof(double) * NMAX * NMAX);
  fx->G = malloc(sizeof(double) * NMAX * NMAX);
  fx->q = malloc(sizeof(double) * NMAX);
  fx->z = malloc(sizeof(double) * NMAX);
  fx->w = malloc(sizeof(double) * NMAX);
  fx->zs = malloc(sizeof(double) * NMAX);
  fx->ws = malloc(sizeof(double) * NMAX);
  *state = fx;
  return (fx->lk && fx->M && fx->G && fx->q && fx->z && fx->w && fx->zs && fx->ws) ? 0 : -1;
}

static int teardown(void **state) {
  fixture *fx = *state;
  sim_lemke_destroy(&fx->lk);
  free(fx->M);
  free(fx->G);
  free(fx->q);
  free(fx->z);
  free(fx->w);
  free(fx->zs);
  free(fx->ws);
  free(fx);
  return 0;
}

static const int sizes[] = {1, 2, 3, 5, 8, 13, 20, 35, 50, 80, 100, 150, 200, 300};
static const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);

static void report(int n, const char *what, sim_lcp_status st, const sim_lcp_info *info) {
  if (st != SIM_LCP_SOLVED) {
    print_error("n=%d %s: %s (pivots %d, min_w %.3g, min_z %.3g, comp %.3g)\n", n, what,
                sim_lcp_status_name(st), info->pivots, info->check.min_w, info->check.min_z,
                info->check.comp);
  }
}

// hand-checked 2x2 problems, including a non-symmetric one
static void test_analytic(void **state) {
  fixture *fx = *state;
  double M[4] = {2, 1, 1, 2}, q[2] = {-1, -1}, z[2], w[2];
  sim_lcp_info info;
  assert_int_equal(sim_lemke_solve(fx->lk, 2, M, q, z, w, &info), SIM_LCP_SOLVED);
  assert_double_near(z[0], 1.0 / 3.0, 1e-14);
  assert_double_near(z[1], 1.0 / 3.0, 1e-14);
  // M = [1 2; 0 1] (column-major {1, 0, 2, 1}), q = (-3, -1): z = (1, 1), w = 0
  double N[4] = {1, 0, 2, 1}, qn[2] = {-3, -1};
  assert_int_equal(sim_lemke_solve(fx->lk, 2, N, qn, z, w, &info), SIM_LCP_SOLVED);
  assert_double_near(z[0], 1.0, 1e-14);
  assert_double_near(z[1], 1.0, 1e-14);
  // q >= 0: z = 0 without pivoting
  double qp[2] = {0.5, 0.0};
  assert_int_equal(sim_lemke_solve(fx->lk, 2, N, qp, z, w, &info), SIM_LCP_SOLVED);
  assert_int_equal(info.pivots, 0);
  assert_double_near(z[0], 0.0, 0.0);
  assert_double_near(z[1], 0.0, 0.0);
}

// random P-matrices: the solution is unique, so z must equal the constructed zs
static void test_pmatrix_sweep(void **state) {
  fixture *fx = *state;
  rng r = {5};
  int trials = ASAN ? 1 : 3, nmax = ASAN ? 100 : 300;
  for (int s = 0; s < nsizes && sizes[s] <= nmax; s++) {
    int n = sizes[s];
    for (int t = 0; t < 2 * trials; t++) {
      sim_lcp_info info;
      make_pmatrix(&r, n, t % 2, fx->G, fx->M);
      make_solution(&r, n, fx->M, 0.0, fx->zs, fx->ws, fx->q);
      sim_lcp_status st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
      report(n, "p-matrix", st, &info);
      assert_int_equal(st, SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);
      for (int i = 0; i < n; i++) assert_double_near(fx->z[i], fx->zs[i], 1e-7);
      // random q: still a unique solution
      for (int i = 0; i < n; i++) fx->q[i] = nrand(&r);
      st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
      report(n, "p-matrix random q", st, &info);
      assert_int_equal(st, SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);
    }
  }
}

// SPD (unique solution) and PSD with a built-in solution: Lemke processes both
static void test_spd_psd_sweep(void **state) {
  fixture *fx = *state;
  rng r = {7};
  int nmax = ASAN ? 80 : 200;
  for (int s = 0; s < nsizes && sizes[s] <= nmax; s++) {
    int n = sizes[s];
    sim_lcp_info info;
    make_gram(&r, n, n, 0.1, fx->G, fx->M);
    make_solution(&r, n, fx->M, 0.0, fx->zs, fx->ws, fx->q);
    sim_lcp_status st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
    report(n, "spd", st, &info);
    assert_int_equal(st, SIM_LCP_SOLVED);
    assert_lcp_solution(n, fx->M, fx->q, fx->z);
    for (int i = 0; i < n; i++) assert_double_near(fx->z[i], fx->zs[i], 1e-7);

    int k = n / 2 > 0 ? n / 2 : 1;
    make_gram(&r, n, k, 0.0, fx->G, fx->M);
    make_solution(&r, n, fx->M, 0.0, fx->zs, fx->ws, fx->q);
    st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
    report(n, "psd", st, &info);
    assert_int_equal(st, SIM_LCP_SOLVED);
    assert_lcp_solution(n, fx->M, fx->q, fx->z);
  }
}

// degenerate problems: duplicated rows, 20 % of indices with z = w = 0, zero rows, all
// ties in q. Feasible by construction, so only a verified solution passes; infeasible
// zero rows must end on RAY.
static void test_degenerate(void **state) {
  fixture *fx = *state;
  rng r = {13};
  int trials = ASAN ? 8 : 24, nmax = ASAN ? 50 : 100;
  for (int s = 0; s < nsizes && sizes[s] <= nmax; s++) {
    int n = sizes[s];
    for (int t = 0; t < trials; t++) {
      sim_lcp_info info;
      int kind = t % 4, k = kind == 0 ? n : (n + 1) / 2;
      if (t % 8 < 4) {
        make_gram(&r, n, k, 0.0, fx->G, fx->M);
      } else {
        make_pmatrix(&r, n, 0, fx->G, fx->M);
      }
      if (kind == 1 || kind == 3) {
        // duplicated rows and columns: index i repeats index src
        for (int i = 1; i < n; i += 3) {
          int src = (int)(urand(&r) * i);
          for (int j = 0; j < n; j++) fx->M[i + j * n] = fx->M[src + j * n];
          for (int j = 0; j < n; j++) fx->M[j + i * n] = fx->M[j + src * n];
          fx->M[i + i * n] = fx->M[src + src * n];
        }
      }
      if (kind == 2 || kind == 3) {
        for (int i = 0; i < n; i += 5) {
          for (int j = 0; j < n; j++) fx->M[i + j * n] = fx->M[j + i * n] = 0.0;
        }
      }
      make_solution(&r, n, fx->M, 0.2, fx->zs, fx->ws, fx->q);
      sim_lcp_status st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
      report(n, "degenerate", st, &info);
      assert_int_equal(st, SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);
      if (kind >= 2 && n >= 5) {
        fx->q[0] = -0.5;  // zero row 0: w_0 = q_0 < 0 whatever z is
        st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
        assert_int_equal(st, SIM_LCP_RAY);
      }
    }
  }
  // every q_i equal: the first ratio test is one big tie
  for (int n = 1; n <= 40; n += 13) {
    sim_lcp_info info;
    memset(fx->M, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) {
      fx->M[i + i * n] = 1.0;
      fx->q[i] = -1.0;
    }
    assert_int_equal(sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info),
                     SIM_LCP_SOLVED);
    for (int i = 0; i < n; i++) assert_double_near(fx->z[i], 1.0, 1e-14);
  }
}

// Murty's example (upper triangular, 1 on the diagonal, 2 above, q = -1): exponential
// for some pivoting rules; Lemke must still end with the verified solution
static void test_murty(void **state) {
  fixture *fx = *state;
  for (int n = 2; n <= 12; n += 5) {
    sim_lcp_info info;
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) fx->M[i + j * n] = i == j ? 1.0 : (i < j ? 2.0 : 0.0);
      fx->q[j] = -1.0;
    }
    sim_lcp_status st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
    report(n, "murty", st, &info);
    assert_int_equal(st, SIM_LCP_SOLVED);
    assert_lcp_solution(n, fx->M, fx->q, fx->z);
  }
}

// no solution: Lemke must end on a ray, never claim success
static void test_rays(void **state) {
  fixture *fx = *state;
  sim_lcp_info info;
  double z[3], w[3];
  double M1[1] = {0}, q1[1] = {-1};
  assert_int_equal(sim_lemke_solve(fx->lk, 1, M1, q1, z, w, &info), SIM_LCP_RAY);
  double M2[1] = {-1}, q2[1] = {-1};  // w = -z - 1 < 0 for every z >= 0
  assert_int_equal(sim_lemke_solve(fx->lk, 1, M2, q2, z, w, &info), SIM_LCP_RAY);
  double M3[4] = {1, -1, -1, 1}, q3[2] = {-1, -1};  // w1 + w2 = -2
  assert_int_equal(sim_lemke_solve(fx->lk, 2, M3, q3, z, w, &info), SIM_LCP_RAY);
}

static void test_pivot_cap(void **state) {
  fixture *fx = *state;
  rng r = {17};
  int n = 30;
  sim_lemke_opts o = sim_lemke_opts_default();
  o.max_pivots = 4;
  sim_lemke *lk = sim_lemke_new(n, &o, NULL, 0);
  assert_non_null(lk);
  make_pmatrix(&r, n, 1, fx->G, fx->M);
  for (int i = 0; i < n; i++) fx->q[i] = -1.0 - urand(&r);
  sim_lcp_info info;
  assert_int_equal(sim_lemke_solve(lk, n, fx->M, fx->q, fx->z, fx->w, &info),
                   SIM_LCP_PIVOT_LIMIT);
  assert_int_equal(info.pivots, 4);
  sim_lemke_destroy(&lk);
  assert_null(lk);
  sim_lemke_destroy(&lk);
  sim_lemke_destroy(NULL);
}

static void test_bad_input(void **state) {
  fixture *fx = *state;
  char err[128] = "";
  assert_null(sim_lemke_new(0, NULL, err, sizeof err));
  assert_true(strlen(err) > 0);
  sim_lemke_opts o = sim_lemke_opts_default();
  o.tie_tol = 2.0;
  assert_null(sim_lemke_new(3, &o, NULL, 0));
  assert_int_equal(sim_lemke_n_max(fx->lk), NMAX);
  double M[4] = {1, 0, INFINITY, 1}, q[2] = {-1, -1}, z[2];
  assert_int_equal(sim_lemke_solve(fx->lk, 2, M, q, z, NULL, NULL), SIM_LCP_EINVAL);
  assert_int_equal(sim_lemke_solve(fx->lk, NMAX + 1, fx->M, fx->q, fx->z, NULL, NULL),
                   SIM_LCP_EINVAL);
  assert_int_equal(sim_lemke_solve(fx->lk, -1, fx->M, fx->q, fx->z, NULL, NULL),
                   SIM_LCP_EINVAL);
  assert_int_equal(sim_lemke_solve(fx->lk, 0, NULL, NULL, NULL, NULL, NULL), SIM_LCP_SOLVED);
  assert_string_equal(sim_lcp_status_name(SIM_LCP_PIVOT_LIMIT), "SIM_LCP_PIVOT_LIMIT");
  assert_true(strlen(sim_lcp_status_str(SIM_LCP_RAY)) > 0);
  assert_int_equal(sim_lcp_status_ccsim(SIM_LCP_PIVOT_LIMIT), CCSIM_ELIMIT);
  assert_int_equal(sim_lcp_status_ccsim(SIM_LCP_EINVAL), CCSIM_EINVAL);
}

// The velocity-level frictional LCP of Tan et al. (eq. 14, E and mu scaled by dt) for a
// box (mass m, half extents hx, hy, hz) resting on the plane z = 0 on its 4 bottom corners,
// d friction directions per contact, gravity g and a horizontal push Fx at the centre of
// mass, starting at rest. Unknowns (f_n (4), f_d (4d), lambda (4)); column-major A (n x n).
// Returns n = 4 (d + 2); fills minv (6: inverse generalised mass), Nm (6 x 4), Bm
// (6 x 4d) and tau (6, M^-1 tau*) for reconstructing the velocity.
#define BOX_D 4
#define BOX_N (4 * (BOX_D + 2))
typedef struct box_lcp {
  double m, g, dt, mu, fx;
  double minv[6], Nm[6 * 4], Bm[6 * 4 * BOX_D], vfree[6];
} box_lcp;

static int build_box_lcp(box_lcp *b, double *A, double *q) {
  const double hx = 0.5, hy = 0.3, hz = 0.25, m = b->m, dt = b->dt;
  const int p = 4, nd = p * BOX_D, n = p + nd + p;
  double I[3] = {m * (hy * hy + hz * hz) / 3.0, m * (hx * hx + hz * hz) / 3.0,
                 m * (hx * hx + hy * hy) / 3.0};
  for (int k = 0; k < 3; k++) {
    b->minv[k] = 1.0 / m;
    b->minv[3 + k] = 1.0 / I[k];
  }
  // columns [u; r x u] for contact point r and direction u
  for (int c = 0; c < p; c++) {
    double r[3] = {(c & 1) ? hx : -hx, (c & 2) ? hy : -hy, -hz};
    double nvec[3] = {0, 0, 1};
    double *col = b->Nm + 6 * c;
    col[0] = nvec[0], col[1] = nvec[1], col[2] = nvec[2];
    col[3] = r[1] * nvec[2] - r[2] * nvec[1];
    col[4] = r[2] * nvec[0] - r[0] * nvec[2];
    col[5] = r[0] * nvec[1] - r[1] * nvec[0];
    for (int k = 0; k < BOX_D; k++) {
      double ang = 6.283185307179586 * k / BOX_D;
      double u[3] = {cos(ang), sin(ang), 0};
      double *bc = b->Bm + 6 * (c * BOX_D + k);
      bc[0] = u[0], bc[1] = u[1], bc[2] = u[2];
      bc[3] = r[1] * u[2] - r[2] * u[1];
      bc[4] = r[2] * u[0] - r[0] * u[2];
      bc[5] = r[0] * u[1] - r[1] * u[0];
    }
  }
  // M^-1 tau* with tau* = M v + dt f_ext, v = 0: the velocity without contact
  b->vfree[0] = dt * b->fx / m;
  b->vfree[1] = 0.0;
  b->vfree[2] = -dt * b->g;
  b->vfree[3] = b->vfree[4] = b->vfree[5] = 0.0;
  memset(A, 0, sizeof(double) * n * n);
  // J = [N B] (6 x (p + nd)); the top-left block is dt J^T M^-1 J
  for (int j = 0; j < p + nd; j++) {
    const double *cj = j < p ? b->Nm + 6 * j : b->Bm + 6 * (j - p);
    for (int i = 0; i < p + nd; i++) {
      const double *ci = i < p ? b->Nm + 6 * i : b->Bm + 6 * (i - p);
      double s = 0.0;
      for (int k = 0; k < 6; k++) s += ci[k] * b->minv[k] * cj[k];
      A[i + j * n] = dt * s;
    }
  }
  for (int i = 0; i < p + nd; i++) {
    const double *ci = i < p ? b->Nm + 6 * i : b->Bm + 6 * (i - p);
    double s = 0.0;
    for (int k = 0; k < 6; k++) s += ci[k] * b->vfree[k];
    q[i] = s;
  }
  // E (dt-scaled) couples each contact's d directions to its lambda; the last rows hold
  // mu f_n - E^T f_d (dt-scaled)
  for (int c = 0; c < p; c++) {
    int lam = p + nd + c;
    for (int k = 0; k < BOX_D; k++) {
      int fd = p + c * BOX_D + k;
      A[fd + lam * n] = dt;
      A[lam + fd * n] = -dt;
    }
    A[lam + c * n] = dt * b->mu;
    q[lam] = 0.0;
  }
  return n;
}

// velocity after the step: v+ = vfree + dt M^-1 (N f_n + B f_d)
static void box_velocity(const box_lcp *b, const double *z, double *v) {
  for (int k = 0; k < 6; k++) {
    double s = 0.0;
    for (int c = 0; c < 4; c++) s += b->Nm[6 * c + k] * z[c];
    for (int j = 0; j < 4 * BOX_D; j++) s += b->Bm[6 * j + k] * z[4 + j];
    v[k] = b->vfree[k] + b->dt * b->minv[k] * s;
  }
}

// frictional contact (Tan et al. eq. 14): a box at rest carries its weight; pushed below
// mu m g it sticks with friction equal to the push; above, it slides with mu m g against
// it (the pyramid's directions include the push direction, so that is exact)
static void test_friction_box(void **state) {
  fixture *fx = *state;
  const double pushes[3] = {0.0, 0.4, 1.5};
  for (int t = 0; t < 3; t++) {
    box_lcp b = {.m = 2.0, .g = 9.81, .dt = 1e-3, .mu = 0.5};
    b.fx = pushes[t] * b.mu * b.m * b.g;
    double A[BOX_N * BOX_N], q[BOX_N], z[BOX_N], w[BOX_N], v[6];
    int n = build_box_lcp(&b, A, q);
    sim_lcp_info info;
    sim_lcp_status st = sim_lemke_solve(fx->lk, n, A, q, z, w, &info);
    report(n, "friction box", st, &info);
    assert_int_equal(st, SIM_LCP_SOLVED);
    assert_lcp_solution(n, A, q, z);
    box_velocity(&b, z, v);
    double fn = z[0] + z[1] + z[2] + z[3], ftx = 0.0;
    for (int c = 0; c < 4; c++) {
      for (int k = 0; k < BOX_D; k++) {
        ftx += z[4 + c * BOX_D + k] * cos(6.283185307179586 * k / BOX_D);
      }
    }
    print_message("push %.2f mu m g: %d pivots, sum f_n = %.9g N (m g = %.9g), friction x = %.6g N,"
                  " v+ = (%.3g, %.3g, %.3g)\n",
                  pushes[t], info.pivots, fn, b.m * b.g, ftx, v[0], v[1], v[2]);
    assert_double_rel(fn, b.m * b.g, 1e-6, 1e-9);
    assert_double_near(v[2], 0.0, 1e-9);
    if (pushes[t] < 1.0) {
      assert_double_near(v[0], 0.0, 1e-9);
      assert_double_near(ftx, -b.fx, 1e-6 * b.m * b.g);
    } else {
      assert_double_rel(v[0], b.dt * (b.fx - b.mu * b.m * b.g) / b.m, 1e-6, 1e-12);
      assert_double_near(ftx, -b.mu * b.m * b.g, 1e-6 * b.m * b.g);
    }
  }
}

// highly degenerate random problems (small integer entries, many ties in every ratio
// test), general and PSD: a SOLVED z must pass the check, and no solve may hit the pivot
// cap (which is where cycling would end)
static void test_integer_ties(void **state) {
  fixture *fx = *state;
  rng r = {83};
  int count = ASAN ? 1000 : 5000, solved = 0, rays = 0;
  for (int t = 0; t < count; t++) {
    int n = 1 + (int)(urand(&r) * 25);
    if (t % 2 == 0) {
      for (int i = 0; i < n * n; i++) fx->M[i] = (double)((int)(urand(&r) * 5) - 2);
    } else {
      int k = 1 + (int)(urand(&r) * n);
      for (int i = 0; i < n * k; i++) fx->G[i] = (double)((int)(urand(&r) * 3) - 1);
      for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
          double s = 0.0;
          for (int c = 0; c < k; c++) s += fx->G[i + c * n] * fx->G[j + c * n];
          fx->M[i + j * n] = s;
        }
      }
    }
    for (int i = 0; i < n; i++) fx->q[i] = (double)((int)(urand(&r) * 5) - 2);
    sim_lcp_info info;
    sim_lcp_status st = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
    assert_int_not_equal(st, SIM_LCP_PIVOT_LIMIT);
    if (st == SIM_LCP_SOLVED) {
      assert_lcp_solution(n, fx->M, fx->q, fx->z);
      solved++;
    } else if (st == SIM_LCP_RAY) {
      rays++;
    }
  }
  print_message("integer ties: %d problems, %d solved, %d rays\n", count, solved, rays);
}

// solving allocates nothing: solved, degenerate, ray and capped solves
static void test_no_allocation(void **state) {
  fixture *fx = *state;
  rng r = {71};
  int n = 60;
  make_pmatrix(&r, n, 0, fx->G, fx->M);
  make_solution(&r, n, fx->M, 0.2, fx->zs, fx->ws, fx->q);
  sim_lcp_info info;
  double M1[1] = {0}, q1[1] = {-1}, z1[1];
  g_allocs = 0;
  g_count_allocs = 1;
  sim_lcp_status s1 = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, &info);
  sim_lcp_status s2 = sim_lemke_solve(fx->lk, 1, M1, q1, z1, NULL, NULL);
  g_count_allocs = 0;
  assert_int_equal(s1, SIM_LCP_SOLVED);
  assert_int_equal(s2, SIM_LCP_RAY);
  if (COUNT_ALLOCS) {
    assert_int_equal(g_allocs, 0);
  } else {
    print_message("heap calls not counted in this build\n");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_analytic),  cmocka_unit_test(test_pmatrix_sweep),
      cmocka_unit_test(test_spd_psd_sweep), cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_murty),     cmocka_unit_test(test_rays),
      cmocka_unit_test(test_pivot_cap), cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_no_allocation), cmocka_unit_test(test_friction_box),
      cmocka_unit_test(test_integer_ties),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
