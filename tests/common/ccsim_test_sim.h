// Scene compilation for the physics-core tests.
#ifndef CCSIM_TEST_SIM_H
#define CCSIM_TEST_SIM_H

#include "ccsim_test.h"
#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"
#include "sim_rigid.h"

// Compile scene s with bodies b (n of them, borrowed); returns the model (caller owns) or
// NULL with the compiler's message printed, for the caller to assert on.
static inline sim_model *test_compile(sim_scene *s, const sim_body_desc *b, int n) {
  s->nbody = n;
  s->bodies = b;
  char err[256] = "";
  sim_model *m = sim_model_compile(s, err, sizeof err);
  if (!m) print_error("compile: %s\n", err);
  return m;
}

// A progress function (sim_set_progress) that lets *arg calls go on and stops the step at
// the next one: a test's work budget.
static inline int test_stop_after(void *arg) {
  int *left = arg;
  return (*left)-- <= 0;
}

// Advance d by rigid steps of 1 ms to time t_end on the test's own rigid workspace r, so its
// contact forces can be read; every step must succeed and reach its end.
static inline void test_rigid_run(const sim_model *m, sim_data *d, sim_rigid *r, double t_end) {
  double t = sim_data_time(d);
  while (t < t_end - 1e-12) {
    double reached = t, next = fmin(t + 1e-3, t_end);
    ccsim_status st = sim_rigid_step(m, sim_data_rigid_io(d), r, t, next, &reached);
    if (st != CCSIM_OK) print_error("rigid step at t = %g: %s\n", t, sim_rigid_errmsg(r));
    assert_int_equal(st, CCSIM_OK);
    assert_double_near(reached, next, 0);
    assert_int_equal(sim_set_time(m, d, reached), CCSIM_OK);
    t = reached;
  }
}

// Total contact force [N] on body b (world; normal and friction) over r's last step's
// contacts, and how many of them carry force.
static inline void test_rigid_contact_force(const sim_rigid *r, int b, double out[3],
                                            int *carrying) {
  int n = 0;
  const sim_contact *c = sim_rigid_contacts(r, &n);
  geo_v3_set(out, 0, 0, 0);
  *carrying = 0;
  for (int i = 0; i < n; i++) {
    if (c[i].body_a != b && c[i].body_b != b) continue;
    double f[3];
    geo_v3_scale(f, c[i].normal, c[i].force);
    geo_v3_add(f, f, c[i].friction);
    if (c[i].body_a == b) geo_v3_scale(f, f, -1);
    geo_v3_add(out, out, f);
    *carrying += c[i].force > 0;
  }
}

#endif
