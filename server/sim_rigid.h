// Rigid mode: velocity-level LCP time stepping (Tan, Siu & Liu, eq. 12-15; Stewart-
// Trinkle) over the same witness pairs as the compliant mode, solved by our own Dantzig
// (frictionless) and Lemke (frictional) codes, with gap stabilisation after Hotz et al.
// One sim_rigid per session (sim_data owns it); allocation-free once created.
#ifndef SIM_RIGID_H
#define SIM_RIGID_H

#include <stddef.h>

#include "ccsim_status.h"
#include "sim_model.h"

enum { SIM_LCP_SOLVER_NONE = 0, SIM_LCP_SOLVER_DANTZIG = 1, SIM_LCP_SOLVER_LEMKE = 2 };

typedef struct sim_rigid sim_rigid;
struct sim_data;

// Workspace for model m's rigid steps. Returns it (caller owns; sim_rigid_destroy) or NULL
// with a message.
sim_rigid *sim_rigid_new(const sim_model *m, char *err, size_t err_sz);

// Free and set *r to NULL. NULL-safe.
void sim_rigid_destroy(sim_rigid **r);

// Advance d from time t0 to t_out in fixed steps of m->rigid_dt (the last one shortened
// to land on t_out). Writes the state through sim_data_state and the statistics through
// sim_data_stats_mut; *t_reached gets the time of the last completed step (t_out on
// success; the caller records it). Kinematic bodies at time t: sim_data_kinematics_at.
ccsim_status sim_rigid_step(const sim_model *m, struct sim_data *d, sim_rigid *r, double t0,
                            double t_out, double *t_reached);

#endif
