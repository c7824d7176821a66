// Dantzig principal pivoting (Baraff 1994, section 4) with an incrementally updated
// Cholesky factor of the clamped block. Names follow the LCP w = M z + q; Baraff's
// a = A f + b is the same with a = w, A = M, f = z, b = q.
#include "sim_dantzig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// max/min without fmax's NaN handling (which costs a library call); inputs are finite
static inline double dmax(double a, double b) { return a > b ? a : b; }

struct sim_dantzig {
  int n_max;              // capacity
  sim_dantzig_opts opts;  // tolerances and the pivot cap
  double *L;              // Cholesky factor of M_CC + reg I, row-major, stride n_max
  double *dinv;           // 1 / diagonal of L (n_max)
  double *f;              // forces z of the clamped set, in factor order (n_max)
  double *a;              // accelerations w = M z + q of NC, in ncl order (n_max)
  double *x;              // direction on the clamped set, in factor order (n_max)
  double *y;              // scratch for triangular solves (n_max)
  double *rhs;            // right-hand sides in factor order (n_max)
  double *da;             // rate of change of a along the direction, by NC position (n_max)
  int *cidx;              // clamped indices in factor order (n_max)
  int *pos;               // factor position of each index or -1 (n_max)
  int *skip;              // pivot stamp of blockers rejected as dependent (n_max)
  int *ncl;               // processed unclamped indices (NC), unordered (n_max)
  int *ncpos;             // position of each index in ncl or -1 (n_max)
  int nnc;                // size of NC
  double *t;              // scratch of chol_add; Givens cosines and sines (2 n_max)
  double *R;              // R[i][r] = M_i,cidx[r]: columns of C gathered, row-major (n_max^2)
  int nc;                 // clamped count
  double reg;             // absolute diagonal regularisation of the current solve
};

static void set_err(char *err, size_t err_sz, const char *msg) {
  if (err && err_sz > 0) snprintf(err, err_sz, "%s", msg);
}

sim_dantzig_opts sim_dantzig_opts_default(void) {
  sim_dantzig_opts o = {0, 1e-13, 1e-11, 1e-8, 1e-11, SIM_LCP_VERIFY_TOL};
  return o;
}

sim_dantzig *sim_dantzig_new(int n_max, const sim_dantzig_opts *opts, char *err,
                             size_t err_sz) {
  if (n_max < 1 || n_max > SIM_LCP_N_MAX) {
    set_err(err, err_sz, "sim_dantzig_new: n_max must be in 1..SIM_LCP_N_MAX");
    return NULL;
  }
  sim_dantzig_opts o = opts ? *opts : sim_dantzig_opts_default();
  if (!(o.reg_rel >= 0.0 && o.reg_rel < 1.0) || !(o.piv_tol > 0.0 && o.piv_tol < 1.0) ||
      !(o.dep_tol > 0.0 && o.dep_tol < 1.0) ||
      !(o.drive_tol >= 0.0 && o.drive_tol < 1.0) ||
      !(o.verify_tol > 0.0 && o.verify_tol < 1.0)) {
    set_err(err, err_sz, "sim_dantzig_new: tolerances must be in [0, 1)");
    return NULL;
  }
  sim_dantzig *dz = calloc(1, sizeof *dz);
  if (!dz) {
    set_err(err, err_sz, "sim_dantzig_new: out of memory");
    return NULL;
  }
  size_t nm = (size_t)n_max;
  dz->n_max = n_max;
  dz->opts = o;
  dz->L = malloc(nm * nm * sizeof(double));
  dz->dinv = malloc(nm * sizeof(double));
  dz->f = malloc(nm * sizeof(double));
  dz->a = malloc(nm * sizeof(double));
  dz->x = malloc(nm * sizeof(double));
  dz->y = malloc(nm * sizeof(double));
  dz->rhs = malloc(nm * sizeof(double));
  dz->da = malloc(nm * sizeof(double));
  dz->cidx = malloc(nm * sizeof(int));
  dz->pos = malloc(nm * sizeof(int));
  dz->skip = malloc(nm * sizeof(int));
  dz->ncl = malloc(nm * sizeof(int));
  dz->ncpos = malloc(nm * sizeof(int));
  dz->t = malloc(2 * nm * sizeof(double));
  dz->R = malloc(nm * nm * sizeof(double));
  if (!dz->L || !dz->dinv || !dz->f || !dz->a || !dz->x || !dz->y || !dz->rhs || !dz->da ||
      !dz->cidx || !dz->pos || !dz->skip || !dz->t || !dz->ncl || !dz->ncpos || !dz->R) {
    sim_dantzig_destroy(&dz);
    set_err(err, err_sz, "sim_dantzig_new: out of memory");
    return NULL;
  }
  return dz;
}

