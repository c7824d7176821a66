// A session's data: its lifecycle (new, destroy, reset) and accessors. The step and the
// rest of the session's work live in the files sim_data_impl.h lists.
#include "sim_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_data_impl.h"

sim_data *sim_data_new(const sim_model *m, char *err, size_t err_sz) {
  if (!m) {
    ccsim_set_err(err, err_sz, "no model");
    return NULL;
  }
  sim_data *d = calloc(1, sizeof *d);
  if (!d) {
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  size_t nb = m->nbody > 0 ? (size_t)m->nbody : 1;
  d->m = m;
  d->stepper = sim_stepper_for(m);
  d->nstate = SIM_NQ * m->nfree;
  int kin_ok = sim_motion_init(&d->kin, m) == 0;
  d->force_in = calloc(nb * 3, sizeof(double));
  d->torque_in = calloc(nb * 3, sizeof(double));
  d->input_used = calloc(nb * 6, sizeof(double));
  d->kin_target = calloc(nb * 7, sizeof(double));
  d->kin_has_target = calloc(nb, sizeof(int));
  d->kin_target_t = calloc(nb, sizeof(double));
  d->wrench = calloc(nb * 6, sizeof(double));
  d->wprev = calloc(nb * 6, sizeof(double));
  d->wprev2 = calloc(nb * 6, sizeof(double));
  d->impulse = calloc(nb * 6, sizeof(double));
  d->contact_time = NAN;
  if (!kin_ok || !d->force_in || !d->torque_in || !d->input_used || !d->kin_target ||
      !d->kin_has_target || !d->kin_target_t || !d->wrench || !d->wprev || !d->wprev2 ||
      !d->impulse) {
    ccsim_set_err(err, err_sz, "out of memory");
    sim_data_destroy(&d);
    return NULL;
  }
  d->col = sim_collider_new(m, 0, err, err_sz);
  if (!d->col) {
    sim_data_destroy(&d);
    return NULL;
  }
  // the mean wrench's collider of a compliant model without free bodies (with them the
  // integrator's own evaluations give it; rigid steps add their LCP impulses)
  if (m->mode != SIM_MODE_RIGID && d->nstate == 0 &&
      !(d->mcol = sim_collider_new(m, 0, err, err_sz))) {
    sim_data_destroy(&d);
    return NULL;
  }
  if (d->stepper->init(m, d, err, err_sz) != 0 || sim_integrator_init(m, d, err, err_sz) != 0) {
    sim_data_destroy(&d);
    return NULL;
  }
  d->rigid_io.y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  d->rigid_io.stats = &d->stats;
  d->rigid_io.col = d->col;
  d->rigid_io.motion = &d->kin;
  d->rigid_io.progress = &d->progress;
  d->rigid_io.impulse = d->impulse;
  return d;
}

void sim_data_destroy(sim_data **pd) {
  if (!pd || !*pd) {
    return;
  }
  sim_data *d = *pd;
  sim_integrator_fini(d);
  sim_motion_fini(&d->kin);
  free(d->force_in);
  free(d->torque_in);
  free(d->input_used);
  free(d->kin_target);
  free(d->kin_has_target);
  free(d->kin_target_t);
  free(d->wrench);
  free(d->wprev);
  free(d->wprev2);
  free(d->impulse);
  sim_collider_destroy(&d->col);
  sim_collider_destroy(&d->qcol);
  sim_collider_destroy(&d->mcol);
  d->stepper->fini(d);
  free(d);
  *pd = NULL;
}

const char *sim_data_errmsg(const sim_data *d) { return d ? d->err : "no data"; }

double sim_data_time(const sim_data *d) { return d->time; }

const sim_stats *sim_data_stats(const sim_data *d) { return &d->stats; }

const struct sim_rigid_io *sim_data_rigid_io(sim_data *d) { return &d->rigid_io; }

void sim_set_progress(sim_data *d, int (*fn)(void *arg), void *arg) {
  d->progress.fn = fn;
  d->progress.arg = arg;
}

ccsim_status sim_set_time(const sim_model *m, sim_data *d, double t) {
  (void)m;
  if (!isfinite(t) || t < 0) {
    snprintf(d->err, sizeof d->err, "set state: time %g must be finite and >= 0", t);
    return CCSIM_EINVAL;
  }
  d->time = t;
  d->kin.t0 = t;
  d->need_reinit = 1;
  if (d->stepper->restart) d->stepper->restart(d);
  return CCSIM_OK;
}

void sim_reset(const sim_model *m, sim_data *d) {
  sim_load_initial(m, d);
  sim_clear_inputs(m, d);
  if (d->col) sim_friction_clear(d->col, -1);
  d->contact_time = NAN;
  d->need_reinit = 1;
  if (d->stepper->restart) d->stepper->restart(d);
}
