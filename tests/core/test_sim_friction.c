// ctest-label: validation
// ctest-timeout: 600
// Friction with stiction in the compliant mode against analytic answers: a box held on a
// 22 degree slope without creep, sliding at g (sin - mu cos) on a 35 degree one, held
// under an oscillating load and sliding above mu m g, the stick-slip saw-tooth peaking at
// mu_s m g, and a sliding box stopping at v^2 / (2 mu g) without its total energy (with
// the springs') ever growing.
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_contact.h"
#include "sim_data.h"
#include "sim_model.h"
#include "ccsim_test_sim.h"

#define G 9.81
#define PI 3.14159265358979323846

// Box 0.1 x 0.1 x 0.05 m of 1 kg on a fixed 2 x 2 m plate whose top passes through the
// origin, turned about y by theta (the slope falls towards +x). The box sits on it at
// the depth where its four corners carry its weight.
typedef struct incline {
  sim_model *m;
  sim_data *d;
  double down[3];  // unit, down the slope
  double n[3];     // the plate's top normal
} incline;

static const double kBox[3] = {0.1, 0.1, 0.05};
static const double kK = 1e5, kStandoff = 1e-3;

static sim_model *compile(sim_body_desc *b, int n, double mu, double mu_dynamic, double rtol) {
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -G;
  s.contact.k = kK, s.contact.alpha = 0.5, s.contact.standoff = kStandoff;
  s.contact.mu = mu, s.contact.mu_dynamic = mu_dynamic;
  s.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_STANDOFF | SIM_CP_MU | SIM_CP_MU_DYNAMIC;
  s.rtol = rtol;
  s.atol = 1e-10;
  return test_compile(&s, b, n);
}

static void incline_new(incline *in, double theta, double mu, double mu_dynamic) {
  sim_body_desc b[2];
  memset(b, 0, sizeof b);
  double q[4] = {cos(theta / 2), 0, sin(theta / 2), 0}, R[9];
  geo_quat_to_mat(R, q);
  geo_v3_set(in->n, R[2], R[5], R[8]);
  geo_v3_set(in->down, R[0], R[3], R[6]);
  if (in->down[2] > 0) geo_v3_scale(in->down, in->down, -1.0);
  b[0].name = "slope";
  b[0].type = SIM_BODY_FIXED;
  b[0].shape.type = SIM_SHAPE_BOX;
  geo_v3_set(b[0].shape.size, 2, 2, 0.1);
  geo_v3_scale(b[0].pos, in->n, -0.05);
  memcpy(b[0].quat, q, sizeof q);
  b[1].name = "box";
  b[1].mass = 1;
  b[1].shape.type = SIM_SHAPE_BOX;
  memcpy(b[1].shape.size, kBox, sizeof kBox);
  double depth = G * cos(theta) / (4 * kK);  // each corner's share of the normal load
  geo_v3_scale(b[1].pos, in->n, 0.5 * kBox[2] + kStandoff - depth);
  memcpy(b[1].quat, q, sizeof q);
  in->m = compile(b, 2, mu, mu_dynamic, 1e-6);
  assert_non_null(in->m);
  char err[256] = "";
  in->d = sim_data_new(in->m, err, sizeof err);
  if (!in->d) print_error("%s\n", err);
  assert_non_null(in->d);
}

static void incline_free(incline *in) {
  sim_data_destroy(&in->d);
  sim_model_destroy(&in->m);
}

static void run_to(incline *in, double t) {
  ccsim_status st = sim_step(in->m, in->d, t);
  if (st != CCSIM_OK) print_error("%s\n", sim_data_errmsg(in->d));
  assert_int_equal(st, CCSIM_OK);
}

static void box_pos(const incline *in, double p[3], double v[3]) {
  sim_get_body(in->m, in->d, 1, p, NULL, v, NULL);
}

// ---- incline ------------------------------------------------------------------------

