// Lemke's complementary pivot algorithm for general LCPs w = M z + q (sim_lcp.h; M dense,
// column-major). Covering vector e = (1, ..., 1); the artificial variable z0 leaves the
// basis whenever it ties in the ratio test; remaining ties are broken lexicographically
// on the rows of the basis inverse (which rules out cycling), with ties detected by a
// relative tolerance. On termination the solution is verified with sim_lcp_verify
// against the original data before SOLVED is reported; if the tableau's values fail, the
// final basis is refactorised from the original data (fresh LU, O(n^3)) and verified
// again. Standard form and use for friction: Tan et al. eq. 13-14.
//
// A workspace (sim_lemke) is created once for a capacity n_max (memory: two n_max^2
// arrays of doubles); solving allocates nothing. Cost per pivot O(n^2); pivots are
// typically about the number of positive z. One workspace serves one thread at a time.
#ifndef SIM_LEMKE_H
#define SIM_LEMKE_H

#include <stddef.h>

#include "sim_lcp.h"

typedef struct sim_lemke sim_lemke;

// Tolerances and limits; sim_lemke_opts_default gives the values in brackets.
typedef struct sim_lemke_opts {
  int max_pivots;     // pivot cap; <= 0 means 50 n + 100  [0]
  double piv_tol;     // entering-column entries <= piv_tol * ||column||_inf are not pivots [1e-11]
  double tie_tol;     // ratios within tie_tol (relative) of the minimum tie [1e-9]
  double verify_tol;  // tolerance handed to sim_lcp_verify  [SIM_LCP_VERIFY_TOL]
} sim_lemke_opts;

// The default options. Thread-safe.
sim_lemke_opts sim_lemke_opts_default(void);

// A workspace for problems of size up to n_max (1..SIM_LCP_N_MAX); opts nullable
// (defaults). Returns NULL on bad arguments or out of memory, with a message in err
// (nullable, err_sz bytes).
sim_lemke *sim_lemke_new(int n_max, const sim_lemke_opts *opts, char *err, size_t err_sz);

// Frees the workspace and sets *lk = NULL; NULL-safe.
void sim_lemke_destroy(sim_lemke **lk);

// Capacity the workspace was created with.
int sim_lemke_n_max(const sim_lemke *lk);

// Solves w = M z + q, z >= 0, w >= 0, z^T w = 0 for n <= n_max. M (n x n, column-major)
// and q (n) are borrowed for the call; z and w (n each, caller owns) receive the result;
// w nullable. info nullable. Allocation-free. SOLVED only after verification; otherwise
// z and w hold the last iterate (not a solution). n == 0 is trivially SOLVED.
sim_lcp_status sim_lemke_solve(sim_lemke *lk, int n, const double *M, const double *q,
                               double *z, double *w, sim_lcp_info *info);

#endif
