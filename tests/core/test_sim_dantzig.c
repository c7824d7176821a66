// Dantzig principal pivoting (sim_dantzig): random SPD / PSD sweeps with solutions known
// by construction, degenerate problems, warm starts, caps and bad input. Every solution is
// checked here against the original data, never against numbers the solver reports.
// ctest-label: unit
// ctest-timeout: 60
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "sim_dantzig.h"
#include "sim_lemke.h"

#include "ccsim_test_heap.h"
#include "ccsim_test_lcp.h"

#define NMAX 300
#define TOL 1e-9

// M = G G^T / k + shift I with G (n x k) Gaussian: SPD for shift > 0 or k >= n, PSD of
// rank min(n, k) otherwise. Column-major, symmetric.
static void make_gram(rng *r, int n, int k, double shift, double *G, double *M) {
  for (int i = 0; i < n * k; i++) G[i] = nrand(r);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i <= j; i++) {
      double s = 0.0;
      for (int c = 0; c < k; c++) s += G[i + c * n] * G[j + c * n];
      s /= k;
      if (i == j) s += shift;
      M[i + j * n] = s;
      M[j + i * n] = s;
    }
  }
}

// A complementary pair (zs, ws) with about frac_both of the indices having z = w = 0,
// and q = ws - M zs, so zs solves the LCP by construction.
static void make_solution(rng *r, int n, const double *M, double frac_both, double *zs,
                          double *ws, double *q) {
  for (int i = 0; i < n; i++) {
    double u = urand(r);
    zs[i] = ws[i] = 0.0;
    if (u < frac_both) continue;
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
  sim_dantzig *dz;
  sim_lemke *lk;
  double *M, *G, *q, *z, *w, *zs, *ws;
  unsigned char *cl;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  if (!fx) return -1;
  char err[128];
  fx->dz = sim_dantzig_new(NMAX, NULL, err, sizeof err);
  fx->lk = sim_lemke_new(NMAX, NULL, err, sizeof err);
  fx->M = malloc(sizeof(double) * NMAX * NMAX);
  fx->G = malloc(sizeof(double) * NMAX * NMAX);
  fx->q = malloc(sizeof(double) * NMAX);
  fx->z = malloc(sizeof(double) * NMAX);
  fx->w = malloc(sizeof(double) * NMAX);
  fx->zs = malloc(sizeof(double) * NMAX);
  fx->ws = malloc(sizeof(double) * NMAX);
  fx->cl = malloc(NMAX);
  *state = fx;
  return (fx->dz && fx->lk && fx->M && fx->G && fx->q && fx->z && fx->w && fx->zs && fx->ws &&
          fx->cl)
             ? 0
             : -1;
}

static int teardown(void **state) {
  fixture *fx = *state;
  sim_dantzig_destroy(&fx->dz);
  sim_lemke_destroy(&fx->lk);
  free(fx->M);
  free(fx->G);
  free(fx->q);
  free(fx->z);
  free(fx->w);
  free(fx->zs);
  free(fx->ws);
  free(fx->cl);
  free(fx);
  return 0;
}

static const int sizes[] = {1, 2, 3, 5, 8, 13, 20, 35, 50, 80, 100, 150, 200, 300};
static const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);

static int size_limit(void) { return ASAN ? 100 : 300; }

// two small problems with answers worked out by hand
static void test_analytic(void **state) {
  fixture *fx = *state;
  double M[4] = {2, 1, 1, 2};
  double q1[2] = {-1, -1}, q2[2] = {-1, 1}, q3[2] = {1, 2};
  double z[2], w[2];
  sim_lcp_info info;
  // the factor carries the documented diagonal regularisation (1e-13 max M_ii), so z
  // is exact up to ~1e-13 relative
  assert_int_equal(sim_dantzig_solve(fx->dz, 2, M, q1, z, w, NULL, NULL, &info),
                   SIM_LCP_SOLVED);
  assert_double_near(z[0], 1.0 / 3.0, 1e-12);
  assert_double_near(z[1], 1.0 / 3.0, 1e-12);
  assert_true(info.pivots >= 2);
  assert_int_equal(sim_dantzig_solve(fx->dz, 2, M, q2, z, w, NULL, NULL, &info),
                   SIM_LCP_SOLVED);
  assert_double_near(z[0], 0.5, 1e-12);
  assert_double_near(z[1], 0.0, 0.0);
  assert_double_near(w[1], 1.5, 1e-12);
  assert_int_equal(sim_dantzig_solve(fx->dz, 2, M, q3, z, w, NULL, NULL, &info),
                   SIM_LCP_SOLVED);
  assert_int_equal(info.pivots, 0);
  assert_double_near(z[0], 0.0, 0.0);
  assert_double_near(z[1], 0.0, 0.0);
}