// tan 22 deg = 0.40 < mu = 0.5: after settling the box moves less than 1 um in 10 s
static void test_incline_sticks(void **state) {
  (void)state;
  incline in;
  incline_new(&in, 22 * PI / 180, 0.5, 0.5);
  run_to(&in, 1.0);
  double p0[3], p1[3], v[3];
  box_pos(&in, p0, v);
  run_to(&in, 11.0);
  box_pos(&in, p1, v);
  double drift = geo_v3_dist(p0, p1);
  const sim_stats *st = sim_data_stats(in.d);
  print_message("incline 22 deg: drift %.3g m over 10 s (%.3g m/s), %u anchors, %llu steps\n",
                drift, drift / 10, st->anchors, (unsigned long long)st->steps);
  assert_true(drift < 1e-6);
  assert_true(st->anchors >= 4);
  // the friction carries the weight's component along the slope
  assert_int_equal(sim_eval_contacts(in.m, in.d), CCSIM_OK);
  double f[3], t[3];
  int nc = 0;
  sim_data_body_contact(in.m, in.d, 1, f, t, &nc);
  assert_double_near(geo_v3_dot(f, in.down), -G * sin(22 * PI / 180), 1e-4);
  incline_free(&in);
}

// tan 35 deg = 0.70 > mu = 0.5: it slides with a = g (sin - mu cos) to 1 %
static void test_incline_slides(void **state) {
  (void)state;
  const double theta = 35 * PI / 180, mu = 0.5;
  incline in;
  incline_new(&in, theta, mu, mu);
  run_to(&in, 0.2);
  double p[3], v0[3], v1[3];
  box_pos(&in, p, v0);
  run_to(&in, 0.7);
  box_pos(&in, p, v1);
  double a = (geo_v3_dot(v1, in.down) - geo_v3_dot(v0, in.down)) / 0.5;
  double expect = G * (sin(theta) - mu * cos(theta));
  print_message("incline 35 deg: a = %.6g m/s^2, expected %.6g (%+.3f %%)\n", a, expect,
                100 * (a / expect - 1));
  assert_double_rel(a, expect, 0.01, 0);
  incline_free(&in);
}

// Kinetic and gravitational energy plus what the contact springs hold: k delta^2 / 2
// normal (n = 1) and |F_t|^2 / (2 k_t) tangential, the spring's elastic part.
static double total_energy(incline *in) {
  assert_int_equal(sim_eval_contacts(in->m, in->d), CCSIM_OK);
  int n = 0;
  const sim_contact *c = sim_data_contacts(in->d, &n);
  double e = sim_energy(in->m, in->d);
  for (int i = 0; i < n; i++) {
    double fs = fmin(c[i].k_t * geo_v3_norm(c[i].stretch), c[i].cap);
    e += 0.5 * kK * c[i].depth * c[i].depth + (c[i].k_t > 0 ? 0.5 * fs * fs / c[i].k_t : 0);
  }
  return e;
}

// ---- flat plate with loads -----------------------------------------------------------

// A horizontal pull F(t) at the height of the box's bottom face (no tipping moment).
static void pull(incline *in, double fx) {
  double f[3] = {fx, 0, 0}, tq[3] = {0, -0.5 * kBox[2] * fx, 0};
  assert_int_equal(sim_set_input(in->m, in->d, 1, f, tq), CCSIM_OK);
}

// 0.5 mu m g + 0.3 mu m g sin(2 pi 10 t) holds (drift < 1 um over 5 s, compared at the
// same phase); a steady 1.2 mu m g slides it
static void test_oscillating_load(void **state) {
  (void)state;
  const double mu = 0.5, mg = G, dt = 1e-3;
  incline in;
  incline_new(&in, 0, mu, mu);
  run_to(&in, 0.2);
  double p0[3] = {0}, p1[3], v[3];
  double t = 0.2;
  for (int k = 1; t < 5.7 - 1e-9; k++) {
    pull(&in, mu * mg * (0.5 + 0.3 * sin(2 * PI * 10 * (t - 0.2))));
    t = 0.2 + k * dt;
    run_to(&in, t);
    if (k == 500) box_pos(&in, p0, v);  // t = 0.7: after settling, phase 0
  }
  box_pos(&in, p1, v);
  double drift = fabs(p1[0] - p0[0]);
  print_message("oscillating load: drift %.3g m over 5 s\n", drift);
  assert_true(drift < 1e-6);
  pull(&in, 1.2 * mu * mg);
  run_to(&in, t + 1.0);
  box_pos(&in, p1, v);
  // a = 0.2 mu g: about 1 m/s^2, so about 0.5 m in the second
  print_message("1.2 mu m g: moved %.4g m in 1 s\n", p1[0] - p0[0]);
  assert_true(p1[0] - p0[0] > 0.4);
  incline_free(&in);
}

