// ccsim's Dantzig against ODE's Dantzig LCP solver on the problems of bench_lcp (same
// generator and seeds): random SPD LCPs n = 10, 50, 100, 300 (time ratio ccsim / ODE,
// medians) and a degenerate set at n = 10 (wrong answers of each solver).
//
// How ODE's solver is reached: Debian's libode-dev (0.16) exports no public LCP API
// (no dSolveLCP), but libode.so exports the C++ symbol
//   dxSolveLCP(dxWorldProcessMemArena*, unsigned, double*, double*, double*, unsigned,
//              double*, int*)
// (found with `nm -DC libode.so | grep -i lcp`), i.e. ODE 0.16's
//   dxSolveLCP(memarena, n, A, pairsbx, outer_w, nub, pairslh, findex)
// with A row-major, row stride dPAD(n), b/x interleaved in pairsbx (b at 2i, x at 2i+1),
// lo/hi interleaved in pairslh; it solves A x = b + w with lo <= x <= hi. The arena comes
// from the exported dxAllocateTemporaryWorldProcessMemArena(dxEstimateSolveLCPMemoryReq);
// its allocation cursor is reset before each solve as ODE's inline ResetState() does
// (field layout read off ODE 0.16 and checked at run time below). ODE reports its
// "LCP internal error, s <= 0" through the message handler, which we count.
// Usage: bench_lcp_ode [scale]
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <ode/common.h>
#include <ode/error.h>

extern "C" {
#include "sim_dantzig.h"
}

class dxWorldProcessMemArena;
struct dxWorldProcessMemoryManager;
struct dxWorldProcessMemoryReserveInfo;

// ODE 0.16 internals exported by libode.so (C++ linkage)
void dxSolveLCP(dxWorldProcessMemArena *memarena, unsigned n, dReal *A, dReal *pairsbx,
                dReal *outer_w, unsigned nub, dReal *pairslh, int *findex);
size_t dxEstimateSolveLCPMemoryReq(unsigned n, bool outer_w_avail);
dxWorldProcessMemArena *dxAllocateTemporaryWorldProcessMemArena(
    size_t memreq, const dxWorldProcessMemoryManager *memmgr,
    const dxWorldProcessMemoryReserveInfo *reserveinfo);
void dxFreeTemporaryWorldProcessMemArena(dxWorldProcessMemArena *arena);

// the arena's leading fields in ODE 0.16 (util.h): allocation cursor, block begin, block end
struct ode_arena_head {
  void *cursor;
  void *begin;
  void *end;
};

static void arena_reset(dxWorldProcessMemArena *a) {
  ode_arena_head *h = reinterpret_cast<ode_arena_head *>(a);
  h->cursor = h->begin;
}

static int g_ode_errors = 0;
static void ode_message(int, const char *, va_list) { g_ode_errors++; }

// the problems of the LCP tests and of the other LCP benchmark, seed for seed
#include "ccsim_test_lcp.h"

static double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ODE's solver on w = M z + q: A = M (row-major, padded), b = -q, lo = 0, hi = inf
struct ode_lcp {
  dxWorldProcessMemArena *arena;
  int nmax, nskip;
  double *A, *bx, *lh;
};

