// Rigid mode: velocity-level LCP time stepping (Tan, Siu & Liu, eq. 12-15; Stewart-
// Trinkle) over the same witness pairs as the compliant mode, solved by our own Dantzig
// (frictionless) and Lemke (frictional) codes, with gap stabilisation after Hotz et al.
// One sim_rigid per session (sim_data owns it).
//
// Per step of length h (m->rigid_dt; shorter where conservative advancement asks):
//   contacts   every witness pair within the pair's standoff d_s at the step's start;
//   LCP        Tan et al. eq. 14 with z = (f_n, f_d, lambda) in newtons, d friction
//              directions per frictional contact (m->friction_dirs), E and mu scaled by h,
//              A(i,i) *= 1 + SIM_RIGID_EPS (their section 5);
//   gap term   the normal rows ask N^T v >= -(dist - d_s/2) / h (Anitescu-Potra, Hotz et
//              al.): bodies come to rest at half the standoff, where they neither sink
//              nor drift;
//   friction   the first pyramid direction follows the contact's tangential relative
//              velocity before contact impulses, so sliding along a line (and the onset
//              of sliding) sees the exact Coulomb bound; across it the pyramid's bound
//              is between cos(pi/d) and 1 times mu f_n (0.707 for d = 4);
//   motion     semi-implicit Euler: velocities with gravity, held inputs, gyroscopic
//              terms and the contact impulses, then positions with the new velocities,
//              quaternions renormalised.
// Frictional body pairs with more than SIM_RIGID_PAIR_MAX contacts keep the deepest of each
// cell of a 3 x 3 x 3 grid over their patch (at most 27): the contact wrenches of one pair
// of rigid bodies span six dimensions, and hundreds of redundant rows (a torus on a cone)
// make the frictional LCP slow and numerically hopeless for Lemke. Frictionless pairs keep
// all their contacts.
// Frictionless steps (mu = 0 on every contact) use Dantzig warm-started from the previous
// step's clamped set; others Lemke on the equilibrated LCP (unit diagonal). A step whose
// LCP has no verified solution is retried with 1000 times the regularisation; a frictional
// one that fails again goes without friction for that step (Dantzig); each failed solve
// counts in stats.lcp_failures. When nothing is verified the step fails (CCSIM_ESOLVER,
// state at the last completed step). Stepping allocates nothing: the contact arrays hold
// all the collider can report (sim_contact_capacity), and the LCP's room is what the
// model's pairs can ask for, up to SIM_RIGID_ROWS_FIRST rows, made at sim_rigid_new; an
// LCP step that needs more rows stops (CCSIM_ELIMIT, naming both numbers), the room grows
// to it (sim_rigid_reserve, up to SIM_RIGID_ROWS_MAX) and sim_step goes on from there: a
// session grows its room a few times in its life, never inside an LCP step.
#ifndef SIM_RIGID_H
#define SIM_RIGID_H

#include <stddef.h>

#include "ccsim_status.h"
#include "sim_contact.h"
#include "sim_model.h"
#include "sim_motion.h"
#include "sim_progress.h"
#include "sim_stats.h"

enum { SIM_LCP_SOLVER_NONE = 0, SIM_LCP_SOLVER_DANTZIG = 1, SIM_LCP_SOLVER_LEMKE = 2 };

#define SIM_RIGID_EPS 1e-6         // relative diagonal regularisation (Tan et al. section 5)
#define SIM_RIGID_TARGET 0.5       // rest distance as a fraction of the pair's standoff
#define SIM_RIGID_PAIR_MAX 16      // frictional pairs with more contacts are reduced
// Verification tolerance of the contact LCPs (sim_lcp_verify, scales floored at 1): w in
// m/s for Dantzig's steps, in equilibrated units (m/s times about 1 / sqrt(h / m)) for
// Lemke's, m/s^2 for the instantaneous forces; z in N. A step's velocities may thus violate
// a constraint by 1e-7 m/s at most (0.1 nm per 1 ms step, which the gap term takes back).
// At 1e-9, Lemke's bases on the redundant contacts of a stack (blocks conditioned only by
// EPS) fail the check at times and the step needs the stronger regularisation.
#define SIM_RIGID_VERIFY_TOL 1e-7
// Instantaneous forces: a contact whose points slide past each other faster than this [m/s]
// has Coulomb's sliding friction; slower ones are solved as stuck (a rigid step leaves a
// stuck contact's points moving at the LCP's tolerance, orders of magnitude below)
#define SIM_RIGID_SLIDE 1e-5

typedef struct sim_rigid sim_rigid;

