// The step entry (MuJoCo's mj_step shape): check the request, set the step's kinematic
// targets, then hand the step to the stepper of the model's mode through a table.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim_data_impl.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// ---- rigid mode: LCP time steps (sim_rigid.c) on the session's state ------------------

static int rigid_init(const sim_model *m, sim_data *d, char *err, size_t err_sz) {
  if (!(d->rigid = sim_rigid_new(m, err, err_sz))) return -1;
  sim_rigid_bind_inputs(d->rigid, d->force_in, d->torque_in);
  return 0;
}

static void rigid_fini(sim_data *d) { sim_rigid_destroy(&d->rigid); }

static ccsim_status rigid_step(const sim_model *m, sim_data *d, double t_out) {
  double reached = d->time;
  ccsim_status st = sim_rigid_step(m, &d->rigid_io, d->rigid, d->time, t_out, &reached);
  // an LCP larger than the room made at creation: the room grows between LCP steps (each
  // time at least doubling, so a few times in a session's life) and the step goes on from
  // the last one completed, instead of failing a request the scene is entitled to
  for (int grow = 0; st == CCSIM_ELIMIT && grow < 8 && sim_rigid_wants_room(d->rigid) &&
                     sim_rigid_reserve(d->rigid) == CCSIM_OK;
       grow++) {
    st = sim_rigid_step(m, &d->rigid_io, d->rigid, reached, t_out, &reached);
  }
  sim_inputs_advance(m, d, reached, st == CCSIM_OK);
  d->time = reached;
  // the step's contacts (impulse / h) are the report of this state
  d->contact_time = st == CCSIM_OK ? d->time : NAN;
  if (st != CCSIM_OK) {
    snprintf(d->err, sizeof d->err, "rigid step failed at t = %.9g: %s", reached,
             sim_rigid_errmsg(d->rigid));
  }
  // the step is over: an LCP it could not hold gets its room now, for the next one
  sim_rigid_reserve(d->rigid);
  return st;
}

// Baraff's instantaneous forces at this state
static ccsim_status rigid_contacts(const sim_model *m, sim_data *d) {
  int n = 0;
  ccsim_status st = sim_rigid_contact_forces(m, &d->rigid_io, d->rigid, d->time, &n);
  // an LCP past the room: it grows (as for a step) and the report is made again
  if (st == CCSIM_ELIMIT && sim_rigid_wants_room(d->rigid) &&
      sim_rigid_reserve(d->rigid) == CCSIM_OK) {
    st = sim_rigid_contact_forces(m, &d->rigid_io, d->rigid, d->time, &n);
  }
  if (st != CCSIM_OK) {
    snprintf(d->err, sizeof d->err, "contacts: %s", sim_rigid_errmsg(d->rigid));
    return st;
  }
  d->contact_time = d->time;
  return CCSIM_OK;
}

static const sim_contact *rigid_report(const sim_data *d, int *n) {
  *n = 0;
  if (!d->col || d->contact_time != d->time) return NULL;
  return sim_rigid_contacts(d->rigid, n);
}

static void rigid_restart(sim_data *d) { sim_rigid_reset(d->rigid); }

// ---- compliant mode: CVODE (sim_integrator.c) ------------------------------------------

static int compliant_init(const sim_model *m, sim_data *d, char *err, size_t err_sz) {
  (void)m, (void)d, (void)err, (void)err_sz;
  return 0;  // the integrator is every session's (sim_integrator_init)
}

static void compliant_fini(sim_data *d) { (void)d; }

static const sim_contact *compliant_report(const sim_data *d, int *n) {
  *n = 0;
  if (!d->col || d->contact_time != d->time) return NULL;
  return sim_collider_contacts(d->col, n);
}

// ---- the table ---------------------------------------------------------------------------

static const sim_stepper_ops steppers[] = {
    [SIM_MODE_COMPLIANT] = {"compliant", compliant_init, compliant_fini, sim_integrator_step,
                            sim_integrator_contacts, compliant_report, NULL, 1},
    [SIM_MODE_RIGID] = {"rigid", rigid_init, rigid_fini, rigid_step, rigid_contacts,
                        rigid_report, rigid_restart, 0},
};

const sim_stepper_ops *sim_stepper_for(const sim_model *m) {
  return m->mode == SIM_MODE_RIGID ? &steppers[SIM_MODE_RIGID] : &steppers[SIM_MODE_COMPLIANT];
}

// ---- the entry ---------------------------------------------------------------------------

ccsim_status sim_step_check(const sim_model *m, const sim_data *d, double t_out, char *err,
                            size_t err_sz) {
  (void)m;  // both steppers take any step the time can resolve
  double t = d->time;
  if (!isfinite(t_out) || t_out < t) {
    ccsim_set_err(err, err_sz, "step: target time %g must be finite and not before %.17g", t_out,
                  t);
    return CCSIM_EINVAL;
  }
  // below it CVODE cannot tell the step's end from its start (and a time step of the rigid
  // mode would not advance the time)
  double dt = t_out - t, dt_min = SIM_MIN_STEP_DT * (fabs(t) > 1 ? fabs(t) : 1);
  if (!(dt >= dt_min)) {
    ccsim_set_err(err, err_sz,
                  "step: dt = %g is too small to advance time %.17g (the smallest step there "
                  "is %g s)",
                  dt, t, dt_min);
    return CCSIM_EINVAL;
  }
  return CCSIM_OK;
}

ccsim_status sim_step(const sim_model *m, sim_data *d, double t_out) {
  // the steppers add the step's contact impulses; the mean is over the time reached (none
  // for a step refused here: no impulse of an earlier step may be counted again)
  memset(d->impulse, 0, 6 * sizeof(double) * (size_t)m->nbody);
  d->impulse_dt = 0;
  ccsim_status st = sim_step_check(m, d, t_out, d->err, sizeof d->err);
  if (st != CCSIM_OK) return st;
  sim_inputs_begin_step(m, d, t_out);
  uint64_t t0 = now_ns();
  d->progress.stopped = 0;
  double time0 = d->time;
  st = d->stepper->step(m, d, t_out);
  d->impulse_dt = d->time - time0;
  d->stats.physics_ns += now_ns() - t0;
  return st;
}