void sim_dantzig_destroy(sim_dantzig **dz) {
  if (!dz || !*dz) return;
  sim_dantzig *p = *dz;
  free(p->L);
  free(p->dinv);
  free(p->f);
  free(p->a);
  free(p->x);
  free(p->y);
  free(p->rhs);
  free(p->da);
  free(p->cidx);
  free(p->pos);
  free(p->skip);
  free(p->ncl);
  free(p->ncpos);
  free(p->t);
  free(p->R);
  free(p);
  *dz = NULL;
}

int sim_dantzig_n_max(const sim_dantzig *dz) { return dz ? dz->n_max : 0; }

// a . b over m entries with four partial sums (breaks the floating-point add chain)
static inline double dot(const double *a, const double *b, int m) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int i = 0;
  for (; i + 4 <= m; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < m; i++) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

// a . v and b . v over m entries at once (v is read once; two independent sum chains)
static inline void dot2(const double *a, const double *b, const double *v, int m, double *sa,
                        double *sb) {
  double a0 = 0.0, a1 = 0.0, b0 = 0.0, b1 = 0.0;
  int i = 0;
  for (; i + 2 <= m; i += 2) {
    a0 += a[i] * v[i];
    a1 += a[i + 1] * v[i + 1];
    b0 += b[i] * v[i];
    b1 += b[i + 1] * v[i + 1];
  }
  if (i < m) {
    a0 += a[i] * v[i];
    b0 += b[i] * v[i];
  }
  *sa = a0 + a1;
  *sb = b0 + b1;
}

// Solves (L L^T) x = rhs over the nc clamped positions; rhs and x may alias. The forward
// result L^-1 rhs stays in dz->y (chol_add of the driven index reuses it).
static void chol_solve(sim_dantzig *dz, const double *rhs, double *x) {
  const int k = dz->nc, ld = dz->n_max;
  const double *L = dz->L, *di = dz->dinv;
  double *y = dz->y;
  // forward: L y = rhs, two rows at a time over the entries both rows share
  int i = 0;
  for (; i + 2 <= k; i += 2) {
    const double *l0 = L + (size_t)i * ld, *l1 = l0 + ld;
    double s0, s1;
    dot2(l0, l1, y, i, &s0, &s1);
    y[i] = (rhs[i] - s0) * di[i];
    y[i + 1] = (rhs[i + 1] - s1 - l1[i] * y[i]) * di[i + 1];
  }
  if (i < k) y[i] = (rhs[i] - dot(L + (size_t)i * ld, y, i)) * di[i];
  // backward: L^T x = y, column-oriented (each step reads rows of L), two rows per pass
  for (int r = 0; r < k; r++) x[r] = y[r];
  int r = k - 1;
  for (; r >= 1; r -= 2) {
    const double *l1 = L + (size_t)r * ld, *l0 = l1 - ld;
    double x1 = x[r] * di[r];
    double x0 = (x[r - 1] - l1[r - 1] * x1) * di[r - 1];
    x[r] = x1;
    x[r - 1] = x0;
    for (int c = 0; c < r - 1; c++) x[c] -= l1[c] * x1 + l0[c] * x0;
  }
  if (r == 0) x[0] *= di[0];
}

