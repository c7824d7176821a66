// Lemke's complementary pivot algorithm with an explicit basis inverse (revised form),
// lexicographic tie-breaking and a verified final solution (refactorised from the
// original data when the tableau's values fail the check).
//
// Variables are numbered 0..n-1 for w, n..2n-1 for z and 2n for the artificial z0. The
// system is  I w - M z - e z0 = q;  the basis starts as {w}, so B^-1 = I and x_B = q.
#include "sim_lemke.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_lemke {
  int n_max;            // capacity
  sim_lemke_opts opts;  // tolerances and the pivot cap
  double *binv;         // basis inverse, column-major with leading dimension n (n_max^2)
  double *xb;           // values of the basic variables, by basis row (n_max)
  double *col;          // entering column B^-1 a (n_max)
  double *lu;           // final-basis LU, column-major (n_max x n_max)
  double *x;            // refactorised basic values / scratch (n_max)
  int *basis;           // variable id in each basis row (n_max)
  int *where;           // basis row of each variable or -1 (2 n_max + 1)
  int *cand;            // candidate rows of the ratio test (n_max)
  int *perm;            // LU row permutation (n_max)
};

sim_lemke_opts sim_lemke_opts_default(void) {
  sim_lemke_opts o = {0, 1e-11, 1e-9, SIM_LCP_VERIFY_TOL};
  return o;
}

sim_lemke *sim_lemke_new(int n_max, const sim_lemke_opts *opts, char *err, size_t err_sz) {
  if (n_max < 1 || n_max > SIM_LCP_N_MAX) {
    ccsim_set_err(err, err_sz, "sim_lemke_new: n_max must be in 1..SIM_LCP_N_MAX");
    return NULL;
  }
  sim_lemke_opts o = opts ? *opts : sim_lemke_opts_default();
  if (!(o.piv_tol > 0.0 && o.piv_tol < 1.0) || !(o.tie_tol >= 0.0 && o.tie_tol < 1.0) ||
      !(o.verify_tol > 0.0 && o.verify_tol < 1.0)) {
    ccsim_set_err(err, err_sz, "sim_lemke_new: tolerances must be in (0, 1)");
    return NULL;
  }
  sim_lemke *lk = calloc(1, sizeof *lk);
  if (!lk) {
    ccsim_set_err(err, err_sz, "sim_lemke_new: out of memory");
    return NULL;
  }
  size_t nn = (size_t)n_max * n_max;
  lk->n_max = n_max;
  lk->opts = o;
  lk->binv = malloc(nn * sizeof(double));
  lk->lu = malloc(nn * sizeof(double));
  lk->xb = malloc((size_t)n_max * sizeof(double));
  lk->col = malloc((size_t)n_max * sizeof(double));
  lk->x = malloc((size_t)n_max * sizeof(double));
  lk->basis = malloc((size_t)n_max * sizeof(int));
  lk->where = malloc((2 * (size_t)n_max + 1) * sizeof(int));
  lk->cand = malloc((size_t)n_max * sizeof(int));
  lk->perm = malloc((size_t)n_max * sizeof(int));
  if (!lk->binv || !lk->lu || !lk->xb || !lk->col || !lk->x || !lk->basis ||
      !lk->where || !lk->cand || !lk->perm) {
    sim_lemke_destroy(&lk);
    ccsim_set_err(err, err_sz, "sim_lemke_new: out of memory");
    return NULL;
  }
  return lk;
}

void sim_lemke_destroy(sim_lemke **lk) {
  if (!lk || !*lk) return;
  sim_lemke *p = *lk;
  free(p->binv);
  free(p->lu);
  free(p->xb);
  free(p->col);
  free(p->x);
  free(p->basis);
  free(p->where);
  free(p->cand);
  free(p->perm);
  free(p);
  *lk = NULL;
}

int sim_lemke_n_max(const sim_lemke *lk) { return lk ? lk->n_max : 0; }

// d = B^-1 a for the column a of variable v in [I, -M, -e]; a sum of columns of B^-1,
// skipping zero entries of a (the LCPs of contact problems are sparse)
static void entering_column(const sim_lemke *lk, int n, const double *M, int v, double *d) {
  const double *B = lk->binv;
  if (v < n) {
    memcpy(d, B + (size_t)v * n, (size_t)n * sizeof(double));
    return;
  }
  for (int i = 0; i < n; i++) d[i] = 0.0;
  const double *mc = v < 2 * n ? M + (size_t)(v - n) * n : NULL;
  for (int k = 0; k < n; k++) {
    double ak = mc ? mc[k] : 1.0;
    if (ak == 0.0) continue;
    const double *bk = B + (size_t)k * n;
    for (int i = 0; i < n; i++) d[i] -= ak * bk[i];
  }
}

