// ctest-label: validation
// ctest-timeout: 300
// Rigid mode (velocity-level LCP time stepping) against analytic answers: a box at rest
// carries its weight and neither sinks nor drifts; on an incline it sticks below atan mu
// and slides with g (sin t - mu cos t) above; without friction Dantzig solves the steps
// and the box slides with g sin t; Baraff's instantaneous forces equal the weight; the
// compliant and rigid modes agree on the support of a resting box.
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"
#include "sim_rigid.h"
#include "ccsim_test_sim.h"

#define G 9.81
#define DS 1e-3  // standoff [m]

typedef struct fixture {
  sim_model *m;
  sim_data *d;
  sim_rigid *r;
} fixture;

static sim_body_desc plate(double theta) {
  sim_body_desc b;
  memset(&b, 0, sizeof b);
  b.name = "plate";
  b.type = SIM_BODY_FIXED;
  b.shape.type = SIM_SHAPE_BOX;
  b.shape.size[0] = 4, b.shape.size[1] = 4, b.shape.size[2] = 0.1;
  // tilted by theta about y: the top face's normal is (sin t, 0, cos t), through the origin
  b.quat[0] = cos(theta / 2), b.quat[2] = sin(theta / 2);
  b.pos[0] = -0.05 * sin(theta), b.pos[2] = -0.05 * cos(theta);
  return b;
}

// a 1 kg box 0.1 x 0.1 x 0.05 resting on the plate at height `gap` above it, offset
// `along` down the slope
static sim_body_desc box_on(double theta, double gap, double along) {
  sim_body_desc b;
  memset(&b, 0, sizeof b);
  b.name = "box";
  b.mass = 1.0;
  b.shape.type = SIM_SHAPE_BOX;
  b.shape.size[0] = 0.1, b.shape.size[1] = 0.1, b.shape.size[2] = 0.05;
  b.quat[0] = cos(theta / 2), b.quat[2] = sin(theta / 2);
  double up = 0.025 + gap, n[3] = {sin(theta), 0, cos(theta)}, s[3] = {cos(theta), 0,
                                                                        -sin(theta)};
  for (int j = 0; j < 3; j++) b.pos[j] = up * n[j] + along * s[j];
  return b;
}

// The plate's top face is two triangles split along a diagonal through its centre; the box
// starts 1.9 m up the slope and stays clear of the diagonal (x = 0 at y = 0) in the tests.
static int setup_scene_at(fixture *f, double theta, double mu, sim_mode mode, double gap) {
  sim_body_desc b[2] = {plate(theta), box_on(theta, gap, -1.9)};
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.k = 1e5, s.contact.alpha = 0.5, s.contact.standoff = DS, s.contact.mu = mu;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_STANDOFF | SIM_CP_MU;
  s.rtol = 1e-8, s.atol = 1e-10;
  s.mode = mode;
  s.rigid_dt = 1e-3;
  f->m = test_compile(&s, b, 2);
  if (!f->m) return -1;
  char err[256] = "";
  f->d = sim_data_new(f->m, err, sizeof err);
  f->r = sim_rigid_new(f->m, err, sizeof err);
  if (!f->d || !f->r) print_error("new: %s\n", err);
  return f->d && f->r ? 0 : -1;
}

static int setup_scene(fixture *f, double theta, double mu, sim_mode mode) {
  return setup_scene_at(f, theta, mu, mode, 0.5 * DS);
}

static void teardown_scene(fixture *f) {
  sim_rigid_destroy(&f->r);
  sim_data_destroy(&f->d);
  sim_model_destroy(&f->m);
}

// advance by rigid steps of 1 ms to time t_end (the test's own workspace, so its contact
// forces can be read)
static void run_rigid(fixture *f, double t_end) { test_rigid_run(f->m, f->d, f->r, t_end); }

static void contact_force(const sim_rigid *r, int b, double out[3], int *carrying) {
  test_rigid_contact_force(r, b, out, carrying);
}

// distance of the box's bottom face from the plate's top (the plane through the origin)
static double height_above(const sim_model *m, const sim_data *d, double theta) {
  double p[3], n[3] = {sin(theta), 0, cos(theta)};
  sim_get_body(m, d, 1, p, NULL, NULL, NULL);
  return geo_v3_dot(p, n) - 0.025;
}

// ---- a box at rest -----------------------------------------------------------------

