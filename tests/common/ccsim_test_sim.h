// Scene compilation for the physics-core tests.
#ifndef CCSIM_TEST_SIM_H
#define CCSIM_TEST_SIM_H

#include "ccsim_test.h"
#include "sim_model.h"

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

#endif