// basis change: variable v enters at row r with column d (d[r] != 0). B^-1 <- E B^-1 with
// the elementary matrix E of the pivot, applied column by column (zero entries of the
// pivot row skip a column)
static void pivot(sim_lemke *lk, int n, int r, double *d, int v) {
  double *B = lk->binv;
  const double dr = d[r], inv = 1.0 / dr;
  d[r] = 0.0;  // row r is scaled, not eliminated
  for (int k = 0; k < n; k++) {
    double *bk = B + (size_t)k * n;
    double brk = bk[r] * inv;
    if (brk == 0.0) continue;
    for (int i = 0; i < n; i++) bk[i] -= d[i] * brk;
    bk[r] = brk;
  }
  double xr = lk->xb[r] * inv;
  for (int i = 0; i < n; i++) lk->xb[i] -= d[i] * xr;
  lk->xb[r] = xr;
  d[r] = dr;
  lk->where[lk->basis[r]] = -1;
  lk->basis[r] = v;
  lk->where[v] = r;
}

// Lexicographic minimum ratio test over rows with d_i > piv_tol ||d||_inf. Returns the
// leaving row, or -1 when no entry of d is a valid pivot (ray). z0 leaves when it ties.
static int ratio_test(sim_lemke *lk, int n, const double *d, int z0) {
  const double tie = lk->opts.tie_tol;
  double dmax = 0.0, xs = 0.0;
  for (int i = 0; i < n; i++) {
    dmax = fmax(dmax, fabs(d[i]));
    xs = fmax(xs, fabs(lk->xb[i]));
  }
  if (!(dmax > 0.0) || !isfinite(dmax)) return -1;
  int *S = lk->cand, ns = 0;
  for (int i = 0; i < n; i++) {
    if (d[i] > lk->opts.piv_tol * dmax) S[ns++] = i;
  }
  if (ns == 0) return -1;
  // first key: the ratio x_i / d_i; a row ties when x_i - theta d_i <= tie (|theta| d_i + xs)
  double theta = INFINITY;
  for (int s = 0; s < ns; s++) theta = fmin(theta, lk->xb[S[s]] / d[S[s]]);
  int m = 0;
  for (int s = 0; s < ns; s++) {
    int i = S[s];
    if (lk->xb[i] - theta * d[i] <= tie * (fabs(theta) * d[i] + xs)) S[m++] = i;
  }
  ns = m;
  if (ns == 1) return S[0];
  // the artificial variable leaves whenever it ties: that ends the algorithm
  for (int s = 0; s < ns; s++) {
    if (lk->basis[S[s]] == z0) return S[s];
  }
  // further keys: the columns of B^-1 in order (lexicographic rule). Entries are
  // compared on the scale of the candidates' whole rows, so rounding noise in an entry
  // that is zero in exact arithmetic counts as a tie, not as a decision
  double bs = 0.0;
  for (int s = 0; s < ns; s++) {
    for (int k = 0; k < n; k++) bs = fmax(bs, fabs(lk->binv[S[s] + (size_t)k * n]));
  }
  for (int k = 0; k < n && ns > 1; k++) {
    const double *bk = lk->binv + (size_t)k * n;
    double mn = INFINITY;
    for (int s = 0; s < ns; s++) mn = fmin(mn, bk[S[s]] / d[S[s]]);
    m = 0;
    for (int s = 0; s < ns; s++) {
      int i = S[s];
      if (bk[i] - mn * d[i] <= tie * (fabs(mn) * d[i] + bs)) S[m++] = i;
    }
    ns = m;
  }
  return S[0];
}

// Solves B x = q for the final basis (columns e_i for w_i, -M[:, j] for z_j) by a fresh
// LU with partial pivoting. Returns 0 on success, -1 if the basis is numerically singular.
static int refactor_solve(sim_lemke *lk, int n, const double *M, const double *q, double *x) {
  double *A = lk->lu;
  int *p = lk->perm;
  double anorm = 0.0;
  for (int r = 0; r < n; r++) {
    int v = lk->basis[r];
    double *c = A + (size_t)r * n;
    if (v < n) {
      memset(c, 0, (size_t)n * sizeof(double));
      c[v] = 1.0;
    } else {
      const double *mc = M + (size_t)(v - n) * n;
      for (int i = 0; i < n; i++) c[i] = -mc[i];
    }
    for (int i = 0; i < n; i++) anorm = fmax(anorm, fabs(c[i]));
  }
  for (int i = 0; i < n; i++) x[i] = q[i];
  // column-major Doolittle LU with partial pivoting, applied to x on the fly
  for (int k = 0; k < n; k++) {
    double *ck = A + (size_t)k * n;
    int ip = k;
    for (int i = k + 1; i < n; i++) {
      if (fabs(ck[i]) > fabs(ck[ip])) ip = i;
    }
    if (!(fabs(ck[ip]) > 1e-14 * anorm)) return -1;
    p[k] = ip;
    if (ip != k) {
      for (int j = 0; j < n; j++) {
        double t = A[(size_t)j * n + k];
        A[(size_t)j * n + k] = A[(size_t)j * n + ip];
        A[(size_t)j * n + ip] = t;
      }
      double t = x[k];
      x[k] = x[ip];
      x[ip] = t;
    }
    double inv = 1.0 / ck[k];
    for (int i = k + 1; i < n; i++) ck[i] *= inv;
    for (int i = k + 1; i < n; i++) x[i] -= ck[i] * x[k];
    for (int j = k + 1; j < n; j++) {
      double *cj = A + (size_t)j * n;
      double f = cj[k];
      if (f == 0.0) continue;
      for (int i = k + 1; i < n; i++) cj[i] -= ck[i] * f;
    }
  }
  // back substitution with U
  for (int k = n - 1; k >= 0; k--) {
    const double *ck = A + (size_t)k * n;
    x[k] /= ck[k];
    for (int i = 0; i < k; i++) x[i] -= ck[i] * x[k];
  }
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) return -1;
  }
  return 0;
}