static void box_at_rest(double mu, int solver) {
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, mu, SIM_MODE_RIGID), 0);
  run_rigid(&f, 0.1);
  double f0[3], p0[3], q0[4], p1[3], q1[4];
  int nc = 0;
  contact_force(f.r, 1, f0, &nc);
  sim_get_body(f.m, f.d, 1, p0, q0, NULL, NULL);
  double h0 = height_above(f.m, f.d, 0);
  run_rigid(&f, 10.1);
  double f1[3];
  contact_force(f.r, 1, f1, &nc);
  sim_get_body(f.m, f.d, 1, p1, q1, NULL, NULL);
  double h1 = height_above(f.m, f.d, 0);
  const sim_stats *st = sim_data_stats(f.d);
  print_message("box at rest (mu %.1f): support %.9g N (weight %.9g N) over %d contacts; "
                "height %.9g -> %.9g m (target %.3g); drift %.3g m; solver %d, %llu pivots, "
                "%llu failures\n",
                mu, f1[2], G, nc, h0, h1, 0.5 * DS, geo_v3_dist(p0, p1), st->lcp_solver,
                (unsigned long long)st->lcp_pivots, (unsigned long long)st->lcp_failures);
  assert_double_rel(f0[2], 1.0 * G, 1e-3, 0);
  assert_double_rel(f1[2], 1.0 * G, 1e-3, 0);
  assert_double_near(f1[0], 0, 1e-6);
  assert_double_near(f1[1], 0, 1e-6);
  assert_true(nc >= 4);
  // no sinking: the box stays at the rest distance, half the standoff
  assert_double_near(h1, 0.5 * DS, 1e-8);
  assert_double_near(h1, h0, 1e-9);
  assert_true(geo_v3_dist(p0, p1) < 1e-8);
  double dot = fabs(q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3]);
  assert_true(2 * acos(fmin(1.0, dot)) < 1e-6);
  assert_int_equal(st->lcp_solver, solver);
  assert_int_equal(st->lcp_failures, 0);
  teardown_scene(&f);
}

// rigid_dt: 0 is the default, 1 us to 1 s are taken; finer steps are refused by value, as
// 1e-300 s would make one Step run (almost) forever
static void test_rigid_dt_range(void **state) {
  (void)state;
  sim_body_desc b[1] = {box_on(0, 0.1, 0)};
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.mode = SIM_MODE_RIGID;
  s.nbody = 1;
  s.bodies = b;
  const double ok[] = {0, SIM_MIN_RIGID_DT, 1e-3, 1}, bad[] = {1e-300, 0.999e-6, 1.5, -1e-3};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    s.rigid_dt = ok[i];
    char err[256] = "";
    sim_model *m = sim_model_compile(&s, err, sizeof err);
    if (!m) print_error("rigid_dt %g: %s\n", ok[i], err);
    assert_non_null(m);
    sim_model_destroy(&m);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s.rigid_dt = bad[i];
    char err[256] = "";
    assert_null(sim_model_compile(&s, err, sizeof err));
    assert_non_null(strstr(err, "scene.rigid_dt = "));
    assert_non_null(strstr(err, "must be in [1e-06, 1] s"));
  }
}

static void test_box_at_rest_frictionless(void **state) {
  (void)state;
  box_at_rest(0.0, SIM_LCP_SOLVER_DANTZIG);
}

static void test_box_at_rest_friction(void **state) {
  (void)state;
  box_at_rest(0.5, SIM_LCP_SOLVER_LEMKE);
}

// ---- incline -----------------------------------------------------------------------

static void test_incline_sticks(void **state) {
  (void)state;
  double theta = atan(0.40), mu = 0.5;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, theta, mu, SIM_MODE_RIGID), 0);
  run_rigid(&f, 0.01);
  double p0[3], p1[3], fc[3];
  int nc = 0;
  sim_get_body(f.m, f.d, 1, p0, NULL, NULL, NULL);
  run_rigid(&f, 10.01);
  sim_get_body(f.m, f.d, 1, p1, NULL, NULL, NULL);
  contact_force(f.r, 1, fc, &nc);
  double drift = geo_v3_dist(p0, p1);
  print_message("incline tan = 0.40, mu = 0.5: drift %.3g m over 10 s; contact force "
                "(%.9g, %.9g, %.9g) N on %d contacts\n",
                drift, fc[0], fc[1], fc[2], nc);
  assert_true(drift < 1e-6);
  // the contact force holds the weight: (0, 0, m g)
  assert_double_near(fc[0], 0, 1e-3 * G);
  assert_double_near(fc[1], 0, 1e-3 * G);
  assert_double_rel(fc[2], G, 1e-3, 0);
  assert_int_equal(sim_data_stats(f.d)->lcp_failures, 0);
  teardown_scene(&f);
}

#define SLIDE_T 0.8  // [s]

// velocity along the slope after SLIDE_T of sliding from rest
static double slide_speed(double theta, double mu, int *solver) {
  fixture f = {0};
  assert_int_equal(setup_scene(&f, theta, mu, SIM_MODE_RIGID), 0);
  run_rigid(&f, SLIDE_T);
  double v[3], s[3] = {cos(theta), 0, -sin(theta)};
  sim_get_body(f.m, f.d, 1, NULL, NULL, v, NULL);
  assert_double_near(v[1], 0, 1e-9);
  double h = height_above(f.m, f.d, theta);
  assert_double_near(h, 0.5 * DS, 1e-8);
  *solver = sim_data_stats(f.d)->lcp_solver;
  assert_int_equal(sim_data_stats(f.d)->lcp_failures, 0);
  teardown_scene(&f);
  return geo_v3_dot(v, s);
}

