#include "sim_motion.h"

#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"

int sim_motion_init(sim_motion *mo, const sim_model *m) {
  size_t nb = m->nbody > 0 ? (size_t)m->nbody : 1;
  memset(mo, 0, sizeof *mo);
  mo->pos = calloc(nb * 3, sizeof(double));
  mo->quat = calloc(nb * 4, sizeof(double));
  mo->vel = calloc(nb * 3, sizeof(double));
  mo->omega = calloc(nb * 3, sizeof(double));
  mo->x_pos = calloc(nb * 3, sizeof(double));
  mo->x_quat = calloc(nb * 4, sizeof(double));
  mo->x_com = calloc(nb * 3, sizeof(double));
  mo->x_vel = calloc(nb * 3, sizeof(double));
  mo->x_omega = calloc(nb * 3, sizeof(double));
  if (!mo->pos || !mo->quat || !mo->vel || !mo->omega || !mo->x_pos || !mo->x_quat ||
      !mo->x_com || !mo->x_vel || !mo->x_omega) {
    return -1;
  }
  return 0;
}

void sim_motion_fini(sim_motion *mo) {
  if (!mo) return;
  free(mo->pos);
  free(mo->quat);
  free(mo->vel);
  free(mo->omega);
  free(mo->x_pos);
  free(mo->x_quat);
  free(mo->x_com);
  free(mo->x_vel);
  free(mo->x_omega);
  memset(mo, 0, sizeof *mo);
}

void sim_motion_pose(const sim_motion *mo, int b, double t, double pos[3], double quat[4]) {
  sim_pose_advance(mo->pos + 3 * b, mo->quat + 4 * b, mo->vel + 3 * b, mo->omega + 3 * b,
                   t - mo->t0, pos, quat);
}

void sim_motion_at(const sim_model *m, sim_motion *mo, double t, const double *y,
                   sim_kinematics *k) {
  for (int b = 0; b < m->nbody; b++) {
    double *pos = mo->x_pos + 3 * b, *q = mo->x_quat + 4 * b, *com = mo->x_com + 3 * b;
    double *vel = mo->x_vel + 3 * b, *om = mo->x_omega + 3 * b, R[9], rc[3];
    int s = m->state_index[b];
    if (s >= 0) {
      memcpy(q, y + s + 3, 4 * sizeof(double));
      if (geo_quat_normalize(q) == 0) q[0] = 1;
      geo_quat_to_mat(R, q);
      geo_v3_copy(com, y + s);
      geo_m3_mulv(rc, R, m->com + 3 * b);
      geo_v3_sub(pos, com, rc);
      geo_v3_copy(vel, y + s + 7);
      geo_m3_mulv(om, R, y + s + 10);
      continue;
    }
    if (m->type[b] == SIM_BODY_KINEMATIC) {
      sim_motion_pose(mo, b, t, pos, q);
    } else {
      geo_v3_copy(pos, mo->pos + 3 * b);
      memcpy(q, mo->quat + 4 * b, 4 * sizeof(double));
    }
    geo_quat_to_mat(R, q);
    geo_m3_mulv(rc, R, m->com + 3 * b);
    geo_v3_add(com, pos, rc);
    geo_v3_copy(om, mo->omega + 3 * b);
    double wxr[3];
    geo_v3_cross(wxr, om, rc);
    geo_v3_add(vel, mo->vel + 3 * b, wxr);
  }
  k->pos = mo->x_pos, k->quat = mo->x_quat, k->com = mo->x_com;
  k->vel = mo->x_vel, k->omega = mo->x_omega;
}
