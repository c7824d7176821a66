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
  double *g;              // L^-1 M_Cd of the driven index d, kept in step with L (n_max)
  double *rhs;            // right-hand sides in factor order (n_max)
  double *da;             // rate of change of a along the direction, by NC position (n_max)
  double *wv;             // w for the verification when the caller passes none (n_max)
  int *cidx;              // clamped indices in factor order (n_max)
  int *pos;               // factor position of each index or -1 (n_max)
  int *skip;              // pivot stamp of blockers rejected as dependent (n_max)
  int *ncl;               // processed unclamped indices (NC), unordered (n_max)
  int *ncpos;             // position of each index in ncl or -1 (n_max)
  int nnc;                // size of NC
  double *t;              // scratch of chol_add; Givens cosines and sines (2 n_max)
  double *R;              // R[i][r] = M_i,cidx[r] for i in NC only: their rows of M_NC,C,
                          // gathered in factor order, row-major (n_max^2)
  int *rlen;              // columns held by each row of R; an index can appear in ncl more
                          // than once (see nc_add), and its row must be updated only once
  int nc;                 // clamped count
  double reg;             // absolute diagonal regularisation of the current solve
};

sim_dantzig_opts sim_dantzig_opts_default(void) {
  sim_dantzig_opts o = {0, 1e-13, 1e-11, 1e-8, 1e-11, SIM_LCP_VERIFY_TOL};
  return o;
}

