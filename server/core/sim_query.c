// Contact reports: the contacts at the current state (each stepper's own), the force and
// torque they put on a body, and contacts at poses a caller gives (on a collider of their
// own, so the session's stepping never sees them).
#include <stdio.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data_impl.h"

ccsim_status sim_eval_contacts(const sim_model *m, sim_data *d) {
  if (d->col && d->contact_time == d->time) {
    return CCSIM_OK;  // already evaluated at this state
  }
  return d->stepper->contacts(m, d);
}

const sim_contact *sim_data_contacts(const sim_data *d, int *n) {
  return d->stepper->report(d, n);
}

void sim_data_body_contact(const sim_model *m, const sim_data *d, int b, double force[3],
                           double torque[3], int *count) {
  geo_v3_set(force, 0, 0, 0);
  geo_v3_set(torque, 0, 0, 0);
  *count = 0;
  int n = 0;
  const sim_contact *c = sim_data_contacts(d, &n);
  double pos[3];
  sim_get_body(m, d, b, pos, NULL, NULL, NULL);
  for (int i = 0; i < n; i++) {
    if (c[i].force <= 0 || (c[i].body_a != b && c[i].body_b != b)) continue;
    double f[3], r[3], t[3];
    int on_b = c[i].body_b == b;
    geo_v3_scale(f, c[i].normal, c[i].force);
    geo_v3_add(f, f, c[i].friction);  // the force on B
    if (!on_b) geo_v3_scale(f, f, -1.0);
    geo_v3_sub(r, on_b ? c[i].pb : c[i].pa, pos);
    geo_v3_cross(t, r, f);
    geo_v3_add(force, force, f);
    geo_v3_add(torque, torque, t);
    (*count)++;
  }
}

void sim_data_body_mean_contact(const sim_model *m, const sim_data *d, int b, double force[3],
                                double torque[3], double *dt) {
  (void)m;
  double s = d->impulse_dt > 0 ? 1.0 / d->impulse_dt : 0.0;
  geo_v3_scale(force, d->impulse + 6 * b, s);
  geo_v3_scale(torque, d->impulse + 6 * b + 3, s);
  if (dt) *dt = d->impulse_dt;
}

ccsim_status sim_eval_contacts_at(const sim_model *m, sim_data *d, const int *given,
                                  const double *pos, const double *quat, const double *vel,
                                  const double *omega, const sim_contact **contacts, int *n) {
  *contacts = NULL;
  *n = 0;
  if (!d->col) return CCSIM_OK;
  if (!d->stepper->query_at) {
    snprintf(d->err, sizeof d->err, "contacts at given poses: not available in %s mode",
             d->stepper->name);
    return CCSIM_ENOTIMPL;
  }
  // a collider of its own: the session's holds the coherence caches the next step starts
  // from, and they steer its rounding; the anchors (stiction) are the session's
  if (!d->qcol && !(d->qcol = sim_collider_new(m, 0, d->err, sizeof d->err))) {
    return CCSIM_ENOMEM;
  }
  ccsim_status fs = sim_friction_copy(d->qcol, d->col);
  if (fs != CCSIM_OK) {
    snprintf(d->err, sizeof d->err, "contacts at given poses: more anchors than the collider's "
             "capacity");
    return fs;
  }
  sim_kinematics k;
  sim_motion_at(m, &d->kin, d->time, (d->nstate ? N_VGetArrayPointer(d->y) : NULL), &k);
  // move the given bodies in the evaluation scratch (every right-hand side fills it
  // anew); d's state and integrator stay as they are. Without a given twist a body keeps
  // its centre of mass's velocity and its angular velocity.
  for (int b = 0; b < m->nbody; b++) {
    if (!(given[b] & SIM_GIVEN_POSE)) continue;
    double q[4] = {quat[4 * b], quat[4 * b + 1], quat[4 * b + 2], quat[4 * b + 3]}, R[9], rc[3];
    if (geo_quat_normalize(q) == 0) q[0] = 1;
    geo_v3_copy(d->kin.x_pos + 3 * b, pos + 3 * b);
    memcpy(d->kin.x_quat + 4 * b, q, sizeof q);
    geo_quat_to_mat(R, q);
    geo_m3_mulv(rc, R, m->com + 3 * b);
    geo_v3_add(d->kin.x_com + 3 * b, pos + 3 * b, rc);
    if (given[b] & SIM_GIVEN_TWIST) {
      // the scratch holds the centre of mass's velocity: v_com = v_origin + w x r_com
      double wxr[3];
      geo_v3_copy(d->kin.x_omega + 3 * b, omega + 3 * b);
      geo_v3_cross(wxr, omega + 3 * b, rc);
      geo_v3_add(d->kin.x_vel + 3 * b, vel + 3 * b, wxr);
    }
  }
  memset(d->wrench, 0, sizeof(double) * 6 * (size_t)m->nbody);
  ccsim_status st = sim_collide(m, d->qcol, &k, d->wrench);
  if (st != CCSIM_OK) {
    snprintf(d->err, sizeof d->err, "contacts at given poses: %s", sim_collider_errmsg(d->qcol));
    return st;
  }
  *contacts = sim_collider_contacts(d->qcol, n);
  return CCSIM_OK;
}
