// ctest-label: validation
// ctest-timeout: 900
// Wedging (examples/wedge.json): the Rock-N-Stack torus pressed down the cone by a
// kinematic ring that then lifts away. Released, the squeezed contacts push the torus
// up the cone with the vertical part of their normal force, N sin b (b the cone's
// half-angle), against its weight and the friction that can hold it, at most mu N cos b
// downwards: it stays jammed when mu >= mu* = tan b - m g / (N cos b), a Morse taper's
// self-locking rule; below, it slides up the cone until the normal force has fallen to
// N' = m g / (sin b - mu cos b), where the cone holds it again.
#include "ccsim_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ccsim_scene_msg.h"
#include "geo_vec.h"
#include "sim_data.h"
#include "wire.h"

static const double kPi = 3.14159265358979323846;

typedef struct wedge_run {
  double n_push;        // normal force cone -> torus at the end of the press (t = 0.6 s) [N]
  double z_push;        // torus height then [m]
  double z_top;         // its highest point after that [m]
  double n_hold;        // normal force once the ring has lifted away (t = 0.7 s) [N]
  double z_hold;        // torus height then [m]
  double z_lo, z_hi;    // its lowest and highest points from then on [m]
  double n_end, z_end;  // normal force and height 2 s later (t = 2.7 s)
} wedge_run;

static double g_weight, g_cos_b, g_sin_b;

// Sum of the normal forces between bodies a and b at the current state [N].
static double normal_force(const sim_model *m, sim_data *d, int a, int b) {
  assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
  int n = 0;
  const sim_contact *c = sim_data_contacts(d, &n);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    if ((c[i].body_a == a && c[i].body_b == b) || (c[i].body_a == b && c[i].body_b == a)) {
      sum += c[i].force;
    }
  }
  return sum;
}

// examples/wedge.json with friction mu (static and sliding) played to t_end in 1 ms steps;
// the pusher presses until 0.6 s and is clear of the torus from 0.65 s
static void run_wedge(double mu, double t_end, wedge_run *out) {
  const char *src = getenv("CCSIM_SOURCE_DIR");
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/examples/wedge.json", src ? src : ".");
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  Ccsim__Scene scene = *ccsim_scene_message(sc);
  Ccsim__ContactParams cp = *scene.contact;
  cp.has_mu = cp.has_mu_dynamic = 1;
  cp.mu = cp.mu_dynamic = mu;
  scene.contact = &cp;
  sim_model *m = wire_scene_compile(&scene, err, sizeof err);
  if (!m) print_error("%s\n", err);
  assert_non_null(m);
  ccsim_scene_destroy(&sc);
  sim_data *d = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  int cone = sim_model_body(m, "cone"), torus = sim_model_body(m, "torus");
  assert_true(cone >= 0 && torus >= 0);
  g_weight = m->mass[torus] * 9.81;
  double p[3];
  out->z_top = out->z_hi = -1;
  out->z_lo = 1;
  long n = lround(t_end / 1e-3);
  for (long k = 1; k <= n; k++) {
    assert_int_equal(sim_step(m, d, 1e-3 * (double)k), CCSIM_OK);
    sim_get_body(m, d, torus, p, NULL, NULL, NULL);
    if (k == 600) {
      out->n_push = normal_force(m, d, cone, torus);
      out->z_push = p[2];
    }
    if (k >= 600) out->z_top = fmax(out->z_top, p[2]);
    if (k == 700) {
      out->n_hold = normal_force(m, d, cone, torus);
      out->z_hold = p[2];
    }
    if (k >= 700) {
      out->z_hi = fmax(out->z_hi, p[2]);
      out->z_lo = fmin(out->z_lo, p[2]);
    }
  }
  out->n_end = normal_force(m, d, cone, torus);
  out->z_end = p[2];
  const sim_stats *st = sim_data_stats(d);
  print_message(
      "mu %.4f: pressed with %.1f N at z %.6f m, then up to %+.3g m; released "
      "(0.7 s) %.1f N at z %.6f m, then within [%+.3g, %+.3g] m; at %.2f s %.2f N at "
      "z %.6f m; %llu CVODE steps, %u anchors\n",
      mu, out->n_push, out->z_push, out->z_top - out->z_push, out->n_hold, out->z_hold,
      out->z_lo - out->z_hold, out->z_hi - out->z_hold, t_end, out->n_end, out->z_end,
      (unsigned long long)st->steps, st->anchors);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// The threshold where the cone's half-angle and mu put it: 1.1 mu* stays jammed for 2 s
// once the pusher has gone (neither rises nor sinks by 1 um, keeps its normal force);
// 0.9 mu* is pushed off
static void test_wedge_threshold(void **state) {
  (void)state;
  // the cone's facets slope like the smooth cone through their middles
  double b = atan(0.06 * cos(kPi / 64) / 0.2);
  g_cos_b = cos(b), g_sin_b = sin(b);
  // the normal force the released torus keeps, jammed with the example's mu = 0.4
  wedge_run ref, hi, lo;
  run_wedge(0.4, 0.7, &ref);
  double mu_star = tan(b) - g_weight / (ref.n_hold * g_cos_b);
  print_message(
      "prediction: mu* = tan b - m g / (N cos b) = %.4f - %.4f / (%.1f x %.4f) = "
      "%.4f\n",
      tan(b), g_weight, ref.n_hold, g_cos_b, mu_star);
  assert_true(ref.n_hold > 50 * g_weight);  // squeezed hard: mu* is about tan b

  run_wedge(1.1 * mu_star, 2.7, &hi);
  assert_true(hi.z_hi - hi.z_hold < 1e-6 && hi.z_hold - hi.z_lo < 1e-6);
  assert_double_rel(hi.n_end, hi.n_hold, 0.01, 0);
  assert_true(hi.n_hold > 0.5 * hi.n_push);  // released, yet still jammed hard

  run_wedge(0.9 * mu_star, 2.7, &lo);
  // pushed up the cone: it rises by far more than the tolerance, and the cone holds it
  // again only once its normal force is down to m g / (sin b - mu cos b) or less
  double n_limit = g_weight / (g_sin_b - 0.9 * mu_star * g_cos_b);
  print_message("0.9 mu*: the cone can hold at most %.1f N; it ends with %.2f N\n", n_limit,
                lo.n_end);
  assert_true(lo.z_top - lo.z_push > 1e-3);
  assert_true(lo.n_end < 1.1 * n_limit);
  assert_true(lo.n_end < 0.05 * lo.n_push);
}
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wedge_threshold),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