sim_dantzig *sim_dantzig_new(int n_max, const sim_dantzig_opts *opts, char *err,
                             size_t err_sz) {
  if (n_max < 1 || n_max > SIM_LCP_N_MAX) {
    ccsim_set_err(err, err_sz, "sim_dantzig_new: n_max must be in 1..SIM_LCP_N_MAX");
    return NULL;
  }
  sim_dantzig_opts o = opts ? *opts : sim_dantzig_opts_default();
  if (!(o.reg_rel >= 0.0 && o.reg_rel < 1.0) || !(o.piv_tol > 0.0 && o.piv_tol < 1.0) ||
      !(o.dep_tol > 0.0 && o.dep_tol < 1.0) ||
      !(o.drive_tol >= 0.0 && o.drive_tol < 1.0) ||
      !(o.verify_tol > 0.0 && o.verify_tol < 1.0)) {
    ccsim_set_err(err, err_sz, "sim_dantzig_new: tolerances must be in [0, 1)");
    return NULL;
  }
  sim_dantzig *dz = calloc(1, sizeof *dz);
  if (!dz) {
    ccsim_set_err(err, err_sz, "sim_dantzig_new: out of memory");
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
  dz->g = malloc(nm * sizeof(double));
  dz->rhs = malloc(nm * sizeof(double));
  dz->da = malloc(nm * sizeof(double));
  dz->wv = malloc(nm * sizeof(double));
  dz->cidx = malloc(nm * sizeof(int));
  dz->pos = malloc(nm * sizeof(int));
  dz->skip = malloc(nm * sizeof(int));
  dz->ncl = malloc(nm * sizeof(int));
  dz->ncpos = malloc(nm * sizeof(int));
  dz->t = malloc(2 * nm * sizeof(double));
  dz->R = malloc(nm * nm * sizeof(double));
  dz->rlen = malloc(nm * sizeof(int));
  if (!dz->L || !dz->dinv || !dz->f || !dz->a || !dz->x || !dz->g || !dz->rhs || !dz->da ||
      !dz->wv || !dz->cidx || !dz->pos || !dz->skip || !dz->t || !dz->ncl || !dz->ncpos ||
      !dz->R || !dz->rlen) {
    sim_dantzig_destroy(&dz);
    ccsim_set_err(err, err_sz, "sim_dantzig_new: out of memory");
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
  free(p->g);
  free(p->rhs);
  free(p->da);
  free(p->wv);
  free(p->cidx);
  free(p->pos);
  free(p->skip);
  free(p->ncl);
  free(p->ncpos);
  free(p->t);
  free(p->R);
  free(p->rlen);
  free(p);
  *dz = NULL;
}

int sim_dantzig_n_max(const sim_dantzig *dz) { return dz ? dz->n_max : 0; }

// The O(n^2) work of a pivot is in the kernels below (dot products, triangular solves, the
// rates of NC). With GCC or Clang they use two-double vectors of the vector extension
// (SSE2 or NEON registers): IEEE rules forbid the compiler to reorder a plain C sum into
// vector lanes itself. SIM_DANTZIG_SCALAR, or another compiler, selects plain C loops.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(SIM_DANTZIG_SCALAR)
#define DZ_VEC 1
typedef double v2d __attribute__((vector_size(16)));
// unaligned loads and stores: rows of L and R start at any double
static inline v2d vld(const double *p) {
  v2d v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void vst(double *p, v2d v) { memcpy(p, &v, sizeof v); }
#else
#define DZ_VEC 0
#endif

// a . b over m entries, in four independent partial sums
static inline double dot(const double *a, const double *b, int m) {
  int i = 0;
#if DZ_VEC
  v2d s0 = {0.0, 0.0}, s1 = s0;
  for (; i + 4 <= m; i += 4) {
    s0 += vld(a + i) * vld(b + i);
    s1 += vld(a + i + 2) * vld(b + i + 2);
  }
  s0 += s1;
  double s = s0[0] + s0[1];
#else
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (; i + 4 <= m; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  double s = (s0 + s1) + (s2 + s3);
#endif
  for (; i < m; i++) s += a[i] * b[i];
  return s;
}

// s[c] = r[c] . v over m entries for four rows r at once: v is read once for all four
static inline void dot4(const double *const r[4], const double *v, int m, double s[4]) {
  const double *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
  int i = 0;
#if DZ_VEC
  v2d s0 = {0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0;
  for (; i + 2 <= m; i += 2) {
    v2d vi = vld(v + i);
    s0 += vld(r0 + i) * vi;
    s1 += vld(r1 + i) * vi;
    s2 += vld(r2 + i) * vi;
    s3 += vld(r3 + i) * vi;
  }
  double a0 = s0[0] + s0[1], a1 = s1[0] + s1[1], a2 = s2[0] + s2[1], a3 = s3[0] + s3[1];
#else
  double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
#endif
  for (; i < m; i++) {
    a0 += r0[i] * v[i];
    a1 += r1[i] * v[i];
    a2 += r2[i] * v[i];
    a3 += r3[i] * v[i];
  }
  s[0] = a0;
  s[1] = a1;
  s[2] = a2;
  s[3] = a3;
}

// x[c] -= l0[c] u0 + l1[c] u1 + l2[c] u2 + l3[c] u3 for c < m (four eliminations per pass
// over x)
static inline void axpy4(double *x, const double *const l[4], const double u[4], int m) {
  const double *l0 = l[0], *l1 = l[1], *l2 = l[2], *l3 = l[3];
  int c = 0;
#if DZ_VEC
  const v2d u0 = {u[0], u[0]}, u1 = {u[1], u[1]}, u2 = {u[2], u[2]}, u3 = {u[3], u[3]};
  for (; c + 2 <= m; c += 2) {
    v2d s = (vld(l0 + c) * u0 + vld(l1 + c) * u1) + (vld(l2 + c) * u2 + vld(l3 + c) * u3);
    vst(x + c, vld(x + c) - s);
  }
#endif
  for (; c < m; c++) x[c] -= (l0[c] * u[0] + l1[c] * u[1]) + (l2[c] * u[2] + l3[c] * u[3]);
}

// Solves L y = b over the nc clamped positions (row-major L: dot products with the solved
// part, four rows per pass sharing the reads of y); b and y may alias.
static void fwd_solve(const sim_dantzig *dz, const double *b, double *y) {
  const int k = dz->nc, ld = dz->n_max;
  const double *L = dz->L, *di = dz->dinv;
  int i = 0;
  for (; i + 4 <= k; i += 4) {
    const double *l[4] = {L + (size_t)i * ld, L + (size_t)(i + 1) * ld, L + (size_t)(i + 2) * ld,
                          L + (size_t)(i + 3) * ld};
    double s[4];
    dot4(l, y, i, s);
    // the 4 x 4 triangle of these rows
    const double y0 = (b[i] - s[0]) * di[i];
    const double y1 = (b[i + 1] - s[1] - l[1][i] * y0) * di[i + 1];
    const double y2 = (b[i + 2] - s[2] - l[2][i] * y0 - l[2][i + 1] * y1) * di[i + 2];
    const double y3 =
        (b[i + 3] - s[3] - l[3][i] * y0 - l[3][i + 1] * y1 - l[3][i + 2] * y2) * di[i + 3];
    y[i] = y0;
    y[i + 1] = y1;
    y[i + 2] = y2;
    y[i + 3] = y3;
  }
  for (; i < k; i++) y[i] = (b[i] - dot(L + (size_t)i * ld, y, i)) * di[i];
}

// Solves L^T x = b in place (x holds b) over the nc clamped positions. Row-major L makes
// this column-oriented: each solved x_r is eliminated from the entries above it, four rows
// per pass so that x is read and written once per four eliminations.
static void back_solve(const sim_dantzig *dz, double *x) {
  const int ld = dz->n_max;
  const double *L = dz->L, *di = dz->dinv;
  int r = dz->nc - 1;
  for (; r >= 3; r -= 4) {
    const double *l[4] = {L + (size_t)(r - 3) * ld, L + (size_t)(r - 2) * ld,
                          L + (size_t)(r - 1) * ld, L + (size_t)r * ld};
    // the 4 x 4 triangle of rows r-3..r, then the eliminations from entries 0..r-4
    double u[4];
    u[3] = x[r] * di[r];
    u[2] = (x[r - 1] - l[3][r - 1] * u[3]) * di[r - 1];
    u[1] = (x[r - 2] - l[3][r - 2] * u[3] - l[2][r - 2] * u[2]) * di[r - 2];
    u[0] = (x[r - 3] - l[3][r - 3] * u[3] - l[2][r - 3] * u[2] - l[1][r - 3] * u[1]) * di[r - 3];
    x[r] = u[3];
    x[r - 1] = u[2];
    x[r - 2] = u[1];
    x[r - 3] = u[0];
    axpy4(x, l, u, r - 3);
  }
  for (; r >= 0; r--) {
    const double *lr = L + (size_t)r * ld;
    const double xr = x[r] * di[r];
    x[r] = xr;
    for (int c = 0; c < r; c++) x[c] -= lr[c] * xr;
  }
}

// Solves (L L^T) x = rhs over the nc clamped positions; rhs and x may alias.
static void chol_solve(sim_dantzig *dz, const double *rhs, double *x) {
  fwd_solve(dz, rhs, x);
  back_solve(dz, x);
}

// Appends index j to the clamped set: one new row l of L, O(nc^2), and column j of M to
// the rows of NC in R. If lpre is given it is L^-1 M_Cj already (kept while j was driven),
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
  const double *mj = M + (size_t)j * n;  // column j = row j of the symmetric M
  if (lpre) {
    memcpy(lk, lpre, (size_t)k * sizeof(double));
  } else {
    for (int r = 0; r < k; r++) lk[r] = mj[dz->cidx[r]];
    fwd_solve(dz, lk, lk);
  }
  const double ss = dot(lk, lk, k);
  const double mjj = mj[j];
  double p = mjj + dz->reg - ss;
  double floor = 0.0;
  // p above sqrt(dep_tol) M_jj: the regularisation term could only exceed it for a
  // catastrophically conditioned C, so the O(nc^2) |y| is computed only below that
  if (check_dep && p <= sqrt(dz->opts.dep_tol) * mjj) {
    double yy = yy_pre;
    if (yy < 0.0) {
      // y = L^-T l in the scratch t
      memcpy(dz->t, lk, (size_t)k * sizeof(double));
      back_solve(dz, dz->t);
      yy = dot(dz->t, dz->t, k);
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
  // the rows of NC in R gain column k: R[i][k] = M_ij
  for (int t = 0; t < dz->nnc; t++) {
    const int i = dz->ncl[t];
    if (dz->rlen[i] != k) continue;  // a repeated entry, already done
    dz->R[(size_t)i * ld + k] = mj[i];
    dz->rlen[i] = k + 1;
  }
  return 0;
}

// Removes the clamped index at factor position p: drop row p of L, then restore the
// lower-triangular shape of the rows below with Givens rotations on column pairs, applied
// row by row (each row receives the rotations of the rows above it), O(nc^2). The rows of
// NC in R lose column p. If g (nullable) is L^-1 b for some b over C, it becomes the same
// for the new factor and b without entry p: the rotations act on it as on a row of L.
static void chol_remove(sim_dantzig *dz, int p, double *g) {
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
  // L y = b without row p is [L' 0] G^T y = b': y' is the head of G^T y
  if (g) {
    for (int r = p; r < k - 1; r++) {
      double t0 = g[r], t1 = g[r + 1];
      g[r] = gc[r - p] * t0 + gs[r - p] * t1;
      g[r + 1] = -gs[r - p] * t0 + gc[r - p] * t1;
    }
  }
  dz->nc = k - 1;
  for (int t = 0; t < dz->nnc; t++) {
    const int i = dz->ncl[t];
    if (dz->rlen[i] != k) continue;  // a repeated entry, already done
    double *ri = dz->R + (size_t)i * ld;
    memmove(ri + p, ri + p + 1, (size_t)(k - 1 - p) * sizeof(double));
    dz->rlen[i] = k - 1;
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
    chol_remove(dz, worst, NULL);
    dropped++;
  }
  return dropped;
}

// i joins NC with acceleration ai; its row of R is gathered from column i of M. An index
// that left C before the loop reached it (warm start) is already in NC when it is reached
// and is then appended a second time; the copies see the same row of R.
static void nc_add(sim_dantzig *dz, int n, const double *M, int i, double ai) {
  const double *mi = M + (size_t)i * n;
  double *ri = dz->R + (size_t)i * dz->n_max;
  for (int r = 0; r < dz->nc; r++) ri[r] = mi[dz->cidx[r]];
  dz->rlen[i] = dz->nc;
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

// rates of change of a on NC along the direction x: da[t] = M_id + M_i,C x for i = ncl[t],
// with md = column d of M and M_i,C read contiguously from R, four rows at a time
static void nc_rates(sim_dantzig *dz, const double *md, double *da) {
  const int k = dz->nc, m = dz->nnc, ld = dz->n_max;
  const int *ncl = dz->ncl;
  const double *R = dz->R, *x = dz->x;
  int t = 0;
  for (; t + 4 <= m; t += 4) {
    const double *r[4] = {R + (size_t)ncl[t] * ld, R + (size_t)ncl[t + 1] * ld,
                          R + (size_t)ncl[t + 2] * ld, R + (size_t)ncl[t + 3] * ld};
    double s[4];
    dot4(r, x, k, s);
    for (int c = 0; c < 4; c++) da[t + c] = md[ncl[t + c]] + s[c];
  }
  for (; t < m; t++) da[t] = md[ncl[t]] + dot(R + (size_t)ncl[t] * ld, x, k);
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
  double *f = dz->f, *a = dz->a, *x = dz->x, *da = dz->da, *g = dz->g, *rhs = dz->rhs;
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
    const double *md = M + (size_t)d * n;  // column d = row d of the symmetric M
    for (int r = 0; r < dz->nc; r++) rhs[r] = md[dz->cidx[r]];
    double ad = q[d] + dot(rhs, f, dz->nc), fd = 0.0;
    if (ad >= -drive_thr) {
      nc_add(dz, n, M, d, ad);
      continue;
    }
    // drive-to-zero(d). g = L^-1 M_Cd is solved for once here and then updated with each
    // change of C in O(nc), which leaves one triangular solve per pivot for the direction
    fwd_solve(dz, rhs, g);
    for (int first = 1;; first = 0) {
      if (inf.pivots >= cap) {
        st = SIM_LCP_PIVOT_LIMIT;
        goto done;
      }
      if (!first && ad >= -drive_thr && fd == 0.0) {  // d became a valid unclamped one
        nc_add(dz, n, M, d, ad);
        break;
      }
      // fdirection: df_d = 1, M_CC x = -M_Cd (Baraff eq. 9), i.e. x = -L^-T g; rates of a
      // on d and NC
      const int k = dz->nc;
      for (int r = 0; r < k; r++) {
        x[r] = -g[r];
        rhs[r] = md[dz->cidx[r]];
      }
      back_solve(dz, x);
      // |x| (>= max |x_r|) scales the thresholds below
      const double xx = dot(x, x, k), xn = dmax(1.0, sqrt(xx));
      const double dad = mdd + dot(rhs, x, k);
      nc_rates(dz, md, da);
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
        // g is L^-1 M_Cd for the current C; d's rate (its Schur complement) was checked in
        // the selection
        if (chol_add(dz, n, M, d, 0, g, 0.0) != 0) {
          st = SIM_LCP_NUMERICAL;
          goto done;
        }
        f[k] = fd;
        break;
      } else if (joined) {
        // j was appended to the factor (force 0) in the selection: g gains the entry of
        // the new row k of L
        g[k] = (md[j] - dot(dz->L + (size_t)k * dz->n_max, g, k)) * dz->dinv[k];
        nc_remove(dz, j);
      } else {
        chol_remove(dz, jt, g);
        nc_add(dz, n, M, j, 0.0);
      }
    }
  }

done:
  inf.n_active = dz->nc;
  if (clamped_out) {
    for (int i = 0; i < n; i++) clamped_out[i] = dz->pos[i] >= 0;
  }
  // verify the pivoted z; if rounding spoiled it, recompute z on C from the factor with
  // iterative refinement against the unregularised M_CC and verify again. Without a
  // caller's w the workspace's is used: sim_lcp_verify then sweeps the columns of the
  // clamped indices instead of reading M across its columns row by row
  if (!w) w = dz->wv;
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