static void test_incline_slides(void **state) {
  (void)state;
  double theta = atan(0.70), mu = 0.5;
  int solver = 0;
  double v = slide_speed(theta, mu, &solver);
  double a = G * (sin(theta) - mu * cos(theta)) * SLIDE_T;
  print_message("incline tan = 0.70, mu = 0.5: speed %.9g m/s after %g s, g (sin - mu cos) t "
                "= %.9g m/s\n",
                v, SLIDE_T, a);
  // the pyramid's first side follows the slip: exact along the slope (no pyramid error)
  assert_double_rel(v, a, 1e-4, 0);
  assert_int_equal(solver, SIM_LCP_SOLVER_LEMKE);
}

static void test_frictionless_incline_dantzig(void **state) {
  (void)state;
  double theta = atan(0.40);
  int solver = 0;
  double v = slide_speed(theta, 0.0, &solver);
  print_message("frictionless incline: speed %.9g m/s after %g s, g sin(theta) t = %.9g\n", v,
                SLIDE_T, G * sin(theta) * SLIDE_T);
  assert_double_rel(v, G * sin(theta) * SLIDE_T, 1e-4, 0);
  assert_int_equal(solver, SIM_LCP_SOLVER_DANTZIG);
}

// ---- Baraff's instantaneous forces -------------------------------------------------

static void test_contact_forces_at_rest(void **state) {
  (void)state;
  double theta = atan(0.40), mu = 0.5;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, theta, mu, SIM_MODE_RIGID), 0);
  int n = 0;
  assert_int_equal(sim_rigid_contact_forces(f.m, sim_data_rigid_io(f.d), f.r, 0, &n), CCSIM_OK);
  double fc[3];
  int nc = 0;
  contact_force(f.r, 1, fc, &nc);
  print_message("Baraff on the incline: %d contacts, force (%.9g, %.9g, %.9g) N\n", n, fc[0],
                fc[1], fc[2]);
  assert_true(n >= 4);
  // exact up to the regularisation: eps = 1e-6 times diagonal entries of a few m g
  assert_double_near(fc[0], 0, 1e-5 * G);
  assert_double_near(fc[1], 0, 1e-5 * G);
  assert_double_rel(fc[2], G, 1e-5, 0);
  teardown_scene(&f);
  // without friction: the normal forces alone, and the box accelerates down the slope
  assert_int_equal(setup_scene(&f, 0, 0, SIM_MODE_RIGID), 0);
  assert_int_equal(sim_rigid_contact_forces(f.m, sim_data_rigid_io(f.d), f.r, 0, &n), CCSIM_OK);
  contact_force(f.r, 1, fc, &nc);
  assert_double_rel(fc[2], G, 1e-5, 0);
  assert_int_equal(sim_data_stats(f.d)->lcp_solver, SIM_LCP_SOLVER_DANTZIG);
  teardown_scene(&f);
}

// A box sliding at a state no step has reached feels Coulomb's sliding friction, mu m g
// against its motion (Baraff's section 7), not the stuck pyramid's zero: 1 m/s along x on
// the flat plate, 1 mm/s along y, and down the incline of tan 0.4 (mu = 0.5: a box at rest
// there sticks). After steps have brought a box to rest, its contacts are stuck again.
static void test_contact_forces_sliding(void **state) {
  (void)state;
  const double mu = 0.5, theta = atan(0.40);
  // slope, speed down it (along x when flat), speed along y
  const double cases[3][3] = {{0, 1, 0}, {0, 0, 1e-3}, {theta, 1, 0}};
  for (int i = 0; i < 3; i++) {
    fixture f = {0};
    double th = cases[i][0];
    assert_int_equal(setup_scene(&f, th, mu, SIM_MODE_RIGID), 0);
    double p[3], q[4], w[3] = {0, 0, 0}, v[3];
    // downhill is (cos t, 0, -sin t)
    v[0] = cases[i][1] * cos(th), v[1] = cases[i][2], v[2] = -cases[i][1] * sin(th);
    sim_get_body(f.m, f.d, 1, p, q, NULL, NULL);
    assert_int_equal(sim_set_body(f.m, f.d, 1, p, q, v, w), CCSIM_OK);
    int n = 0, nc = 0;
    assert_int_equal(sim_rigid_contact_forces(f.m, sim_data_rigid_io(f.d), f.r, 0, &n), CCSIM_OK);
    double fc[3], normal[3] = {sin(th), 0, cos(th)}, vhat[3];
    contact_force(f.r, 1, fc, &nc);
    geo_v3_copy(vhat, v);
    geo_v3_normalize(vhat);
    double fn = geo_v3_dot(fc, normal), along = geo_v3_dot(fc, vhat);
    print_message(
        "sliding at %.3g m/s (slope %.3f rad): %d contacts, normal %.9g N, along the "
        "motion %.9g N (-mu m g cos t = %.9g)\n",
        geo_v3_norm(v), th, n, fn, along, -mu * G * cos(th));
    assert_true(n >= 4);
    assert_double_rel(fn, G * cos(th), 1e-5, 0);
    assert_double_rel(along, -mu * G * cos(th), 1e-5, 0);
    // nothing across the motion, in the plane
    double across[3];
    geo_v3_cross(across, normal, vhat);
    assert_double_near(geo_v3_dot(fc, across), 0, 1e-5 * G);
    teardown_scene(&f);
  }
  // stuck after steps: the incline holds it with m g sin t, below mu m g cos t
  fixture f = {0};
  assert_int_equal(setup_scene(&f, theta, mu, SIM_MODE_RIGID), 0);
  run_rigid(&f, 0.2);
  int n = 0, nc = 0;
  assert_int_equal(sim_rigid_contact_forces(f.m, sim_data_rigid_io(f.d), f.r, sim_data_time(f.d), &n), CCSIM_OK);
  double fc[3];
  contact_force(f.r, 1, fc, &nc);
  print_message("at rest after 0.2 s of steps: force (%.9g, %.9g, %.9g) N\n", fc[0], fc[1], fc[2]);
  assert_double_near(fc[0], 0, 1e-5 * G);
  assert_double_rel(fc[2], G, 1e-5, 0);
  teardown_scene(&f);
}