// Appends index j to the clamped set: one new row l of L, O(nc^2), and column j of M to
// the gathered copy R. If lpre is given it is L^-1 M_Cj already (from the last solve),
// else a forward solve computes it. The new pivot is p = M_jj + reg - |l|^2. For j
// dependent on C (M_Cj = M_CC y) the regularisation alone leaves p ~ reg (1 + |y|^2),
// y = (M_CC + reg I)^-1 M_Cj; with check_dep, j counts as redundant when
// p <= dep_tol * M_jj + 2 reg (1 + |y|^2) (yy_pre: |y|^2 if known, else < 0), a test made
// only when p <= sqrt(dep_tol) M_jj.
// Returns 0, or -1 (nothing changed) when j is redundant or p <= 0 (M not PSD).
static int chol_add(sim_dantzig *dz, int n, const double *M, int j, int check_dep,
                    const double *lpre, double yy_pre) {
  const int k = dz->nc, ld = dz->n_max;
  double *lk = dz->L + (size_t)k * ld;
  const double *rj = dz->R + (size_t)j * ld;  // M_j,C in factor order
  double ss = 0.0;
  if (lpre) {
    for (int r = 0; r < k; r++) {
      lk[r] = lpre[r];
      ss += lk[r] * lk[r];
    }
  } else {
    for (int r = 0; r < k; r++) {
      lk[r] = (rj[r] - dot(dz->L + (size_t)r * ld, lk, r)) * dz->dinv[r];
      ss += lk[r] * lk[r];
    }
  }
  const double mjj = M[j + (size_t)j * n];
  double p = mjj + dz->reg - ss;
  double floor = 0.0;
  // p above sqrt(dep_tol) M_jj: the regularisation term could only exceed it for a
  // catastrophically conditioned C, so the O(nc^2) |y| is computed only below that
  if (check_dep && p <= sqrt(dz->opts.dep_tol) * mjj) {
    double yy = yy_pre;
    if (yy < 0.0) {
      // y = L^-T l, column-oriented back substitution into the scratch t
      double *t = dz->t;
      yy = 0.0;
      for (int r = 0; r < k; r++) t[r] = lk[r];
      for (int r = k - 1; r >= 0; r--) {
        const double *lr = dz->L + (size_t)r * ld;
        double yr = t[r] * dz->dinv[r];
        yy += yr * yr;
        for (int c = 0; c < r; c++) t[c] -= lr[c] * yr;
      }
    }
    floor = dz->opts.dep_tol * mjj + 2.0 * dz->reg * (1.0 + yy);
  }
  if (!(p > floor) || !isfinite(p)) return -1;
  lk[k] = sqrt(p);
  dz->dinv[k] = 1.0 / lk[k];
  dz->cidx[k] = j;
  dz->pos[j] = k;
  dz->f[k] = 0.0;
  dz->nc = k + 1;
  // R gains column k: R[i][k] = M_ij (column j of the symmetric M)
  const double *mj = M + (size_t)j * n;
  for (int i = 0; i < n; i++) dz->R[(size_t)i * ld + k] = mj[i];
  return 0;
}

// Removes the clamped index at factor position p: drop row p of L, then restore the
// lower-triangular shape of the rows below with Givens rotations on column pairs, applied
// row by row (each row receives the rotations of the rows above it), O(nc^2). R loses
// column p.
static void chol_remove(sim_dantzig *dz, int n, int p) {
  const int k = dz->nc, ld = dz->n_max;
  double *L = dz->L, *gc = dz->t, *gs = dz->t + ld;
  dz->pos[dz->cidx[p]] = -1;
  for (int r = p; r < k - 1; r++) {
    dz->cidx[r] = dz->cidx[r + 1];
    dz->f[r] = dz->f[r + 1];
    dz->pos[dz->cidx[r]] = r;
  }
  for (int i = p; i < k - 1; i++) {
    double *li = L + (size_t)i * ld;
    memcpy(li, L + (size_t)(i + 1) * ld, (size_t)(i + 2) * sizeof(double));
    for (int r = p; r < i; r++) {
      double t0 = li[r], t1 = li[r + 1];
      li[r] = gc[r - p] * t0 + gs[r - p] * t1;
      li[r + 1] = -gs[r - p] * t0 + gc[r - p] * t1;
    }
    // the rotation that zeroes this row's super-diagonal entry
    double u = li[i], v = li[i + 1];
    double h = sqrt(u * u + v * v);  // |L| entries are bounded by sqrt(max M_ii)
    gc[i - p] = u / h;
    gs[i - p] = v / h;
    li[i] = h;
    li[i + 1] = 0.0;
    dz->dinv[i] = 1.0 / h;
  }
  dz->nc = k - 1;
  if (p < k - 1) {
    for (int i = 0; i < n; i++) {
      double *ri = dz->R + (size_t)i * ld;
      memmove(ri + p, ri + p + 1, (size_t)(k - 1 - p) * sizeof(double));
    }
  }
}

