// A session's cumulative step statistics: the one record every stepper (CVODE, rigid LCP)
// adds to, and sim_data_stats reports.
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stdint.h>

// Cumulative counters since sim_data_new (a reinitialisation does not reset them).
typedef struct sim_stats {
  uint64_t steps;         // CVODE internal steps
  uint64_t rhs_evals;     // right-hand-side evaluations
  uint64_t jac_evals;     // Jacobian evaluations
  uint64_t newton_fails;  // nonlinear solver convergence failures
  uint64_t error_fails;   // local error test failures
  uint64_t physics_ns;    // wall time inside sim_step [ns]
  uint64_t geometry_ns;   // part of physics_ns in proximity queries [ns]
  uint64_t penetrations;  // evaluations that found a pair past the standoff
  uint32_t contacts;      // pairs carrying force at the last evaluated state (after
                          // sim_eval_contacts: the current state)
  double max_depth;       // largest deformation there [m]
  double last_step;       // CVODE's last internal step size [s]
  uint64_t lcp_pivots;    // rigid mode: LCP pivots
  uint64_t lcp_failures;  // rigid mode: LCPs without a verified solution
  int lcp_solver;         // rigid mode: last solver used (sim_rigid.h SIM_LCP_SOLVER_*)
  uint64_t friction_restarts;  // integrator restarts at a stuck -> sliding switch
  uint32_t anchors;       // friction anchors alive after the last step
} sim_stats;

#endif