// ---- held inputs, tumbling, a drop through sim_step ---------------------------------------

// a horizontal push at the centre of mass of the resting box (mu = 0.5): below mu m g it
// holds, above it the box slides with (F - mu m g) / m
static void test_push_below_and_above_friction(void **state) {
  (void)state;
  const double mu = 0.5, pushes[2] = {3.0, 7.0};
  for (int i = 0; i < 2; i++) {
    fixture f = {0};
    assert_int_equal(setup_scene(&f, 0, mu, SIM_MODE_RIGID), 0);
    double *force = test_calloc(6, sizeof(double)), *torque = test_calloc(6, sizeof(double));
    force[3] = pushes[i];  // body 1, x
    sim_rigid_bind_inputs(f.r, force, torque);
    double p0[3], p1[3], v[3];
    sim_get_body(f.m, f.d, 1, p0, NULL, NULL, NULL);
    run_rigid(&f, 0.5);
    sim_get_body(f.m, f.d, 1, p1, NULL, v, NULL);
    double a = fmax(0, pushes[i] - mu * G);
    print_message("push %.1f N (mu m g = %.4g N): moved %.3g m, speed %.9g m/s after 0.5 s "
                  "(expected %.9g)\n",
                  pushes[i], mu * G, p1[0] - p0[0], v[0], a * 0.5);
    if (a == 0) {
      assert_true(geo_v3_dist(p0, p1) < 1e-6);
    } else {
      assert_double_rel(v[0], a * 0.5, 1e-4, 0);
      assert_double_near(v[1], 0, 1e-9);
    }
    assert_double_near(height_above(f.m, f.d, 0), 0.5 * DS, 1e-8);
    sim_rigid_bind_inputs(f.r, NULL, NULL);
    test_free(force);
    test_free(torque);
    teardown_scene(&f);
  }
}

// A box sliding without turning feels no net contact torque about its centre of mass: the
// normal forces shift forward to balance the friction's moment. The report pairs the step's
// contacts with the pose it reached, so their points ride with the box (they lagged by the
// step's travel, and the torque read (v h) m g: 0.0088 N m at 0.9 m/s and 1 ms).
static void test_sliding_box_report_torque(void **state) {
  (void)state;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, 0.5, SIM_MODE_RIGID), 0);
  double p[3], q[4], v[3] = {1, 0, 0}, w[3] = {0, 0, 0};
  sim_get_body(f.m, f.d, 1, p, q, NULL, NULL);
  assert_int_equal(sim_set_body(f.m, f.d, 1, p, q, v, w), CCSIM_OK);
  double worst = 0;
  for (int k = 1; k <= 50; k++) {
    assert_int_equal(sim_step(f.m, f.d, k * 1e-3), CCSIM_OK);
    double force[3], torque[3];
    int n = 0;
    sim_data_body_contact(f.m, f.d, 1, force, torque, &n);
    assert_true(n > 0);
    assert_double_near(force[0], -0.5 * G, 1e-4);  // sliding friction, against the motion
    if (fabs(torque[1]) > worst) worst = fabs(torque[1]);
  }
  sim_get_body(f.m, f.d, 1, NULL, NULL, v, NULL);
  print_message(
      "sliding box: |contact torque about its centre| at most %.3g N m (speed %.4f "
      "m/s after 50 ms)\n",
      worst, v[0]);
  assert_true(worst < 1e-4);
  teardown_scene(&f);
}