// f_C from M_CC f_C = -q_C through the (regularised) factor, then `refine` steps of
// iterative refinement against the unregularised M_CC, which remove the regularisation's
// bias.
static void resync(sim_dantzig *dz, int n, const double *M, const double *q, int refine) {
  const int k = dz->nc;
  for (int r = 0; r < k; r++) dz->rhs[r] = -q[dz->cidx[r]];
  chol_solve(dz, dz->rhs, dz->f);
  for (int it = 0; it < refine; it++) {
    for (int r = 0; r < k; r++) {
      const double *mr = M + (size_t)dz->cidx[r] * n;
      double s = -q[dz->cidx[r]];
      for (int c = 0; c < k; c++) s -= mr[dz->cidx[c]] * dz->f[c];
      dz->rhs[r] = s;
    }
    chol_solve(dz, dz->rhs, dz->rhs);
    for (int r = 0; r < k; r++) dz->f[r] += dz->rhs[r];
  }
}

// Warm start from a clamped set: factorise it (dropping dependent indices), then drop the
// index with the most negative force until all clamped forces are >= 0.
static int warm_start(sim_dantzig *dz, int n, const double *M, const double *q,
                      const unsigned char *clamped_in) {
  int dropped = 0;
  for (int i = 0; i < n; i++) {
    if (!clamped_in[i]) continue;
    if (chol_add(dz, n, M, i, 1, NULL, -1.0) != 0) {
      dropped++;
    }
  }
  while (dz->nc > 0) {
    for (int r = 0; r < dz->nc; r++) dz->rhs[r] = -q[dz->cidx[r]];
    chol_solve(dz, dz->rhs, dz->x);
    int worst = -1;
    double fneg = 0.0;
    for (int r = 0; r < dz->nc; r++) {
      if (dz->x[r] < fneg) {
        fneg = dz->x[r];
        worst = r;
      }
    }
    if (worst < 0) break;
    chol_remove(dz, n, worst);
    dropped++;
  }
  return dropped;
}

// rate of change of a_i along the current direction: M_id + sum_r M_i,c_r x_r, with
// M_i,C read contiguously from R
static double rate(const sim_dantzig *dz, int n, const double *M, int i, int d) {
  const double *ri = dz->R + (size_t)i * dz->n_max;
  return M[d + (size_t)i * n] + dot(ri, dz->x, dz->nc);
}

static void nc_add(sim_dantzig *dz, int i, double ai) {
  dz->ncpos[i] = dz->nnc;
  dz->a[dz->nnc] = ai;
  dz->ncl[dz->nnc++] = i;
}

static void nc_remove(sim_dantzig *dz, int i) {
  int p = dz->ncpos[i], last = dz->ncl[--dz->nnc];
  dz->ncl[p] = last;
  dz->a[p] = dz->a[dz->nnc];
  dz->ncpos[last] = p;
  dz->ncpos[i] = -1;
}

