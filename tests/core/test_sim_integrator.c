// ctest-label: validation
// The compliant stepper's mean contact wrench over a step (sim_data_body_mean_contact)
// against momentum: a ball dropped on a floor at 1 ms steps, whose impacts are shorter
// than a step, receives from the mean force exactly the impulse that turns v_in into
// v_out (the end-of-step sample sees none of it); a box at rest has mean = end value =
// m g; the floor gets the opposite of the ball's.
#include "ccsim_test.h"

#include <math.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"

#include "ccsim_test_scenes.h"
#include "ccsim_test_sim.h"

#define G 9.81
#define DT 1e-3  // the request's step [s]

typedef struct fixture {
  sim_model *m;
  sim_data *d;
} fixture;

static int setup(fixture *f, const sim_body_desc *b, double k, double alpha) {
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.k = k, s.contact.alpha = alpha, s.contact.n = 1, s.contact.standoff = 1e-3;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_N | SIM_CP_STANDOFF;
  s.rtol = 1e-6, s.atol = 1e-9;
  sim_body_desc bb[2];
  memcpy(bb, b, sizeof bb);
  f->m = test_compile(&s, bb, 2);
  if (!f->m) return -1;
  char err[256] = "";
  f->d = sim_data_new(f->m, err, sizeof err);
  if (!f->d) print_error("new: %s\n", err);
  return f->d ? 0 : -1;
}

static void teardown(fixture *f) {
  sim_data_destroy(&f->d);
  sim_model_destroy(&f->m);
}

// A 0.5 kg ball of radius 5 cm dropped from 20 cm above the floor of test_box_on_floor on
// a stiff contact (k 1e7 N/m: an impact of about pi sqrt(m / k) = 0.7 ms, shorter than a
// step). Over the steps of each impact the mean contact force's impulse sum(F dt) equals
// the momentum change m (v_out - v_in) less gravity's m g T: both from states, the
// velocities before the impact's first step and after its last.
static void test_ball_impacts_impulse(void **state) {
  (void)state;
  sim_body_desc b[2];
  test_box_on_floor(b, 0);
  b[1].name = "ball";
  b[1].mass = 0.5;
  b[1].shape.type = SIM_SHAPE_SPHERE;
  b[1].shape.radius = 0.05;
  b[1].shape.res[0] = 32, b[1].shape.res[1] = 16;
  b[1].pos[0] = 0.3, b[1].pos[2] = 0.25;  // clear of the diagonal across the floor's top
  fixture f = {0};
  assert_int_equal(setup(&f, b, 1e7, 0.3), 0);
  const double mass = 0.5;
  int impacts = 0, in_impact = 0, steps = 0, end_saw = 0;
  double v_in = 0, imp = 0, imp_floor = 0, span = 0;
  for (int k = 1; k <= 700 && impacts < 2; k++) {
    double v0[3];
    sim_get_body(f.m, f.d, 1, NULL, NULL, v0, NULL);
    ccsim_status st = sim_step(f.m, f.d, k * DT);
    if (st != CCSIM_OK) print_error("t = %g: %s\n", k * DT, sim_data_errmsg(f.d));
    assert_int_equal(st, CCSIM_OK);
    double mf[3], mt[3], ff[3], ft[3], dt = 0, v1[3], ef[3], et[3];
    int n = 0;
    sim_data_body_mean_contact(f.m, f.d, 1, mf, mt, &dt);
    sim_data_body_mean_contact(f.m, f.d, 0, ff, ft, NULL);
    assert_double_rel(dt, DT, 1e-12, 0);
    assert_int_equal(sim_eval_contacts(f.m, f.d), CCSIM_OK);
    sim_data_body_contact(f.m, f.d, 1, ef, et, &n);
    sim_get_body(f.m, f.d, 1, NULL, NULL, v1, NULL);
    if (mf[2] != 0) {
      if (!in_impact) v_in = v0[2], imp = imp_floor = span = 0, steps = 0;
      in_impact = 1;
      imp += mf[2] * dt, imp_floor += ff[2] * dt, span += dt, steps++;
      end_saw += n > 0;
      // a sphere's force passes through its centre, the reference origin: no torque
      assert_true(geo_v3_norm(mt) <= 1e-9 * fabs(mf[2]) + 1e-12);
      assert_double_near(mf[0], 0, 1e-9 * fabs(mf[2]) + 1e-12);
    } else if (in_impact) {
      // the impact ended in the previous step: v_out is the state it ended with
      double v_out = v0[2], expect = mass * (v_out - v_in) - mass * -G * span;
      print_message("impact %d: v_in %.6f m/s, v_out %.6f m/s over %d steps (%.0f ms); "
                    "impulse %.9g N s, m (v_out - v_in) - m g T = %.9g N s; floor %.9g N s\n",
                    impacts + 1, v_in, v_out, steps, span * 1e3, imp, expect, imp_floor);
      assert_true(v_in < -1.0 && v_out > 0.5);  // a real bounce, not a graze
      assert_double_rel(imp, expect, 1e-3, 0);
      assert_double_rel(imp_floor, -imp, 1e-12, 0);  // equal and opposite
      in_impact = 0;
      impacts++;
    }
  }
  assert_int_equal(impacts, 2);
  // the end-of-step sample missed at least one step of these impacts: the reason for the mean
  print_message("steps whose end state still touched: %d\n", end_saw);
  teardown(&f);
}