// SPD sweep: random q, and q built from a known solution (unique for SPD M)
static void test_spd_sweep(void **state) {
  fixture *fx = *state;
  rng r = {11};
  int trials = ASAN ? 2 : 4;
  for (int s = 0; s < nsizes && sizes[s] <= size_limit(); s++) {
    int n = sizes[s];
    for (int t = 0; t < trials; t++) {
      sim_lcp_info info;
      make_gram(&r, n, n, 0.1, fx->G, fx->M);
      for (int i = 0; i < n; i++) fx->q[i] = nrand(&r);
      assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL,
                                         &info),
                       SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);
      assert_true(info.check.ok);

      make_solution(&r, n, fx->M, 0.0, fx->zs, fx->ws, fx->q);
      assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL,
                                         &info),
                       SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);
      // cond(M) <= ~(4 + 0.1) / 0.1 here, so z is close to the unique zs
      for (int i = 0; i < n; i++) assert_double_near(fx->z[i], fx->zs[i], 1e-8);
      assert_true(info.pivots <= 20 * n + 100);
    }
  }
}

// PSD (rank n/2) with a solution built in: must be solved; random q: solved or RAY, and
// RAY must agree with Lemke (which solves every feasible PSD LCP)
static void test_psd_sweep(void **state) {
  fixture *fx = *state;
  rng r = {23};
  int trials = ASAN ? 2 : 4, rays = 0, numerical = 0, cases = 0;
  for (int s = 0; s < nsizes && sizes[s] <= size_limit(); s++) {
    int n = sizes[s], k = n / 2 > 0 ? n / 2 : 1;
    for (int t = 0; t < trials; t++) {
      sim_lcp_info info;
      make_gram(&r, n, k, 0.0, fx->G, fx->M);
      make_solution(&r, n, fx->M, 0.0, fx->zs, fx->ws, fx->q);
      sim_lcp_status st =
          sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL, &info);
      if (st != SIM_LCP_SOLVED) {
        print_error("n=%d trial=%d: %s (pivots %d, zero steps %d, min_w %.3g, comp %.3g)\n",
                    n, t, sim_lcp_status_name(st), info.pivots, info.zero_steps,
                    info.check.min_w, info.check.comp);
      }
      assert_int_equal(st, SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);

      for (int i = 0; i < n; i++) fx->q[i] = nrand(&r);
      st = sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL, &info);
      cases++;
      if (st == SIM_LCP_SOLVED) {
        assert_lcp_solution(n, fx->M, fx->q, fx->z);
      } else if (st == SIM_LCP_NUMERICAL) {
        // near-infeasible instances (huge z) cannot be verified in double precision:
        // an explicit status is the right answer; they must stay rare
        numerical++;
      } else {
        assert_int_equal(st, SIM_LCP_RAY);
        rays++;
        if (n <= 100) {
          sim_lcp_status sl = sim_lemke_solve(fx->lk, n, fx->M, fx->q, fx->z, fx->w, NULL);
          assert_int_not_equal(sl, SIM_LCP_SOLVED);
        }
      }
    }
  }
  print_message("psd random q: %d cases, %d RAY (infeasible), %d NUMERICAL\n", cases, rays,
                numerical);
  assert_true(numerical * 10 <= cases);
}

