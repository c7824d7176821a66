// ctest-label: validation
// The rigid-body core under CVODE: analytic free flight, conserved quantities of a
// torque-free tumble, state round trips, input validation, and no heap use while stepping
// (free flight, and in contact: compliant, with friction, and rigid).
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"

#include "ccsim_test_heap.h"
#include "ccsim_test_scenes.h"
#include "ccsim_test_sim.h"

static sim_body_desc body(const char *name, double mass, double ix, double iy, double iz) {
  sim_body_desc b;
  memset(&b, 0, sizeof b);
  b.name = name;
  b.type = SIM_BODY_FREE;
  b.mass = mass;
  b.ninertia = 3;
  b.inertia[0] = ix, b.inertia[1] = iy, b.inertia[2] = iz;
  b.quat[0] = 1;
  return b;
}

static sim_model *compile1(const sim_body_desc *b, int n, const double g[3], double rtol,
                           double atol) {
  sim_scene s;
  memset(&s, 0, sizeof s);
  memcpy(s.gravity, g, sizeof s.gravity);
  s.rtol = rtol;
  s.atol = atol;
  return test_compile(&s, b, n);
}

static void test_free_fall(void **state) {
  (void)state;
  const double g[3] = {0.3, -0.2, -9.81};
  sim_body_desc b = body("ball", 2.0, 0.1, 0.2, 0.3);
  const double p0[3] = {1, 2, 3}, v0[3] = {0.5, -1, 4};
  memcpy(b.pos, p0, sizeof p0);
  memcpy(b.vel, v0, sizeof v0);
  b.omega[2] = 1.0;  // spinning about a principal axis changes nothing for the COM
  sim_model *m = compile1(&b, 1, g, 1e-8, 1e-10);
  assert_non_null(m);
  char err[256];
  sim_data *d = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  for (int k = 1; k <= 1000; k++) {
    assert_int_equal(sim_step(m, d, k * 1e-3), CCSIM_OK);
    double t = k * 1e-3, p[3], v[3];
    sim_get_body(m, d, 0, p, NULL, v, NULL);
    for (int i = 0; i < 3; i++) {
      // p0 + v0 t + g t^2 / 2, to 1e-6 at every step
      assert_double_near(p[i], p0[i] + v0[i] * t + 0.5 * g[i] * t * t, 1e-6);
      assert_double_near(v[i], v0[i] + g[i] * t, 1e-6);
    }
  }
  assert_double_near(sim_data_time(d), 1.0, 1e-15);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  assert_null(m);
}