// A frictionless box on the floor pushed along x by a kinematic pusher whose speed changes
// at every step (a controller's twist each tick): the damping term makes the push jump with
// the speed, so each step's mean must start from the wrench at the new speed. Over each step
// the box's mean contact force along x times dt equals its momentum change m (v1 - v0)
// (nothing else acts along x), to 1e-3 of the largest such change.
static void test_pushed_box_mean_follows_twist_jumps(void **state) {
  (void)state;
  sim_body_desc b[3];
  test_box_on_floor(b, 0.5e-3);
  b[1].pos[0] = 0.0;
  memset(&b[2], 0, sizeof b[2]);
  b[2].name = "pusher";
  b[2].type = SIM_BODY_KINEMATIC;
  b[2].shape.type = SIM_SHAPE_BOX;
  b[2].shape.size[0] = 0.02, b[2].shape.size[1] = 0.2, b[2].shape.size[2] = 0.02;
  b[2].quat[0] = 1;
  b[2].pos[0] = -0.05 - 0.01 - 0.5e-3, b[2].pos[2] = 0.025;  // its face within the standoff
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.k = 1e5, s.contact.alpha = 0.5, s.contact.n = 1, s.contact.standoff = 1e-3;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_N | SIM_CP_STANDOFF;
  s.rtol = 1e-8, s.atol = 1e-11;
  sim_model *m = test_compile(&s, b, 3);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  assert_non_null(d);
  const double mass = 1.0, zero[3] = {0, 0, 0};
  double worst = 0, largest = 0;
  for (int k = 1; k <= 200; k++) {
    double v[3] = {0.05 + 0.03 * sin(0.7 * k), 0, 0}, v0[3], v1[3], mf[3], mt[3], dt = 0;
    assert_int_equal(sim_set_kinematic(m, d, 2, NULL, NULL, v, zero, DT), CCSIM_OK);
    sim_get_body(m, d, 1, NULL, NULL, v0, NULL);
    ccsim_status st = sim_step(m, d, k * DT);
    if (st != CCSIM_OK) print_error("t = %g: %s\n", k * DT, sim_data_errmsg(d));
    assert_int_equal(st, CCSIM_OK);
    sim_get_body(m, d, 1, NULL, NULL, v1, NULL);
    sim_data_body_mean_contact(m, d, 1, mf, mt, &dt);
    double expect = mass * (v1[0] - v0[0]), got = mf[0] * dt;
    if (k > 20) {  // once the pusher carries the box
      worst = fmax(worst, fabs(got - expect));
      largest = fmax(largest, fabs(expect));
    }
  }
  print_message("pushed box: worst |mean impulse - m dv| %.3g N s of the largest m dv %.3g N s\n",
                worst, largest);
  assert_true(largest > 1e-5);  // the pusher did push
  assert_true(worst <= 1e-3 * largest);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// The 1 kg box of test_box_on_floor at rest on a contact of k 1e5 N/m, in steps of 1 ms
// and then of 10 ms: over every step the mean contact force equals the end value and both
// equal m g; the torque about its centre (the reference origin) is nil.
static void test_box_at_rest_mean_is_weight(void **state) {
  (void)state;
  sim_body_desc b[2];
  // set down where four springs (its corners) carry the weight, clear of the diagonal
  // that splits the floor's top face
  test_box_on_floor(b, 1e-3 - G / 4e5);
  b[1].pos[0] = 0.3;
  fixture f = {0};
  assert_int_equal(setup(&f, b, 1e5, 0.5), 0);
  for (int k = 1; k <= 300; k++) {
    ccsim_status st = sim_step(f.m, f.d, k <= 200 ? k * DT : 0.2 + (k - 200) * 10 * DT);
    assert_int_equal(st, CCSIM_OK);
    double mf[3], mt[3], ef[3], et[3];
    int n = 0;
    sim_data_body_mean_contact(f.m, f.d, 1, mf, mt, NULL);
    assert_int_equal(sim_eval_contacts(f.m, f.d), CCSIM_OK);
    sim_data_body_contact(f.m, f.d, 1, ef, et, &n);
    assert_double_rel(mf[2], 1.0 * G, 1e-6, 0);
    assert_double_rel(mf[2], ef[2], 1e-6, 0);
    assert_double_near(mf[0], 0, 1e-6);
    assert_double_near(mf[1], 0, 1e-6);
    assert_true(geo_v3_norm(mt) < 1e-6);
  }
  teardown(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ball_impacts_impulse),
      cmocka_unit_test(test_box_at_rest_mean_is_weight),
      cmocka_unit_test(test_pushed_box_mean_follows_twist_jumps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