// degenerate: 20 % of indices with z = w = 0, duplicated rows, zero rows
static void test_degenerate(void **state) {
  fixture *fx = *state;
  rng r = {37};
  int trials = ASAN ? 10 : 40;
  for (int s = 0; s < nsizes && sizes[s] <= (ASAN ? 50 : 150); s++) {
    int n = sizes[s];
    for (int t = 0; t < trials; t++) {
      sim_lcp_info info;
      int kind = t % 4;
      int k = kind == 0 ? n : (n + 1) / 2;
      make_gram(&r, n, k, 0.0, fx->G, fx->M);
      if (kind == 1 || kind == 3) {
        // duplicate some rows of G (contacts listed twice): rows i and dup(i) of M agree
        for (int i = 1; i < n; i += 3) {
          int src = (int)(urand(&r) * i);
          for (int c = 0; c < k; c++) fx->G[i + c * n] = fx->G[src + c * n];
        }
      }
      if (kind == 2 || kind == 3) {
        // zero rows: a contact that sees no body
        for (int i = 0; i < n; i += 5) {
          for (int c = 0; c < k; c++) fx->G[i + c * n] = 0.0;
        }
      }
      for (int j = 0; j < n; j++) {
        for (int i = 0; i < n; i++) {
          double acc = 0.0;
          for (int c = 0; c < k; c++) acc += fx->G[i + c * n] * fx->G[j + c * n];
          fx->M[i + j * n] = acc / k;
        }
      }
      make_solution(&r, n, fx->M, 0.2, fx->zs, fx->ws, fx->q);
      sim_lcp_status st =
          sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL, &info);
      if (st != SIM_LCP_SOLVED) {
        print_error("n=%d kind=%d trial=%d: %s (pivots %d, zero steps %d, min_w %.3g, "
                    "min_z %.3g, comp %.3g)\n",
                    n, kind, t, sim_lcp_status_name(st), info.pivots, info.zero_steps,
                    info.check.min_w, info.check.min_z, info.check.comp);
      }
      // feasible by construction: the only acceptable outcome is a verified solution
      assert_int_equal(st, SIM_LCP_SOLVED);
      assert_lcp_solution(n, fx->M, fx->q, fx->z);

      if (kind >= 2 && n >= 5) {
        // a zero row with q_0 < 0 can never have w_0 >= 0: must end on RAY
        fx->q[0] = -0.5;
        st = sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL, &info);
        assert_int_equal(st, SIM_LCP_RAY);
      }
    }
  }
}

// warm start: the previous clamped set makes a nearby problem cheap; a wrong set is
// repaired, never trusted
static void test_warm_start(void **state) {
  fixture *fx = *state;
  rng r = {41};
  int n = ASAN ? 60 : 150;
  sim_lcp_info cold, warm;
  make_gram(&r, n, n, 0.1, fx->G, fx->M);
  for (int i = 0; i < n; i++) fx->q[i] = nrand(&r);
  assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, fx->cl,
                                     &cold),
                   SIM_LCP_SOLVED);
  int ncl = 0;
  for (int i = 0; i < n; i++) {
    ncl += fx->cl[i];
    // the clamped set is where w = 0; outside it z = 0
    if (!fx->cl[i]) assert_double_near(fx->z[i], 0.0, 0.0);
  }
  assert_int_equal(ncl, cold.n_active);
  // the same problem from its own clamped set: no pivots at all
  assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, fx->cl, fx->cl,
                                     &warm),
                   SIM_LCP_SOLVED);
  assert_int_equal(warm.pivots, 0);
  assert_lcp_solution(n, fx->M, fx->q, fx->z);
  // a perturbed problem from the old set: fewer pivots than cold
  for (int i = 0; i < n; i++) fx->q[i] += 0.01 * nrand(&r);
  assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL,
                                     &cold),
                   SIM_LCP_SOLVED);
  assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, fx->cl, fx->cl,
                                     &warm),
                   SIM_LCP_SOLVED);
  assert_lcp_solution(n, fx->M, fx->q, fx->z);
  print_message("warm start: cold %d pivots, warm %d pivots\n", cold.pivots, warm.pivots);
  assert_true(warm.pivots < cold.pivots);
  // everything clamped (most forces would be negative): dropped, still solved
  memset(fx->cl, 1, (size_t)n);
  assert_int_equal(sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, fx->cl, NULL,
                                     &warm),
                   SIM_LCP_SOLVED);
  assert_true(warm.warm_dropped > 0);
  assert_lcp_solution(n, fx->M, fx->q, fx->z);
}

// the pivot cap ends the solve with its own status, never with SOLVED
static void test_pivot_cap(void **state) {
  fixture *fx = *state;
  rng r = {53};
  int n = 40;
  sim_dantzig_opts o = sim_dantzig_opts_default();
  o.max_pivots = 3;
  sim_dantzig *dz = sim_dantzig_new(n, &o, NULL, 0);
  assert_non_null(dz);
  make_gram(&r, n, n, 0.1, fx->G, fx->M);
  for (int i = 0; i < n; i++) fx->q[i] = -1.0 - urand(&r);
  sim_lcp_info info;
  sim_lcp_status st = sim_dantzig_solve(dz, n, fx->M, fx->q, fx->z, fx->w, NULL, NULL, &info);
  assert_int_equal(st, SIM_LCP_PIVOT_LIMIT);
  assert_int_equal(info.pivots, 3);
  sim_dantzig_destroy(&dz);
  assert_null(dz);
  sim_dantzig_destroy(&dz);
}