// A progress function that says stop ends sim_step with CCSIM_ELIMIT and a message, the
// state at an accepted step before the target; without it the next step goes on from there
// and lands on the same free fall.
static void test_progress_stops_step(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b = body("ball", 1.0, 0.1, 0.1, 0.1);
  b.pos[2] = 10;
  sim_model *m = compile1(&b, 1, g, 1e-8, 1e-10);
  char err[256];
  sim_data *d = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  int left = 20;
  sim_set_progress(d, test_stop_after, &left);
  assert_int_equal(sim_step(m, d, 1.0), CCSIM_ELIMIT);
  assert_non_null(strstr(sim_data_errmsg(d), "stopped by the progress function"));
  assert_null(strstr(sim_data_errmsg(d), "failed"));  // a stop asked for is not a failure
  double t = sim_data_time(d), p[3], v[3];
  assert_true(t < 1.0);
  // the stop belonged to that step: an evaluation after it (progress saying go on) runs,
  // and gives free fall's rate of the vertical velocity
  left = 1000;
  double y[SIM_NQ], yd[SIM_NQ];
  sim_get_state(m, d, y);
  assert_int_equal(sim_eval_derivatives(m, d, y, yd, NULL), CCSIM_OK);
  assert_double_near(yd[9], -9.81, 1e-12);
  sim_get_body(m, d, 0, p, NULL, v, NULL);
  assert_double_near(p[2], 10 - 0.5 * 9.81 * t * t, 1e-6);
  assert_double_near(v[2], -9.81 * t, 1e-6);
  // a stop also ends a report of contacts (evaluated afresh: the derivatives above, at a
  // state given to them, left no report of d's state behind)
  left = 0;
  assert_int_equal(sim_eval_contacts(m, d), CCSIM_ELIMIT);
  sim_set_progress(d, NULL, NULL);
  assert_int_equal(sim_step(m, d, 1.0), CCSIM_OK);
  sim_get_body(m, d, 0, p, NULL, v, NULL);
  assert_double_near(p[2], 10 - 0.5 * 9.81, 1e-6);
  assert_double_near(v[2], -9.81, 1e-6);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// A step stopped part-way drops the kinematic targets it was given: the body keeps the
// twist its target gave it, and stepping on lands where an unbroken run does (a later step
// ending past the target's time used to snap the body back onto the target, a jump).
static void test_failed_step_drops_kinematic_target(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b[2] = {body("ball", 1.0, 0.1, 0.1, 0.1), body("pusher", 1.0, 0.1, 0.1, 0.1)};
  b[0].pos[2] = 10;
  b[1].type = SIM_BODY_KINEMATIC;
  sim_model *m = compile1(b, 2, g, 1e-8, 1e-10);
  assert_non_null(m);
  char err[256];
  sim_data *d = sim_data_new(m, err, sizeof err), *unbroken = sim_data_new(m, err, sizeof err);
  assert_non_null(d);
  assert_non_null(unbroken);
  const double target[3] = {1, 0, 0}, q[4] = {1, 0, 0, 0}, zero[3] = {0, 0, 0};
  assert_int_equal(sim_set_kinematic(m, d, 1, target, q, zero, zero, 1.0), CCSIM_OK);
  assert_int_equal(sim_set_kinematic(m, unbroken, 1, target, q, zero, zero, 1.0), CCSIM_OK);
  int left = 20;
  sim_set_progress(d, test_stop_after, &left);
  assert_int_equal(sim_step(m, d, 1.0), CCSIM_ELIMIT);
  assert_true(sim_data_time(d) < 1.0);
  sim_set_progress(d, NULL, NULL);
  assert_int_equal(sim_step(m, d, 2.0), CCSIM_OK);
  assert_int_equal(sim_step(m, unbroken, 1.0), CCSIM_OK);
  assert_int_equal(sim_step(m, unbroken, 2.0), CCSIM_OK);
  double p[3], v[3], pu[3];
  sim_get_body(m, d, 1, p, NULL, v, NULL);
  sim_get_body(m, unbroken, 1, pu, NULL, NULL, NULL);
  assert_double_near(pu[0], 2.0, 1e-12);  // at the target at 1 s, on with its twist since
  assert_double_near(p[0], pu[0], 1e-12);
  assert_double_near(v[0], 1.0, 1e-12);
  sim_data_destroy(&d);
  sim_data_destroy(&unbroken);
  sim_model_destroy(&m);
}

// kinetic energy and |angular momentum| (world frame) of body 0
static void invariants(const sim_model *m, const sim_data *d, double *ke, double *L) {
  double q[4], w[3], R[9], wb[3], Iwb[3], Lw[3];
  sim_get_body(m, d, 0, NULL, q, NULL, w);
  geo_quat_to_mat(R, q);
  geo_m3_tmulv(wb, R, w);
  geo_m3_mulv(Iwb, m->inertia, wb);
  *ke = 0.5 * geo_v3_dot(wb, Iwb);
  geo_m3_mulv(Lw, R, Iwb);
  *L = geo_v3_norm(Lw);
}

static void test_intermediate_axis(void **state) {
  (void)state;
  const double g[3] = {0, 0, 0};
  sim_body_desc b = body("racket", 1.0, 1, 2, 3);
  b.omega[0] = 0.02, b.omega[1] = 1.0, b.omega[2] = -0.02;  // near the unstable direction
  sim_model *m = compile1(&b, 1, g, 1e-10, 1e-12);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  assert_non_null(d);
  double ke0, L0, ke, L;
  invariants(m, d, &ke0, &L0);
  double min_wy = 1;
  for (int k = 1; k <= 10000; k++) {
    assert_int_equal(sim_step(m, d, k * 1e-3), CCSIM_OK);
    invariants(m, d, &ke, &L);
    assert_double_rel(ke, ke0, 1e-6, 0);
    assert_double_rel(L, L0, 1e-6, 0);
    double q[4], w[3], R[9], wb[3];
    sim_get_body(m, d, 0, NULL, q, NULL, w);
    geo_quat_to_mat(R, q);
    geo_m3_tmulv(wb, R, w);
    if (wb[1] < min_wy) min_wy = wb[1];
  }
  // it flips: the body-frame spin about y reverses within 10 s
  assert_true(min_wy < -0.9);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// a body whose COM is off its reference origin: what goes in comes out
static void test_state_roundtrip_with_com(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b = body("offset", 1.0, 1, 1, 1);
  b.has_com = 1;
  b.com[0] = 0.1, b.com[1] = -0.2, b.com[2] = 0.05;
  const double p[3] = {1, 2, 3}, q[4] = {0.5, 0.5, -0.5, 0.5}, v[3] = {1, 0, 0}, w[3] = {0, 2, 1};
  memcpy(b.pos, p, sizeof p);
  memcpy(b.quat, q, sizeof q);
  memcpy(b.vel, v, sizeof v);
  memcpy(b.omega, w, sizeof w);
  sim_model *m = compile1(&b, 1, g, 1e-8, 1e-10);
  sim_data *d = sim_data_new(m, NULL, 0);
  double p1[3], q1[4], v1[3], w1[3];
  sim_get_body(m, d, 0, p1, q1, v1, w1);
  for (int i = 0; i < 3; i++) {
    assert_double_near(p1[i], p[i], 1e-14);
    assert_double_near(v1[i], v[i], 1e-14);
    assert_double_near(w1[i], w[i], 1e-14);
  }
  for (int i = 0; i < 4; i++) assert_double_near(q1[i], q[i], 1e-14);
  // the COM falls freely: p_com(t) = p_com0 + v_com0 t + g t^2/2, whatever the spin
  double R[9], rc[3], pc0[3], vc0[3], wxr[3];
  geo_quat_to_mat(R, q);
  geo_m3_mulv(rc, R, b.com);
  geo_v3_add(pc0, p, rc);
  geo_v3_cross(wxr, w, rc);
  geo_v3_add(vc0, v, wxr);
  assert_int_equal(sim_step(m, d, 0.5), CCSIM_OK);
  sim_get_body(m, d, 0, p1, q1, NULL, NULL);
  geo_quat_to_mat(R, q1);
  geo_m3_mulv(rc, R, b.com);
  for (int i = 0; i < 3; i++) {
    assert_double_near(p1[i] + rc[i], pc0[i] + vc0[i] * 0.5 + 0.5 * g[i] * 0.25, 1e-6);
  }
  // set state restarts the integrator from exactly what was set
  assert_int_equal(sim_set_body(m, d, 0, p, q, v, w), CCSIM_OK);
  sim_get_body(m, d, 0, p1, NULL, NULL, NULL);
  for (int i = 0; i < 3; i++) assert_double_near(p1[i], p[i], 1e-14);
  assert_int_equal(sim_step(m, d, 0.6), CCSIM_OK);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

static void test_rejects_bad_input(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b[2] = {body("a", 1, 1, 1, 1), body("a", 1, 1, 1, 1)};
  char err[256] = "";
  sim_scene s;
  memset(&s, 0, sizeof s);
  memcpy(s.gravity, g, sizeof s.gravity);
  s.nbody = 2;
  s.bodies = b;
  assert_null(sim_model_compile(&s, err, sizeof err));
  assert_non_null(strstr(err, "already used"));
  b[1].name = "b";
  b[1].inertia[0] = -1;
  assert_null(sim_model_compile(&s, err, sizeof err));
  assert_non_null(strstr(err, "bodies[1]"));
  assert_non_null(strstr(err, "positive definite"));
  b[1].inertia[0] = 1;
  b[1].mass = 0;
  assert_null(sim_model_compile(&s, err, sizeof err));
  assert_non_null(strstr(err, "mass"));
  b[1].mass = 1;
  b[1].pos[2] = NAN;
  assert_null(sim_model_compile(&s, err, sizeof err));
  assert_non_null(strstr(err, "pose.p"));
  b[1].pos[2] = 0;
  sim_model *m = sim_model_compile(&s, err, sizeof err);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  const double f[3] = {0, 0, INFINITY}, t[3] = {0, 0, 0};
  assert_int_equal(sim_set_input(m, d, 0, f, t), CCSIM_EINVAL);
  assert_int_equal(sim_set_input(m, d, 7, t, t), CCSIM_EINVAL);
  assert_int_equal(sim_step(m, d, NAN), CCSIM_EINVAL);
  assert_int_equal(sim_step(m, d, 0.0), CCSIM_EINVAL);
  assert_int_equal(sim_step(m, d, -1.0), CCSIM_EINVAL);
  assert_double_near(sim_data_time(d), 0.0, 0.0);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// a held force accelerates as F/m on top of gravity; a held torque spins up as tau/I
static void test_inputs(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b = body("pushed", 2.0, 0.5, 0.5, 0.5);
  sim_model *m = compile1(&b, 1, g, 1e-9, 1e-11);
  sim_data *d = sim_data_new(m, NULL, 0);
  const double f[3] = {4, 0, 19.62}, tau[3] = {0, 0, 1.0};
  assert_int_equal(sim_set_input(m, d, 0, f, tau), CCSIM_OK);
  assert_int_equal(sim_step(m, d, 1.0), CCSIM_OK);
  double p[3], w[3];
  sim_get_body(m, d, 0, p, NULL, NULL, w);
  assert_double_near(p[0], 0.5 * 2.0 * 1.0, 1e-7);  // a = F/m = 2
  assert_double_near(p[2], 0.0, 1e-7);              // weight carried
  assert_double_near(w[2], 2.0, 1e-7);              // alpha = tau / I = 2
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

static void test_no_heap_while_stepping(void **state) {
  (void)state;
#if COUNT_ALLOCS
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b[3] = {body("a", 1, 1, 2, 3), body("b", 2, 1, 1, 1), body("c", 3, 2, 2, 1)};
  b[0].omega[1] = 1, b[0].omega[0] = 0.01;
  b[1].vel[0] = 1;
  sim_model *m = compile1(b, 3, g, 1e-8, 1e-10);
  sim_data *d = sim_data_new(m, NULL, 0);
  const double f[3] = {1, 0, 0}, t[3] = {0, 0.1, 0};
  sim_set_input(m, d, 2, f, t);
  g_allocs = 0;
  g_count_allocs = 1;
  int bad = 0;
  for (int k = 1; k <= 2000; k++) bad |= sim_step(m, d, k * 1e-3) != CCSIM_OK;
  g_count_allocs = 0;
  long calls = g_allocs;
  assert_false(bad);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  if (calls != 0) print_error("%ld heap calls in 2000 steps\n", calls);
  assert_int_equal(calls, 0);
#else
  skip();
#endif
}

// sim_step_check: what sim_step refuses before it changes anything
static void test_step_check(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b[1] = {body("a", 1, 1, 1, 1)};
  sim_model *m = compile1(b, 1, g, 1e-8, 1e-10);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  assert_non_null(d);
  char err[256] = "";
  assert_int_equal(sim_step_check(m, d, NAN, err, sizeof err), CCSIM_EINVAL);
  assert_non_null(strstr(err, "must be finite and not before"));
  assert_int_equal(sim_step_check(m, d, 0, NULL, 0), CCSIM_EINVAL);
  assert_int_equal(sim_step_check(m, d, -1, NULL, 0), CCSIM_EINVAL);
  // below 1e-12 s (relative to max(1 s, |t|)) the integrator cannot see the step
  assert_int_equal(sim_step_check(m, d, 0.5e-12, err, sizeof err), CCSIM_EINVAL);
  assert_non_null(strstr(err, "too small"));
  assert_int_equal(sim_step_check(m, d, 1e-12, NULL, 0), CCSIM_OK);
  assert_int_equal(sim_step_check(m, d, 1e-7, NULL, 0), CCSIM_OK);
  assert_int_equal(sim_set_time(m, d, 1e4), CCSIM_OK);
  assert_int_equal(sim_step_check(m, d, 1e4 + 1e-9, NULL, 0), CCSIM_EINVAL);
  assert_int_equal(sim_step_check(m, d, 1e4 + 1e-7, NULL, 0), CCSIM_OK);
  // sim_step refuses the same, the session as it was
  assert_int_equal(sim_step(m, d, 1e4 + 1e-9), CCSIM_EINVAL);
  assert_non_null(strstr(sim_data_errmsg(d), "too small"));
  assert_double_near(sim_data_time(d), 1e4, 0);
  assert_int_equal(sim_step(m, d, 1e4 + 1e-3), CCSIM_OK);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  // rigid mode: a step shorter than its time step is one LCP step of that length
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -9.81;
  s.mode = SIM_MODE_RIGID;
  m = test_compile(&s, b, 1);
  assert_non_null(m);
  d = sim_data_new(m, NULL, 0);
  assert_non_null(d);
  assert_int_equal(sim_step_check(m, d, 1e-300, err, sizeof err), CCSIM_EINVAL);
  assert_non_null(strstr(err, "too small"));
  assert_int_equal(sim_step(m, d, 1e-7), CCSIM_OK);
  assert_double_near(sim_data_time(d), 1e-7, 0);
  assert_int_equal(sim_step(m, d, 1e-3), CCSIM_OK);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// ---- no heap while stepping in contact ------------------------------------------------

#if COUNT_ALLOCS  // (sanitizer builds count nothing: the tests below skip)
#define HEAP_DS 1e-3  // standoff of the contact scenes [m]

// a scene with the contact law of the Rock-N-Stack (examples/rock_n_stack.json): k 1e5 N/m,
// alpha 0.5 s/m, n 1, standoff 1 mm, Coulomb mu as given
static sim_model *compile_contact(const sim_body_desc *b, int n, double mu, sim_mode mode,
                                  double rtol, double atol) {
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -9.81;
  s.contact.k = 1e5, s.contact.alpha = 0.5, s.contact.n = 1, s.contact.standoff = HEAP_DS;
  s.contact.mu = mu;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_N | SIM_CP_STANDOFF | SIM_CP_MU;
  s.rtol = rtol, s.atol = atol;
  s.mode = mode;
  return test_compile(&s, b, n);
}

// the floor and box of test_box_on_floor, resting at half the standoff
static void box_on_floor(sim_body_desc b[2]) { test_box_on_floor(b, 0.5 * HEAP_DS); }

typedef struct heap_run {
  long calls;         // heap calls while counting
  int failed;         // steps that did not return CCSIM_OK
  uint32_t contacts;  // most contacts carrying force after a counted step
} heap_run;

// Step d by n steps of dt [s], counting heap calls from the first counted step on (no
// assertion inside: cmocka's own bookkeeping would count). The model's capacities are set
// at sim_data_new, so no warm-up step is taken: the first contact must not allocate either.
static heap_run step_counting(const sim_model *m, sim_data *d, int n, double dt) {
  heap_run r = {0, 0, 0};
  double t0 = sim_data_time(d);
  g_allocs = 0;
  g_count_allocs = 1;
  for (int k = 1; k <= n; k++) {
    r.failed += sim_step(m, d, t0 + k * dt) != CCSIM_OK;
    uint32_t c = sim_data_stats(d)->contacts;
    if (c > r.contacts) r.contacts = c;
  }
  g_count_allocs = 0;
  r.calls = g_allocs;
  return r;
}

static void expect_no_heap(const char *what, const sim_data *d, heap_run r) {
  if (r.failed) print_error("%s: %d steps failed: %s\n", what, r.failed, sim_data_errmsg(d));
  if (r.calls != 0) print_error("%s: %ld heap calls while stepping\n", what, r.calls);
  print_message("%s: %ld heap calls, up to %u contacts carrying force\n", what, r.calls,
                (unsigned)r.contacts);
  assert_int_equal(r.failed, 0);
  assert_true(r.contacts > 0);  // the steps did see contact
  assert_int_equal(r.calls, 0);
}
#endif

// compliant: a box resting on a floor, 500 steps of 1 ms
static void test_no_heap_box_on_floor(void **state) {
  (void)state;
#if COUNT_ALLOCS
  sim_body_desc b[2];
  box_on_floor(b);
  sim_model *m = compile_contact(b, 2, 0.5, SIM_MODE_COMPLIANT, 1e-6, 1e-9);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  heap_run r = d ? step_counting(m, d, 500, 1e-3) : (heap_run){-1, 1, 0};
  expect_no_heap("box on a floor (compliant)", d, r);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
#else
  skip();
#endif
}

// compliant: the Rock-N-Stack with friction (examples/rock_n_stack_friction.json): a torus
// R 0.05 m, r 0.015 m, 48 x 24 segments, density 1000, dropped 5 cm over a fixed cone of
// base radius 0.06 m, height 0.2 m, 64 segments; mu 0.5; 200 steps of 1 ms take it down
// to the cone, into its first bounce
static void test_no_heap_rock_n_stack_friction(void **state) {
  (void)state;
#if COUNT_ALLOCS
  sim_body_desc b[2];
  memset(b, 0, sizeof b);
  b[0].name = "cone";
  b[0].type = SIM_BODY_FIXED;
  b[0].shape.type = SIM_SHAPE_CONE;
  b[0].shape.radius = 0.06, b[0].shape.height = 0.2;
  b[0].shape.res[0] = 64, b[0].shape.res[1] = 1;
  b[0].quat[0] = 1;
  b[1].name = "torus";
  b[1].density = 1000;
  b[1].shape.type = SIM_SHAPE_TORUS;
  b[1].shape.major = 0.05, b[1].shape.minor = 0.015;
  b[1].shape.res[0] = 48, b[1].shape.res[1] = 24;
  b[1].pos[0] = 0.002, b[1].pos[1] = 0.001, b[1].pos[2] = 0.139;
  b[1].quat[0] = 0.9999, b[1].quat[1] = 0.01;
  sim_model *m = compile_contact(b, 2, 0.5, SIM_MODE_COMPLIANT, 1e-4, 1e-8);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  heap_run r = d ? step_counting(m, d, 200, 1e-3) : (heap_run){-1, 1, 0};
  expect_no_heap("Rock-N-Stack with friction", d, r);
  assert_true(sim_data_stats(d)->anchors > 0 || sim_data_stats(d)->friction_restarts > 0);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
#else
  skip();
#endif
}

// rigid mode: a box on a floor with friction (Lemke's LCP), 300 steps of 1 ms
static void test_no_heap_rigid_box_on_floor(void **state) {
  (void)state;
#if COUNT_ALLOCS
  sim_body_desc b[2];
  box_on_floor(b);
  b[1].vel[0] = 0.05;  // sliding, then stuck: both kinds of friction rows
  sim_model *m = compile_contact(b, 2, 0.5, SIM_MODE_RIGID, 0, 0);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  heap_run r = d ? step_counting(m, d, 300, 1e-3) : (heap_run){-1, 1, 0};
  expect_no_heap("box on a floor (rigid)", d, r);
  assert_int_equal(sim_data_stats(d)->lcp_solver, SIM_LCP_SOLVER_LEMKE);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
#else
  skip();
#endif
}

// a snapshot taken mid-run and restored into a second session: both, restarted at the
// snapshot and stepped alike, agree to the last bit
static void test_snapshot_bit_exact(void **state) {
  (void)state;
  const double g[3] = {0, 0, -9.81};
  sim_body_desc b[2] = {body("a", 1, 1, 2, 3), body("b", 2, 1, 1, 1)};
  b[0].omega[0] = 0.02, b[0].omega[1] = 1, b[0].omega[2] = -0.02;
  b[1].vel[0] = 1;
  sim_model *m = compile1(b, 2, g, 1e-8, 1e-10);
  sim_data *d1 = sim_data_new(m, NULL, 0), *d2 = sim_data_new(m, NULL, 0);
  const double f[3] = {0.5, 0, 0}, t[3] = {0, 0.1, 0};
  sim_set_input(m, d1, 1, f, t);
  for (int k = 1; k <= 300; k++) assert_int_equal(sim_step(m, d1, k * 1e-3), CCSIM_OK);
  size_t n = sim_snapshot_size(m, d1);
  double *snap = test_malloc(n * sizeof(double));
  sim_snapshot_get(m, d1, snap);
  sim_restart(m, d1);
  assert_int_equal(sim_snapshot_set(m, d2, snap, n), CCSIM_OK);
  for (int k = 301; k <= 800; k++) {
    assert_int_equal(sim_step(m, d1, k * 1e-3), CCSIM_OK);
    assert_int_equal(sim_step(m, d2, k * 1e-3), CCSIM_OK);
  }
  double *s1 = test_malloc(n * sizeof(double)), *s2 = test_malloc(n * sizeof(double));
  sim_snapshot_get(m, d1, s1);
  sim_snapshot_get(m, d2, s2);
  assert_memory_equal(s1, s2, n * sizeof(double));
  assert_double_near(s1[0], 0.8, 1e-12);
  snap[3] = NAN;
  assert_int_equal(sim_snapshot_set(m, d2, snap, n), CCSIM_EINVAL);
  // a held force past what a Step may set: refused from a snapshot too (body 1's, x)
  snap[3] = s1[3];
  double *force1 = snap + 1 + 13 * 2 + 3;
  assert_double_near(force1[0], 0.5, 0);  // where the layout puts it
  force1[0] = 1e13;
  assert_int_equal(sim_snapshot_set(m, d2, snap, n), CCSIM_EINVAL);
  assert_non_null(strstr(sim_data_errmsg(d2), "force above 1e12 N"));
  test_free(snap), test_free(s1), test_free(s2);
  sim_data_destroy(&d1);
  sim_data_destroy(&d2);
  sim_model_destroy(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_free_fall),
      cmocka_unit_test(test_progress_stops_step),
      cmocka_unit_test(test_failed_step_drops_kinematic_target),
      cmocka_unit_test(test_intermediate_axis),
      cmocka_unit_test(test_state_roundtrip_with_com),
      cmocka_unit_test(test_rejects_bad_input),
      cmocka_unit_test(test_inputs),
      cmocka_unit_test(test_step_check),
      cmocka_unit_test(test_no_heap_while_stepping),
      cmocka_unit_test(test_no_heap_box_on_floor),
      cmocka_unit_test(test_no_heap_rock_n_stack_friction),
      cmocka_unit_test(test_no_heap_rigid_box_on_floor),
      cmocka_unit_test(test_snapshot_bit_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
