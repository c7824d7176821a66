// The Siconos LCP test problems (tests/data/lcp/siconos, format in tests/data/lcp/README.md):
// written by others for other solvers, used here as an outside check. Every problem must
// end with a solution verified here (Siconos' error ||z - max(0, z - w)||_2 / ||q||_2 and
// complementarity, both from the file's M and q) or, for the two known secondary-ray
// cases, with SIM_LCP_RAY. Symmetric positive definite problems also go through Dantzig.
// The *_block.dat files (sparse-block storage) are parsed and must equal their dense twins.
// ctest-label: unit
// ctest-timeout: 60
#include "ccsim_test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "sim_dantzig.h"
#include "sim_lemke.h"

#define NMAX 64
#define TOL 1e-9

typedef struct problem {
  char name[128];
  int n;
  int block;           // 1 if read from sparse-block storage
  double M[NMAX * NMAX];  // column-major
  double q[NMAX];
} problem;

// next whitespace-separated number; 0 at end of data or on a non-number
static int next_num(FILE *f, double *v) { return fscanf(f, "%lf", v) == 1; }

static int next_int(FILE *f, int *v) {
  double d;
  if (!next_num(f, &d) || d != floor(d) || d < 0 || d > 1e6) return 0;
  *v = (int)d;
  return 1;
}

// Reads one problem; returns 0 on success, -1 with a message on a malformed file.
static int read_problem(const char *path, problem *p) {
  FILE *f = fopen(path, "r");
  if (!f) {
    print_error("%s: cannot open\n", path);
    return -1;
  }
  int n, storage, s0, s1, ok = 0;
  if (!next_int(f, &n) || !next_int(f, &storage) || n < 1 || n > NMAX) goto out;
  p->n = n;
  p->block = storage == 1;
  memset(p->M, 0, sizeof p->M);
  if (storage == 0) {
    // size0 size1, then the line "size0<TAB>size1", then M column by column, then q
    int a, b;
    if (!next_int(f, &s0) || !next_int(f, &s1) || !next_int(f, &a) || !next_int(f, &b)) goto out;
    if (s0 != n || s1 != n || a != n || b != n) goto out;
    for (int k = 0; k < n * n; k++) {
      if (!next_num(f, &p->M[k])) goto out;
    }
  } else if (storage == 1) {
    // sparse-block: sizes, block counts, cumulative block sizes, CSR block pattern, then
    // each block as its id followed by its entries in column-major order
    int nbblock, bn0, bn1, filled1, filled2;
    int bs0[NMAX + 1], bs1[NMAX + 1], idx1[NMAX + 2], idx2[NMAX * NMAX];
    if (!next_int(f, &s0) || !next_int(f, &s1) || s0 != n || s1 != n) goto out;
    if (!next_int(f, &nbblock) || !next_int(f, &bn0) || !next_int(f, &bn1)) goto out;
    if (bn0 < 1 || bn0 > n || bn1 < 1 || bn1 > n || nbblock < 1 || nbblock > bn0 * bn1) goto out;
    for (int i = 0; i < bn0; i++) {
      if (!next_int(f, &bs0[i])) goto out;
    }
    for (int i = 0; i < bn1; i++) {
      if (!next_int(f, &bs1[i])) goto out;
    }
    if (bs0[bn0 - 1] != n || bs1[bn1 - 1] != n) goto out;
    if (!next_int(f, &filled1) || !next_int(f, &filled2)) goto out;
    if (filled1 != bn0 + 1 || filled2 != nbblock) goto out;
    for (int i = 0; i < filled1; i++) {
      if (!next_int(f, &idx1[i])) goto out;
    }
    for (int i = 0; i < filled2; i++) {
      if (!next_int(f, &idx2[i]) || idx2[i] >= bn1) goto out;
    }
    for (int r = 0; r < bn0; r++) {
      int r0 = r ? bs0[r - 1] : 0, nr = bs0[r] - r0;
      for (int k = idx1[r]; k < idx1[r + 1]; k++) {
        int id, c = idx2[k], c0 = c ? bs1[c - 1] : 0, nc = bs1[c] - c0;
        if (k >= nbblock || !next_int(f, &id) || id != k) goto out;
        for (int jj = 0; jj < nc; jj++) {
          for (int ii = 0; ii < nr; ii++) {
            if (!next_num(f, &p->M[(r0 + ii) + (size_t)(c0 + jj) * n])) goto out;
          }
        }
      }
    }
  } else {
    goto out;
  }
  for (int i = 0; i < n; i++) {
    if (!next_num(f, &p->q[i])) goto out;
  }
  ok = 1;
out:
  fclose(f);
  if (!ok) print_error("%s: malformed problem file\n", path);
  return ok ? 0 : -1;
}

// Siconos' error and the complementarity test, from the file's M and q only
static void check_solution(const problem *p, const double *z) {
  int n = p->n;
  long double qq = 0.0L, rr = 0.0L, wz = 0.0L;
  double qn = 1.0, zn = 1.0, minw = INFINITY, minz = INFINITY;
  for (int i = 0; i < n; i++) {
    qn = fmax(qn, fabs(p->q[i]));
    zn = fmax(zn, fabs(z[i]));
  }
  for (int i = 0; i < n; i++) {
    long double wi = p->q[i];
    for (int j = 0; j < n; j++) wi += (long double)p->M[i + j * n] * z[j];
    long double r = z[i] - fmaxl(0.0L, z[i] - wi);
    rr += r * r;
    qq += (long double)p->q[i] * p->q[i];
    wz += wi * z[i];
    minw = fmin(minw, (double)wi);
    minz = fmin(minz, z[i]);
  }
  double err = (double)(sqrtl(rr) / (qq > 0 ? sqrtl(qq) : 1.0L));
  print_message("  %-36s n=%2d siconos error %.2e, w^T z %.2e, min w %.2e, min z %.2e\n",
                p->name, n, err, (double)wz, minw, minz);
  if (!(err <= TOL) || !(minz >= -TOL) || !(minw >= -TOL * qn) ||
      !(fabsl(wz) <= TOL * qn * zn)) {
    print_error("%s: not a solution\n", p->name);
    fail();
  }
}

