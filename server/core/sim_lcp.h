// Linear complementarity problems (LCP), the types every ccsim LCP solver shares.
//
// Problem: given M (n x n) and q (n), find z with
//   w = M z + q,   z >= 0,   w >= 0,   z^T w = 0.
//
// Storage: M is dense and COLUMN-MAJOR, M[i + j*n] is row i, column j, with the leading
// dimension equal to n (the layout of LAPACK and of the Siconos test files).
//
// Solvers (sim_lemke.h for general M, sim_dantzig.h for symmetric positive semidefinite M)
// never report SIM_LCP_SOLVED unless sim_lcp_verify accepted their z against the
// caller's original M and q. Every other status means "no solution returned": z and w
// then hold the solver's last iterate for diagnostics only.
#ifndef SIM_LCP_H
#define SIM_LCP_H

#include <stddef.h>

#include "ccsim_limits.h"
#include "ccsim_status.h"


// Default tolerance of the verification: see sim_lcp_verify.
#define SIM_LCP_VERIFY_TOL 1e-10

// Outcome of a solve. One list expands to the enum and to the strings.
#define SIM_LCP_STATUS_LIST(X)                                                                \
  X(SIM_LCP_SOLVED, 0, "solved; complementarity verified against the original M and q")     \
  X(SIM_LCP_RAY, 1, "ray termination: no solution found (infeasible or secondary ray)")     \
  X(SIM_LCP_PIVOT_LIMIT, 2, "pivot limit reached without a solution")                       \
  X(SIM_LCP_NUMERICAL, 3, "numerical failure: singular pivot or the residual check failed") \
  X(SIM_LCP_EINVAL, 4, "invalid input: n above the workspace capacity or non-finite data")

typedef enum sim_lcp_status {
#define SIM_LCP_STATUS_ENUM(name, value, text) name = value,
  SIM_LCP_STATUS_LIST(SIM_LCP_STATUS_ENUM)
#undef SIM_LCP_STATUS_ENUM
} sim_lcp_status;

// Result of checking a candidate z against the original data (sim_lcp_verify).
typedef struct sim_lcp_check {
  double min_w;      // min_i w_i (w = M z + q recomputed from the inputs); +inf if n == 0
  double min_z;      // min_i z_i; +inf if n == 0
  double comp;       // sum_i |w_i z_i|, the complementarity gap
  double nat_res;    // ||min(z, w)||_inf, the natural residual
  double siconos;    // ||z - max(0, z - w)||_2 / ||q||_2 (Siconos' measure; 0 if q == 0)
  double scale_w;    // max(1, ||q||_inf): the scale w's tolerance is relative to
  double scale_z;    // max(1, ||z||_inf): the scale z's tolerance is relative to
  int ok;            // 1 if the three conditions of sim_lcp_verify hold, else 0
} sim_lcp_check;

// What a solve did; filled by every solver, also on failure.
typedef struct sim_lcp_info {
  int pivots;           // pivots (basis or index-set changes) performed
  int zero_steps;       // pivots whose step length was zero (degenerate)
  int n_active;         // z-variables basic / clamped at the end
  int warm_dropped;     // Dantzig warm start: indices of the given set that were dropped
  sim_lcp_check check;  // verification of the returned z (valid when pivots ran)
} sim_lcp_info;

// Static text of a status; never NULL, never to be freed. Thread-safe.
const char *sim_lcp_status_str(int status);

// Symbolic name of a status ("SIM_LCP_RAY"); never NULL, never to be freed. Thread-safe.
const char *sim_lcp_status_name(int status);

// Maps a solver status to the ccsim code: SOLVED -> CCSIM_OK, EINVAL -> CCSIM_EINVAL,
// PIVOT_LIMIT -> CCSIM_ELIMIT, RAY and NUMERICAL -> CCSIM_ESOLVER.
ccsim_status sim_lcp_status_ccsim(sim_lcp_status status);

// Checks z against the original data: computes w = M z + q into w (n, caller owns;
// nullable: then only the check is returned) and accepts when
//   min_z >= -tol * scale_z,  min_w >= -tol * scale_w,  comp <= tol * scale_w * scale_z.
// The scales have a floor of 1, so for data much smaller than 1 the test is absolute:
// callers should scale their problems to O(1) magnitudes (SI units suit the contact
// LCPs of bodies of kilograms and metres). M column-major n x n; out nullable.
// Allocation-free; returns out->ok (0 also for non-finite values). Thread-safe.
int sim_lcp_verify(int n, const double *M, const double *q, const double *z, double *w,
                   double tol, sim_lcp_check *out);

// 1 if all n*n entries of M and all n of q are finite, else 0.
int sim_lcp_finite(int n, const double *M, const double *q);

#endif