// Pulled through a spring (k_s = 200 N/m, explicit at 1 kHz) whose end moves at 1 cm/s:
// the force climbs to mu_s m g, the box slips, the force drops, and so on
static void test_stick_slip(void **state) {
  (void)state;
  const double mus = 0.5, mud = 0.3, ks = 200, speed = 0.01, dt = 1e-3;
  incline in;
  incline_new(&in, 0, mus, mud);
  run_to(&in, 0.2);
  double p[3], v[3], x0;
  box_pos(&in, p, v);
  x0 = p[0];
  // a peak: the highest force before it falls 10 % of mu_s m g below it (a slip); the
  // next climb starts once the force has risen that much above its trough
  double peaks[32], top = 0, trough = 0, fmin_after = 1e9;
  int npeak = 0, armed = 1;
  double t = 0.2;
  for (int k = 1; k <= 8000; k++) {
    box_pos(&in, p, v);
    double f = ks * (speed * (t - 0.2) - (p[0] - x0));
    if (armed) {
      top = fmax(top, f);
      if (f < top - 0.1 * mus * G && npeak < 32) {
        peaks[npeak++] = top;
        armed = 0;
        trough = f;
      }
    } else if ((trough = fmin(trough, f)) < f - 0.1 * mus * G) {
      armed = 1;  // climbing again
      top = f;
    }
    if (npeak > 0) fmin_after = fmin(fmin_after, f);
    pull(&in, f);
    t = 0.2 + k * dt;
    run_to(&in, t);
  }
  for (int i = 0; i < npeak; i++) print_message("  peak %d: %.5g N\n", i, peaks[i]);
  print_message("stick-slip: %d peaks, first %.5g N, lowest force after %.4g N "
                "(mu_s m g = %.5g N), %llu restarts\n",
                npeak, npeak ? peaks[0] : 0, fmin_after, mus * G,
                (unsigned long long)sim_data_stats(in.d)->friction_restarts);
  assert_true(npeak >= 3);
  for (int i = 0; i < npeak; i++) assert_double_rel(peaks[i], mus * G, 0.02, 0);
  assert_true(fmin_after < 0.8 * mus * G);  // a saw-tooth, not a steady slide
  incline_free(&in);
}

// A box launched at 1 m/s on the flat plate stops after v^2 / (2 mu g) to 1 %, and its
// mechanical energy never grows on the way
static void test_slide_to_rest_energy(void **state) {
  (void)state;
  const double mu = 0.3, v0 = 1.0;
  incline in;
  incline_new(&in, 0, mu, mu);
  double p[3], q[4], v[3] = {v0, 0, 0}, w[3] = {0, 0, 0}, x0;
  sim_get_body(in.m, in.d, 1, p, q, NULL, NULL);
  x0 = p[0];
  assert_int_equal(sim_set_body(in.m, in.d, 1, p, q, v, w), CCSIM_OK);
  double e_prev = total_energy(&in), rise = 0, p_late[3] = {0};
  for (int k = 1; k <= 600; k++) {
    run_to(&in, k * 1e-3);
    double e = total_energy(&in);
    rise = fmax(rise, e - e_prev);
    e_prev = fmin(e_prev, e);
    if (k == 500) box_pos(&in, p_late, v);
  }
  box_pos(&in, p, v);
  double expect = v0 * v0 / (2 * mu * G);
  print_message("slide to rest: %.5g m (expected %.5g), moved %.3g m in the last 0.1 s, "
                "largest rise of the total energy %.3g J\n",
                p[0] - x0, expect, geo_v3_dist(p, p_late), rise);
  assert_double_rel(p[0] - x0, expect, 0.01, 0);
  assert_true(geo_v3_dist(p, p_late) < 1e-5);  // stopped (the springs' ringing aside)
  // kinetic + potential + the springs' elastic energy never grows (1 uJ of rounding and
  // of the elastic part's estimate on the cone, against 0.5 J dissipated)
  assert_true(rise < 1e-6);
  incline_free(&in);
}

// ---- contact identity over a fine mesh ----------------------------------------------

