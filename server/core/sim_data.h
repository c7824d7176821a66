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
#include "sim_stats.h"


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

// Advance d to t_out (> current time) exactly, keeping CVODE's history, with the stepper of
// the model's mode (compliant: CVODE; rigid: LCP time steps). Allocation-free. Refuses what
// sim_step_check refuses (CCSIM_EINVAL, nothing changed). On failure the state stays at the
// last accepted step, the time reached is sim_data_time(d), and sim_data_errmsg(d) explains
// (CCSIM_ESOLVER; CCSIM_ELIMIT when stopped or past a capacity).
ccsim_status sim_step(const sim_model *m, sim_data *d, double t_out);

// Whether a step of d to t_out [s] can be taken: CCSIM_OK, or CCSIM_EINVAL with the reason
// in err (nullable) when t_out is not finite, not after the current time, or dt = t_out -
// time is below the shortest step the steppers take (SIM_STEP_DT_MIN, relative to max(1 s,
// |time|): below it time cannot advance by dt) or, in rigid mode, outside the model's
// rigid_dt range (sim_model_rigid_dt_check). Changes nothing; thread-safe on a const d.
ccsim_status sim_step_check(const sim_model *m, const sim_data *d, double t_out, char *err,
                            size_t err_sz);

// fn(arg) is called on the stepping thread at every contact evaluation (each right-hand
// side, each report of contacts), Jacobian, stretch of integration and rigid time step, so
// a caller notices a step that runs long while it runs (fn must not touch d). fn returns 0
// to go on; anything else stops the step: sim_step (or sim_eval_contacts) then fails with
// CCSIM_ELIMIT, the state kept at the last accepted step as for any failure. NULL: none.
// arg stays the caller's.
void sim_set_progress(sim_data *d, int (*fn)(void *arg), void *arg);

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
// CCSIM_ENOTIMPL in rigid mode; CCSIM_ESOLVER when such bodies would touch; CCSIM_ENOMEM
// (its collider, at the first call); CCSIM_ELIMIT past the collider's capacity.
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

// Mean contact force [N] and torque about body b's reference origin [N m] (world) over the
// last sim_step: the contact impulse from its start to the time it reached, divided by that
// time (compliant mode: the wrench integrated over CVODE's internal steps; rigid mode: the
// LCP steps' impulses). Unlike sim_data_body_contact it sees impacts shorter than the
// step. Zero before the first step. Optional *dt: the time it covers [s].
void sim_data_body_mean_contact(const sim_model *m, const sim_data *d, int b, double force[3],
                                double torque[3], double *dt);

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

// What of d a rigid step (sim_rigid_step, sim_rigid_contact_forces) reads and writes:
// d's state, statistics, collider, body placement, progress function and the current
// step's contact impulses (sim_data_body_mean_contact) (borrowed; valid
// while d lives). For callers stepping d with a rigid workspace of their own: whoever
// writes d's state so then calls sim_restart or sim_set_time.
struct sim_rigid_io;
const struct sim_rigid_io *sim_data_rigid_io(sim_data *d);

// Total mechanical energy [J]: kinetic of free bodies plus gravitational potential
// (-m g . p_com). For validation and diagnostics.
double sim_energy(const sim_model *m, const sim_data *d);

#endif