// torque-free tumbling far from anything: the angular momentum in the world is conserved
// to the implicit gyroscopic step's O(h^2) per step, the energy never grows
static void test_tumbling_in_flight(void **state) {
  (void)state;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, 0, SIM_MODE_RIGID), 0);
  double pos[3] = {0, 0, 5}, q[4] = {1, 0, 0, 0}, v[3] = {0, 0, 0}, w[3] = {2.0, 0.5, 1.0};
  assert_int_equal(sim_set_body(f.m, f.d, 1, pos, q, v, w), CCSIM_OK);
  const double *I = f.m->inertia + 9;
  double L0[3], e0 = 0;
  {
    double R[9], wb[3], Iw[3];
    geo_quat_to_mat(R, q);
    geo_m3_tmulv(wb, R, w);
    geo_m3_mulv(Iw, I, wb);
    geo_m3_mulv(L0, R, Iw);
    e0 = 0.5 * geo_v3_dot(wb, Iw);
  }
  double worst_rise = 0, e_prev = e0;
  for (int k = 1; k <= 1000; k++) {
    run_rigid(&f, k * 1e-3);
    double R[9], wb[3], Iw[3];
    sim_get_body(f.m, f.d, 1, NULL, q, NULL, w);
    geo_quat_to_mat(R, q);
    geo_m3_tmulv(wb, R, w);
    geo_m3_mulv(Iw, I, wb);
    double e = 0.5 * geo_v3_dot(wb, Iw);
    if (e - e_prev > worst_rise) worst_rise = e - e_prev;
    e_prev = e;
  }
  double R[9], wb[3], Iw[3], L1[3];
  geo_quat_to_mat(R, q);
  geo_m3_tmulv(wb, R, w);
  geo_m3_mulv(Iw, I, wb);
  geo_m3_mulv(L1, R, Iw);
  print_message("tumbling 1 s: |L| %.9g -> %.9g, L moved by %.3g; energy %.9g -> %.9g J, "
                "largest rise %.3g J\n",
                geo_v3_norm(L0), geo_v3_norm(L1), geo_v3_dist(L0, L1) / geo_v3_norm(L0), e0,
                e_prev, worst_rise);
  assert_true(geo_v3_dist(L0, L1) < 5e-3 * geo_v3_norm(L0));
  assert_true(worst_rise <= 1e-12 * e0);
  assert_true(e_prev <= e0);
  teardown_scene(&f);
}

// a tilted, spinning box dropped through the public sim_step: it lands, never touches past
// the standoff, and comes to rest at half the standoff with its weight carried
static void test_drop_through_sim_step(void **state) {
  (void)state;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, 0.5, SIM_MODE_RIGID), 0);
  double a = 0.3, q[4] = {cos(a / 2), sin(a / 2) * 0.6, sin(a / 2) * 0.8, 0};
  double pos[3] = {0.1, 0.2, 0.08}, v[3] = {0.2, 0, -1.0}, w[3] = {0, 0, 2.0};
  assert_int_equal(sim_set_body(f.m, f.d, 1, pos, q, v, w), CCSIM_OK);
  double e0 = sim_energy(f.m, f.d), e_prev = e0, worst = 0, lowest = 1;
  for (int k = 1; k <= 3000; k++) {
    ccsim_status st = sim_step(f.m, f.d, k * 1e-3);
    if (st != CCSIM_OK) print_error("t = %g: %s\n", k * 1e-3, sim_data_errmsg(f.d));
    assert_int_equal(st, CCSIM_OK);
    double e = sim_energy(f.m, f.d);
    if (e - e_prev > worst) worst = e - e_prev;
    e_prev = e;
    // the lowest corner's height above the floor
    double p[3], qq[4], R[9];
    sim_get_body(f.m, f.d, 1, p, qq, NULL, NULL);
    geo_quat_to_mat(R, qq);
    for (int c = 0; c < 8; c++) {
      double x[3] = {c & 1 ? 0.05 : -0.05, c & 2 ? 0.05 : -0.05, c & 4 ? 0.025 : -0.025}, y[3];
      geo_m3_mulv(y, R, x);
      if (p[2] + y[2] < lowest) lowest = p[2] + y[2];
    }
  }
  double p[3], vv[3], ww[3];
  sim_get_body(f.m, f.d, 1, p, NULL, vv, ww);
  const sim_stats *st = sim_data_stats(f.d);
  print_message("drop: energy %.6g -> %.6g J (largest rise in a step %.3g J); lowest corner "
                "%.6g m; at rest %.3g m/s, %.3g rad/s; %llu steps, %llu failures\n",
                e0, e_prev, worst, lowest, geo_v3_norm(vv), geo_v3_norm(ww),
                (unsigned long long)st->steps, (unsigned long long)st->lcp_failures);
  assert_true(lowest > 0.4 * DS);  // at most 0.1 mm past the rest distance
  assert_true(e_prev < e0);
  assert_true(worst < 1e-3 * fabs(e0));
  assert_true(geo_v3_norm(vv) < 1e-6);
  assert_true(geo_v3_norm(ww) < 1e-5);
  teardown_scene(&f);
}

