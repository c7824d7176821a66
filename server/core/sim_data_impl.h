// The inside of a session's data, for the core's own files only (the service and the
// tests see sim_data.h). The files that make up sim_data, each one concept:
//   sim_data.c        lifecycle (new, destroy, reset) and accessors
//   sim_step.c        the step entry, its validation and the stepper table
//   sim_integrator.c  the compliant stepper: CVODE, the right-hand side, conservative
//                     advancement, friction anchors' commits
//   sim_jacobian.c    the integrator's analytic Jacobian
//   sim_inputs.c      held inputs and kinematic bodies' targets
//   sim_bodies.c      body states: get, set, initial state, energy
//   sim_query.c       contact reports at the current state and at given poses
//   sim_snapshot.c    snapshots and restarts
// Calls go one way only (tests/arch checks it): sim_data -> sim_step -> sim_integrator ->
// sim_jacobian, sim_bodies, sim_inputs -> sim_motion; the steppers are reached through the
// table in sim_step.c.
#ifndef SIM_DATA_IMPL_H
#define SIM_DATA_IMPL_H

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include "sim_data.h"
#include "sim_motion.h"
#include "sim_progress.h"
#include "sim_rigid.h"

#define SIM_NB (SIM_NQ * SIM_NQ)  // entries of a body's own Jacobian block

// A stepper: how a session of one mode advances and reports its contacts (SUNDIALS' ops
// shape). Every function gets the model and the session; a stepper's own workspace hangs
// off the session (d->rigid).
typedef struct sim_stepper_ops {
  const char *name;
  // make the stepper's workspace: 0, or -1 with a message in err
  int (*init)(const sim_model *m, sim_data *d, char *err, size_t err_sz);
  void (*fini)(sim_data *d);  // free it (NULL-safe in what it frees)
  // advance d to t_out (> d->time); sets d->time to where it got and d->err on failure
  ccsim_status (*step)(const sim_model *m, sim_data *d, double t_out);
  // evaluate the contacts at d's state for a report (sim_eval_contacts)
  ccsim_status (*contacts)(const sim_model *m, sim_data *d);
  // the contacts of that evaluation or of the last step, if they are of the current state
  const sim_contact *(*report)(const sim_data *d, int *n);
  // forget what carries over from step to step (warm starts); NULL: nothing
  void (*restart)(sim_data *d);
  int query_at;  // 1: sim_eval_contacts_at is available
} sim_stepper_ops;

// The stepper of m's mode (static storage).
const sim_stepper_ops *sim_stepper_for(const sim_model *m);

