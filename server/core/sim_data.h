// A session's mutable simulation state: time, body states, held inputs, the CVODE
// integrator and statistics. One sim_data per session, used by one thread at a time;
// it borrows its sim_model, which must outlive it.
#ifndef SIM_DATA_H
#define SIM_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "ccsim_status.h"
#include "sim_contact.h"
#include "sim_model.h"

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

typedef struct sim_data sim_data;

// Create a session's data at the model's initial state, t = 0, CVODE primed so that
// stepping allocates nothing. Returns NULL with a message in err on failure.
sim_data *sim_data_new(const sim_model *m, char *err, size_t err_sz);

// Free d and set *d to NULL. NULL-safe.
void sim_data_destroy(sim_data **d);

// The last error message of d (borrowed; valid until the next call on d). Never NULL.
const char *sim_data_errmsg(const sim_data *d);

// Simulated time [s].
double sim_data_time(const sim_data *d);

// Statistics (borrowed; valid while d lives).
const sim_stats *sim_data_stats(const sim_data *d);

// Hold a world-frame force [N] at the centre of mass and torque [N m] on body b until
// changed. CCSIM_EINVAL for a bad index, a non-free body or non-finite values.
ccsim_status sim_set_input(const sim_model *m, sim_data *d, int b, const double force[3],
                           const double torque[3]);

// Zero every held input.
void sim_clear_inputs(const sim_model *m, sim_data *d);

// Advance d to t_out (> current time) exactly, keeping CVODE's history. Allocation-free.
// On failure the state stays at the last accepted step, the time reached is
// sim_data_time(d), and sim_data_errmsg(d) explains (CCSIM_ESOLVER).
ccsim_status sim_step(const sim_model *m, sim_data *d, double t_out);

// fn(arg) is called on the stepping thread at every contact evaluation (each right-hand
// side, each report of contacts), Jacobian, stretch of integration and rigid time step, so
// a caller notices a step that runs long while it runs (fn must not touch d). fn returns 0
// to go on; anything else stops the step: sim_step (or sim_eval_contacts) then fails with
// CCSIM_ELIMIT, the state kept at the last accepted step as for any failure. NULL: none.
// arg stays the caller's.
void sim_set_progress(sim_data *d, int (*fn)(void *arg), void *arg);

// Call the progress function set by sim_set_progress, if any (sim_rigid's loop); nonzero
// once it asked the current step to stop.
int sim_data_progress(sim_data *d);

// Pose and twist of body b's reference frame: position [m], unit quaternion (w, x, y, z),
// velocity of the frame origin [m/s] and angular velocity [rad/s], all in the world frame.
// Any output may be NULL.
void sim_get_body(const sim_model *m, const sim_data *d, int b, double pos[3], double quat[4],
                  double vel[3], double omega[3]);

// Set body b's reference-frame pose and twist (world frame, as sim_get_body returns them).
// Free bodies: the integrator restarts from the new state at the next step. Fixed bodies
// refuse (CCSIM_EINVAL). Kinematic bodies take pose and twist as given.
ccsim_status sim_set_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                          const double quat[4], const double vel[3], const double omega[3]);

// What sim_set_body would answer, without changing anything but the message: a caller
// setting several bodies checks them all first, so a refusal leaves the session as it was
// (an undo would restart the integrator and change the trajectory).
ccsim_status sim_check_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                            const double quat[4], const double vel[3], const double omega[3]);

// Drive kinematic body b over the coming dt [s]: with pos and quat (nullable both) it
// moves at constant velocity from its current pose to that pose, reached exactly at
// time + dt (over as many sim_step calls as that takes); otherwise it moves with the
// twist vel [m/s], omega [rad/s] (world) until told otherwise.
// CCSIM_EINVAL for a body that is not kinematic or non-finite values.
ccsim_status sim_set_kinematic(const sim_model *m, sim_data *d, int b, const double *pos,
                               const double *quat, const double vel[3], const double omega[3],
                               double dt);

// Evaluate the contacts at the current state (after a step, for reports). Fills the
// contact statistics. CCSIM_ESOLVER when bodies touch past the standoff here.
ccsim_status sim_eval_contacts(const sim_model *m, sim_data *d);

// What sim_eval_contacts_at is given of a body (flags in its given array).
enum { SIM_GIVEN_POSE = 1, SIM_GIVEN_TWIST = 2 };