// the mean contact force over a sim_step of a box at rest is its weight: the LCP steps'
// impulses summed over the request and divided by its length, for requests of one LCP step
// (1 ms) and of ten (10 ms); its torque about the box's centre is nil
static void test_mean_contact_at_rest(void **state) {
  (void)state;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, 0.5, SIM_MODE_RIGID), 0);
  double t = 0;
  for (int k = 1; k <= 300; k++) {
    t += k <= 200 ? 1e-3 : 1e-2;
    assert_int_equal(sim_step(f.m, f.d, t), CCSIM_OK);
    if (k < 100) continue;
    double mf[3], mt[3], dt = 0;
    sim_data_body_mean_contact(f.m, f.d, 1, mf, mt, &dt);
    assert_double_rel(dt, k <= 200 ? 1e-3 : 1e-2, 1e-9, 0);
    assert_double_rel(mf[2], 1.0 * G, 1e-6, 0);
    assert_double_near(mf[0], 0, 1e-9);
    assert_double_near(mf[1], 0, 1e-9);
    assert_true(geo_v3_norm(mt) < 1e-9);
    // the plate carries the opposite
    sim_data_body_mean_contact(f.m, f.d, 0, mf, mt, NULL);
    assert_double_rel(mf[2], -1.0 * G, 1e-6, 0);
  }
  teardown_scene(&f);
}

// the rigid loop stops too when the progress function says so, before its target
static void test_progress_stops_rigid_step(void **state) {
  (void)state;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, 0.5, SIM_MODE_RIGID), 0);
  int left = 10;
  sim_set_progress(f.d, test_stop_after, &left);
  assert_int_equal(sim_step(f.m, f.d, 1.0), CCSIM_ELIMIT);
  assert_non_null(strstr(sim_data_errmsg(f.d), "stopped by the progress function"));
  assert_true(sim_data_time(f.d) < 1.0);
  sim_set_progress(f.d, NULL, NULL);
  assert_int_equal(sim_step(f.m, f.d, 1.0), CCSIM_OK);
  assert_double_near(sim_data_time(f.d), 1.0, 0);
  teardown_scene(&f);
}

// A box resting on a kinematic platform that starts moving sideways at v0 = 0.2 m/s (mu =
// 0.5), through sim_step: friction accelerates the box at mu g until it moves with the
// platform, so it falls behind by v0^2 / (2 mu g) = 4.08 mm and then rides along at rest
// on it.
static void test_kinematic_platform_carries_box(void **state) {
  (void)state;
  const double mu = 0.5, v0 = 0.2;
  sim_body_desc b[2] = {plate(0), box_on(0, 0.5 * DS, 0)};
  b[0].type = SIM_BODY_KINEMATIC;
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.standoff = DS, s.contact.mu = mu;
  s.contact.set = SIM_CP_STANDOFF | SIM_CP_MU;
  s.mode = SIM_MODE_RIGID;
  char err[256] = "";
  fixture f = {0};
  f.m = test_compile(&s, b, 2);
  assert_non_null(f.m);
  f.d = sim_data_new(f.m, err, sizeof err);
  assert_non_null(f.d);
  double pp0[3], pb0[3], vel[3] = {v0, 0, 0}, om[3] = {0, 0, 0};
  sim_get_body(f.m, f.d, 0, pp0, NULL, NULL, NULL);
  sim_get_body(f.m, f.d, 1, pb0, NULL, NULL, NULL);
  for (int k = 1; k <= 1000; k++) {
    assert_int_equal(sim_set_kinematic(f.m, f.d, 0, NULL, NULL, vel, om, 1e-3), CCSIM_OK);
    ccsim_status st = sim_step(f.m, f.d, k * 1e-3);
    if (st != CCSIM_OK) print_error("t = %g: %s\n", k * 1e-3, sim_data_errmsg(f.d));
    assert_int_equal(st, CCSIM_OK);
  }
  double pp[3], pb[3], vb[3];
  sim_get_body(f.m, f.d, 0, pp, NULL, NULL, NULL);
  sim_get_body(f.m, f.d, 1, pb, NULL, vb, NULL);
  double lag = (pb[0] - pb0[0]) - (pp[0] - pp0[0]), expect = -v0 * v0 / (2 * mu * G);
  print_message("kinematic platform: platform moved %.6g m, box %.6g m: lag %.6g m (expected "
                "%.6g); box speed %.9g m/s; height %.9g m\n",
                pp[0] - pp0[0], pb[0] - pb0[0], lag, expect, vb[0], pb[2] - pp[2] - 0.05 - 0.025);
  assert_double_near(pp[0] - pp0[0], v0 * 1.0, 1e-9);
  assert_double_near(lag, expect, v0 * 1e-3);  // within one step's travel
  assert_double_near(vb[0], v0, 1e-6);
  assert_double_near(pb[2] - pp[2] - 0.05 - 0.025, 0.5 * DS, 1e-8);
  teardown_scene(&f);
}

