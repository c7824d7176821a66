// ctest-label: validation
// ctest-timeout: 300
// Compliant contact against analytic answers: the Jacobian against finite differences,
// restitution and peak deformation against the 1-DOF Marhefka-Orin equation integrated
// here, a box at rest carrying its weight, energy that never grows, no tunnelling.
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"
#include "ccsim_test_sim.h"

#define G 9.81

static sim_body_desc plate(double sx, double sy, double sz, double top) {
  sim_body_desc b;
  memset(&b, 0, sizeof b);
  b.name = "plate";
  b.type = SIM_BODY_FIXED;
  b.shape.type = SIM_SHAPE_BOX;
  b.shape.size[0] = sx, b.shape.size[1] = sy, b.shape.size[2] = sz;
  b.pos[2] = top - 0.5 * sz;
  b.quat[0] = 1;
  return b;
}

// a free sphere of radius r [m] and density rho [kg/m^3] centred at (x, y, z)
static sim_body_desc sphere(const char *name, double r, double rho, double x, double y, double z) {
  sim_body_desc b;
  memset(&b, 0, sizeof b);
  b.name = name;
  b.density = rho;
  b.shape.type = SIM_SHAPE_SPHERE;
  b.shape.radius = r;
  b.quat[0] = 1;
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = z;
  return b;
}

static sim_model *compile(sim_body_desc *b, int n, double k, double alpha, double ds,
                          double rtol) {
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.k = k, s.contact.alpha = alpha, s.contact.standoff = ds;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_STANDOFF;
  s.rtol = rtol;
  s.atol = rtol * 1e-2;
  return test_compile(&s, b, n);
}

// vertical contact force on body b at the current state
static double support(const sim_model *m, sim_data *d, int b, int *count) {
  assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
  double f[3], t[3];
  sim_data_body_contact(m, d, b, f, t, count);
  return f[2];
}

// ---- Jacobian ----------------------------------------------------------------------

