// ctest-label: unit
// Scripted kinematic paths (scene key bodies[].path): a path-driven body is at its path's
// pose at every step's end, linear in position and along the shortest rotation in between,
// holds its first and last poses outside the path, moves with the segment's twist, and
// refuses client inputs; malformed paths are refused with a message naming the field.
#include "ccsim_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ccsim_scene_msg.h"
#include "sim_data.h"
#include "sim_model.h"
#include "wire.h"

static const double kPi = 3.14159265358979323846;

// a free ball beside a kinematic box that waits 0.1 s, moves 0.4 m up while turning a
// quarter turn about z until t = 0.5 s, then holds
static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81], \"bodies\": ["
    " {\"name\": \"ball\", \"mass\": 1, \"inertia\": [1, 1, 1], \"pose\": {\"p\": [5, 0, 0]}},"
    " {\"name\": \"lift\", \"kinematic\": true, \"shape\": {\"box\": {\"size\": [0.1, 0.1, 0.1]}},"
    "  \"path\": [{\"t\": 0.1, \"p\": [0, 0, 0.1]},"
    "            {\"t\": 0.5, \"p\": [0, 0, 0.5], \"q\": [0.70710678118654757, 0, 0, "
    "0.70710678118654757]}]}]}";

static sim_model *compile_json(const char *json, char *err, size_t err_sz) {
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "inline", NULL, err, err_sz);
  if (!sc) return NULL;
  sim_model *m = wire_scene_compile(ccsim_scene_message(sc), err, err_sz);
  ccsim_scene_destroy(&sc);
  return m;
}

static void test_follows_path(void **state) {
  (void)state;
  char err[512] = "";
  sim_model *m = compile_json(k_scene, err, sizeof err);
  if (!m) print_error("%s\n", err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  int lift = sim_model_body(m, "lift");
  assert_int_equal(lift, 1);
  double p[3], q[4], v[3], w[3];
  sim_get_body(m, d, lift, p, q, v, w);
  assert_double_near(p[2], 0.1, 0);  // before the path: its first pose, at rest
  assert_double_near(v[2], 0, 0);
  for (int k = 1; k <= 60; k++) {
    double t = 0.01 * k;
    assert_int_equal(sim_step(m, d, t), CCSIM_OK);
    sim_get_body(m, d, lift, p, q, v, w);
    double s = t <= 0.1 ? 0 : t >= 0.5 ? 1 : (t - 0.1) / 0.4;
    double half = 0.5 * (kPi / 2) * s;  // half the angle turned so far
    assert_double_near(p[0], 0, 1e-15);
    assert_double_near(p[2], 0.1 + 0.4 * s, 1e-12);
    assert_double_near(q[0], cos(half), 1e-12);
    assert_double_near(q[3], sin(half), 1e-12);
    // the twist is that of the step just taken: the segment's (1 m/s up, (pi/2)/0.4 rad/s)
    // for steps inside it, including the one that ends at t = 0.5
    int moving = t > 0.1 + 1e-9 && t < 0.5 + 1e-9;
    assert_double_near(v[2], moving ? 1.0 : 0.0, 1e-9);
    assert_double_near(w[2], moving ? (kPi / 2) / 0.4 : 0.0, 1e-9);
  }
  // the path is a function of time: reset and a coarser stride land on the same poses
  sim_reset(m, d);
  assert_int_equal(sim_step(m, d, 0.3), CCSIM_OK);
  sim_get_body(m, d, lift, p, q, NULL, NULL);
  assert_double_near(p[2], 0.3, 1e-12);
  assert_double_near(q[3], sin(0.5 * (kPi / 2) * 0.5), 1e-12);
  // no client inputs for a path-driven body
  const double zero[3] = {0, 0, 0};
  assert_int_equal(sim_set_kinematic(m, d, lift, NULL, NULL, zero, zero, 0.01), CCSIM_EINVAL);
  assert_non_null(strstr(sim_data_errmsg(d), "follows its scene path"));
  Ccsim__Step st;
  Ccsim__BodyInput in, *inp[1] = {&in};
  Ccsim__Twist tw;
  ccsim__step__init(&st);
  ccsim__body_input__init(&in);
  ccsim__twist__init(&tw);
  in.has_body = 1;
  in.body = (uint32_t)lift;
  in.twist = &tw;
  st.n_inputs = 1;
  st.inputs = inp;
  assert_int_equal(wire_inputs_check(m, &st, err, sizeof err), -1);
  assert_non_null(strstr(err, "follows the path"));
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

static void test_rejects_bad_paths(void **state) {
  (void)state;
  static const struct {
    const char *body;  // the second body's JSON
    const char *msg;   // a piece of the expected message
  } cases[] = {
      {"{\"name\": \"b\", \"mass\": 1, \"inertia\": [1, 1, 1], \"path\": [{\"t\": 0}]}",
       "only kinematic bodies"},
      {"{\"name\": \"b\", \"kinematic\": true, \"path\": []}", "non-empty array"},
      {"{\"name\": \"b\", \"kinematic\": true, \"path\": [{\"p\": [0, 0, 0]}]}",
       "\"t\" is required"},
      {"{\"name\": \"b\", \"kinematic\": true, \"path\": [{\"t\": 0, \"x\": 1}]}", "x"},
      {"{\"name\": \"b\", \"kinematic\": true, \"path\": [{\"t\": 0.2}, {\"t\": 0.2}]}",
       "strictly rising"},
      {"{\"name\": \"b\", \"kinematic\": true, \"path\": [{\"t\": -1}]}", "strictly rising"},
      {"{\"name\": \"b\", \"kinematic\": true, \"path\": [{\"t\": 0, \"q\": [0, 0, 0, 0]}]}",
       "must not be zero"},
      {"{\"name\": \"b\", \"kinematic\": true, \"pose\": {\"p\": [0, 0, 1]}, "
       "\"path\": [{\"t\": 0}]}",
       "not both"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char json[512], err[512] = "";
    snprintf(json, sizeof json, "{\"bodies\": [{\"name\": \"a\", \"fixed\": true}, %s]}",
             cases[i].body);
    sim_model *m = compile_json(json, err, sizeof err);
    if (m || !strstr(err, cases[i].msg)) {
      print_error("case %zu: %s -> \"%s\"\n", i, cases[i].body, err);
    }
    assert_null(m);
    assert_non_null(strstr(err, cases[i].msg));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_follows_path),
      cmocka_unit_test(test_rejects_bad_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