// a snapshot taken while the dropped box bounces: the original (warm start dropped at the
// checkpoint) and a copy restored from it agree to the last bit afterwards
static void test_snapshot_bit_exact(void **state) {
  (void)state;
  fixture f = {0};
  assert_int_equal(setup_scene(&f, 0, 0.0, SIM_MODE_RIGID), 0);
  double a = 0.3, q[4] = {cos(a / 2), sin(a / 2) * 0.6, sin(a / 2) * 0.8, 0};
  double pos[3] = {0.1, 0.2, 0.08}, v[3] = {0.2, 0, -1.0}, w[3] = {0, 0, 2.0};
  assert_int_equal(sim_set_body(f.m, f.d, 1, pos, q, v, w), CCSIM_OK);
  run_rigid(&f, 0.12);  // in contact by now
  int nc = 0;
  sim_rigid_contacts(f.r, &nc);
  assert_true(nc > 0);
  size_t n = sim_snapshot_size(f.m, f.d);
  double *snap = test_malloc(n * sizeof(double)), *s1 = test_malloc(n * sizeof(double));
  double *s2 = test_malloc(n * sizeof(double));
  sim_snapshot_get(f.m, f.d, snap);
  sim_rigid_reset(f.r);
  fixture g = {0};
  assert_int_equal(setup_scene(&g, 0, 0.0, SIM_MODE_RIGID), 0);
  assert_int_equal(sim_snapshot_set(g.m, g.d, snap, n), CCSIM_OK);
  run_rigid(&f, 0.5);
  run_rigid(&g, 0.5);
  sim_snapshot_get(f.m, f.d, s1);
  sim_snapshot_get(g.m, g.d, s2);
  assert_memory_equal(s1, s2, n * sizeof(double));
  test_free(snap), test_free(s1), test_free(s2);
  teardown_scene(&g);
  teardown_scene(&f);
}

// two boxes stacked on the plate (mu = 0.5): the plate carries both weights, the top box
// presses on the bottom one with its own, and neither sinks over 5 s
static void test_stack_of_two(void **state) {
  (void)state;
  sim_body_desc b[3] = {plate(0), box_on(0, 0.5 * DS, 0), box_on(0, 0.5 * DS, 0)};
  b[2].name = "top";
  b[2].mass = 0.5;
  b[2].shape.size[0] = 0.06, b[2].shape.size[1] = 0.06, b[2].shape.size[2] = 0.04;
  b[2].pos[2] = 0.05 + 0.5 * DS + 0.02 + 0.5 * DS;
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.standoff = DS, s.contact.mu = 0.5;
  s.contact.set = SIM_CP_STANDOFF | SIM_CP_MU;
  s.mode = SIM_MODE_RIGID;
  char err[256] = "";
  fixture f = {0};
  f.m = test_compile(&s, b, 3);
  assert_non_null(f.m);
  f.d = sim_data_new(f.m, err, sizeof err);
  f.r = sim_rigid_new(f.m, err, sizeof err);
  assert_non_null(f.d);
  assert_non_null(f.r);
  double p1[3], p2[3], q1[3], q2[3];
  run_rigid(&f, 0.1);
  sim_get_body(f.m, f.d, 1, p1, NULL, NULL, NULL);
  sim_get_body(f.m, f.d, 2, p2, NULL, NULL, NULL);
  run_rigid(&f, 5.1);
  sim_get_body(f.m, f.d, 1, q1, NULL, NULL, NULL);
  sim_get_body(f.m, f.d, 2, q2, NULL, NULL, NULL);
  // forces of the last step: plate on the bottom box, bottom box on the top one
  int n = 0;
  const sim_contact *c = sim_rigid_contacts(f.r, &n);
  double plate_z = 0, top_z = 0;
  for (int i = 0; i < n; i++) {
    double fz = c[i].force * c[i].normal[2] + c[i].friction[2];
    if (c[i].body_a == 0) plate_z += fz;
    if (c[i].body_a == 1 && c[i].body_b == 2) top_z += fz;
  }
  print_message("stack: plate carries %.9g N (weights %.9g N), bottom box carries %.9g N "
                "(%.9g N); moved %.3g m and %.3g m over 5 s; %llu failed solves\n",
                plate_z, 1.5 * G, top_z, 0.5 * G, geo_v3_dist(p1, q1), geo_v3_dist(p2, q2),
                (unsigned long long)sim_data_stats(f.d)->lcp_failures);
  assert_double_rel(plate_z, 1.5 * G, 1e-3, 0);
  assert_double_rel(top_z, 0.5 * G, 1e-3, 0);
  assert_true(geo_v3_dist(p1, q1) < 1e-7);
  assert_true(geo_v3_dist(p2, q2) < 1e-7);
  assert_double_near(q1[2], 0.025 + 0.5 * DS, 1e-8);
  assert_double_near(q2[2] - q1[2], 0.025 + 0.5 * DS + 0.02, 1e-8);
  teardown_scene(&f);
}

