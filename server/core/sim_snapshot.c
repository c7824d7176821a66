// Snapshots of a session's full state (time, bodies, held inputs, friction anchors) and
// restarts: a restored session steps as the one it was taken from, to the last bit.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_data_impl.h"

// arrays as stored (not converted, so a round trip is exact), then inputs (6 per body),
// then the friction anchors (sim_friction_snapshot_get; absent in snapshots taken before
// friction existed, which restore without anchors)
static size_t snapshot_base(const sim_model *m) { return 1 + (size_t)m->nbody * (13 + 6); }

size_t sim_snapshot_size(const sim_model *m, const sim_data *d) {
  return snapshot_base(m) + sim_friction_snapshot_size(d->col);
}

void sim_snapshot_get(const sim_model *m, const sim_data *d, double *buf) {
  double *o = buf;
  *o++ = d->time;
  const double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s >= 0) {
      memcpy(o, y + s, SIM_NQ * sizeof(double));
    } else {
      memcpy(o, d->kin.pos + 3 * b, 3 * sizeof(double));
      memcpy(o + 3, d->kin.quat + 4 * b, 4 * sizeof(double));
      memcpy(o + 7, d->kin.vel + 3 * b, 3 * sizeof(double));
      memcpy(o + 10, d->kin.omega + 3 * b, 3 * sizeof(double));
    }
    o += 13;
  }
  memcpy(o, d->force_in, 3 * sizeof(double) * (size_t)m->nbody);
  memcpy(o + 3 * m->nbody, d->torque_in, 3 * sizeof(double) * (size_t)m->nbody);
  sim_friction_snapshot_get(d->col, buf + snapshot_base(m));
}

ccsim_status sim_snapshot_check(const sim_model *m, const double *buf, size_t n, char *err,
                                size_t err_sz) {
  size_t base = snapshot_base(m);
  if (n < base) {
    ccsim_set_err(err, err_sz, "snapshot: %zu values, the scene needs at least %zu", n, base);
    return CCSIM_EINVAL;
  }
  for (size_t i = 0; i < base; i++) {
    if (!isfinite(buf[i])) {
      ccsim_set_err(err, err_sz, "snapshot: value %zu is not finite", i);
      return CCSIM_EINVAL;
    }
  }
  if (buf[0] < 0) {
    ccsim_set_err(err, err_sz, "snapshot: negative time");
    return CCSIM_EINVAL;
  }
  // the held inputs, bounded as a Step's are (else a crafted checkpoint would bring back
  // what no Step may set)
  const double *in = buf + 1 + 13 * (size_t)m->nbody;
  for (int b = 0; b < m->nbody; b++) {
    const char *big = sim_input_out_of_range(in + 3 * b, in + 3 * (m->nbody + b));
    if (big) {
      ccsim_set_err(err, err_sz, "snapshot: body %d's held input: %s", b, big);
      return CCSIM_EINVAL;
    }
  }
  return CCSIM_OK;
}

ccsim_status sim_snapshot_set(const sim_model *m, sim_data *d, const double *buf, size_t n) {
  size_t base = snapshot_base(m);
  if (sim_snapshot_check(m, buf, n, d->err, sizeof d->err) != CCSIM_OK) {
    return CCSIM_EINVAL;
  }
  ccsim_status fs =
      n > base ? sim_friction_snapshot_set(m, d->col, buf + base, n - base) : CCSIM_OK;
  if (fs != CCSIM_OK) {
    snprintf(d->err, sizeof d->err,
             "snapshot: the friction anchors (values %zu..%zu) are malformed", base, n - 1);
    return fs;
  }
  if (n == base && d->col) sim_friction_clear(d->col, -1);
  const double *in = buf;
  d->time = *in++;
  d->kin.t0 = d->time;
  double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s >= 0) {
      memcpy(y + s, in, SIM_NQ * sizeof(double));
    } else {
      memcpy(d->kin.pos + 3 * b, in, 3 * sizeof(double));
      memcpy(d->kin.quat + 4 * b, in + 3, 4 * sizeof(double));
      memcpy(d->kin.vel + 3 * b, in + 7, 3 * sizeof(double));
      memcpy(d->kin.omega + 3 * b, in + 10, 3 * sizeof(double));
      d->kin_has_target[b] = 0;  // a snapshot is taken between requests: none pending
    }
    in += 13;
  }
  memcpy(d->force_in, in, 3 * sizeof(double) * (size_t)m->nbody);
  memcpy(d->torque_in, in + 3 * m->nbody, 3 * sizeof(double) * (size_t)m->nbody);
  sim_restart(m, d);  // as a new session's: two restored alike step alike
  return CCSIM_OK;
}

void sim_restart(const sim_model *m, sim_data *d) {
  (void)m;
  d->need_reinit = 1;
  sim_collider_forget(d->col);
  d->contact_time = NAN;
  if (d->stepper->restart) d->stepper->restart(d);
}