static void test_jacobian_matches_finite_differences(void **state) {
  (void)state;
  sim_body_desc b[2] = {plate(1, 1, 0.1, 0.0), {0}};
  b[1].name = "box";
  b[1].mass = 1.0;
  b[1].shape.type = SIM_SHAPE_BOX;
  b[1].shape.size[0] = 0.1, b[1].shape.size[1] = 0.08, b[1].shape.size[2] = 0.06;
  // tilted about x and y so one corner dips 0.6 mm into a 1 mm standoff, moving and spinning
  double ax = 0.05, ay = 0.03;
  double qx[4] = {cos(ax / 2), sin(ax / 2), 0, 0}, qy[4] = {cos(ay / 2), 0, sin(ay / 2), 0};
  geo_quat_mul(b[1].quat, qy, qx);
  double R[9], corner[3] = {-0.05, -0.04, -0.03}, low[3];
  geo_quat_to_mat(R, b[1].quat);
  // the lowest corner under this rotation
  double zmin = 1e9;
  for (int i = 0; i < 8; i++) {
    double c[3] = {(i & 1 ? 0.05 : -0.05), (i & 2 ? 0.04 : -0.04), (i & 4 ? 0.03 : -0.03)};
    geo_m3_mulv(low, R, c);
    if (low[2] < zmin) zmin = low[2], memcpy(corner, c, sizeof c);
  }
  b[1].pos[2] = 1e-3 - 0.6e-3 - zmin;
  b[1].vel[0] = 0.01, b[1].vel[2] = -0.05;
  b[1].omega[0] = 0.3, b[1].omega[1] = -0.2;
  sim_model *m = compile(b, 2, 1e5, 0.2, 1e-3, 1e-8);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  assert_non_null(d);
  int nc = 0;
  support(m, d, 1, &nc);
  assert_true(nc >= 1);
  size_t n = sim_state_size(m);
  double *y = test_malloc(n * sizeof(double)), *f0 = test_malloc(n * sizeof(double));
  double *fp = test_malloc(n * sizeof(double)), *fm = test_malloc(n * sizeof(double));
  double *J = test_malloc(n * n * sizeof(double)), *yp = test_malloc(n * sizeof(double));
  sim_get_state(m, d, y);
  assert_int_equal(sim_eval_derivatives(m, d, y, f0, J), CCSIM_OK);
  // accelerations (rows 7..12) against every state column, by central differences
  double num = 0, den = 0;
  for (size_t j = 0; j < n; j++) {
    double h = 1e-7 * fmax(1.0, fabs(y[j]));
    memcpy(yp, y, n * sizeof(double));
    yp[j] += h;
    assert_int_equal(sim_eval_derivatives(m, d, yp, fp, NULL), CCSIM_OK);
    yp[j] -= 2 * h;
    assert_int_equal(sim_eval_derivatives(m, d, yp, fm, NULL), CCSIM_OK);
    for (size_t i = 7; i < 13; i++) {
      double fd = (fp[i] - fm[i]) / (2 * h), an = J[j * n + i];
      num += (fd - an) * (fd - an);
      den += fd * fd;
    }
  }
  double rel = sqrt(num / den);
  print_message("contact Jacobian: relative Frobenius error %.3g over %d contacts\n", rel, nc);
  // frozen witness points and normals leave out only terms of relative size depth / size
  assert_true(rel < 0.02);
  test_free(y), test_free(f0), test_free(fp), test_free(fm), test_free(J), test_free(yp);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// ---- restitution -------------------------------------------------------------------

// 1-DOF Marhefka-Orin with gravity from contact onset (x = ds, xdot = -v0) to separation,
// RK4 at a step far below the contact time: restitution and peak deformation.
static void reference_bounce(double v0, double k, double alpha, double mass, double ds,
                             double *e, double *dmax) {
  double lambda = 1.5 * alpha * k, x = ds, v = -v0, h = 1e-8;
  *dmax = 0;
  for (long it = 0; it < 100000000L; it++) {
#define ACC(X, V) (-G + fmax(0.0, (ds - (X)) * (k + lambda * -(V))) / mass)
    double k1x = v, k1v = ACC(x, v);
    double k2x = v + 0.5 * h * k1v, k2v = ACC(x + 0.5 * h * k1x, v + 0.5 * h * k1v);
    double k3x = v + 0.5 * h * k2v, k3v = ACC(x + 0.5 * h * k2x, v + 0.5 * h * k2v);
    double k4x = v + h * k3v, k4v = ACC(x + h * k3x, v + h * k3v);
#undef ACC
    x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    if (ds - x > *dmax) *dmax = ds - x;
    if (x >= ds && v > 0) break;
  }
  // separation speed, corrected to x = ds exactly by energy in free flight
  *e = sqrt(v * v + 2 * G * (x - ds)) / v0;
}

static void test_restitution(void **state) {
  (void)state;
  const double speeds[] = {0.1, 0.5, 1.0, 2.0};
  const double k = 1e6, alpha = 0.2, ds = 1e-3, mass = 0.1, top = 0.05;
  for (size_t s = 0; s < sizeof speeds / sizeof speeds[0]; s++) {
    double v0 = speeds[s];
    // a cone, apex down, touches the plate at its apex only; the apex is below the COM
    sim_body_desc b[2] = {plate(1, 1, 0.1, top), {0}};
    b[1].name = "cone";
    b[1].mass = mass;
    b[1].ninertia = 3;
    b[1].inertia[0] = b[1].inertia[1] = 2e-5, b[1].inertia[2] = 1.5e-5;
    b[1].shape.type = SIM_SHAPE_CONE;
    b[1].shape.radius = 0.02, b[1].shape.height = 0.05, b[1].shape.res[0] = 32;
    b[1].quat[1] = 1;  // 180 degrees about x: apex (body z = 0.05) points down
    b[1].pos[0] = 0.1, b[1].pos[1] = 0.3;  // off the plate's diagonal
    double x0 = ds + v0 * v0 / (2 * G);  // apex height: falls from rest, meets ds at v0
    b[1].pos[2] = top + 0.05 + x0;
    sim_model *m = compile(b, 2, k, alpha, ds, 1e-9);
    assert_non_null(m);
    sim_data *d = sim_data_new(m, NULL, 0);
    assert_non_null(d);
    double dmax = 0, t = 0, p[3], v[3], e = -1;
    int touched = 0;
    while (t < 2.0) {
      t += 1e-5;
      assert_int_equal(sim_step(m, d, t), CCSIM_OK);
      sim_get_body(m, d, 1, p, NULL, v, NULL);
      double x = p[2] - 0.05 - top;  // apex height above the plate
      if (ds - x > dmax) dmax = ds - x;
      if (x < ds) touched = 1;
      if (touched && x > ds + 1e-4 && v[2] > 0) {
        e = sqrt(v[2] * v[2] + 2 * G * (x - ds)) / v0;
        break;
      }
    }
    double e_ref, dmax_ref;
    reference_bounce(v0, k, alpha, mass, ds, &e_ref, &dmax_ref);
    print_message("v0 %.1f m/s: e %.6f (exact %.6f, 1 - alpha v0 = %.3f), max deformation "
                  "%.4g m (exact %.4g)\n",
                  v0, e, e_ref, 1 - alpha * v0, dmax, dmax_ref);
    assert_double_rel(e, e_ref, 0.005, 0);
    assert_double_rel(dmax, dmax_ref, 0.01, 0);
    sim_data_destroy(&d);
    sim_model_destroy(&m);
  }
}

// ---- rest, energy, tunnelling ------------------------------------------------------

static void test_box_rests(void **state) {
  (void)state;
  const double ds = 1e-3, top = 0.05, mass = 1.0;
  sim_body_desc b[2] = {plate(1, 1, 0.1, top), {0}};
  b[1].name = "box";
  b[1].mass = mass;
  b[1].shape.type = SIM_SHAPE_BOX;
  b[1].shape.size[0] = 0.1, b[1].shape.size[1] = 0.1, b[1].shape.size[2] = 0.05;
  b[1].pos[0] = 0.1, b[1].pos[1] = 0.3;
  b[1].pos[2] = top + 0.025 + ds;  // bottom face at the standoff, at rest
  b[1].quat[0] = 1;
  sim_model *m = compile(b, 2, 1e5, 0.5, ds, 1e-8);
  sim_data *d = sim_data_new(m, NULL, 0);
  double t = 0;
  while (t < 3.0 - 1e-9) {
    t += 1e-3;
    assert_int_equal(sim_step(m, d, t), CCSIM_OK);
  }
  int nc = 0;
  double fz = support(m, d, 1, &nc);
  print_message("box at rest: support %.9g N for weight %.9g N over %d contacts\n", fz, mass * G,
                nc);
  assert_double_rel(fz, mass * G, 1e-3, 0);
  assert_true(nc >= 4);
  double p0[3], q0[4], p1[3], q1[4];
  sim_get_body(m, d, 1, p0, q0, NULL, NULL);
  while (t < 13.0 - 1e-9) {
    t += 1e-3;
    assert_int_equal(sim_step(m, d, t), CCSIM_OK);
  }
  sim_get_body(m, d, 1, p1, q1, NULL, NULL);
  double drift = geo_v3_dist(p0, p1);
  // tilt: the angle between the two orientations
  double dot = fabs(q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3]);
  print_message("box at rest: drift %.3g m and tilt %.3g rad over 10 s\n", drift,
                2 * acos(fmin(1.0, dot)));
  assert_true(drift < 1e-6);
  assert_true(2 * acos(fmin(1.0, dot)) < 1e-5);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

static double mechanical_energy(const sim_model *m, sim_data *d, double k) {
  assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
  int n = 0;
  const sim_contact *c = sim_data_contacts(d, &n);
  double elastic = 0;
  for (int i = 0; i < n; i++) elastic += 0.5 * k * c[i].depth * c[i].depth;  // n = 1
  return sim_energy(m, d) + elastic;
}

static void test_energy_never_grows(void **state) {
  (void)state;
  // a corner landing at ~0.6 m/s on a 1e6 N/m spring sinks ~0.4 mm: inside the standoff
  const double k = 1e6, ds = 1e-3, top = 0.0;
  sim_body_desc b[2] = {plate(1, 1, 0.1, top), {0}};
  b[1].name = "box";
  b[1].mass = 0.5;
  b[1].shape.type = SIM_SHAPE_BOX;
  b[1].shape.size[0] = 0.1, b[1].shape.size[1] = 0.06, b[1].shape.size[2] = 0.04;
  double a = 0.3;
  b[1].quat[0] = cos(a / 2), b[1].quat[1] = sin(a / 2) * 0.6, b[1].quat[2] = sin(a / 2) * 0.8;
  b[1].pos[0] = 0.1, b[1].pos[1] = 0.2, b[1].pos[2] = 0.08;
  b[1].omega[2] = 2.0;
  sim_model *m = compile(b, 2, k, 0.3, ds, 1e-8);
  sim_data *d = sim_data_new(m, NULL, 0);
  double e_prev = mechanical_energy(m, d, k), e0 = e_prev, t = 0, worst = 0;
  int in_contact = 0;
  while (t < 1.0 - 1e-9) {
    t += 1e-3;
    if (sim_step(m, d, t) != CCSIM_OK) print_error("%s\n", sim_data_errmsg(d));
    assert_double_near(sim_data_time(d), t, 1e-12);
    double e = mechanical_energy(m, d, k);
    int n = 0;
    sim_data_contacts(d, &n);
    if (n > 0) in_contact = 1;
    if (e - e_prev > worst) worst = e - e_prev;
    e_prev = e;
  }
  print_message("energy: from %.6g J to %.6g J, largest rise in one step %.3g J\n", e0, e_prev,
                worst);
  assert_true(in_contact);
  assert_true(e_prev < e0);
  assert_true(worst <= 1e-5 * fabs(e0));
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

static void test_no_tunnelling(void **state) {
  (void)state;
  const double ds = 1e-3;
  // sampled every 1 ms the centre would go 4.5 mm above the plate's top to 5.5 mm below
  // it: one internal step that long jumps clean over the 2 mm plate
  sim_body_desc b[2] = {plate(0.2, 0.2, 0.002, 0.001),
                        sphere("pellet", 0.001, 7800, 0.01, 0.02, 0.0545)};
  b[1].vel[2] = -10.0;
  sim_model *m = compile(b, 2, 1e7, 0.02, ds, 1e-6);
  assert_non_null(m);
  sim_data *d = sim_data_new(m, NULL, 0);
  double t = 0, p[3], v[3], zmin = 1;
  int bounced = 0;
  while (t < 0.02 - 1e-12) {
    t += 1e-3;  // each request is 10 mm of flight: five times the plate's thickness
    assert_int_equal(sim_step(m, d, t), CCSIM_OK);
    sim_get_body(m, d, 1, p, NULL, v, NULL);
    if (p[2] < zmin) zmin = p[2];
    if (v[2] > 0) bounced = 1;
  }
  print_message("pellet: lowest centre %.4g m (plate top 0.001, radius 0.001), bounced %d\n",
                zmin, bounced);
  assert_true(bounced);
  assert_true(zmin > 0.001 + 0.001 - ds);
  assert_true(p[2] > 0.002);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

// d1 and d2 hold the same snapshot, to the last bit (the anchors' count included)
static void assert_same_snapshot(const sim_model *m, sim_data *d1, sim_data *d2) {
  size_t n = sim_snapshot_size(m, d1);
  assert_int_equal(sim_snapshot_size(m, d2), n);
  double *s1 = test_malloc(n * sizeof(double)), *s2 = test_malloc(n * sizeof(double));
  sim_snapshot_get(m, d1, s1);
  sim_snapshot_get(m, d2, s2);
  assert_memory_equal(s1, s2, n * sizeof(double));
  test_free(s1), test_free(s2);
}

// A checkpoint of d1 after k steps of 1 ms: d1 restarts at it, d2 is restored from it;
// stepped alike for 400 more (d1 also asked for its contacts after each, as a reply with
// contacts does), both agree to the last bit after every step. Nothing that steers the
// integration may live outside the snapshot: not CVODE's history, not the collider's
// caches, not the last evaluation's contacts.
static void assert_checkpoint_bit_exact(const sim_model *m, int k) {
  sim_data *d1 = sim_data_new(m, NULL, 0), *d2 = sim_data_new(m, NULL, 0);
  for (int j = 1; j <= k; j++) {
    assert_int_equal(sim_step(m, d1, j * 1e-3), CCSIM_OK);
  }
  size_t n = sim_snapshot_size(m, d1);
  double *snap = test_malloc(n * sizeof(double));
  sim_snapshot_get(m, d1, snap);
  sim_restart(m, d1);
  assert_int_equal(sim_snapshot_set(m, d2, snap, n), CCSIM_OK);
  for (int j = k + 1; j <= k + 400; j++) {
    assert_int_equal(sim_step(m, d1, j * 1e-3), CCSIM_OK);
    assert_int_equal(sim_eval_contacts(m, d1), CCSIM_OK);
    assert_int_equal(sim_step(m, d2, j * 1e-3), CCSIM_OK);
    assert_same_snapshot(m, d1, d2);
  }
  test_free(snap);
  sim_data_destroy(&d1);
  sim_data_destroy(&d2);
}

// A ball bouncing on a floor within one long request: the contact of its first bounce
// must not let the request run to its end unchecked, or CVODE's free-flight steps grow
// past the floor and the ball falls through it at the second impact (z = -0.55 m after
// one 0.8 s request). The long request lands where 800 steps of 1 ms do.
static void test_no_tunnelling_after_bounce(void **state) {
  (void)state;
  const double ds = 1e-3;
  sim_body_desc b[2] = {plate(1, 1, 0.1, 0), sphere("ball", 0.05, 1000, 0.01, 0.02, 0.35)};
  sim_model *m = compile(b, 2, 1e7, 0.2, ds, 1e-6);
  assert_non_null(m);
  sim_data *once = sim_data_new(m, NULL, 0), *fine = sim_data_new(m, NULL, 0);
  assert_int_equal(sim_step(m, once, 0.8), CCSIM_OK);
  for (int k = 1; k <= 800; k++) {
    assert_int_equal(sim_step(m, fine, k * 1e-3), CCSIM_OK);
  }
  double p[3], pf[3];
  sim_get_body(m, once, 1, p, NULL, NULL, NULL);
  sim_get_body(m, fine, 1, pf, NULL, NULL, NULL);
  print_message("ball after 0.8 s: %.6f m in one request, %.6f m in 800\n", p[2], pf[2]);
  assert_true(pf[2] > 0.05 - ds);  // on or over the floor
  assert_double_near(p[2], pf[2], 1e-4);
  // A checkpoint taken on the floor, before one long request: a restored copy knows no
  // contacts yet, and must bound its steps as the live session does (it fell through the
  // floor, to -1.79 m, while the live one did not)
  sim_data *live = sim_data_new(m, NULL, 0), *copy = sim_data_new(m, NULL, 0);
  int k = 0, touching = 0;
  while (!touching && k < 400) {
    k++;
    assert_int_equal(sim_step(m, live, k * 1e-3), CCSIM_OK);
    double f[3], t[3];
    assert_int_equal(sim_eval_contacts(m, live), CCSIM_OK);
    sim_data_body_contact(m, live, 1, f, t, &touching);
  }
  assert_true(touching > 0);
  size_t n = sim_snapshot_size(m, live);
  double *snap = test_malloc(n * sizeof(double));
  sim_snapshot_get(m, live, snap);
  sim_restart(m, live);
  assert_int_equal(sim_snapshot_set(m, copy, snap, n), CCSIM_OK);
  test_free(snap);
  assert_int_equal(sim_step(m, live, 0.8), CCSIM_OK);
  assert_int_equal(sim_step(m, copy, 0.8), CCSIM_OK);
  assert_same_snapshot(m, live, copy);
  sim_get_body(m, copy, 1, p, NULL, NULL, NULL);
  print_message("checkpoint at %.3f s in contact, then one request to 0.8 s: %.6f m\n", k * 1e-3,
                p[2]);
  assert_double_near(p[2], pf[2], 1e-3);
  sim_data_destroy(&live);
  sim_data_destroy(&copy);
  sim_data_destroy(&once);
  sim_data_destroy(&fine);
  sim_model_destroy(&m);
}

// a checkpoint taken as a tumbling box strikes the plate
static void test_snapshot_in_contact_bit_exact(void **state) {
  (void)state;
  sim_body_desc b[2] = {plate(1, 1, 0.1, 0.0), {0}};
  b[1].name = "box";
  b[1].mass = 0.5;
  b[1].shape.type = SIM_SHAPE_BOX;
  b[1].shape.size[0] = 0.1, b[1].shape.size[1] = 0.06, b[1].shape.size[2] = 0.04;
  double a = 0.3;
  b[1].quat[0] = cos(a / 2), b[1].quat[1] = sin(a / 2) * 0.6, b[1].quat[2] = sin(a / 2) * 0.8;
  b[1].pos[0] = 0.1, b[1].pos[1] = 0.2, b[1].pos[2] = 0.08;
  b[1].omega[2] = 2.0;
  sim_model *m = compile(b, 2, 1e6, 0.3, 1e-3, 1e-8);
  sim_data *d = sim_data_new(m, NULL, 0);
  int k = 0, nc = 0;
  while (nc == 0 && k < 2000) {  // run until the box is in contact
    k++;
    assert_int_equal(sim_step(m, d, k * 1e-3), CCSIM_OK);
    assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
    sim_data_contacts(d, &nc);
  }
  assert_true(nc > 0);
  sim_data_destroy(&d);
  assert_checkpoint_bit_exact(m, k);
  sim_model_destroy(&m);
}

// A box sliding and spinning on the plate, with or without friction.
static sim_model *sliding_box(int fric) {
  sim_body_desc b[2] = {plate(1, 1, 0.1, 0.0), {0}};
  b[1].name = "box";
  b[1].mass = 1.0;
  b[1].shape.type = SIM_SHAPE_BOX;
  b[1].shape.size[0] = 0.1, b[1].shape.size[1] = 0.1, b[1].shape.size[2] = 0.05;
  b[1].quat[0] = 1;
  b[1].pos[0] = 0.1, b[1].pos[1] = 0.3, b[1].pos[2] = 0.026;
  b[1].vel[0] = 0.2, b[1].vel[1] = 0.05, b[1].omega[2] = 0.5;
  sim_scene sc;
  memset(&sc, 0, sizeof sc);
  sc.gravity[2] = -G;
  sc.contact.k = 1e5, sc.contact.alpha = 0.5, sc.contact.standoff = 1e-3;
  sc.contact.mu = fric ? 0.5 : 0, sc.contact.mu_dynamic = fric ? 0.4 : 0;
  sc.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_STANDOFF | SIM_CP_MU | SIM_CP_MU_DYNAMIC;
  sc.rtol = 1e-6;
  sc.atol = 1e-9;
  return test_compile(&sc, b, 2);
}

// contacts at given poses leave the session as it was: a twin asked every 7th step for
// the contacts with the box 0.3 mm lower and turned (it finds some, with stiction from the
// session's anchors), and every 11th with the box through the plate (ESOLVER), steps to
// the last bit as the twin never asked
static void test_contacts_at_poses_change_nothing(void **state) {
  (void)state;
  for (int fric = 0; fric < 2; fric++) {
    sim_model *m = sliding_box(fric);
    sim_data *d1 = sim_data_new(m, NULL, 0), *d2 = sim_data_new(m, NULL, 0);
    int given[2] = {0, 1}, asked = 0;
    for (int j = 1; j <= 300; j++) {
      if (j % 7 == 0 || j % 11 == 0) {
        double pos[6], quat[8], p[3], q[4];
        sim_get_body(m, d2, 1, p, q, NULL, NULL);
        memcpy(pos + 3, p, sizeof p);
        memcpy(quat + 4, q, sizeof q);
        double a = 0.1;  // turned about z
        double turn[4] = {cos(a / 2), 0, 0, sin(a / 2)};
        geo_quat_mul(quat + 4, turn, q);
        pos[5] -= j % 11 == 0 ? 0.05 : 3e-4;
        const sim_contact *c = NULL;
        int nc = -1;
        ccsim_status st = sim_eval_contacts_at(m, d2, given, pos, quat, NULL, NULL, &c, &nc);
        if (j % 11 == 0) {
          assert_int_equal(st, CCSIM_ESOLVER);
        } else {
          assert_int_equal(st, CCSIM_OK);
          assert_true(nc > 0);
          for (int i = 0; i < nc; i++) assert_true(c[i].depth > 0);
          asked++;
        }
      }
      assert_int_equal(sim_step(m, d1, j * 1e-3), CCSIM_OK);
      assert_int_equal(sim_step(m, d2, j * 1e-3), CCSIM_OK);
      assert_same_snapshot(m, d1, d2);
    }
    assert_true(asked > 20);
    sim_data_destroy(&d1);
    sim_data_destroy(&d2);
    sim_model_destroy(&m);
  }
}

// a checkpoint taken while a box slides and spins on the plate, without and with
// friction: the collider's caches, warm in the original, must not steer it apart from
// the copy whose caches start cold (they did, from the first step after)
static void test_snapshot_sliding_bit_exact(void **state) {
  (void)state;
  for (int fric = 0; fric < 2; fric++) {
    sim_model *m = sliding_box(fric);
    for (int k = 100; k <= 160; k += 30) {
      assert_checkpoint_bit_exact(m, k);
    }
    sim_model_destroy(&m);
  }
}

// 20 boxes in 5 stacks of 4 (or, with layers = 1, 20 side by side), beyond the dense
// solver's 16 free bodies: KLU on a sparse Jacobian. The sparse assembly must equal the
// dense one (checked against finite differences above) entry for entry where stacked
// boxes couple to each other, and KLU must carry a settling scene to rest.
static sim_model *stacks(sim_linsolver ls, int layers) {
  enum { COLS = 5, N = 1 + COLS * 4 };
  const int LAYERS = layers, cols = 20 / layers;
  static char names[N][32];  // room for any two ints: -Wformat-truncation cannot bound them
  sim_body_desc b[N];
  memset(b, 0, sizeof b);
  b[0] = plate(2, 2, 0.1, 0.0);
  for (int c = 0; c < cols; c++) {
    for (int l = 0; l < LAYERS; l++) {
      sim_body_desc *x = &b[1 + c * LAYERS + l];
      snprintf(names[1 + c * LAYERS + l], sizeof names[0], "box%d_%d", c, l);
      x->name = names[1 + c * LAYERS + l];
      x->mass = 0.5;
      x->shape.type = SIM_SHAPE_BOX;
      // each box narrower than the one below: its bottom face lies inside the top face
      // beneath, four stable corners (equal coincident faces would flip between 4 and 8
      // overlap corners under the slightest slide)
      x->shape.size[0] = x->shape.size[1] = 0.1 - 0.01 * l, x->shape.size[2] = 0.05;
      x->quat[0] = 1;
      // a grid clear of the floor's diagonal (y - x > 0.5), so each box stands on its own
      // four corners; in the standoff by the static deflection (m g / 4 k) on the floor
      x->pos[0] = -0.9 + 0.17 * (c % 5), x->pos[1] = 0.3 + 0.17 * (c / 5) + 0.01 * l;
      x->pos[2] = 0.025 + 1e-3 - (layers == 1 ? 0.5 * G / 4e5 : 0.05e-3) + l * (0.05 + 0.95e-3);
    }
  }
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.k = 1e5, s.contact.alpha = 0.5, s.contact.standoff = 1e-3;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_STANDOFF;
  s.rtol = 1e-6, s.atol = 1e-9;
  s.linsolver = ls;
  s.nbody = N;
  s.bodies = b;
  return sim_model_compile(&s, NULL, 0);
}

static void test_stacks_sparse(void **state) {
  (void)state;
  sim_model *ms = stacks(SIM_LINSOLVER_AUTO, 4), *md = stacks(SIM_LINSOLVER_DENSE, 4);
  assert_non_null(ms);
  assert_non_null(md);
  sim_data *ds_ = sim_data_new(ms, NULL, 0), *dd = sim_data_new(md, NULL, 0);
  size_t n = sim_state_size(ms);
  double *y = test_malloc(n * sizeof(double)), *f = test_malloc(n * sizeof(double));
  double *Js = test_malloc(n * n * sizeof(double)), *Jd = test_malloc(n * n * sizeof(double));
  sim_get_state(ms, ds_, y);
  for (size_t i = 0; i < n; i += SIM_NQ) y[i + 9] = -0.01;  // sinking: damping matters too
  assert_int_equal(sim_eval_derivatives(ms, ds_, y, f, Js), CCSIM_OK);
  assert_int_equal(sim_eval_derivatives(md, dd, y, f, Jd), CCSIM_OK);
  size_t nonzero = 0;
  for (size_t i = 0; i < n * n; i++) {
    if (Jd[i] != 0) nonzero++;
    if (Js[i] != Jd[i]) print_error("entry %zu: sparse %g dense %g\n", i, Js[i], Jd[i]);
    assert_true(Js[i] == Jd[i]);
  }
  assert_true(nonzero > n);  // contacts coupled the bodies: not just the rigid terms
  test_free(y), test_free(f), test_free(Js), test_free(Jd);
  sim_data_destroy(&ds_);
  sim_data_destroy(&dd);
  sim_model_destroy(&ms);
  sim_model_destroy(&md);
  // twenty boxes on the floor, stepped with KLU
  sim_model *m = stacks(SIM_LINSOLVER_AUTO, 1);
  sim_data *d = sim_data_new(m, NULL, 0);
  for (int k = 1; k <= 500; k++) {
    if (sim_step(m, d, k * 1e-3) != CCSIM_OK) print_error("%s\n", sim_data_errmsg(d));
    assert_double_near(sim_data_time(d), k * 1e-3, 1e-12);
  }
  int nc = 0;
  double fz = support(m, d, 0, &nc);
  const sim_stats *st = sim_data_stats(d);
  print_message("20 boxes (klu): floor pushes %.6f N for %.6f N over %d contacts; %llu steps, "
                "%llu jacobians, %.3f s physics\n",
                -fz, 20 * 0.5 * G, nc, (unsigned long long)st->steps,
                (unsigned long long)st->jac_evals, 1e-9 * (double)st->physics_ns);
  assert_double_rel(-fz, 20 * 0.5 * G, 1e-3, 0);
  assert_int_equal(nc, 80);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jacobian_matches_finite_differences),
      cmocka_unit_test(test_restitution),
      cmocka_unit_test(test_box_rests),
      cmocka_unit_test(test_energy_never_grows),
      cmocka_unit_test(test_no_tunnelling),
      cmocka_unit_test(test_no_tunnelling_after_bounce),
      cmocka_unit_test(test_snapshot_in_contact_bit_exact),
      cmocka_unit_test(test_snapshot_sliding_bit_exact),
      cmocka_unit_test(test_contacts_at_poses_change_nothing),
      cmocka_unit_test(test_stacks_sparse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