// 144 frictionless boxes resting on the plate ask for more LCP rows (4 corners each) than
// the room a session makes at creation (SIM_RIGID_ROWS_FIRST): the room grows between LCP
// steps and the request steps on, carrying every box's weight, instead of failing.
static void test_lcp_room_grows(void **state) {
  (void)state;
  enum { SIDE = 12, NB = SIDE * SIDE + 1 };
  static sim_body_desc b[NB];
  static char names[NB][16];
  b[0] = plate(0);
  for (int i = 1; i < NB; i++) {
    b[i] = box_on(0, 0.5 * DS, 0);
    snprintf(names[i], sizeof names[i], "box%d", i);
    b[i].name = names[i];
    b[i].pos[0] = -0.9 + 0.15 * ((i - 1) % SIDE) + 0.013;
    b[i].pos[1] = -0.9 + 0.15 * ((i - 1) / SIDE) + 0.007;
  }
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.standoff = DS;
  s.contact.set = SIM_CP_STANDOFF;
  s.mode = SIM_MODE_RIGID;
  s.rigid_dt = 1e-3;
  sim_model *m = test_compile(&s, b, NB);
  assert_non_null(m);
  char err[256] = "";
  sim_data *d = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  ccsim_status st = sim_step(m, d, 1e-3);
  if (st != CCSIM_OK) print_error("%s\n", sim_data_errmsg(d));
  assert_int_equal(st, CCSIM_OK);
  assert_double_near(sim_data_time(d), 1e-3, 0);
  st = sim_step(m, d, 2e-3);
  assert_int_equal(st, CCSIM_OK);
  int n = 0, carrying = 0;
  const sim_contact *c = sim_data_contacts(d, &n);
  double support = 0;
  for (int i = 0; i < n; i++) {
    support += c[i].force * c[i].normal[2];
    carrying += c[i].force > 0;
  }
  print_message("%d boxes: %d contacts (%d carrying), support %.9g N (weights %.9g N)\n",
                NB - 1, n, carrying, support, (NB - 1) * G);
  assert_true(n > SIM_RIGID_ROWS_FIRST);
  assert_double_rel(support, (NB - 1) * G, 1e-5, 0);  // the LCP regularisation: 1e-6
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// ---- both modes ----------------------------------------------------------------------

static void test_compare_support(void **state) {
  (void)state;
  fixture f = {0};
  // compliant: set down where four springs of k = 1e5 N/m carry the weight
  assert_int_equal(setup_scene_at(&f, 0, 0, SIM_MODE_COMPLIANT, DS - G / (4 * 1e5)), 0);
  double t = 0;
  while (t < 2.0 - 1e-9) {
    t += 1e-3;
    assert_int_equal(sim_step(f.m, f.d, t), CCSIM_OK);
  }
  assert_int_equal(sim_eval_contacts(f.m, f.d), CCSIM_OK);
  double fz_c[3], tq[3];
  int nc = 0;
  sim_data_body_contact(f.m, f.d, 1, fz_c, tq, &nc);
  teardown_scene(&f);
  assert_int_equal(setup_scene(&f, 0, 0, SIM_MODE_RIGID), 0);
  run_rigid(&f, 2.0);
  double fz_r[3];
  int nr = 0;
  contact_force(f.r, 1, fz_r, &nr);
  teardown_scene(&f);
  print_message("support of the resting box: compliant %.9g N (%d contacts), rigid %.9g N "
                "(%d contacts), weight %.9g N\n",
                fz_c[2], nc, fz_r[2], nr, G);
  assert_double_rel(fz_c[2], G, 5e-3, 0);
  assert_double_rel(fz_r[2], G, 5e-3, 0);
}


int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rigid_dt_range),
      cmocka_unit_test(test_box_at_rest_frictionless),
      cmocka_unit_test(test_box_at_rest_friction),
      cmocka_unit_test(test_incline_sticks),
      cmocka_unit_test(test_incline_slides),
      cmocka_unit_test(test_frictionless_incline_dantzig),
      cmocka_unit_test(test_contact_forces_at_rest),
      cmocka_unit_test(test_contact_forces_sliding),
      cmocka_unit_test(test_push_below_and_above_friction),
      cmocka_unit_test(test_sliding_box_report_torque),
      cmocka_unit_test(test_tumbling_in_flight),
      cmocka_unit_test(test_drop_through_sim_step),
      cmocka_unit_test(test_mean_contact_at_rest),
      cmocka_unit_test(test_progress_stops_rigid_step),
      cmocka_unit_test(test_kinematic_platform_carries_box),
      cmocka_unit_test(test_snapshot_bit_exact),
      cmocka_unit_test(test_stack_of_two),
      cmocka_unit_test(test_lcp_room_grows),
      cmocka_unit_test(test_compare_support),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
