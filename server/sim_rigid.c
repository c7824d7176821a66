#include "sim_rigid.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim_data.h"

// Until the LCP time stepper lands, rigid mode refuses to step with ENOTIMPL (a session
// can be created and inspected, nothing is integrated).
struct sim_rigid {
  int unused;
};

sim_rigid *sim_rigid_new(const sim_model *m, char *err, size_t err_sz) {
  (void)m, (void)err, (void)err_sz;
  return calloc(1, sizeof(sim_rigid));
}

void sim_rigid_destroy(sim_rigid **r) {
  if (r && *r) {
    free(*r);
    *r = NULL;
  }
}

ccsim_status sim_rigid_step(const sim_model *m, struct sim_data *d, sim_rigid *r, double t0,
                            double t_out, double *t_reached) {
  (void)m, (void)d, (void)r, (void)t_out;
  *t_reached = t0;
  return CCSIM_ENOTIMPL;
}