// What a rigid step reads and writes of a session, all borrowed for the call (a session
// hands out its own with sim_data_rigid_io).
typedef struct sim_rigid_io {
  double *y;               // integrated state, SIM_NQ per free body (NULL: none); read and
                           // written; whoever lends it restarts its integrator afterwards
  sim_stats *stats;        // counters the steps add to
  sim_collider *col;       // contact queries (NULL: fewer than two bodies with geometry)
  sim_motion *motion;      // placement of every body at a time, and its scratch
  sim_progress *progress;  // asked before every time step (NULL: never stops)
  double *impulse;         // (nbody x 6) each completed step adds its contact impulse [N s]
                           // and angular impulse about the reference origin [N m s], world
                           // (NULL: not kept)
} sim_rigid_io;

// Workspace for model m's rigid steps. Returns it (caller owns; sim_rigid_destroy) or NULL
// with a message.
sim_rigid *sim_rigid_new(const sim_model *m, char *err, size_t err_sz);

// Free and set *r to NULL. NULL-safe.
void sim_rigid_destroy(sim_rigid **r);

// Between steps: grow the LCP's room to what a step asked for past it (the step failed
// with CCSIM_ELIMIT), up to SIM_RIGID_ROWS_MAX rows. Allocates; CCSIM_ENOMEM keeps the room
// there was. CCSIM_OK when nothing was asked for.
ccsim_status sim_rigid_reserve(sim_rigid *r);

// Nonzero when the last step stopped for want of LCP room that sim_rigid_reserve can make
// (within SIM_RIGID_ROWS_MAX).
int sim_rigid_wants_room(const sim_rigid *r);

// Drop the warm start (Dantzig's previous clamped set), so that a session restarted from a
// snapshot and one restored from it step alike to the last bit. Call it wherever the
// integrator restarts (sim_restart, sim_snapshot_set, sim_set_body, sim_reset).
void sim_rigid_reset(sim_rigid *r);

// Held inputs the steps apply: world force [N] at the COM and torque [N m], nbody x 3 each
// (borrowed; must outlive r or be unbound with NULL). Unbound: no inputs.
void sim_rigid_bind_inputs(sim_rigid *r, const double *force, const double *torque);

// Advance io's state from time t0 to t_out in fixed steps of m->rigid_dt (the last one
// shortened to land on t_out). Writes io->y and io->stats; *t_reached gets the time of the
// last completed step (t_out on success; the caller records it). Non-free bodies move as
// io->motion places them.
// CCSIM_ESOLVER (LCP without a verified solution, or bodies touching past the standoff),
// CCSIM_ELIMIT (stopped by io->progress, or an LCP past the room reserved or past
// SIM_RIGID_ROWS_MAX rows); the message is in sim_rigid_errmsg. Allocates nothing.
ccsim_status sim_rigid_step(const sim_model *m, const sim_rigid_io *io, sim_rigid *r, double t0,
                            double t_out, double *t_reached);

// Instantaneous contact forces at io's state and time (Baraff 1994: acceleration-
// level LCP over the contacts at rest distance, |dist - d_s/2| <= d_s/100, with the same
// friction pyramid for contacts stuck or slower than SIM_RIGID_SLIDE and Coulomb's -mu f_n
// along the slip for faster ones; Dantzig without friction, Lemke with; where sliding
// friction leaves no solution (Painleve), every contact as if stuck). Nothing moves. The result
// replaces the report of sim_rigid_contacts; *n gets the contact count (nullable).
ccsim_status sim_rigid_contact_forces(const sim_model *m, const sim_rigid_io *io, sim_rigid *r,
                                      double t, int *n);

// The contacts of the last step (geometry at the step's start) or of the last
// sim_rigid_contact_forces, with force = the normal force [N] (impulse / h for steps) and
// dF_* zero and friction the friction force on body_b [N] (on body_a: its opposite),
// world frame. Borrowed until the next call on r.
const sim_contact *sim_rigid_contacts(const sim_rigid *r, int *n);

// For benchmarks and tests: the LCP (Tan et al. eq. 14 with the gap term) a step of h [s]
// would solve at io's state and time t, without solving it: *n rows, M (n x n,
// column-major) and q borrowed until the next call on r. Friction rows are present when a
// contact has mu > 0 (then Lemke solves it, equilibrated as returned here, else Dantzig).
// Not for the step path: the LCP's room grows here when the LCP needs more.
ccsim_status sim_rigid_step_lcp(const sim_model *m, const sim_rigid_io *io, sim_rigid *r, double t,
                                double h, int *n, const double **M, const double **q);

// Message of the last failure (borrowed). Never NULL.
const char *sim_rigid_errmsg(const sim_rigid *r);

#endif
