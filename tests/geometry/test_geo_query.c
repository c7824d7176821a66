// Proximity, minimum distance, interference and the coherence cache against an
// independent brute force (bvh_brute.h) on random closed meshes and the Rock-N-Stack scene.
// ctest-label: unit
// ctest-timeout: 120
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "bvh_brute.h"
#include "geo_bvh.h"
#include "geo_mesh.h"
#include "geo_prim.h"
#include "geo_query.h"

#ifdef __SANITIZE_ADDRESS__
#define N_RANDOM 6
#define N_SCENE_POSES 2
#define N_CACHE_STEPS 20
#else
#define N_RANDOM 120
#define N_SCENE_POSES 6
#define N_CACHE_STEPS 80
#endif

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

static void random_quat(double q[4]) {
  double n;
  do {
    for (int i = 0; i < 4; i++) q[i] = srand1();
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  } while (n < 0.1 || n > 1.0);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

// a sphere mesh with radially perturbed vertices: closed, star-shaped, non-convex
static geo_mesh *bumpy_sphere(double r, int slices, int stacks, double amp) {
  char err[256];
  geo_mesh *s = geo_mesh_sphere(r, slices, stacks, err, sizeof err);
  assert_non_null(s);
  double *v = malloc((size_t)s->nvert * 3 * sizeof *v);
  for (int i = 0; i < s->nvert; i++) {
    double f = 1.0 + amp * srand1();
    for (int k = 0; k < 3; k++) v[3 * i + k] = f * s->vert[3 * i + k];
  }
  geo_mesh *m = geo_mesh_new(v, s->nvert, s->tri, s->ntri, "bumpy", err, sizeof err);
  if (m == NULL) print_error("%s\n", err);
  assert_non_null(m);
  free(v);
  geo_mesh_destroy(&s);
  return m;
}

// height of the torus centre so its tube circle is `gap` from the smooth cone surface
static double rock_height(double R, double r, double cr, double ch, double gap) {
  // cone side line in the meridian plane: ch * rho + cr * z - cr * ch = 0
  double nrm = sqrt(ch * ch + cr * cr);
  return ((r + gap) * nrm - ch * R + cr * ch) / cr;
}

// compare an engine answer with the brute force; returns 1 when compared fully
static int compare_prox(const geo_mesh *A, const geo_pose *XA, const geo_mesh *B,
                        const geo_pose *XB, const geo_bvh *ba, const geo_bvh *bb,
                        geo_query_ws *ws, double ds) {
  int nb, nraw, ninter;
  double mind;
  bf_pair *ref = bf_proximity(A, XA, B, XB, ds, &nb, &nraw, &ninter, &mind);
  int cap = nb + 16;
  geo_pair *out = malloc((size_t)cap * sizeof *out);
  geo_prox_info info;
  int rc = geo_proximity(ba, XA, bb, XB, ds, ws, NULL, out, cap, &info);
  assert_int_equal(rc, GEO_QOK);
  // minimum distance always
  geo_pair mp;
  assert_int_equal(geo_min_distance(ba, XA, bb, XB, ws, NULL, &mp), GEO_QOK);
  assert_double_near(mp.dist, mind, 1e-9);
  assert_double_near(sqrt(bf_d2(mp.pa, mp.pb)), mp.dist, 1e-12);
  int overlap = -1;
  assert_int_equal(geo_interference(ba, XA, bb, XB, ws, &overlap), GEO_QOK);
  int full = 0;
  // pairs whose brute distance sits on the threshold could fall either side: skip those
  int borderline = 0;
  for (int i = 0; i < nb; i++) {
    if (fabs(ref[i].dist - ds) < 1e-10) borderline = 1;
  }
  if (!borderline) {
    // one raw pair per leaf pair within ds (no parallel faces here), crossing or not
    assert_int_equal(info.n_raw, nraw);
  }
  if (ninter > 0) {
    assert_int_equal(overlap, 1);
    int touch = 0;
    for (int i = 0; i < info.n; i++) touch += (out[i].flags & GEO_PAIR_TOUCH) != 0;
    assert_true(touch > 0);
    assert_double_near(mp.dist, 0.0, 0.0);
  } else if (!borderline) {
    if (mind > 0) assert_int_equal(overlap, 0);
    assert_int_equal(info.n_raw, nraw);
    assert_int_equal(info.n, nb);
    for (int i = 0; i < nb; i++) {
      const geo_pair *p = &out[i];
      const bf_pair *q = &ref[i];
      assert_int_equal(p->flags & GEO_PAIR_PARALLEL, 0);
      assert_int_equal(p->fa.type, q->fat);
      assert_int_equal(p->fa.id, q->fai);
      assert_int_equal(p->fb.type, q->fbt);
      assert_int_equal(p->fb.id, q->fbi);
      assert_double_near(p->dist, q->dist, 1e-9);
      for (int k = 0; k < 3; k++) {
        assert_double_near(p->pa[k], q->pa[k], 1e-7);
        assert_double_near(p->pb[k], q->pb[k], 1e-7);
      }
      // unit normal from A to B
      double nn = sqrt(bf_dot(p->normal, p->normal));
      assert_double_near(nn, 1.0, 1e-12);
      if (p->dist > 1e-9) {
        double d[3];
        bf_sub(d, p->pb, p->pa);
        assert_double_near(bf_dot(d, p->normal), p->dist, 1e-12);
      }
    }
    full = 1;
  }
  free(out);
  free(ref);
  return full;
}

static void test_random_meshes(void **state) {
  (void)state;
  int full = 0;
  for (int trial = 0; trial < N_RANDOM; trial++) {
    double ra = 0.5 + urand(), rb = 0.3 + urand();
    geo_mesh *A = bumpy_sphere(ra, 10 + trial % 7, 6 + trial % 5, 0.08);
    geo_mesh *B = bumpy_sphere(rb, 8 + trial % 5, 5 + trial % 4, 0.08);
    char err[256];
    geo_bvh *ba = geo_bvh_new(A, err, sizeof err), *bb = geo_bvh_new(B, err, sizeof err);
    assert_non_null(ba);
    assert_non_null(bb);
    geo_query_ws *ws = geo_query_ws_new(ba, bb, 0, err, sizeof err);
    assert_non_null(ws);
    geo_pose XA, XB;
    random_quat(XA.q);
    random_quat(XB.q);
    double dir[3] = {srand1(), srand1(), srand1()};
    double dn = sqrt(bf_dot(dir, dir));
    double sep = (ra + rb) * (1.0 + 0.1 * urand());
    for (int k = 0; k < 3; k++) {
      XA.p[k] = srand1();
      XB.p[k] = XA.p[k] + sep * dir[k] / dn;
    }
    full += compare_prox(A, &XA, B, &XB, ba, bb, ws, 0.05 + 0.2 * urand());
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&ba);
    geo_bvh_destroy(&bb);
    geo_mesh_destroy(&A);
    geo_mesh_destroy(&B);
  }
  // most placements must be compared pair by pair (the rest intersect)
  assert_true(full >= N_RANDOM / 3);
}

