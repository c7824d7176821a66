// What a session holds for its coming steps: forces and torques on free bodies, and the
// motion of kinematic bodies (a twist, or a pose to reach at a time, or the scene's path).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data_impl.h"

ccsim_status sim_set_input(const sim_model *m, sim_data *d, int b, const double force[3],
                           const double torque[3]) {
  if (b < 0 || b >= m->nbody) {
    snprintf(d->err, sizeof d->err, "input: body %d out of range [0, %d)", b, m->nbody);
    return CCSIM_EINVAL;
  }
  if (m->type[b] != SIM_BODY_FREE) {
    snprintf(d->err, sizeof d->err, "input: body %d (\"%s\") is not free", b, m->name[b]);
    return CCSIM_EINVAL;
  }
  for (int k = 0; k < 3; k++) {
    if (!isfinite(force[k]) || !isfinite(torque[k])) {
      snprintf(d->err, sizeof d->err, "input: body %d: force and torque must be finite", b);
      return CCSIM_EINVAL;
    }
  }
  const char *big = sim_input_out_of_range(force, torque);
  if (big) {
    snprintf(d->err, sizeof d->err, "input: body %d: %s", b, big);
    return CCSIM_EINVAL;
  }
  geo_v3_copy(d->force_in + 3 * b, force);
  geo_v3_copy(d->torque_in + 3 * b, torque);
  return CCSIM_OK;
}

void sim_clear_inputs(const sim_model *m, sim_data *d) {
  memset(d->force_in, 0, sizeof(double) * 3 * (size_t)m->nbody);
  memset(d->torque_in, 0, sizeof(double) * 3 * (size_t)m->nbody);
}

// Kinematic bodies reach time t: their pose advances with their twist (or snaps to the
// target the step asked for when t is the step's end).
void sim_inputs_advance(const sim_model *m, sim_data *d, double t, int reached_end) {
  for (int b = 0; b < m->nbody; b++) {
    if (m->type[b] != SIM_BODY_KINEMATIC) continue;
    double pos[3], q[4];
    // the target lands exactly (no drift from the velocity's rounding) when its time is
    // reached; a request batched into sub-steps passes through on the way
    int arrive =
        reached_end && d->kin_has_target[b] && t >= d->kin_target_t[b] - 1e-9 * fmax(1.0, fabs(t));
    if (arrive) {
      memcpy(pos, d->kin_target + 7 * b, 3 * sizeof(double));
      memcpy(q, d->kin_target + 7 * b + 3, 4 * sizeof(double));
      d->kin_has_target[b] = 0;
    } else {
      sim_motion_pose(&d->kin, b, t, pos, q);
    }
    // a failed step drops its targets: the body keeps the twist its target gave it (a
    // later step ending past the target's time would snap it back, a jump; and no
    // checkpoint holds a pending target)
    if (!reached_end) d->kin_has_target[b] = 0;
    geo_v3_copy(d->kin.pos + 3 * b, pos);
    memcpy(d->kin.quat + 4 * b, q, sizeof q);
  }
  d->kin.t0 = t;
}

// Kinematic body b moves with constant velocities from its pose now to (pos, q), unit,
// which it reaches dt later.
void sim_inputs_target(sim_data *d, int b, const double pos[3], const double q[4], double dt) {
  double v[3], w[3], *v0 = d->kin.vel + 3 * b, *w0 = d->kin.omega + 3 * b;
  sim_twist_between(d->kin.pos + 3 * b, d->kin.quat + 4 * b, pos, q, dt, v, w);
  // a jump of a pusher's velocity is a discontinuity like a jump of a held force (see
  // sim_set_input): restart a frictional plant there; the chords of a straight path
  // differ only by rounding and keep the history
  if (sim_friction_active(d->col) && (geo_v3_dist(v, v0) > 1e-9 * (1e-3 + geo_v3_norm(v0)) ||
                                      geo_v3_dist(w, w0) > 1e-9 * (1e-3 + geo_v3_norm(w0)))) {
    d->need_reinit = 1;
  }
  geo_v3_copy(v0, v);
  geo_v3_copy(w0, w);
  memcpy(d->kin_target + 7 * b, pos, 3 * sizeof(double));
  memcpy(d->kin_target + 7 * b + 3, q, 4 * sizeof(double));
  d->kin_has_target[b] = 1;
  d->kin_target_t[b] = d->time + dt;
}

ccsim_status sim_set_kinematic(const sim_model *m, sim_data *d, int b, const double *pos,
                               const double *quat, const double vel[3], const double omega[3],
                               double dt) {
  if (b < 0 || b >= m->nbody || m->type[b] != SIM_BODY_KINEMATIC) {
    snprintf(d->err, sizeof d->err, "kinematic input: body %d is not a kinematic body", b);
    return CCSIM_EINVAL;
  }
  if (m->path_n[b] > 0) {
    snprintf(d->err, sizeof d->err, "kinematic input: body %d (\"%s\") follows its scene path", b,
             m->name[b]);
    return CCSIM_EINVAL;
  }
  if (pos && quat) {
    double q[4] = {quat[0], quat[1], quat[2], quat[3]}, qn = geo_quat_normalize(q);
    if (!isfinite(dt) || !(dt > 0) || !isfinite(qn) || qn == 0 || !isfinite(pos[0]) ||
        !isfinite(pos[1]) || !isfinite(pos[2])) {
      snprintf(d->err, sizeof d->err, "kinematic input: body %d: pose must be finite, dt > 0", b);
      return CCSIM_EINVAL;
    }
    sim_inputs_target(d, b, pos, q, dt);
    return CCSIM_OK;
  }
  for (int j = 0; j < 3; j++) {
    if (!isfinite(vel[j]) || !isfinite(omega[j])) {
      snprintf(d->err, sizeof d->err, "kinematic input: body %d: twist must be finite", b);
      return CCSIM_EINVAL;
    }
  }
  geo_v3_copy(d->kin.vel + 3 * b, vel);
  geo_v3_copy(d->kin.omega + 3 * b, omega);
  d->kin_has_target[b] = 0;
  return CCSIM_OK;
}

// path-driven bodies run the chord to where their path is at the step's end: a waypoint
// inside the step is cut, the rest of the path is followed exactly at every step's end
void sim_inputs_begin_step(const sim_model *m, sim_data *d, double t_out) {
  for (int b = 0; b < m->nbody; b++) {
    if (m->path_n[b] == 0) continue;
    double pos[3], q[4];
    sim_model_path_pose(m, b, t_out, pos, q);
    sim_inputs_target(d, b, pos, q, t_out - d->time);
  }
}
