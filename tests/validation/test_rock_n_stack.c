// ctest-label: validation
// ctest-timeout: 600
// The Sandia paper's Rock-N-Stack (examples/rock_n_stack.json): the torus dropped over the
// cone bounces, then rides on a web of contact springs whose vertical force carries its
// weight. Without friction the torus keeps a slow, nearly undamped wobble (the springs
// damp only normal motion), so "settled" is checked as: the motion has decayed to a small
// bounded wobble near the rest height, and the support force averaged over a second
// (sampled every millisecond) equals the weight within 0.5 %.
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "ccsim_scene_msg.h"
#include "geo_vec.h"
#include "sim_data.h"
#include "wire.h"

static void test_rock_n_stack_carries_its_weight(void **state) {
  (void)state;
  const char *src = getenv("CCSIM_SOURCE_DIR");
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/examples/rock_n_stack.json", src ? src : ".");
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  sim_model *m = wire_scene_compile(ccsim_scene_message(sc), err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  int torus = sim_model_body(m, "torus");
  assert_true(torus >= 0);
  double weight = m->mass[torus] * 9.81, z0, p[3], v[3], f[3], tq[3];
  sim_get_body(m, d, torus, p, NULL, NULL, NULL);
  z0 = p[2];
  // the drop and the bounces: 3 s in 10 ms requests
  double t = 0, zmin = 1;
  int bounced = 0, touched = 0;
  while (t < 3.0 - 1e-9) {
    t += 0.01;
    assert_int_equal(sim_step(m, d, t), CCSIM_OK);
    sim_get_body(m, d, torus, p, NULL, v, NULL);
    if (p[2] < zmin) zmin = p[2];
    int n = 0;
    assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
    sim_data_body_contact(m, d, torus, f, tq, &n);
    if (n > 0) touched = 1;
    if (touched && v[2] > 0.05) bounced = 1;
  }
  // one more second, sampled every millisecond
  double sum = 0, vmax = 0, zlo = 1, zhi = -1;
  int samples = 0, nmin = 1 << 30, nmax = 0;
  while (t < 4.0 - 1e-9) {
    t += 0.001;
    assert_int_equal(sim_step(m, d, t), CCSIM_OK);
    assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
    int n = 0;
    sim_data_body_contact(m, d, torus, f, tq, &n);
    sim_get_body(m, d, torus, p, NULL, v, NULL);
    sum += f[2];
    samples++;
    if (geo_v3_norm(v) > vmax) vmax = geo_v3_norm(v);
    if (p[2] < zlo) zlo = p[2];
    if (p[2] > zhi) zhi = p[2];
    if (n < nmin) nmin = n;
    if (n > nmax) nmax = n;
  }
  double mean = sum / samples;
  const sim_stats *st = sim_data_stats(d);
  print_message("rock-n-stack: dropped from z = %.4f m, bounced %d, lowest %.4f m; last second: "
                "z in [%.6f, %.6f] m, speed below %.4f m/s, %d to %d contacts carrying force; "
                "mean support %.6f N for a weight of %.6f N (%+.3f %%); %llu CVODE steps, "
                "%llu rhs evaluations\n",
                z0, bounced, zmin, zlo, zhi, vmax, nmin, nmax, mean, weight,
                100 * (mean - weight) / weight, (unsigned long long)st->steps,
                (unsigned long long)st->rhs_evals);
  assert_true(bounced);
  assert_true(zhi - zlo < 5e-4);   // a wobble of less than half a millimetre
  assert_true(vmax < 0.05);        // under 5 % of the ~1 m/s impact speed
  assert_true(zhi < z0 - 0.045);   // down on the cone, 5 cm below the release height
  assert_true(nmin >= 3);          // never on fewer than three springs
  assert_double_rel(mean, weight, 0.005, 0);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  ccsim_scene_destroy(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rock_n_stack_carries_its_weight),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
