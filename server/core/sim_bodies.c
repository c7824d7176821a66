// Body states: every body's reference-frame pose and twist as callers see them, the
// integrated state (centre of mass, quaternion, COM velocity, body angular velocity) they
// map to, the initial state, and the mechanical energy.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data_impl.h"

// Write body b's reference-frame pose/twist into the state (free) or the kinematic arrays.
void sim_put_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                  const double quat[4], const double vel[3], const double omega[3]) {
  double q[4] = {quat[0], quat[1], quat[2], quat[3]};
  if (geo_quat_normalize(q) == 0) {
    q[0] = 1;
  }
  int s = m->state_index[b];
  if (s < 0) {
    geo_v3_copy(d->kin.pos + 3 * b, pos);
    memcpy(d->kin.quat + 4 * b, q, sizeof q);
    geo_v3_copy(d->kin.vel + 3 * b, vel);
    geo_v3_copy(d->kin.omega + 3 * b, omega);
    d->kin_has_target[b] = 0;  // placed anew: a target it was heading for is gone
    return;
  }
  double *y = N_VGetArrayPointer(d->y) + s;
  double R[9], rc[3], vc[3];
  geo_quat_to_mat(R, q);
  geo_m3_mulv(rc, R, m->com + 3 * b);
  // the state holds the centre of mass: p_com = p + R c, v_com = v + w x (R c)
  geo_v3_add(y, pos, rc);
  memcpy(y + 3, q, sizeof q);
  geo_v3_cross(vc, omega, rc);
  geo_v3_add(y + 7, vel, vc);
  geo_m3_tmulv(y + 10, R, omega);
}

void sim_get_body(const sim_model *m, const sim_data *d, int b, double pos[3], double quat[4],
                  double vel[3], double omega[3]) {
  int s = m->state_index[b];
  if (s < 0) {
    if (pos) geo_v3_copy(pos, d->kin.pos + 3 * b);
    if (quat) memcpy(quat, d->kin.quat + 4 * b, 4 * sizeof(double));
    if (vel) geo_v3_copy(vel, d->kin.vel + 3 * b);
    if (omega) geo_v3_copy(omega, d->kin.omega + 3 * b);
    return;
  }
  const double *y = N_VGetArrayPointer(d->y) + s;
  double q[4] = {y[3], y[4], y[5], y[6]}, R[9], rc[3], w[3], vc[3];
  geo_quat_normalize(q);
  geo_quat_to_mat(R, q);
  geo_m3_mulv(rc, R, m->com + 3 * b);
  geo_m3_mulv(w, R, y + 10);
  if (pos) geo_v3_sub(pos, y, rc);
  if (quat) memcpy(quat, q, sizeof q);
  if (vel) {
    geo_v3_cross(vc, w, rc);
    geo_v3_sub(vel, y + 7, vc);
  }
  if (omega) geo_v3_copy(omega, w);
}

void sim_load_initial(const sim_model *m, sim_data *d) {
  for (int b = 0; b < m->nbody; b++) {
    const double zero[3] = {0, 0, 0};
    int moving = m->type[b] != SIM_BODY_FIXED;
    sim_put_body(m, d, b, m->pos0 + 3 * b, m->quat0 + 4 * b, moving ? m->vel0 + 3 * b : zero,
             moving ? m->omega0 + 3 * b : zero);
  }
  d->time = 0;
  d->kin.t0 = 0;
}

ccsim_status sim_check_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                            const double quat[4], const double vel[3], const double omega[3]) {
  if (b < 0 || b >= m->nbody) {
    snprintf(d->err, sizeof d->err, "set state: body %d out of range [0, %d)", b, m->nbody);
    return CCSIM_EINVAL;
  }
  if (m->type[b] == SIM_BODY_FIXED) {
    snprintf(d->err, sizeof d->err, "set state: body %d (\"%s\") is fixed", b, m->name[b]);
    return CCSIM_EINVAL;
  }
  double qn = 0;
  for (int k = 0; k < 4; k++) {
    qn += quat[k] * quat[k];
  }
  for (int k = 0; k < 3; k++) {
    if (!isfinite(pos[k]) || !isfinite(vel[k]) || !isfinite(omega[k])) {
      snprintf(d->err, sizeof d->err, "set state: body %d: values must be finite", b);
      return CCSIM_EINVAL;
    }
  }
  if (!isfinite(qn) || qn < 1e-12) {
    snprintf(d->err, sizeof d->err, "set state: body %d: quaternion must be finite, nonzero", b);
    return CCSIM_EINVAL;
  }
  const char *range = sim_motion_out_of_range(pos, vel, omega);
  if (range) {
    snprintf(d->err, sizeof d->err, "set state: body %d: %s", b, range);
    return CCSIM_EINVAL;
  }
  return CCSIM_OK;
}

ccsim_status sim_set_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                          const double quat[4], const double vel[3], const double omega[3]) {
  ccsim_status st = sim_check_body(m, d, b, pos, quat, vel, omega);
  if (st != CCSIM_OK) return st;
  sim_put_body(m, d, b, pos, quat, vel, omega);
  d->need_reinit = 1;
  // a body placed anew has no history of contact: its anchors go
  if (d->col) sim_friction_clear(d->col, b);
  d->contact_time = NAN;
  if (d->stepper->restart) d->stepper->restart(d);
  return CCSIM_OK;
}

double sim_energy(const sim_model *m, const sim_data *d) {
  double e = 0;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) {
      continue;
    }
    const double *y = N_VGetArrayPointer(d->y) + s;
    const double *w = y + 10, *I = m->inertia + 9 * b;
    double Iw[3];
    geo_m3_mulv(Iw, I, w);
    e += 0.5 * m->mass[b] * geo_v3_dot(y + 7, y + 7) + 0.5 * geo_v3_dot(w, Iw) -
         m->mass[b] * geo_v3_dot(m->gravity, y);
  }
  return e;
}

// layout: time, then per body p(3) q(4) v(3) w(3) of the state slots or kinematic
// arrays as stored (not converted, so a round trip is exact), then inputs (6 per body),

size_t sim_state_size(const sim_model *m) { return (size_t)SIM_NQ * (size_t)m->nfree; }

void sim_get_state(const sim_model *m, const sim_data *d, double *y) {
  if (d->nstate) memcpy(y, N_VGetArrayPointer(d->y), sim_state_size(m) * sizeof(double));
}