static void ode_solve(ode_lcp *o, int n, const double *M, const double *q, double *z) {
  int nskip = dPAD(n);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) o->A[i * nskip + j] = M[i + j * n];
    o->bx[2 * i] = -q[i];
    o->bx[2 * i + 1] = 0.0;
    o->lh[2 * i] = 0.0;
    o->lh[2 * i + 1] = dInfinity;
  }
  arena_reset(o->arena);
  dxSolveLCP(o->arena, (unsigned)n, o->A, o->bx, NULL, 0, o->lh, NULL);
  for (int i = 0; i < n; i++) z[i] = o->bx[2 * i + 1];
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int m) {
  qsort(v, (size_t)m, sizeof *v, cmp_double);
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  if (scale < 1) scale = 1;
  if (scale > 5) scale = 5;  // the per-size arrays hold 1000 problems
  const int nmax = 300;
  dSetMessageHandler(ode_message);
  size_t memreq = dxEstimateSolveLCPMemoryReq(nmax, false);
  ode_lcp o;
  o.arena = dxAllocateTemporaryWorldProcessMemArena(memreq, NULL, NULL);
  o.nmax = nmax;
  o.nskip = dPAD(nmax);
  o.A = (double *)malloc(sizeof(double) * nmax * o.nskip);
  o.bx = (double *)malloc(sizeof(double) * 2 * nmax);
  o.lh = (double *)malloc(sizeof(double) * 2 * nmax);
  if (!o.arena || !o.A || !o.bx || !o.lh) {
    fprintf(stderr, "bench_lcp_ode: out of memory\n");
    return 1;
  }
  {
    // the layout assumption: a fresh arena has a null cursor and a block of >= memreq
    ode_arena_head *h = reinterpret_cast<ode_arena_head *>(o.arena);
    size_t block = (size_t)((char *)h->end - (char *)h->begin);
    if (h->cursor != NULL || h->end <= h->begin || block < memreq) {
      fprintf(stderr, "bench_lcp_ode: unexpected ODE arena layout; not ODE 0.16?\n");
      return 1;
    }
  }
  double *G = (double *)malloc(sizeof(double) * nmax * nmax);
  double *M = (double *)malloc(sizeof(double) * nmax * nmax);
  double *q = (double *)malloc(sizeof(double) * nmax);
  double *z = (double *)malloc(sizeof(double) * nmax);
  double *td = (double *)malloc(sizeof(double) * 1000);
  double *to = (double *)malloc(sizeof(double) * 1000);
  double *rt = (double *)malloc(sizeof(double) * 1000);
  sim_dantzig *dz = sim_dantzig_new(nmax, NULL, NULL, 0);
  if (!G || !M || !q || !z || !td || !to || !rt || !dz) return 1;

  printf("random SPD LCPs as in bench_lcp; medians over problems (best of several repetitions "
         "each); times in microseconds\n");
  printf("%5s %6s %12s %12s %14s %10s %10s\n", "n", "probs", "ccsim_us", "ode_us",
         "ccsim/ode", "wrong_cc", "wrong_ode");
  const int sizes[] = {10, 50, 100, 300};
  for (int s = 0; s < 4; s++) {
    int n = sizes[s];
    int probs = scale * (n <= 50 ? 200 : n <= 100 ? 60 : 12);
    int reps = n <= 10 ? 50 : n <= 50 ? 10 : 3;
    int wrong_cc = 0, wrong_ode = 0;
    rng r = {1000u + (unsigned)n};
    for (int p = 0; p < probs; p++) {
      make_spd(&r, n, G, M, q);
      double best_d = INFINITY, best_o = INFINITY;
      sim_lcp_status st = SIM_LCP_SOLVED;
      for (int k = 0; k < reps; k++) {
        double t0 = now();
        st = sim_dantzig_solve(dz, n, M, q, z, NULL, NULL, NULL, NULL);
        best_d = std::fmin(best_d, now() - t0);
      }
      if (st != SIM_LCP_SOLVED || !is_solution(n, M, q, z)) wrong_cc++;
      for (int k = 0; k < reps; k++) {
        // the copy into ODE's padded row-major layout is part of its call cost here, as
        // ODE destroys A while solving
        double t0 = now();
        ode_solve(&o, n, M, q, z);
        best_o = std::fmin(best_o, now() - t0);
      }
      if (!is_solution(n, M, q, z)) wrong_ode++;
      td[p] = best_d;
      to[p] = best_o;
      rt[p] = best_d / best_o;
    }
    double mr = median(rt, probs);
    printf("%5d %6d %12.2f %12.2f %14.2f %10d %10d\n", n, probs, 1e6 * median(td, probs),
           1e6 * median(to, probs), mr, wrong_cc, wrong_ode);
  }

  const int n = 10, count = 1000 * scale;
  int cc_wrong = 0, cc_status = 0, ode_wrong = 0;
  g_ode_errors = 0;
  rng r = {77};
  for (int p = 0; p < count; p++) {
    make_degenerate(&r, n, p % 4, G, M, q);
    sim_lcp_status st = sim_dantzig_solve(dz, n, M, q, z, NULL, NULL, NULL, NULL);
    if (st == SIM_LCP_SOLVED && !is_solution(n, M, q, z)) cc_wrong++;
    if (st != SIM_LCP_SOLVED) cc_status++;
    ode_solve(&o, n, M, q, z);
    if (!is_solution(n, M, q, z)) ode_wrong++;
  }
  printf("\ndegenerate set, n = %d, %d feasible problems (as in bench_lcp):\n", n, count);
  printf("  ccsim dantzig: %d wrong answers, %d explicit failure statuses\n", cc_wrong,
         cc_status);
  printf("  ODE dxSolveLCP: %d wrong answers (%.1f %%), %d ODE error messages\n", ode_wrong,
         100.0 * ode_wrong / count, g_ode_errors);

  sim_dantzig_destroy(&dz);
  dxFreeTemporaryWorldProcessMemArena(o.arena);
  free(o.A);
  free(o.bx);
  free(o.lh);
  free(G);
  free(M);
  free(q);
  free(z);
  free(td);
  free(to);
  free(rt);
  return 0;
}