// open triangle soups, crossing each other: leaf pair counts, touch flags, min distance
static geo_mesh *soup(int nt, double size) {
  char err[256];
  double *v = malloc((size_t)nt * 9 * sizeof *v);
  int *t = malloc((size_t)nt * 3 * sizeof *t);
  for (int i = 0; i < nt; i++) {
    double c[3] = {srand1(), srand1(), srand1()};
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 3; k++) v[9 * i + 3 * j + k] = c[k] + size * srand1();
      t[3 * i + j] = 3 * i + j;
    }
  }
  geo_mesh *m = geo_mesh_new(v, 3 * nt, t, nt, "soup", err, sizeof err);
  if (m == NULL) print_error("%s\n", err);
  assert_non_null(m);
  free(v);
  free(t);
  return m;
}

static void test_random_soups(void **state) {
  (void)state;
  char err[256];
  for (int trial = 0; trial < N_RANDOM / 6 + 1; trial++) {
    geo_mesh *A = soup(60, 0.3), *B = soup(50, 0.3);
    geo_bvh *ba = geo_bvh_new(A, err, sizeof err), *bb = geo_bvh_new(B, err, sizeof err);
    geo_query_ws *ws = geo_query_ws_new(ba, bb, 0, err, sizeof err);
    geo_pose XA, XB;
    random_quat(XA.q);
    random_quat(XB.q);
    for (int k = 0; k < 3; k++) {
      XA.p[k] = 0.3 * srand1();
      XB.p[k] = 0.3 * srand1();
    }
    compare_prox(A, &XA, B, &XB, ba, bb, ws, 0.02 + 0.05 * urand());
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&ba);
    geo_bvh_destroy(&bb);
    geo_mesh_destroy(&A);
    geo_mesh_destroy(&B);
  }
}