// symmetric and positive definite (a plain Cholesky succeeds): Dantzig's domain
static int is_spd(const problem *p) {
  int n = p->n;
  double L[NMAX * NMAX];
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double a = p->M[i + j * n], b = p->M[j + i * n];
      if (fabs(a - b) > 1e-12 * fmax(1.0, fabs(a))) return 0;
    }
  }
  for (int j = 0; j < n; j++) {
    double s = p->M[j + j * n];
    for (int k = 0; k < j; k++) s -= L[j + k * n] * L[j + k * n];
    if (!(s > 1e-12 * fabs(p->M[j + j * n]))) return 0;
    L[j + j * n] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = p->M[i + j * n];
      for (int k = 0; k < j; k++) t -= L[i + k * n] * L[j + k * n];
      L[i + j * n] = t / L[j + j * n];
    }
  }
  return 1;
}

static int is_known_ray(const char *name) {
  return strcmp(name, "lcp_CPS_3.dat") == 0 ||
         strcmp(name, "lcp_Pang_isolated_sol_perturbed.dat") == 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

static void test_siconos(void **state) {
  (void)state;
  const char *src = getenv("CCSIM_SOURCE_DIR");
  if (!src || !*src) {
    print_error("CCSIM_SOURCE_DIR is not set: cannot find tests/data/lcp/siconos\n");
    fail();
  }
  char dir[1024];
  snprintf(dir, sizeof dir, "%.1000s/tests/data/lcp/siconos", src);
  DIR *dp = opendir(dir);
  if (!dp) {
    print_error("%s: missing; the Siconos LCP problems are required\n", dir);
    fail();
  }
  static char names[64][128];
  int nn = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL && nn < 64) {
    size_t len = strlen(de->d_name);
    if (len > 4 && strcmp(de->d_name + len - 4, ".dat") == 0 && len < 128) {
      snprintf(names[nn++], 128, "%.127s", de->d_name);
    }
  }
  closedir(dp);
  qsort(names, (size_t)nn, sizeof names[0], cmp_names);
  // the README lists 20 problems (3 of them block twins)
  assert_true(nn >= 20);

  sim_lemke *lk = sim_lemke_new(NMAX, NULL, NULL, 0);
  sim_dantzig *dz = sim_dantzig_new(NMAX, NULL, NULL, 0);
  problem *p = malloc(sizeof *p), *twin = malloc(sizeof *twin);
  assert_non_null(lk);
  assert_non_null(dz);
  assert_non_null(p);
  assert_non_null(twin);
  double z[NMAX], w[NMAX];
  int solved = 0, rays = 0, blocks = 0, dantzig = 0;
  for (int k = 0; k < nn; k++) {
    char path[1280];
    snprintf(path, sizeof path, "%.1023s/%.127s", dir, names[k]);
    snprintf(p->name, sizeof p->name, "%.127s", names[k]);
    assert_int_equal(read_problem(path, p), 0);
    if (p->block) {
      // the block file must describe the same problem as its dense twin
      char dense[1280];
      size_t len = strlen(path);
      const char *suffix = "_block.dat";
      size_t sl = strlen(suffix);
      assert_true(len > sl && strcmp(path + len - sl, suffix) == 0);
      snprintf(dense, sizeof dense, "%.*s.dat", (int)(len - sl), path);
      assert_int_equal(read_problem(dense, twin), 0);
      assert_int_equal(twin->n, p->n);
      for (int i = 0; i < p->n * p->n; i++) assert_double_near(p->M[i], twin->M[i], 1e-6);
      for (int i = 0; i < p->n; i++) assert_double_near(p->q[i], twin->q[i], 1e-12);
      blocks++;
    }
    sim_lcp_info info;
    sim_lcp_status st = sim_lemke_solve(lk, p->n, p->M, p->q, z, w, &info);
    print_message("%-40s lemke: %s, %d pivots\n", p->name, sim_lcp_status_name(st),
                  info.pivots);
    if (st == SIM_LCP_SOLVED) {
      check_solution(p, z);
      solved++;
    } else {
      // only the two problems known to end on a secondary ray may fail, and only so
      if (!is_known_ray(p->name)) {
        print_error("%s: %s\n", p->name, sim_lcp_status_str(st));
        fail();
      }
      assert_int_equal(st, SIM_LCP_RAY);
      rays++;
    }
    if (is_spd(p)) {
      st = sim_dantzig_solve(dz, p->n, p->M, p->q, z, w, NULL, NULL, &info);
      print_message("%-40s dantzig: %s, %d pivots\n", p->name, sim_lcp_status_name(st),
                    info.pivots);
      assert_int_equal(st, SIM_LCP_SOLVED);
      check_solution(p, z);
      dantzig++;
    }
  }
  print_message("%d problems: %d solved by Lemke, %d rays, %d block files, %d by Dantzig\n",
                nn, solved, rays, blocks, dantzig);
  assert_int_equal(blocks, 3);
  free(p);
  free(twin);
  sim_lemke_destroy(&lk);
  sim_dantzig_destroy(&dz);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_siconos),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