struct sim_data {
  const sim_model *m;  // borrowed; outlives d
  const sim_stepper_ops *stepper;  // the mode's (static)
  sim_progress progress;  // sim_set_progress; stopped: this sim_step was asked to stop
  double time;         // [s]
  int nstate;          // SIM_NQ * nfree
  int need_reinit;     // state changed outside the integrator
  sim_motion kin;      // fixed and kinematic bodies' held pose and twist; evaluation scratch
  double *kin_target;  // (nbody x 7) pose a kinematic body reaches at the step's end
  int *kin_has_target; // (nbody) 1 when kin_target is set for the coming step
  double *kin_target_t;  // (nbody) time at which body b's kinematic target is reached [s]
  double *force_in;    // (nbody x 3) held world-frame force at the COM [N]
  double *torque_in;   // (nbody x 3) held world-frame torque [N m]
  double *input_used;  // (nbody x 6) force_in then torque_in as the last sim_step held them
  double *wrench;      // (nbody x 6) contact force and torque about the COM, world: scratch,
                       // filled by each contact evaluation before it is read
  sim_collider *col;   // contact queries; NULL when fewer than two bodies have geometry
  sim_collider *qcol;  // sim_eval_contacts_at's own, made at its first call: what it caches
                       // and finds must not reach the integration's collider
  sim_collider *mcol;  // compliant mode without free bodies: the mean wrench's evaluations
                       // (sim_integrator.c); own anchors and caches, unseen by reports
  double *impulse;     // (nbody x 6) contact impulse [N s] and angular impulse about the
                       // reference origin [N m s], world, over the current / last sim_step
  double impulse_dt;   // length of the time impulse covers [s] (0: no step yet)
  double *wprev;       // (nbody x 6) compliant mode: the contact wrench (torque about the
                       // reference origin) at the last accepted internal step's end, the
                       // next one's start for the mean (sim_integrator.c mean_add)
  double *wprev2;      // (nbody x 6) the same at the accepted internal step before
  double hprev;        // length of the last accepted internal step [s] (0: none to fit through)
  int w0_pending;      // rhs takes wprev from CVODE's first evaluation after a (re)start
  sim_rigid *rigid;    // rigid mode stepper's workspace; NULL in compliant mode
  sim_rigid_io rigid_io;  // what of d a rigid step reads and writes (pointers into d)
  double contact_time; // time of the contacts held by col (NAN: none evaluated)
  int touches;         // evaluations past the standoff during the current sim_step
  ccsim_status contact_status;  // why the last evaluation that failed for good failed
                                // (CCSIM_OK: none since the step began); message in col
  SUNContext ctx;      // one per session: SUNDIALS contexts are not thread-safe
  void *cvode;
  N_Vector y;          // (nstate) the integrated state, SIM_NQ per free body
  SUNMatrix J;
  SUNLinearSolver ls;
  // the Jacobian in blocks: per free body its own 13 x 13 block; per ordered pair of free
  // bodies coupled by contacts a 6 x 13 block (accelerations of one, state of the other)
  int sparse;          // 1: KLU on a CSC matrix (many bodies), 0: dense LU
  double *jself;       // (nfree x 169) row-major
  int jcap, jn;        // cross blocks: capacity and count
  int *jrow, *jcol;    // (jcap) free-body indices of each cross block's rows and columns
  double *jcross;      // (jcap x 78) row-major 6 x 13
  int *jorder;         // (jcap) cross blocks sorted by column body (sparse assembly)
  int *jstart;         // (nfree + 1) first entry of each column body in jorder
  sunindextype *jpat;  // (nstate + 1 + nnz) the last CSC pattern, to notice a change
  sunindextype nnz;    // capacity of the sparse matrix
  uint64_t jdropped;   // contact couplings left out of the Jacobian (cross blocks full)
  sim_stats stats;
  char err[256];
};

// sim_integrator.c: the compliant stepper and the integrator every session has (rigid mode
// keeps its state in the integrator's vector). init allocates and primes CVODE at the
// model's initial state (sim_load_initial), so that stepping allocates nothing.
int sim_integrator_init(const sim_model *m, sim_data *d, char *err, size_t err_sz);
void sim_integrator_fini(sim_data *d);
ccsim_status sim_integrator_step(const sim_model *m, sim_data *d, double t_out);
ccsim_status sim_integrator_contacts(const sim_model *m, sim_data *d);

// sim_jacobian.c: allocate the blocks for nfree free bodies (0, or -1 out of memory; freed
// by sim_jacobian_fini), and assemble the Jacobian at state y into J from the contacts the
// collider last evaluated there.
int sim_jacobian_init(const sim_model *m, sim_data *d, int nfree);
void sim_jacobian_fini(sim_data *d);
void sim_jacobian_assemble(const sim_model *m, sim_data *d, const double *y, SUNMatrix J);

// sim_bodies.c: body b's reference-frame pose and twist into the state (free) or the held
// kinematic arrays; every body at the model's initial state and t = 0.
void sim_put_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                  const double quat[4], const double vel[3], const double omega[3]);
void sim_load_initial(const sim_model *m, sim_data *d);

// sim_inputs.c: the targets of path-driven bodies for a step to t_out; kinematic body b
// heads for (pos, q) over dt; kinematic bodies reach time t (reached_end: t is the end of
// the step, where targets land).
void sim_inputs_begin_step(const sim_model *m, sim_data *d, double t_out);
void sim_inputs_target(sim_data *d, int b, const double pos[3], const double q[4], double dt);
void sim_inputs_advance(const sim_model *m, sim_data *d, double t, int reached_end);

#endif