// a large standoff between two separated bumpy spheres: thousands of raw pairs, so the
// merge sorts them with the radix sort's wide digits; the answer still equals brute force
static void test_many_raw_pairs(void **state) {
  (void)state;
  char err[256];
  geo_mesh *A = bumpy_sphere(0.5, 16, 10, 0.05), *B = bumpy_sphere(0.4, 14, 9, 0.05);
  geo_bvh *ba = geo_bvh_new(A, err, sizeof err), *bb = geo_bvh_new(B, err, sizeof err);
  assert_non_null(ba);
  assert_non_null(bb);
  geo_query_ws *ws = geo_query_ws_new(ba, bb, 0, err, sizeof err);
  assert_non_null(ws);
  geo_pose XA = geo_pose_identity(), XB = geo_pose_identity();
  XB.p[0] = 1.0;  // radii at most 0.525 + 0.42: separated
  assert_int_equal(compare_prox(A, &XA, B, &XB, ba, bb, ws, 0.45), 1);
  static geo_pair out[65536];
  geo_prox_info info;
  assert_int_equal(geo_proximity(ba, &XA, bb, &XB, 0.45, ws, NULL, out, 65536, &info), GEO_QOK);
  assert_true(info.n_raw >= 2048);
  geo_query_ws_destroy(&ws);
  geo_bvh_destroy(&ba);
  geo_bvh_destroy(&bb);
  geo_mesh_destroy(&A);
  geo_mesh_destroy(&B);
}

typedef struct scene {
  geo_mesh *torus, *cone;
  geo_bvh *bt, *bc;
  geo_query_ws *ws;
  double z0;
} scene;

static void scene_make(scene *s, int rings) {
  char err[256];
  s->torus = geo_mesh_torus(0.05, 0.015, 48, 24, err, sizeof err);
  s->cone = geo_mesh_cone(0.06, 0.2, 64, rings, err, sizeof err);
  assert_non_null(s->torus);
  assert_non_null(s->cone);
  s->bt = geo_bvh_new(s->torus, err, sizeof err);
  s->bc = geo_bvh_new(s->cone, err, sizeof err);
  assert_non_null(s->bt);
  assert_non_null(s->bc);
  s->ws = geo_query_ws_new(s->bt, s->bc, 0, err, sizeof err);
  assert_non_null(s->ws);
  s->z0 = rock_height(0.05, 0.015, 0.06, 0.2, 0.25e-3);
}

static void scene_free(scene *s) {
  geo_query_ws_destroy(&s->ws);
  geo_bvh_destroy(&s->bt);
  geo_bvh_destroy(&s->bc);
  geo_mesh_destroy(&s->torus);
  geo_mesh_destroy(&s->cone);
}

static void jitter_pose(geo_pose *X, double z, double dp, double dang) {
  for (int k = 0; k < 3; k++) X->p[k] = dp * srand1();
  X->p[2] += z;
  X->q[0] = 1.0;
  for (int k = 1; k < 4; k++) X->q[k] = 0.5 * dang * srand1();
  double n = sqrt(X->q[0] * X->q[0] + X->q[1] * X->q[1] + X->q[2] * X->q[2] + X->q[3] * X->q[3]);
  for (int k = 0; k < 4; k++) X->q[k] /= n;
}

static void test_torus_over_cone(void **state) {
  (void)state;
  for (int rings = 1; rings <= 16; rings += 15) {
    scene s;
    scene_make(&s, rings);
    geo_pose XC = geo_pose_identity();
    for (int i = 0; i < N_SCENE_POSES; i++) {
      geo_pose XT;
      double z = s.z0 + (i == N_SCENE_POSES - 1 ? 0.01 : 0.0);
      jitter_pose(&XT, z, i == 0 ? 0.0 : 1e-4, i == 0 ? 0.0 : 2e-3);
      assert_int_equal(compare_prox(s.torus, &XT, s.cone, &XC, s.bt, s.bc, s.ws, 1e-3), 1);
      // B as the torus too (the other argument order)
      assert_int_equal(compare_prox(s.cone, &XC, s.torus, &XT, s.bc, s.bt, s.ws, 1e-3), 1);
    }
    // at the contact height the web of pairs is large
    geo_pose XT;
    jitter_pose(&XT, s.z0, 0, 0);
    geo_pair out[4096];
    geo_prox_info info;
    assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, NULL, out, 4096, &info),
                     GEO_QOK);
    assert_true(info.n > 48);
    assert_true(info.n < info.n_raw);
    scene_free(&s);
  }
}