// A fixed slab topped by a grid of n x n squares of side h [m] (two triangles each, facing
// up) centred at the origin, into b (vertex and triangle arrays: the caller's, borrowed by b)
static void fine_grid(sim_body_desc *b, int n, double h, double *vert, unsigned *tri) {
  test_grid(n, h, vert, tri);
  memset(b, 0, sizeof *b);
  b->name = "grid";
  b->type = SIM_BODY_FIXED;
  b->shape.type = SIM_SHAPE_MESH;
  b->shape.vert = vert, b->shape.nvert = TEST_GRID_NVERT(n);
  b->shape.tri = tri, b->shape.ntri = TEST_GRID_NTRI(n);
  b->quat[0] = 1;
}

// A fixed grid of n x n cells of h (vert and tri sized for it) and a free cube of the
// given edge, its centre at height z. mu is static and sliding friction alike.
static sim_model *cube_on_grid(int n, double h, double edge, double mu, double z, double *vert,
                               unsigned *tri) {
  sim_body_desc b[2];
  fine_grid(&b[0], n, h, vert, tri);
  memset(&b[1], 0, sizeof b[1]);
  b[1].name = "cube";
  b[1].mass = 1;
  b[1].shape.type = SIM_SHAPE_BOX;
  geo_v3_set(b[1].shape.size, edge, edge, edge);
  b[1].quat[0] = 1;
  b[1].pos[2] = z;
  return compile(b, 2, mu, mu, 1e-6);
}

// A cube stands on one corner 0.5 mm above a flat grid of 1 mm squares (two triangles
// each) and is carried 2 mm along it in 40 commits while mu = 10 keeps the corner stuck.
// The corner crosses cell edges and diagonals, where the engine reports it against
// several triangles at once; one anchor must carry the contact throughout, so its spring
// stretches exactly as far as the corner travelled. A reset at a crossing (a new anchor at
// s = 0, or the stretch taken from a shallower neighbour's pair) shows as missing
// stretch. Poses are set directly and nothing moves between commits (no velocities, so no
// damper force): this checks the bookkeeping alone, as each accepted integrator step
// would run it.
static void test_identity_over_fine_mesh(void **state) {
  (void)state;
  enum { N = 16 };  // cells per side
  const double h = 1e-3, d0 = 0.5e-3, D = 2e-3, edge = 0.01;
  static double vert[TEST_GRID_NVERT(N) * 3];
  static unsigned tri[TEST_GRID_NTRI(N) * 3];
  sim_model *m = cube_on_grid(N, h, edge, 10, 0, vert, tri);
  assert_non_null(m);
  char err[256] = "";
  sim_collider *c = sim_collider_new(m, 0, err, sizeof err);
  if (!c) print_error("%s\n", err);
  assert_non_null(c);
  // the cube's body diagonal (1, 1, 1) turned to point down: about (-1, 1, 0) by
  // acos(-1/sqrt 3), so its corner (+, +, +) is the lowest point, the others >= 5.7 mm up;
  // that corner starts above (0.2, 0.3) mm, inside a cell, and travels along 35 degrees
  // across x and y cell edges and diagonals
  double ang = acos(-1 / sqrt(3.0)), s2 = sin(ang / 2) / sqrt(2.0);
  double pos[6] = {0, 0, 0, 0.2e-3, 0.3e-3, d0 + 0.5 * edge * sqrt(3.0)};
  double quat[8] = {1, 0, 0, 0, cos(ang / 2), -s2, s2, 0}, zero[6] = {0};
  sim_kinematics k = {pos, quat, pos, zero, zero};
  const double dir[3] = {cos(35 * PI / 180), sin(35 * PI / 180), 0};
  double start[3], wrench[12];
  geo_v3_copy(start, pos + 3);
  const int legs = 40;
  double worst = 0, last = 0;
  int most_leads = 0, most_pairs = 0;
  for (int step = 0; step <= legs; step++) {
    double moved = D * step / legs;
    geo_v3_madd(pos + 3, start, moved, dir);
    memset(wrench, 0, sizeof wrench);
    assert_int_equal(sim_collide(m, c, &k, wrench), CCSIM_OK);
    int n = 0, leads = 0, pairs = 0;
    const sim_contact *ct = sim_collider_contacts(c, &n);
    for (int i = 0; i < n; i++) pairs += ct[i].fb.type == GEO_FEAT_VERTEX;
    for (int i = 0; i < n; i++) {
      // the corner's pairs (the grid's vertices under the cube's edges near it are
      // contacts of their own)
      if (ct[i].lead != i || ct[i].fb.type != GEO_FEAT_VERTEX) continue;
      leads++;
      if (step > 0) {  // B's corner moved by +moved relative to the grid's material point
        double want[3];
        geo_v3_scale(want, dir, moved);
        worst = fmax(worst, geo_v3_dist(ct[i].stretch, want) / moved);
        last = geo_v3_norm(ct[i].stretch);
      }
    }
    most_leads = leads > most_leads ? leads : most_leads;
    most_pairs = pairs > most_pairs ? pairs : most_pairs;
    assert_int_equal(sim_friction_commit(m, c, &k), 0);  // stays stuck: no restart
  }
  print_message(
      "fine mesh: up to %d witness pairs of the corner, up to %d leads among them; "
      "its spring stretched %.4g mm for %.4g mm of travel (largest error %.3g of "
      "the travel)\n",
      most_pairs, most_leads, last * 1e3, D * 1e3, worst);
  assert_true(most_pairs > 1);  // the crossings were seen from several triangles
  assert_int_equal(most_leads, 1);
  assert_true(worst < 1e-9);
  sim_collider_destroy(&c);
  sim_model_destroy(&m);
}

