// Dantzig's principal pivoting method for LCPs with a symmetric positive semidefinite M
// (frictionless contact forces, Baraff 1994 section 4): w = M z + q (sim_lcp.h; M dense,
// column-major; only symmetric M is meaningful: rows are read as columns). Indices are
// taken in order 0..n-1 (Baraff 4.1); each is clamped (w = 0, z >= 0) or unclamped
// (z = 0, w >= 0), and one with w_d < 0 is driven to w_d = 0 while the indices already
// processed keep their conditions; indices not yet reached are ignored meanwhile.
//
// The Cholesky factor of M_CC + reg I over the clamped set C is updated when one index
// joins (one row, O(n^2)) or leaves (Givens rotations, O(n^2)); reg is a small diagonal
// regularisation (reg_rel times the largest diagonal entry) so that redundant contacts do
// not break the factorisation, and an index whose Schur complement on C is explained by
// the regularisation alone (dep_tol) counts as redundant: it neither joins C nor blocks.
// Zero-length steps are taken explicitly (counted in info.zero_steps); a blocker that ties
// with the driven index leaves the choice to it; a pivot cap ends every solve. The z of
// the pivoting is verified (sim_lcp_verify) against the original M and q; if it fails,
// z is recomputed from the clamped set with iterative refinement against the
// unregularised M_CC and verified again, and only a verified z is reported SOLVED.
//
// Warm start: pass the previous step's clamped set; it is factorised (redundant indices
// dropped), the indices whose force would be negative are dropped one at a time (most
// negative first), and the remaining indices are then processed in order.
//
// Cost: about 1.2 to 1.7 dense Cholesky solves of the same n for random SPD problems
// (bench_lcp); below ODE's dxSolveLCP, time ratio about 0.85 at n = 10 and 0.55 at
// n = 300 (bench_lcp_ode). Per pivot: one triangular solve (the driven index's forward
// solve is updated with C in O(nc)) and the rates of NC.
//
// A workspace (sim_dantzig) is created once for a capacity n_max (memory: two n_max^2
// arrays of doubles, 1.4 MB at n_max = 300); solving allocates nothing. One workspace
// serves one thread at a time.
#ifndef SIM_DANTZIG_H
#define SIM_DANTZIG_H

#include <stddef.h>

#include "sim_lcp.h"

typedef struct sim_dantzig sim_dantzig;

// Tolerances and limits; sim_dantzig_opts_default gives the values in brackets.
typedef struct sim_dantzig_opts {
  int max_pivots;     // pivot cap; <= 0 means 20 n + 100  [0]
  double reg_rel;     // diagonal regularisation, relative to max_i M_ii  [1e-13]
  double piv_tol;     // relative threshold below which a rate of change counts as zero [1e-11]
  double dep_tol;     // an index whose Schur complement on C is below dep_tol * M_ii is
                      // redundant (dependent on C) and never joins C  [1e-8]
  double drive_tol;   // w_d < -drive_tol * ||q||_inf (1 if q = 0) is driven  [1e-11]
  double verify_tol;  // tolerance handed to sim_lcp_verify  [SIM_LCP_VERIFY_TOL]
} sim_dantzig_opts;

// The default options. Thread-safe.
sim_dantzig_opts sim_dantzig_opts_default(void);

// A workspace for problems of size up to n_max (1..SIM_LCP_N_MAX); opts nullable
// (defaults). Returns NULL on bad arguments or out of memory, with a message in err
// (nullable, err_sz bytes).
sim_dantzig *sim_dantzig_new(int n_max, const sim_dantzig_opts *opts, char *err,
                             size_t err_sz);

// Frees the workspace and sets *dz = NULL; NULL-safe.
void sim_dantzig_destroy(sim_dantzig **dz);

// Capacity the workspace was created with.
int sim_dantzig_n_max(const sim_dantzig *dz);

// Solves the LCP for symmetric PSD M (n x n, column-major) and q (n), both borrowed for
// the call; z and w (n, caller owns) receive the result, w nullable. clamped_in (n flags,
// nullable): warm-start clamped set; clamped_out (n flags, nullable, may equal
// clamped_in): the final clamped set. info nullable. Allocation-free. SOLVED only after
// verification; RAY means an index could not be driven (the LCP is infeasible); EINVAL for
// n outside 0..n_max, NULL arrays, non-finite data or a negative diagonal entry.
sim_lcp_status sim_dantzig_solve(sim_dantzig *dz, int n, const double *M, const double *q,
                                 double *z, double *w, const unsigned char *clamped_in,
                                 unsigned char *clamped_out, sim_lcp_info *info);

#endif