// The torus lifted over the 1-ring cone and slightly tilted: against the cone's long side
// triangles the traversals skip levels of the torus's tree and drop the skipped nodes
// their spheres prove apart. Every answer must equal the brute force, for a standoff just
// above the gap (a few pairs), a few times it (many), and below it (none).
static void test_torus_lifted_over_cone(void **state) {
  (void)state;
  scene s;
  scene_make(&s, 1);
  geo_pose XC = geo_pose_identity();
  const double scale[] = {1.02, 1.3, 2.5, 0.5};
  // the gap grows with the lift times the sine of the cone's half-angle
  const double sin_half = 0.06 / sqrt(0.2 * 0.2 + 0.06 * 0.06);
  for (int i = 0; i < 12; i++) {
    double lift = 3e-3 + 1e-2 * (1.0 + srand1());
    for (int j = 0; j < 4; j++) {
      geo_pose XT;
      jitter_pose(&XT, s.z0 + lift, 1e-4, 0.01);
      double ds = scale[j] * (0.25e-3 + lift * sin_half);
      assert_int_equal(compare_prox(s.torus, &XT, s.cone, &XC, s.bt, s.bc, s.ws, ds), 1);
      assert_int_equal(compare_prox(s.cone, &XC, s.torus, &XT, s.bc, s.bt, s.ws, ds), 1);
    }
  }
  scene_free(&s);
}

static void test_cache_equals_cold(void **state) {
  (void)state;
  scene s;
  scene_make(&s, 16);
  char err[256];
  geo_query_cache *c = geo_query_cache_new(0, 0.3e-3, err, sizeof err);
  assert_non_null(c);
  static geo_pair cold[8192], warm[8192];
  geo_pose XC = geo_pose_identity();
  int hits = 0;
  for (int i = 0; i < N_CACHE_STEPS; i++) {
    geo_pose XT;
    // mostly small jitter (cache reusable), now and then a jump (cache refilled)
    double big = (i % 17 == 16) ? 2e-3 : 1e-4;
    jitter_pose(&XT, s.z0, big, i % 3 == 0 ? 1e-3 : 0.0);
    geo_prox_info ic, iw;
    assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, NULL, cold, 8192, &ic),
                     GEO_QOK);
    assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, c, warm, 8192, &iw),
                     GEO_QOK);
    hits += iw.cache_hit;
    assert_int_equal(ic.n, iw.n);
    assert_int_equal(ic.n_raw, iw.n_raw);
    assert_memory_equal(cold, warm, (size_t)ic.n * sizeof *cold);
    geo_pair mc, mw;
    assert_int_equal(geo_min_distance(s.bt, &XT, s.bc, &XC, s.ws, NULL, &mc), GEO_QOK);
    assert_int_equal(geo_min_distance(s.bt, &XT, s.bc, &XC, s.ws, c, &mw), GEO_QOK);
    assert_memory_equal(&mc, &mw, sizeof mc);
  }
  assert_true(hits > N_CACHE_STEPS / 2);
  geo_query_cache_destroy(&c);
  assert_null(c);
  scene_free(&s);
}