// A cube lies flat 0.5 mm above a grid of 0.4 mm squares, inside the 1 mm standoff: the
// grid's vertices under its face make more contacts than the collider's arrays first hold.
// They grow while the query runs; the contacts must be those of a second evaluation that
// finds the arrays large enough, the limit must still hold (cap one short is CCSIM_ELIMIT,
// a cap above the count is not), and the anchors of those contacts must restore into a
// collider that has never held that many.
static void test_contacts_outgrow_first_arrays(void **state) {
  (void)state;
  enum { N = 40 };
  const double h = 0.4e-3, edge = 0.01;
  static double vert[TEST_GRID_NVERT(N) * 3];
  static unsigned tri[TEST_GRID_NTRI(N) * 3];
  sim_model *m = cube_on_grid(N, h, edge, 1, 0, vert, tri);
  assert_non_null(m);
  double pos[6] = {0, 0, 0, 0.13e-3, 0.07e-3, 0.5e-3 + edge / 2};
  double quat[8] = {1, 0, 0, 0, 1, 0, 0, 0}, zero[6] = {0}, wrench[12];
  sim_kinematics k = {pos, quat, pos, zero, zero};
  char err[256] = "";
  sim_collider *c = sim_collider_new(m, 0, err, sizeof err);
  assert_non_null(c);
  memset(wrench, 0, sizeof wrench);
  assert_int_equal(sim_collide(m, c, &k, wrench), CCSIM_OK);
  int n = 0;
  const sim_contact *ct = sim_collider_contacts(c, &n);
  print_message("flat cube on the grid: %d contacts\n", n);
  assert_true(n > 4 * 256);  // past the first arrays, and past two doublings
  sim_contact *first = malloc((size_t)n * sizeof *first);
  assert_non_null(first);
  memcpy(first, ct, (size_t)n * sizeof *first);
  double w1[12];
  memcpy(w1, wrench, sizeof w1);
  memset(wrench, 0, sizeof wrench);
  assert_int_equal(sim_collide(m, c, &k, wrench), CCSIM_OK);
  int n2 = 0;
  ct = sim_collider_contacts(c, &n2);
  assert_int_equal(n2, n);
  assert_memory_equal(ct, first, (size_t)n * sizeof *first);
  assert_memory_equal(wrench, w1, sizeof w1);
  // the anchors of all of them, restored where the arrays are still small
  assert_int_equal(sim_friction_commit(m, c, &k), 0);
  assert_true(sim_friction_anchors(c) > 256);
  size_t sz = sim_friction_snapshot_size(c);
  double *snap = malloc(sz * sizeof *snap), *again = malloc(sz * sizeof *again);
  assert_non_null(snap);
  assert_non_null(again);
  sim_friction_snapshot_get(c, snap);
  sim_collider *r = sim_collider_new(m, 0, err, sizeof err);
  assert_non_null(r);
  assert_int_equal(sim_friction_snapshot_set(m, r, snap, sz), CCSIM_OK);
  assert_int_equal(sim_friction_snapshot_size(r), sz);
  sim_friction_snapshot_get(r, again);
  assert_memory_equal(again, snap, sz * sizeof *snap);
  sim_collider_destroy(&r);
  // the limit: one contact short fails with a message, exactly enough passes
  sim_collider *lim = sim_collider_new(m, n - 1, err, sizeof err);
  assert_non_null(lim);
  memset(wrench, 0, sizeof wrench);
  assert_int_equal(sim_collide(m, lim, &k, wrench), CCSIM_ELIMIT);
  print_message("cap %d: %s\n", n - 1, sim_collider_errmsg(lim));
  assert_non_null(strstr(sim_collider_errmsg(lim), "more than"));
  sim_collider_destroy(&lim);
  int na = sim_friction_anchors(c);
  lim = sim_collider_new(m, na - 1, err, sizeof err);
  assert_non_null(lim);
  assert_int_equal(sim_friction_snapshot_set(m, lim, snap, sz), CCSIM_EINVAL);
  assert_int_equal(sim_friction_anchors(lim), 0);
  sim_collider_destroy(&lim);
  // a limit the doubling cannot land on (256, 512, 1024, then 1700); the workspace's raw
  // pairs (4 per contact of the limit) must hold this contact set's 6490 too
  lim = sim_collider_new(m, 1700, err, sizeof err);
  assert_non_null(lim);
  memset(wrench, 0, sizeof wrench);
  assert_int_equal(sim_collide(m, lim, &k, wrench), CCSIM_OK);
  ct = sim_collider_contacts(lim, &n2);
  assert_int_equal(n2, n);
  assert_memory_equal(ct, first, (size_t)n * sizeof *first);
  sim_collider_destroy(&lim);
  free(snap);
  free(again);
  free(first);
  sim_collider_destroy(&c);
  sim_model_destroy(&m);
}

