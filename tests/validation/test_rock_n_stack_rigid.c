// ctest-label: validation
// ctest-timeout: 300
// The Rock-N-Stack as its scene file has it (examples/rock_n_stack.json), in rigid mode
// beside the compliant one: support equals the weight, and with friction the ring wedges.
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "ccsim_scene_msg.h"
#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"
#include "sim_rigid.h"
#include "wire.h"
#include "ccsim_test_sim.h"

#define G 9.81

typedef struct fixture {
  sim_model *m;
  sim_data *d;
  sim_rigid *r;
} fixture;

static void teardown_scene(fixture *f) {
  sim_rigid_destroy(&f->r);
  sim_data_destroy(&f->d);
  sim_model_destroy(&f->m);
}

static void run_rigid(fixture *f, double t_end) { test_rigid_run(f->m, f->d, f->r, t_end); }


// The Rock-N-Stack torus set down centred on its cone (examples/rock_n_stack.json, no
// friction) in both modes: the support force averaged over the last half second equals the
// weight within 0.5 % (the compliant ring keeps ringing on its lightly damped springs, so
// only the mean settles within a second); the rigid one is at rest and exact at every step.
static void test_rock_n_stack_support(void **state) {
  (void)state;
  const char *src = getenv("CCSIM_SOURCE_DIR");
  char path[1024], err[1024] = "";
  snprintf(path, sizeof path, "%s/examples/rock_n_stack.json", src ? src : ".");
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) print_error("%s (is CCSIM_SOURCE_DIR set?)\n", err);
  assert_non_null(sc);
  const double z_rest[2] = {0.08925, 0.0877};  // just above each mode's rest height [m]
  for (int mode = 0; mode < 2; mode++) {
    Ccsim__Scene msg = *ccsim_scene_message(sc);
    msg.has_mode = 1;
    msg.mode = mode ? CCSIM__MODE__MODE_RIGID : CCSIM__MODE__MODE_COMPLIANT;
    fixture f = {0};
    f.m = wire_scene_compile(&msg, err, sizeof err);
    assert_non_null(f.m);
    f.d = sim_data_new(f.m, err, sizeof err);
    f.r = sim_rigid_new(f.m, err, sizeof err);
    assert_non_null(f.d);
    assert_non_null(f.r);
    int torus = sim_model_body(f.m, "torus");
    assert_true(torus >= 0);
    double pos[3] = {0, 0, z_rest[mode]}, q[4] = {1, 0, 0, 0}, zero[3] = {0, 0, 0};
    assert_int_equal(sim_set_body(f.m, f.d, torus, pos, q, zero, zero), CCSIM_OK);
    double weight = f.m->mass[torus] * G, sum = 0, last = 0;
    int samples = 0, nc = 0;
    for (int k = 1; k <= 1000; k++) {
      double fc[3], tq[3];
      if (mode) {
        run_rigid(&f, k * 1e-3);
        test_rigid_contact_force(f.r, torus, fc, &nc);
      } else {
        assert_int_equal(sim_step(f.m, f.d, k * 1e-3), CCSIM_OK);
        assert_int_equal(sim_eval_contacts(f.m, f.d), CCSIM_OK);
        sim_data_body_contact(f.m, f.d, torus, fc, tq, &nc);
      }
      last = fc[2];
      if (k > 500) sum += fc[2], samples++;
    }
    double mean = sum / samples;
    print_message("rock-n-stack %s: support over the last 0.5 s %.9g N, last %.9g N on %d "
                  "contacts, weight %.9g N\n",
                  mode ? "rigid" : "compliant", mean, last, nc, weight);
    assert_double_rel(mean, weight, 5e-3, 0);
    if (mode) assert_double_rel(last, weight, 5e-3, 0);
    teardown_scene(&f);
  }
  ccsim_scene_destroy(&sc);
}

// The Rock-N-Stack dropped as the scene file has it, with mu = 0.5 (rigid mode, Lemke on the
// reduced frictional contact set): the ring wedges on the cone (a rigid ring on a cone of
// half-angle atan 0.3 locks for mu > 0.3) and comes to rest carrying its weight.
static void test_rock_n_stack_friction_settles(void **state) {
  (void)state;
  const char *src = getenv("CCSIM_SOURCE_DIR");
  char path[1024], err[1024] = "";
  snprintf(path, sizeof path, "%s/examples/rock_n_stack.json", src ? src : ".");
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) print_error("%s (is CCSIM_SOURCE_DIR set?)\n", err);
  assert_non_null(sc);
  Ccsim__Scene msg = *ccsim_scene_message(sc);
  Ccsim__ContactParams cp;
  assert_non_null(msg.contact);
  cp = *msg.contact;
  cp.has_mu = 1, cp.mu = 0.5, cp.has_mu_dynamic = 1, cp.mu_dynamic = 0.5;
  msg.contact = &cp;
  msg.has_mode = 1, msg.mode = CCSIM__MODE__MODE_RIGID;
  fixture f = {0};
  f.m = wire_scene_compile(&msg, err, sizeof err);
  assert_non_null(f.m);
  f.d = sim_data_new(f.m, err, sizeof err);
  f.r = sim_rigid_new(f.m, err, sizeof err);
  assert_non_null(f.d);
  assert_non_null(f.r);
  int torus = sim_model_body(f.m, "torus");
  run_rigid(&f, 3.0);
  double fc[3], v[3], w[3];
  int nc = 0;
  test_rigid_contact_force(f.r, torus, fc, &nc);
  sim_get_body(f.m, f.d, torus, NULL, NULL, v, w);
  const sim_stats *st = sim_data_stats(f.d);
  double weight = f.m->mass[torus] * G;
  print_message("rock-n-stack, mu 0.5, after 3 s: support %.9g N (weight %.9g N) on %d contacts, "
                "speed %.3g m/s, %.3g rad/s; %llu pivots, %llu failed solves\n",
                fc[2], weight, nc, geo_v3_norm(v), geo_v3_norm(w),
                (unsigned long long)st->lcp_pivots, (unsigned long long)st->lcp_failures);
  assert_int_equal(st->lcp_solver, SIM_LCP_SOLVER_LEMKE);
  assert_double_rel(fc[2], weight, 5e-3, 0);
  assert_true(geo_v3_norm(v) < 1e-3);
  assert_true(st->lcp_failures <= 30);  // at most 1 % of the steps needed the retry
  teardown_scene(&f);
  ccsim_scene_destroy(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rock_n_stack_support),
      cmocka_unit_test(test_rock_n_stack_friction_settles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