// The cache over the small steps of an integrator: a torus vibrating on the cone in steps
// of a few micrometres, now and then stepping back (a rejected step), with minimum distance
// queries sharing the cache as the simulator's time bound does. Cached == cold exactly; a
// query repeated at the same pose re-measures only the leaf pairs within the standoff
// (the bounds of the others, from the previous hit, prove them out).
static void test_cache_small_steps(void **state) {
  (void)state;
  for (int rings = 1; rings <= 16; rings += 15) {
    scene s;
    scene_make(&s, rings);
    char err[256];
    geo_query_cache *c = geo_query_cache_new(0, 1e-3, err, sizeof err);
    assert_non_null(c);
    static geo_pair cold[8192], warm[8192];
    geo_pose XC = geo_pose_identity();
    int hits = 0, repeats = 0;
    double t = 0.0;
    for (int i = 0; i < 3 * N_CACHE_STEPS; i++) {
      // 0.3 mm vibration at 0.05 rad per step, a slow tilt, every 7th step 3 steps back
      t += (i % 7 == 6) ? -0.15 : 0.05;
      geo_pose XT;
      XT.p[0] = 1e-4 * sin(0.3 * t);
      XT.p[1] = 0.0;
      XT.p[2] = s.z0 + 0.3e-3 * sin(t);
      XT.q[0] = 1.0;
      XT.q[1] = 2e-3 * sin(0.2 * t);
      XT.q[2] = 1e-3 * cos(0.1 * t);
      XT.q[3] = 0.0;
      geo_prox_info ic, iw;
      for (int rep = 0; rep < 1 + (i % 5 == 0); rep++) {
        assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, NULL, cold, 8192, &ic),
                         GEO_QOK);
        assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, c, warm, 8192, &iw),
                         GEO_QOK);
        assert_int_equal(ic.n, iw.n);
        assert_int_equal(ic.n_raw, iw.n_raw);
        assert_memory_equal(cold, warm, (size_t)ic.n * sizeof *cold);
        if (rep == 1 && iw.cache_hit) {
          assert_int_equal(iw.n_leaf, iw.n_raw);
          repeats++;
        }
        hits += iw.cache_hit;
      }
      if (i % 3 == 0) {
        geo_pair mc, mw;
        assert_int_equal(geo_min_distance(s.bt, &XT, s.bc, &XC, s.ws, NULL, &mc), GEO_QOK);
        assert_int_equal(geo_min_distance(s.bt, &XT, s.bc, &XC, s.ws, c, &mw), GEO_QOK);
        assert_memory_equal(&mc, &mw, sizeof mc);
      }
    }
    assert_true(hits > 2 * N_CACHE_STEPS);
    assert_true(repeats > 0);
    geo_query_cache_destroy(&c);
    scene_free(&s);
  }
}

// the cache on random meshes: a drifting, jittering, rotating pair, cached == cold exactly
static void test_cache_random(void **state) {
  (void)state;
  char err[256];
  for (int trial = 0; trial < N_RANDOM / 4 + 1; trial++) {
    geo_mesh *A = bumpy_sphere(0.5, 16, 10, 0.05), *B = bumpy_sphere(0.4, 14, 9, 0.05);
    geo_bvh *ba = geo_bvh_new(A, err, sizeof err), *bb = geo_bvh_new(B, err, sizeof err);
    geo_query_ws *ws = geo_query_ws_new(ba, bb, 0, err, sizeof err);
    geo_query_cache *c = geo_query_cache_new(0, 0.01, err, sizeof err);
    geo_query_cache *cm = geo_query_cache_new(0, 0.01, err, sizeof err);
    assert_non_null(c);
    assert_non_null(cm);
    static geo_pair cold[4096], warm[4096];
    geo_pose XA = geo_pose_identity(), XB;
    random_quat(XB.q);
    double dir[3] = {srand1(), srand1(), srand1()}, dn = sqrt(bf_dot(dir, dir));
    for (int k = 0; k < 3; k++) XB.p[k] = 0.88 * dir[k] / dn;
    int hits = 0, total = 0;
    for (int step = 0; step < 30; step++) {
      // drift a little, jitter, turn a little
      for (int k = 0; k < 3; k++) XB.p[k] += 0.002 * srand1();
      for (int k = 1; k < 4; k++) XB.q[k] += 0.002 * srand1();
      geo_prox_info ic, iw;
      assert_int_equal(geo_proximity(ba, &XA, bb, &XB, 0.03, ws, NULL, cold, 4096, &ic), GEO_QOK);
      assert_int_equal(geo_proximity(ba, &XA, bb, &XB, 0.03, ws, c, warm, 4096, &iw), GEO_QOK);
      hits += iw.cache_hit;
      total += ic.n;
      assert_int_equal(ic.n, iw.n);
      assert_memory_equal(cold, warm, (size_t)ic.n * sizeof *cold);
      geo_pair mc, mw;
      assert_int_equal(geo_min_distance(ba, &XA, bb, &XB, ws, NULL, &mc), GEO_QOK);
      assert_int_equal(geo_min_distance(ba, &XA, bb, &XB, ws, cm, &mw), GEO_QOK);
      assert_memory_equal(&mc, &mw, sizeof mc);
    }
    assert_true(hits > 0);
    assert_true(total > 0);
    geo_query_cache_destroy(&c);
    geo_query_cache_destroy(&cm);
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&ba);
    geo_bvh_destroy(&bb);
    geo_mesh_destroy(&A);
    geo_mesh_destroy(&B);
  }
}