sim_lcp_status sim_dantzig_solve(sim_dantzig *dz, int n, const double *M, const double *q,
                                 double *z, double *w, const unsigned char *clamped_in,
                                 unsigned char *clamped_out, sim_lcp_info *info) {
  sim_lcp_info inf;
  memset(&inf, 0, sizeof inf);
  if (info) *info = inf;
  if (!dz || n < 0 || n > dz->n_max || (n > 0 && (!M || !q || !z))) return SIM_LCP_EINVAL;
  if (n == 0) {
    if (info) info->check.ok = 1;
    return SIM_LCP_SOLVED;
  }
  if (!sim_lcp_finite(n, M, q)) return SIM_LCP_EINVAL;
  const sim_dantzig_opts *o = &dz->opts;
  const int cap = o->max_pivots > 0 ? o->max_pivots : 20 * n + 100;
  double mmax = 0.0, qs = 0.0;
  for (int i = 0; i < n; i++) {
    double mii = M[i + (size_t)i * n];
    if (mii < 0.0) return SIM_LCP_EINVAL;  // not positive semidefinite
    mmax = dmax(mmax, mii);
    qs = dmax(qs, fabs(q[i]));
  }
  if (mmax == 0.0) mmax = 1.0;
  dz->reg = o->reg_rel * mmax;
  const double drive_thr = o->drive_tol * (qs > 0.0 ? qs : 1.0);
  double *f = dz->f, *a = dz->a, *x = dz->x, *da = dz->da;
  for (int i = 0; i < n; i++) {
    dz->pos[i] = -1;
    dz->ncpos[i] = -1;
    dz->skip[i] = 0;
  }
  dz->nc = 0;
  dz->nnc = 0;
  if (clamped_in) {
    inf.warm_dropped = warm_start(dz, n, M, q, clamped_in);
    if (dz->nc > 0) resync(dz, n, M, q, 1);
  }

  // Baraff 4.1: contacts are taken one at a time in order; those not yet reached are
  // ignored (their a may go negative meanwhile). Processed indices are in C (a = 0,
  // f >= 0; f kept in factor order) or NC (f = 0, a >= 0; a kept in NC order).
  sim_lcp_status st = SIM_LCP_SOLVED;
  for (int d = 0; d < n; d++) {
    if (dz->pos[d] >= 0) continue;  // clamped by the warm start
    const double mdd = M[d + (size_t)d * n];
    const double *rd = dz->R + (size_t)d * dz->n_max;  // M_d,C in factor order
    double ad = q[d] + dot(rd, f, dz->nc), fd = 0.0;
    if (ad >= -drive_thr) {
      nc_add(dz, d, ad);
      continue;
    }
    // drive-to-zero(d)
    for (int first = 1;; first = 0) {
      if (inf.pivots >= cap) {
        st = SIM_LCP_PIVOT_LIMIT;
        goto done;
      }
      if (!first && ad >= -drive_thr && fd == 0.0) {  // d became a valid unclamped one
        nc_add(dz, d, ad);
        break;
      }
      // fdirection: df_d = 1, M_CC x = -M_Cd (Baraff eq. 9); rates of a on d and NC
      const int k = dz->nc;
      for (int r = 0; r < k; r++) dz->rhs[r] = -rd[r];
      chol_solve(dz, dz->rhs, x);
      // |x| (>= max |x_r|) scales the thresholds below
      const double xx = dot(x, x, k), xn = dmax(1.0, sqrt(xx));
      const double dad = rate(dz, n, M, d, d);
      int t2 = 0;
      for (; t2 + 2 <= dz->nnc; t2 += 2) {
        int i0 = dz->ncl[t2], i1 = dz->ncl[t2 + 1];
        double s0, s1;
        dot2(dz->R + (size_t)i0 * dz->n_max, dz->R + (size_t)i1 * dz->n_max, x, k, &s0, &s1);
        da[t2] = M[d + (size_t)i0 * n] + s0;
        da[t2 + 1] = M[d + (size_t)i1 * n] + s1;
      }
      if (t2 < dz->nnc) da[t2] = rate(dz, n, M, dz->ncl[t2], d);
      // maxstep (Baraff eq. 10-12). d counts as reachable only if its rate (the Schur
      // complement of d on C) is not negligible: otherwise d is redundant with C (Baraff's
      // redundant contacts). Among blockers the first minimum wins; a tie with d goes to d.
      // j: the blocking index; jt: its position in C (jt >= 0) or in NC (jt < 0: -1 - t)
      const int stamp = inf.pivots + 1;
      double s;
      int j, jt = 0, joined = 0;
      for (;;) {
        s = INFINITY;
        j = -1;
        double sd = INFINITY;
        if (dad > o->dep_tol * mdd + 2.0 * dz->reg * (1.0 + xx)) {
          s = sd = dmax(0.0, -ad) / dad;
          j = d;
        }
        const double xthr = o->piv_tol * xn;
        for (int r = 0; r < k; r++) {
          if (x[r] < -xthr) {
            double si = dmax(0.0, f[r]) / -x[r];
            if (si < s) {
              s = si;
              j = dz->cidx[r];
              jt = r;
            }
          }
        }
        const double athr = o->piv_tol * mmax * xn;
        for (int t = 0; t < dz->nnc; t++) {
          if (da[t] < -athr) {
            double si = dmax(0.0, a[t]) / -da[t];
            if (si < s && dz->skip[dz->ncl[t]] != stamp) {
              s = si;
              j = dz->ncl[t];
              jt = -1 - t;
            }
          }
        }
        if (j >= 0 && j != d && sd < INFINITY && sd <= s + 1e-9 * sd) {
          s = sd;
          j = d;
        }
        if (j < 0 || j == d || jt >= 0) break;
        // an unclamped blocker joins C; if it is (numerically) dependent on C its rate
        // can only be rounding noise: skip it and select again
        if (chol_add(dz, n, M, j, 1, NULL, -1.0) == 0) {
          joined = 1;
          break;
        }
        dz->skip[j] = stamp;
      }
      if (j < 0) {
        // nothing limits the step and a_d never reaches zero: infeasible. If a_d is
        // already zero up to the tolerance this is no proof: report a numerical failure
        st = ad < -drive_thr ? SIM_LCP_RAY : SIM_LCP_NUMERICAL;
        goto done;
      }
      if (!isfinite(s)) {
        st = SIM_LCP_NUMERICAL;
        goto done;
      }
      // take the step (a zero-length step only changes the index sets); x holds the
      // direction over the k positions the factor had before a join appended j
      if (s == 0.0) {
        inf.zero_steps++;
      } else {
        for (int r = 0; r < k; r++) f[r] += s * x[r];
        fd += s;
        ad += s * dad;
        for (int t = 0; t < dz->nnc; t++) a[t] += s * da[t];
      }
      inf.pivots++;
      if (j == d) {
        // L^-1 M_Cd is minus the forward result of this pivot's solve (C unchanged since);
        // d's rate (its Schur complement) was checked in the selection
        for (int r = 0; r < k; r++) dz->y[r] = -dz->y[r];
        if (chol_add(dz, n, M, d, 0, dz->y, 0.0) != 0) {
          st = SIM_LCP_NUMERICAL;
          goto done;
        }
        f[k] = fd;
        break;
      } else if (joined) {
        nc_remove(dz, j);  // already appended to the factor (force 0) in the selection
      } else {
        chol_remove(dz, n, jt);
        nc_add(dz, j, 0.0);
      }
    }
  }

done:
  inf.n_active = dz->nc;
  if (clamped_out) {
    for (int i = 0; i < n; i++) clamped_out[i] = dz->pos[i] >= 0;
  }
  // verify the pivoted z; if rounding spoiled it, recompute z on C from the factor with
  // iterative refinement against the unregularised M_CC and verify again
  for (int i = 0; i < n; i++) z[i] = 0.0;
  for (int r = 0; r < dz->nc; r++) z[dz->cidx[r]] = dmax(0.0, f[r]);
  int ok = sim_lcp_verify(n, M, q, z, w, o->verify_tol, &inf.check);
  if (st == SIM_LCP_SOLVED && !ok && dz->nc > 0) {
    resync(dz, n, M, q, 2);
    for (int r = 0; r < dz->nc; r++) z[dz->cidx[r]] = dmax(0.0, f[r]);
    ok = sim_lcp_verify(n, M, q, z, w, o->verify_tol, &inf.check);
  }
  if (st == SIM_LCP_SOLVED && !ok) st = SIM_LCP_NUMERICAL;
  if (info) *info = inf;
  return st;
}