// infeasible: two opposing constraints that cannot both hold
static void test_infeasible(void **state) {
  fixture *fx = *state;
  double M[4] = {1, -1, -1, 1}, q[2] = {-1, -1}, z[2], w[2];
  sim_lcp_info info;
  assert_int_equal(sim_dantzig_solve(fx->dz, 2, M, q, z, w, NULL, NULL, &info), SIM_LCP_RAY);
  double Z[1] = {0}, qz[1] = {-1};
  assert_int_equal(sim_dantzig_solve(fx->dz, 1, Z, qz, z, w, NULL, NULL, &info), SIM_LCP_RAY);
}

static void test_bad_input(void **state) {
  fixture *fx = *state;
  char err[128] = "";
  assert_null(sim_dantzig_new(0, NULL, err, sizeof err));
  assert_true(strlen(err) > 0);
  assert_null(sim_dantzig_new(SIM_LCP_N_MAX + 1, NULL, NULL, 0));
  sim_dantzig_opts o = sim_dantzig_opts_default();
  o.piv_tol = -1.0;
  assert_null(sim_dantzig_new(4, &o, err, sizeof err));
  double M[4] = {1, 0, 0, 1}, q[2] = {-1, NAN}, z[2];
  assert_int_equal(sim_dantzig_solve(fx->dz, 2, M, q, z, NULL, NULL, NULL, NULL),
                   SIM_LCP_EINVAL);
  assert_int_equal(sim_dantzig_solve(fx->dz, NMAX + 1, fx->M, fx->q, fx->z, NULL, NULL, NULL,
                                     NULL),
                   SIM_LCP_EINVAL);
  double Mn[4] = {-1, 0, 0, 1}, q2[2] = {-1, -1};
  assert_int_equal(sim_dantzig_solve(fx->dz, 2, Mn, q2, z, NULL, NULL, NULL, NULL),
                   SIM_LCP_EINVAL);
  assert_int_equal(sim_dantzig_solve(fx->dz, 0, M, q, z, NULL, NULL, NULL, NULL),
                   SIM_LCP_SOLVED);
  assert_string_equal(sim_lcp_status_name(SIM_LCP_RAY), "SIM_LCP_RAY");
  assert_int_equal(sim_lcp_status_ccsim(SIM_LCP_SOLVED), CCSIM_OK);
  assert_int_equal(sim_lcp_status_ccsim(SIM_LCP_NUMERICAL), CCSIM_ESOLVER);
}

// solving allocates nothing: cold, warm, degenerate and failing solves
static void test_no_allocation(void **state) {
  fixture *fx = *state;
  rng r = {61};
  int n = 60;
  make_gram(&r, n, n / 2, 0.0, fx->G, fx->M);
  make_solution(&r, n, fx->M, 0.2, fx->zs, fx->ws, fx->q);
  sim_lcp_info info;
  g_allocs = 0;
  g_count_allocs = 1;
  sim_lcp_status s1 = sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, NULL, fx->cl,
                                        &info);
  sim_lcp_status s2 = sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, fx->w, fx->cl, fx->cl,
                                        &info);
  fx->q[0] = -1e3;
  sim_lcp_status s3 = sim_dantzig_solve(fx->dz, n, fx->M, fx->q, fx->z, NULL, NULL, NULL, NULL);
  g_count_allocs = 0;
  assert_int_equal(s1, SIM_LCP_SOLVED);
  assert_int_equal(s2, SIM_LCP_SOLVED);
  (void)s3;
  if (COUNT_ALLOCS) {
    assert_int_equal(g_allocs, 0);
  } else {
    print_message("heap calls not counted in this build\n");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_analytic),   cmocka_unit_test(test_spd_sweep),
      cmocka_unit_test(test_psd_sweep),  cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_warm_start), cmocka_unit_test(test_pivot_cap),
      cmocka_unit_test(test_infeasible), cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_no_allocation),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