// geo_min_distance_below on random meshes approaching, touching and leaving: the pair of
// geo_min_distance whenever it is closer than the bound, "far" (INFINITY, no triangles)
// whenever it is not; with one cache shared by proximity and bounded queries, as the
// simulator's time bound shares it, every answer equals the cold one
static void test_min_distance_below(void **state) {
  (void)state;
  char err[256];
  int near = 0, far = 0;
  for (int trial = 0; trial < N_RANDOM / 4 + 1; trial++) {
    geo_mesh *A = bumpy_sphere(0.5, 16, 10, 0.05), *B = bumpy_sphere(0.4, 14, 9, 0.05);
    geo_bvh *ba = geo_bvh_new(A, err, sizeof err), *bb = geo_bvh_new(B, err, sizeof err);
    geo_query_ws *ws = geo_query_ws_new(ba, bb, 0, err, sizeof err);
    geo_query_cache *c = geo_query_cache_new(0, 0.01, err, sizeof err);
    assert_non_null(c);
    static geo_pair cold[4096], warm[4096];
    geo_pose XA = geo_pose_identity(), XB;
    random_quat(XB.q);
    double dir[3] = {srand1(), srand1(), srand1()}, dn = sqrt(bf_dot(dir, dir));
    for (int step = 0; step < 40; step++) {
      // from 0.25 m of gap into contact and out again, turning a little
      double r = 0.9 + 0.25 * fabs(1.0 - step / 20.0);
      for (int k = 0; k < 3; k++) XB.p[k] = r * dir[k] / dn;
      for (int k = 1; k < 4; k++) XB.q[k] += 0.002 * srand1();
      geo_pair full, cb, wb;
      assert_int_equal(geo_min_distance(ba, &XA, bb, &XB, ws, NULL, &full), GEO_QOK);
      // bounds on both sides of the distance, near and far from it
      const double f[] = {0.5, 1.0 - 1e-6, 1.0 + 1e-6, 2.0};
      double below = full.dist * f[step % 4];
      assert_int_equal(geo_min_distance_below(ba, &XA, bb, &XB, below, ws, NULL, &cb), GEO_QOK);
      if (full.dist < below) {
        assert_memory_equal(&cb, &full, sizeof cb);
        near++;
      } else {
        assert_true(isinf(cb.dist));
        assert_int_equal(cb.tri_a, -1);
        assert_int_equal(cb.tri_b, -1);
        far++;
      }
      // the proximity query and the bounded one share c, in the simulator's order
      geo_prox_info ic, iw;
      assert_int_equal(geo_proximity(ba, &XA, bb, &XB, 0.03, ws, NULL, cold, 4096, &ic), GEO_QOK);
      assert_int_equal(geo_proximity(ba, &XA, bb, &XB, 0.03, ws, c, warm, 4096, &iw), GEO_QOK);
      assert_int_equal(ic.n, iw.n);
      assert_memory_equal(cold, warm, (size_t)ic.n * sizeof *cold);
      assert_int_equal(geo_min_distance_below(ba, &XA, bb, &XB, below, ws, c, &wb), GEO_QOK);
      assert_memory_equal(&wb, &cb, sizeof wb);
    }
    geo_pair p;
    assert_int_equal(geo_min_distance_below(ba, &XA, bb, &XB, NAN, ws, c, &p), GEO_QEINVAL);
    assert_int_equal(geo_min_distance_below(ba, &XA, bb, &XB, INFINITY, ws, c, &p), GEO_QOK);
    assert_int_equal(geo_min_distance(ba, &XA, bb, &XB, ws, NULL, &cold[0]), GEO_QOK);
    assert_memory_equal(&p, &cold[0], sizeof p);
    geo_query_cache_destroy(&c);
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&ba);
    geo_bvh_destroy(&bb);
    geo_mesh_destroy(&A);
    geo_mesh_destroy(&B);
  }
  assert_true(near > 0);
  assert_true(far > 0);
}