// A cube of 8.5 cm lies 0.5 mm above a grid of 0.5 mm squares, inside the 1 mm standoff:
// about 29 000 grid vertices under its face, more than a session's limit of 16 384
// contacts. The session cannot start, and the error says so and names the bodies instead
// of CVODE's "right-hand side failed".
static void test_contact_limit_named(void **state) {
  (void)state;
  enum { N = 180 };
  const double h = 0.5e-3, edge = 0.085;
  static double vert[TEST_GRID_NVERT(N) * 3];
  static unsigned tri[TEST_GRID_NTRI(N) * 3];
  sim_model *m = cube_on_grid(N, h, edge, 0, 0.5e-3 + edge / 2, vert, tri);
  assert_non_null(m);
  char err[512] = "";
  sim_data *d = sim_data_new(m, err, sizeof err);
  print_message("%s\n", err);
  assert_null(d);
  assert_non_null(strstr(err, "more than"));
  assert_non_null(strstr(err, "\"cube\""));
  sim_model_destroy(&m);
}

// a contact's witness features as one number
static long long feature_key(const sim_contact *ct) {
  return (((long long)ct->fa.type * 4 + ct->fb.type) << 50) | ((long long)ct->fa.id << 25) |
         ct->fb.id;
}

// A ball (radius 2 cm, 64 x 32 facets) 0.05 mm into a standoff of 0.1 mm over the same
// kind of grid is first carried 0.2 mm sideways, so its contacts stick with 0.2 mm of
// stretch, then rolled without slip by 0.5 mm: the witness points of the contacts at the
// centre of its patch (about 2 mm across) move over the ball's facets and the grid's
// triangles, and many change features. Rolling moves no material point at the contact
// and the ball's surface moves against the grid's by well under 1 um there, so those
// contacts must keep their 0.2 mm; a reset (an anchor lost, or one taken from the wrong
// place) shows as one with much less. The rim is not checked: its contacts are shallow,
// weakly held by mu F_n and slip, and rolling a whole patch length rolls the stretch out
// (a rolling contact without creep carries no tangential force, as in Carter's theory).
static void test_identity_rolling(void **state) {
  (void)state;
  enum { N = 24 };
  const double h = 1e-3, R = 0.02, ds = 1e-4, d0 = 0.5e-4, pre = 0.2e-3, roll = 0.5e-3;
  static double vert[TEST_GRID_NVERT(N) * 3];
  static unsigned tri[TEST_GRID_NTRI(N) * 3];
  sim_body_desc b[2];
  fine_grid(&b[0], N, h, vert, tri);
  memset(&b[1], 0, sizeof b[1]);
  b[1].name = "ball";
  b[1].mass = 1;
  b[1].shape.type = SIM_SHAPE_SPHERE;
  b[1].shape.radius = R;
  b[1].shape.res[0] = 64, b[1].shape.res[1] = 32;
  b[1].quat[0] = 1;
  sim_scene sc;
  memset(&sc, 0, sizeof sc);
  sc.contact.k = kK, sc.contact.alpha = 0.5, sc.contact.standoff = ds;
  sc.contact.mu = 10, sc.contact.mu_dynamic = 10;
  sc.contact.set = SIM_CP_K | SIM_CP_ALPHA | SIM_CP_STANDOFF | SIM_CP_MU | SIM_CP_MU_DYNAMIC;
  sim_model *m = test_compile(&sc, b, 2);
  assert_non_null(m);
  char err[256] = "";
  sim_collider *c = sim_collider_new(m, 0, err, sizeof err);
  if (!c) print_error("%s\n", err);
  assert_non_null(c);
  // start over (-3.2, 0.3) mm, off the grid's lines; the ball's lowest point is a vertex
  double lowest = 0;
  for (int v = 0; v < m->mesh[1]->nvert; v++) lowest = fmin(lowest, m->mesh[1]->vert[3 * v + 2]);
  double pos[6] = {0, 0, 0, -3.2e-3, 0.3e-3, d0 - lowest};
  double quat[8] = {1, 0, 0, 0, 1, 0, 0, 0}, zero[6] = {0}, wrench[12];
  sim_kinematics k = {pos, quat, pos, zero, zero};
  const double x0 = pos[3];
  const int slide_steps = 10, roll_steps = 50;
  double lo = INFINITY, hi = 0;
  int most = 0, checked = 0;
  unsigned long long changed = 0;  // centre contacts on features the last commit did not have
  static long long prev[4096], cur[4096];
  int nprev = 0;
  for (int step = 0; step <= slide_steps + roll_steps; step++) {
    double theta = 0;
    if (step <= slide_steps) {
      pos[3] = x0 + pre * step / slide_steps;
    } else {
      double x = roll * (step - slide_steps) / roll_steps;
      pos[3] = x0 + pre + x;
      theta = x / R;  // about +y: the bottom point stays put while the centre moves +x
    }
    quat[4] = cos(theta / 2), quat[6] = sin(theta / 2);
    memset(wrench, 0, sizeof wrench);
    assert_int_equal(sim_collide(m, c, &k, wrench), CCSIM_OK);
    int n = 0, carrying = 0;
    const sim_contact *ct = sim_collider_contacts(c, &n);
    for (int i = 0; i < n; i++) {
      if (!(ct[i].force > 0)) continue;
      carrying++;
      if (step > slide_steps && ct[i].depth > 0.6 * d0) {
        lo = fmin(lo, ct[i].stretch[0]);
        hi = fmax(hi, ct[i].stretch[0]);
        checked++;
        long long key = feature_key(&ct[i]);
        int seen = 0;
        for (int j = 0; j < nprev && !seen; j++) seen = prev[j] == key;
        changed += !seen;
      }
    }
    assert_true(n <= 4096);
    for (int i = 0; i < n; i++) cur[i] = feature_key(&ct[i]);
    memcpy(prev, cur, (size_t)n * sizeof *cur);
    nprev = n;
    most = carrying > most ? carrying : most;
    assert_int_equal(sim_friction_commit(m, c, &k), 0);
  }
  print_message(
      "rolling: up to %d contacts; %d checked at the patch's centre, %llu of them on "
      "other features than their anchor's; stretch along the roll within [%.4g, "
      "%.4g] mm (stuck with 0.2 mm)\n",
      most, checked, changed, lo * 1e3, hi * 1e3);
  assert_true(changed > 0);
  assert_true(lo > 0.9 * pre && hi < 1.1 * pre);
  sim_collider_destroy(&c);
  sim_model_destroy(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_incline_sticks),
      cmocka_unit_test(test_incline_slides),
      cmocka_unit_test(test_oscillating_load),
      cmocka_unit_test(test_stick_slip),
      cmocka_unit_test(test_slide_to_rest_energy),
      cmocka_unit_test(test_identity_over_fine_mesh),
      cmocka_unit_test(test_identity_rolling),
      cmocka_unit_test(test_contacts_outgrow_first_arrays),
      cmocka_unit_test(test_contact_limit_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