// z from basic values vb (by basis row), negatives from rounding clamped to zero
static void extract_z(const sim_lemke *lk, int n, const double *vb, double *z) {
  for (int j = 0; j < n; j++) z[j] = 0.0;
  for (int r = 0; r < n; r++) {
    int v = lk->basis[r];
    if (v >= n && v < 2 * n) z[v - n] = fmax(0.0, vb[r]);
  }
}

sim_lcp_status sim_lemke_solve(sim_lemke *lk, int n, const double *M, const double *q,
                               double *z, double *w, sim_lcp_info *info) {
  sim_lcp_info inf;
  memset(&inf, 0, sizeof inf);
  if (info) *info = inf;
  if (!lk || n < 0 || n > lk->n_max || (n > 0 && (!M || !q || !z))) return SIM_LCP_EINVAL;
  if (n == 0) {
    if (info) info->check.ok = 1;
    return SIM_LCP_SOLVED;
  }
  if (!sim_lcp_finite(n, M, q)) return SIM_LCP_EINVAL;
  const double vtol = lk->opts.verify_tol;
  const int z0 = 2 * n;
  const int cap = lk->opts.max_pivots > 0 ? lk->opts.max_pivots : 50 * n + 100;

  // q >= 0: z = 0 solves it
  int r = 0;
  double qmin = q[0], qscale = 0.0;
  for (int i = 0; i < n; i++) {
    qscale = fmax(qscale, fabs(q[i]));
    if (q[i] < qmin) qmin = q[i];
  }
  if (qmin >= 0.0) {
    for (int i = 0; i < n; i++) z[i] = 0.0;
    int ok = sim_lcp_verify(n, M, q, z, w, vtol, &inf.check);
    if (info) *info = inf;
    return ok ? SIM_LCP_SOLVED : SIM_LCP_NUMERICAL;
  }

  // start: basis {w}, B^-1 = I, x_B = q
  double *B = lk->binv;
  memset(B, 0, (size_t)n * n * sizeof(double));
  for (int i = 0; i < n; i++) {
    B[(size_t)i * n + i] = 1.0;
    lk->xb[i] = q[i];
    lk->basis[i] = i;
    lk->where[i] = i;
    lk->where[n + i] = -1;
  }
  lk->where[z0] = -1;

  // z0 enters at the most negative q_i; among ties the largest index keeps every row of
  // (x_B, B^-1) lexicographically positive after this pivot
  for (int i = 0; i < n; i++) {
    if (q[i] <= qmin + lk->opts.tie_tol * qscale) r = i;
  }
  double *d = lk->col;
  entering_column(lk, n, M, z0, d);
  pivot(lk, n, r, d, z0);
  inf.pivots = 1;
  int entering = n + r;  // complement of the w_r that left

  sim_lcp_status st = SIM_LCP_SOLVED;
  for (;;) {
    if (inf.pivots >= cap) {
      st = SIM_LCP_PIVOT_LIMIT;
      break;
    }
    entering_column(lk, n, M, entering, d);
    r = ratio_test(lk, n, d, z0);
    if (r < 0) {
      st = SIM_LCP_RAY;
      for (int i = 0; i < n; i++) {
        if (!isfinite(d[i])) st = SIM_LCP_NUMERICAL;
      }
      break;
    }
    int leaving = lk->basis[r];
    if (fabs(lk->xb[r]) <= lk->opts.tie_tol * qscale) inf.zero_steps++;
    pivot(lk, n, r, d, entering);
    inf.pivots++;
    if (leaving == z0) break;
    entering = leaving < n ? leaving + n : leaving - n;
  }

  inf.n_active = 0;
  for (int i = 0; i < n; i++) {
    if (lk->where[n + i] >= 0) inf.n_active++;
  }
  if (st != SIM_LCP_SOLVED) {
    // the last iterate, for diagnostics only
    extract_z(lk, n, lk->xb, z);
    sim_lcp_verify(n, M, q, z, w, vtol, &inf.check);
    if (info) *info = inf;
    return st;
  }

  // verify the tableau's z; if rounding spoiled it, refactorise the final basis from the
  // original data (fresh LU) and verify that z instead
  extract_z(lk, n, lk->xb, z);
  int ok = sim_lcp_verify(n, M, q, z, w, vtol, &inf.check);
  if (!ok && refactor_solve(lk, n, M, q, lk->x) == 0) {
    extract_z(lk, n, lk->x, z);
    ok = sim_lcp_verify(n, M, q, z, w, vtol, &inf.check);
  }
  if (info) *info = inf;
  return ok ? SIM_LCP_SOLVED : SIM_LCP_NUMERICAL;
}