// a small box resting 0.5 mm above a big box: the four bottom corners, each once
static void test_parallel_faces(void **state) {
  (void)state;
  char err[256];
  geo_mesh *small = geo_mesh_box(0.1, 0.1, 0.1, err, sizeof err);
  geo_mesh *big = geo_mesh_box(1.0, 1.0, 1.0, err, sizeof err);
  geo_bvh *bs = geo_bvh_new(small, err, sizeof err), *bb = geo_bvh_new(big, err, sizeof err);
  geo_query_ws *ws = geo_query_ws_new(bs, bb, 0, err, sizeof err);
  assert_non_null(ws);
  geo_pose XS = {{0.3, 0.05, 0.5 + 0.05 + 0.5e-3}, {1, 0, 0, 0}}, XB = geo_pose_identity();
  geo_pair out[64];
  geo_prox_info info;
  assert_int_equal(geo_proximity(bs, &XS, bb, &XB, 1e-3, ws, NULL, out, 64, &info), GEO_QOK);
  assert_int_equal(info.n, 4);
  for (int i = 0; i < 4; i++) {
    // box vertex id = ix + 2 iy + 4 iz: the bottom corners are 0..3, in key order
    assert_int_equal(out[i].fa.type, GEO_FEAT_VERTEX);
    assert_int_equal(out[i].fa.id, i);
    assert_int_equal(out[i].fb.type, GEO_FEAT_FACE);
    assert_true(out[i].flags & GEO_PAIR_PARALLEL);
    assert_double_near(out[i].dist, 0.5e-3, 1e-12);
    assert_double_near(out[i].pa[0], 0.3 + ((i & 1) ? 0.05 : -0.05), 1e-12);
    assert_double_near(out[i].pa[1], 0.05 + ((i & 2) ? 0.05 : -0.05), 1e-12);
    assert_double_near(out[i].pb[2], 0.5, 1e-12);
    assert_double_near(out[i].normal[2], -1.0, 1e-12);
    // the face is one of the big box's top triangles (normal +z)
    assert_double_near(big->tri_normal[3 * out[i].fb.id + 2], 1.0, 1e-12);
  }
  // the same with A and B swapped: the corners now lie on A's faces
  assert_int_equal(geo_proximity(bb, &XB, bs, &XS, 1e-3, ws, NULL, out, 64, &info), GEO_QOK);
  assert_int_equal(info.n, 4);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(out[i].fa.type, GEO_FEAT_FACE);
    assert_int_equal(out[i].fb.type, GEO_FEAT_VERTEX);
    assert_double_near(out[i].normal[2], 1.0, 1e-12);
  }
  // capacity too small: a distinct code and the size needed
  assert_int_equal(geo_proximity(bs, &XS, bb, &XB, 1e-3, ws, NULL, out, 3, &info), GEO_QELIMIT);
  assert_int_equal(info.n, 4);
  // bad arguments
  assert_int_equal(geo_proximity(bs, &XS, bb, &XB, -1.0, ws, NULL, out, 64, &info), GEO_QEINVAL);
  geo_pose bad = XS;
  bad.p[0] = NAN;
  assert_int_equal(geo_proximity(bs, &bad, bb, &XB, 1e-3, ws, NULL, out, 64, &info),
                   GEO_QEINVAL);
  geo_query_ws_destroy(&ws);
  geo_bvh_destroy(&bs);
  geo_bvh_destroy(&bb);
  geo_mesh_destroy(&small);
  geo_mesh_destroy(&big);
}

// capacities: a workspace too small, raw pairs beyond raw_cap, a cache list too short
static void test_limits(void **state) {
  (void)state;
  scene s;
  scene_make(&s, 1);
  char err[256];
  geo_mesh *tiny = geo_mesh_box(0.1, 0.1, 0.1, err, sizeof err);
  geo_bvh *bt = geo_bvh_new(tiny, err, sizeof err);
  geo_query_ws *small = geo_query_ws_new(bt, bt, 0, err, sizeof err);
  geo_query_ws *few = geo_query_ws_new(s.bt, s.bc, 10, err, sizeof err);
  geo_query_cache *c = geo_query_cache_new(4, 1e-3, err, sizeof err);
  assert_non_null(small);
  assert_non_null(few);
  assert_non_null(c);
  geo_pose XC = geo_pose_identity(), XT;
  jitter_pose(&XT, s.z0, 0, 0);
  static geo_pair out[4096], ref[4096];
  geo_prox_info info, iref;
  geo_pair mp;
  // a workspace sized for boxes cannot serve the torus
  assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, small, NULL, out, 4096, &info),
                   GEO_QEINVAL);
  assert_int_equal(geo_min_distance(s.bt, &XT, s.bc, &XC, small, NULL, &mp), GEO_QEINVAL);
  // 10 raw pairs are not enough: a distinct code and the count needed
  assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, few, NULL, out, 4096, &info),
                   GEO_QELIMIT);
  assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, NULL, ref, 4096, &iref),
                   GEO_QOK);
  assert_int_equal(info.n_raw, iref.n_raw);
  // a cache whose list overflows is not used, and the answer is unchanged
  for (int k = 0; k < 3; k++) {
    assert_int_equal(geo_proximity(s.bt, &XT, s.bc, &XC, 1e-3, s.ws, c, out, 4096, &info),
                     GEO_QOK);
    assert_int_equal(info.cache_hit, 0);
    assert_int_equal(info.n, iref.n);
    assert_memory_equal(out, ref, (size_t)iref.n * sizeof *out);
  }
  // a cache handed another body pair starts over
  geo_query_cache_reset(c);
  geo_query_cache_reset(NULL);
  geo_query_cache_destroy(&c);
  geo_query_ws_destroy(&few);
  geo_query_ws_destroy(&small);
  geo_bvh_destroy(&bt);
  geo_mesh_destroy(&tiny);
  scene_free(&s);
}