// Compliant mode: the contacts with the bodies flagged SIM_GIVEN_POSE in given (nbody)
// placed at pos (nbody x 3) and quat (nbody x 4) — reference-frame poses, world — and every
// other body where it is, into *contacts (borrowed; valid until the next call) and *n. A
// body flagged SIM_GIVEN_TWIST moves with vel (nbody x 3, its frame origin's velocity) and
// omega (nbody x 3), world frame, as sim_get_body reports them; the others with their
// current twists (vel and omega may be NULL when no body has the flag). Nothing of the
// session changes: the query runs on a collider of its own (made at the first call) with a
// copy of the anchors, so the state, integrator, caches and later steps are what they
// would have been without it.
// CCSIM_ENOTIMPL in rigid mode; CCSIM_ESOLVER when such bodies would touch; CCSIM_ENOMEM.
ccsim_status sim_eval_contacts_at(const sim_model *m, sim_data *d, const int *given,
                                  const double *pos, const double *quat, const double *vel,
                                  const double *omega, const sim_contact **contacts, int *n);

// The contacts of the last sim_eval_contacts, if it was at the current state (else none).
// Borrowed; valid until the next call on d. Count in *n.
const sim_contact *sim_data_contacts(const sim_data *d, int *n);

// Total contact force [N] (normal plus friction) and torque about body b's reference
// origin [N m] (world) from those contacts, and how many carry force.
void sim_data_body_contact(const sim_model *m, const sim_data *d, int b, double force[3],
                           double torque[3], int *count);

// Set the simulated time [s] (finite, >= 0); the integrator restarts there.
ccsim_status sim_set_time(const sim_model *m, sim_data *d, double t);

// Back to the model's initial state at t = 0, inputs cleared.
void sim_reset(const sim_model *m, sim_data *d);

// Doubles in a full snapshot of d's state now: time, every body's state, held inputs and
// the friction anchors (their number varies, so ask before every sim_snapshot_get).
size_t sim_snapshot_size(const sim_model *m, const sim_data *d);

// Copy d's full state into buf (sim_snapshot_size(m, d) doubles, caller owns).
void sim_snapshot_get(const sim_model *m, const sim_data *d, double *buf);

// Restore a snapshot (n doubles) taken from a session of the same model; the integrator
// restarts from it at the next step, so two sessions restored from one snapshot and
// stepped alike agree to the last bit. CCSIM_EINVAL (and nothing changed) on a wrong
// length, non-finite values or malformed anchors.
ccsim_status sim_snapshot_set(const sim_model *m, sim_data *d, const double *buf, size_t n);

// What sim_snapshot_set says of buf's length, numbers and time, without anchors or d:
// CCSIM_OK, or CCSIM_EINVAL with the reason in err. A checkpoint or save is checked so
// before it is handed out or written: one a restore would refuse is not one.
ccsim_status sim_snapshot_check(const sim_model *m, const double *buf, size_t n, char *err,
                                size_t err_sz);

// Restart the integrator at the current state (drop CVODE's history). A checkpoint is
// such a restart point for the live session too.
void sim_restart(const sim_model *m, sim_data *d);

// Length of the integrated state vector: SIM_NQ per free body (p_com, q, v_com, w_body).
size_t sim_state_size(const sim_model *m);

// Copy the integrated state into y (sim_state_size doubles).
void sim_get_state(const sim_model *m, const sim_data *d, double *y);

// For tests and diagnostics: the right-hand side at state y and the current time into
// ydot, and when jac is not NULL the integrator's Jacobian (column-major, n x n with n =
// sim_state_size). Allocates; never call it on the step path.
ccsim_status sim_eval_derivatives(const sim_model *m, sim_data *d, const double *y,
                                  double *ydot, double *jac);

// The integrated state (borrowed; sim_state_size doubles: per free body p_com, q, v_com,
// w_body). For steppers of the core (sim_rigid): whoever writes it calls sim_restart.
double *sim_data_state(sim_data *d);

// The contact collider of d (borrowed; NULL when the model has fewer than two bodies
// with geometry), and every body's placement and motion at the current state and time t
// (kinematic bodies move with their twist) into k (pointers into d's scratch, valid
// until the next call on d).
sim_collider *sim_data_collider(sim_data *d);
void sim_data_kinematics_at(const sim_model *m, sim_data *d, double t, sim_kinematics *k);

// Mutable statistics, for the core's steppers (borrowed).
sim_stats *sim_data_stats_mut(sim_data *d);

// Total mechanical energy [J]: kinetic of free bodies plus gravitational potential
// (-m g . p_com). For validation and diagnostics.
double sim_energy(const sim_model *m, const sim_data *d);

#endif
