// Where every body is and how it moves at a time t: free bodies from the integrated state,
// fixed and kinematic ones from their held pose and twist (a kinematic body moves with its
// twist from the time its pose holds). One per session (in sim_data), shared by both
// steppers, so neither needs the session to place its bodies.
#ifndef SIM_MOTION_H
#define SIM_MOTION_H

#include "sim_contact.h"
#include "sim_model.h"

typedef struct sim_motion {
  double *pos;    // (nbody x 3) reference pose of fixed and kinematic bodies [m]
  double *quat;   // (nbody x 4) unit quaternion (w, x, y, z)
  double *vel;    // (nbody x 3) their twist (world): frame origin velocity [m/s]
  double *omega;  // (nbody x 3) angular velocity [rad/s]
  double t0;      // time at which pos/quat hold [s] (= the session's time between steps)
  // scratch of one evaluation: every body's placement and motion (see sim_kinematics)
  double *x_pos, *x_quat, *x_com, *x_vel, *x_omega;  // (nbody x 3/4/3/3/3)
} sim_motion;

// Allocate mo's arrays for model m (zeroed). 0, or -1 out of memory (sim_motion_fini
// frees what was made).
int sim_motion_init(sim_motion *mo, const sim_model *m);

// Free mo's arrays (mo itself is the caller's). NULL-safe.
void sim_motion_fini(sim_motion *mo);

// Pose of kinematic body b at time t [s]: it moves with its held twist from mo->t0.
void sim_motion_pose(const sim_motion *mo, int b, double t, double pos[3], double quat[4]);

// Every body's placement and motion at time t [s] and integrated state y (SIM_NQ per free
// body; NULL when there is none) into mo's scratch; k points into it (valid until the
// next call on mo). Allocation-free.
void sim_motion_at(const sim_model *m, sim_motion *mo, double t, const double *y,
                   sim_kinematics *k);

#endif