static int overlap_of(const geo_bvh *a, const geo_pose *xa, const geo_bvh *b,
                      const geo_pose *xb, geo_query_ws *ws) {
  int o = -1;
  assert_int_equal(geo_interference(a, xa, b, xb, ws, &o), GEO_QOK);
  return o;
}

static void test_interference(void **state) {
  (void)state;
  char err[256];
  geo_mesh *u = geo_mesh_box(1, 1, 1, err, sizeof err);
  geo_mesh *t = geo_mesh_box(0.2, 0.2, 0.2, err, sizeof err);
  geo_mesh *ring = geo_mesh_torus(1.0, 0.2, 32, 16, err, sizeof err);
  geo_bvh *bu = geo_bvh_new(u, err, sizeof err), *bt = geo_bvh_new(t, err, sizeof err);
  geo_bvh *br = geo_bvh_new(ring, err, sizeof err);
  geo_query_ws *ws = geo_query_ws_new(br, bu, 0, err, sizeof err);
  assert_non_null(ws);
  geo_pose I = geo_pose_identity();
  geo_pose X = I;
  // overlapping boxes
  X.p[0] = 0.55;
  assert_int_equal(overlap_of(bt, &X, bu, &I, ws), 1);
  // apart by 1 mm
  X.p[0] = 0.601;
  assert_int_equal(overlap_of(bt, &X, bu, &I, ws), 0);
  // touching face to face (distance exactly 0)
  X.p[0] = 0.6;
  assert_int_equal(overlap_of(bt, &X, bu, &I, ws), 1);
  // nested: the small box inside the big one, surfaces apart
  X.p[0] = 0.1;
  X.p[1] = -0.2;
  assert_int_equal(overlap_of(bt, &X, bu, &I, ws), 1);
  assert_int_equal(overlap_of(bu, &I, bt, &X, ws), 1);
  // the small box in the torus hole, clear of the tube
  X.p[0] = X.p[1] = X.p[2] = 0.0;
  assert_int_equal(overlap_of(bt, &X, br, &I, ws), 0);
  // rotated 45 degrees about x and pushed into the tube
  X.q[0] = cos(0.39269908169872414);
  X.q[1] = sin(0.39269908169872414);
  X.p[0] = 0.75;
  assert_int_equal(overlap_of(bt, &X, br, &I, ws), 1);
  // inside the tube, clear of its surface
  X = I;
  X.p[0] = 1.0;
  X.p[0] = 1.0;
  geo_mesh *tiny = geo_mesh_box(0.05, 0.05, 0.05, err, sizeof err);
  geo_bvh *bti = geo_bvh_new(tiny, err, sizeof err);
  assert_int_equal(overlap_of(bti, &X, br, &I, ws), 1);
  geo_bvh_destroy(&bti);
  geo_mesh_destroy(&tiny);
  geo_query_ws_destroy(&ws);
  geo_bvh_destroy(&bu);
  geo_bvh_destroy(&bt);
  geo_bvh_destroy(&br);
  geo_mesh_destroy(&u);
  geo_mesh_destroy(&t);
  geo_mesh_destroy(&ring);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parallel_faces),    cmocka_unit_test(test_interference),
      cmocka_unit_test(test_random_meshes),     cmocka_unit_test(test_random_soups),
      cmocka_unit_test(test_torus_over_cone),   cmocka_unit_test(test_torus_lifted_over_cone),
      cmocka_unit_test(test_cache_equals_cold), cmocka_unit_test(test_cache_random),
      cmocka_unit_test(test_cache_small_steps), cmocka_unit_test(test_min_distance_below),
      cmocka_unit_test(test_many_raw_pairs),    cmocka_unit_test(test_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
