// GJK against brute-force closest points (min over all face pairs of the two hulls of the
// closed-form triangle-triangle distance, an independent code path) on random convex
// polytope pairs, plus touching, nested and parallel cases, primitives, warm start and
// early exits.
// ctest-label: unit
// ctest-timeout: 120
#include "ccsim_test.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "geo_gjk.h"
#include "geo_hull.h"
#include "geo_tritri.h"
#include "geo_vec.h"

#if defined(__SANITIZE_ADDRESS__)
#define N_RANDOM_PAIRS 1000
#else
#define N_RANDOM_PAIRS 10000
#endif

// distances agree to rel (relative) with an absolute floor of 1e-14 times the size of the
// problem: the coordinates of unit-size sets are themselves rounded at ~1e-16, so a gap of
// 1e-9 between them is only defined to ~1e-16, not to 1e-18
#define assert_dist(a, b, rel, size)                                                   \
  assert_double_near((a), (b), (rel) * fmax(fabs(a), fabs(b)) + 1e-14 * (size))

static const double M_PI_4_ = 0.78539816339744830962;  // pi / 4

static uint64_t rng_state = 0xD1B54A32D192ED03ull;

static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static void rand_xform(geo_xform *X, double spread) {
  double q[4] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
  if (geo_quat_normalize(q) == 0.0) {
    q[0] = 1.0;
  }
  double p[3] = {spread * (2 * urand() - 1), spread * (2 * urand() - 1),
                 spread * (2 * urand() - 1)};
  geo_xform_from_pose(X, p, q);
}

// a random convex polytope: hull of n points in a random box
static geo_hull *rand_hull(int n) {
  double *p = malloc(sizeof(double) * 3 * (size_t)n);
  assert_non_null(p);
  double ax[3] = {0.2 + 2 * urand(), 0.2 + 2 * urand(), 0.2 + 2 * urand()};
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      p[3 * i + k] = ax[k] * (2 * urand() - 1);
    }
  }
  geo_hull *h = geo_hull_new(p, n, NULL, 0);
  free(p);
  assert_non_null(h);
  return h;
}

typedef struct brute {
  double dist;   // min over face pairs of the tri-tri distance
  int cross;     // some pair of faces intersects
  int nested;    // no faces cross but a vertex of one is strictly inside the other
} brute;

static void face_world(double T[9], const geo_hull *h, const geo_xform *X, int f) {
  for (int k = 0; k < 3; k++) {
    geo_xform_point(T + 3 * k, X, h->vert + 3 * h->face[3 * f + k]);
  }
}

// max signed plane distance of world point p to hull h placed by X (<= 0 inside)
static double inside_dist(const geo_hull *h, const geo_xform *X, const double p[3]) {
  double l[3];
  geo_xform_inv_point(l, X, p);
  return geo_hull_plane_dist(h, l);
}

static brute brute_force(const geo_hull *A, const geo_xform *XA, const geo_hull *B,
                         const geo_xform *XB) {
  brute b = {DBL_MAX, 0, 0};
  for (int i = 0; i < A->nface; i++) {
    double P[9];
    face_world(P, A, XA, i);
    for (int j = 0; j < B->nface; j++) {
      double Q[9];
      face_world(Q, B, XB, j);
      geo_tt_result r;
      double d = geo_tritri_dist(P, Q, &r);
      b.cross |= r.intersect;
      b.dist = fmin(b.dist, d);
    }
  }
  if (!b.cross) {
    double w[3];
    geo_xform_point(w, XB, B->vert);
    b.nested |= inside_dist(A, XA, w) < 0.0;
    geo_xform_point(w, XA, A->vert);
    b.nested |= inside_dist(B, XB, w) < 0.0;
  }
  return b;
}

// the witness lies on the feature its result names (hull ids), within tol
static void check_feature(const geo_hull *h, const geo_xform *X, const double pw[3],
                          geo_cfeat f, double tol) {
  double p[3];
  geo_xform_inv_point(p, X, pw);
  if (f.type == GEO_CF_VERTEX) {
    assert_true(f.id >= 0 && f.id < h->nvert);
    assert_double_near(geo_v3_dist(p, h->vert + 3 * f.id), 0.0, tol);
  } else if (f.type == GEO_CF_EDGE) {
    assert_true(f.id >= 0 && f.id < h->nedge);
    double c1[3], c2[3], s, t;
    double d2 = geo_closest_seg_seg(p, p, h->vert + 3 * h->edge[2 * f.id],
                                    h->vert + 3 * h->edge[2 * f.id + 1], &s, &t, c1, c2);
    assert_double_near(sqrt(d2), 0.0, tol);
  } else {
    assert_int_equal(f.type, GEO_CF_FACE);
    assert_true(f.id >= 0 && f.id < h->nface);
    const double *pl = h->plane + 4 * f.id;
    assert_double_near(geo_v3_dot(pl, p), pl[3], tol);
  }
}

// one random pair: GJK against brute force; returns 1 if separated
static int check_pair(const geo_hull *A, const geo_xform *XA, const geo_hull *B,
                      const geo_xform *XB) {
  geo_convex ca = geo_convex_of_hull(A), cb = geo_convex_of_hull(B);
  geo_gjk_result r;
  int st = geo_gjk(&ca, XA, &cb, XB, NULL, NULL, &r);
  assert_int_equal(st, GEO_GJK_OK);
  brute b = brute_force(A, XA, B, XB);
  double scale = A->radius + B->radius + geo_v3_dist(XA->t, XB->t);
  double tol = 1e-12 * scale;
  if (b.cross || b.nested) {
    if (!r.intersect) {
      print_error("brute: cross %d nested %d dist %.3g; gjk dist %.17g\n", b.cross, b.nested,
                  b.dist, r.dist);
    }
    assert_int_equal(r.intersect, 1);
    assert_double_near(r.dist, 0.0, 0.0);
    // a common point
    assert_true(inside_dist(A, XA, r.pa) <= tol);
    assert_true(inside_dist(B, XB, r.pb) <= tol);
    assert_double_near(geo_v3_dist(r.pa, r.pb), 0.0, tol);
    return 0;
  }
  assert_int_equal(r.intersect, 0);
  assert_dist(r.dist, b.dist, 1e-9, scale);
  assert_true(r.lower <= r.dist);
  // witnesses on the boundaries of their sets and as far apart as reported
  assert_dist(geo_v3_dist(r.pa, r.pb), r.dist, 1e-12, scale);
  assert_double_near(inside_dist(A, XA, r.pa), 0.0, 1e-9 * scale);
  assert_double_near(inside_dist(B, XB, r.pb), 0.0, 1e-9 * scale);
  check_feature(A, XA, r.pa, r.fa, 1e-9 * scale);
  check_feature(B, XB, r.pb, r.fb, 1e-9 * scale);
  return 1;
}

static void test_random_polytope_pairs(void **state) {
  (void)state;
  int separated = 0, big = 0;
  for (int t = 0; t < N_RANDOM_PAIRS; t++) {
    // one pair in ten has large hulls (hill-climbing support)
    int large = t % 10 == 0;
    int na = large ? 40 + (int)(urand() * 40) : 4 + (int)(urand() * 20);
    int nb = large ? 40 + (int)(urand() * 40) : 4 + (int)(urand() * 20);
    geo_hull *A = rand_hull(na), *B = rand_hull(nb);
    big += A->nvert > GEO_GJK_CLIMB_MIN || B->nvert > GEO_GJK_CLIMB_MIN;
    geo_xform XA, XB;
    rand_xform(&XA, 2.0);
    rand_xform(&XB, 0.0);
    // B at a random direction from A, at 0.3 to 1.6 times the sum of the radii
    double dir[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    geo_v3_normalize(dir);
    double dist = (0.3 + 1.3 * urand()) * (A->radius + B->radius);
    double c[3];
    geo_m3_mulv(c, XB.R, B->center);
    geo_v3_madd(XB.t, XA.t, dist, dir);
    geo_v3_sub(XB.t, XB.t, c);
    separated += check_pair(A, &XA, B, &XB);
    geo_hull_destroy(&A);
    geo_hull_destroy(&B);
  }
  // both regimes were exercised
  assert_true(separated > N_RANDOM_PAIRS / 4);
  assert_true(separated < N_RANDOM_PAIRS - N_RANDOM_PAIRS / 20);
  assert_true(big >= N_RANDOM_PAIRS / 10);
}

static void test_random_pairs_brought_close(void **state) {
  (void)state;
  // separated random pairs moved together along their closest direction until the gap is
  // g: the distance is then g exactly (and brute force agrees), from 1e-3 down to 1e-12
  const double gaps[4] = {1e-3, 1e-6, 1e-9, 1e-12};
  for (int t = 0; t < 400; t++) {
    geo_hull *A = rand_hull(4 + (int)(urand() * 30)), *B = rand_hull(4 + (int)(urand() * 30));
    geo_convex ca = geo_convex_of_hull(A), cb = geo_convex_of_hull(B);
    geo_xform XA, XB;
    rand_xform(&XA, 0.0);
    rand_xform(&XB, 0.0);
    double dir[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    geo_v3_normalize(dir);
    geo_v3_scale(XB.t, dir, 1.5 * (A->radius + B->radius));
    geo_gjk_result r;
    assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, NULL, NULL, &r), GEO_GJK_OK);
    brute b = brute_force(A, &XA, B, &XB);
    double scale = A->radius + B->radius;
    assert_dist(r.dist, b.dist, 1e-9, scale);
    double g = gaps[t % 4] * scale, n[3];
    geo_v3_sub(n, r.pb, r.pa);
    geo_v3_scale(n, n, 1.0 / r.dist);
    geo_v3_madd(XB.t, XB.t, -(r.dist - g), n);
    assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, NULL, NULL, &r), GEO_GJK_OK);
    assert_int_equal(r.intersect, 0);
    assert_dist(r.dist, g, 1e-9, scale);
    b = brute_force(A, &XA, B, &XB);
    assert_dist(r.dist, b.dist, 1e-9, scale);
    check_feature(A, &XA, r.pa, r.fa, 1e-12 * scale);
    check_feature(B, &XB, r.pb, r.fb, 1e-12 * scale);
    geo_hull_destroy(&A);
    geo_hull_destroy(&B);
  }
}

// unit cube [0,1]^3 with face centres and a duplicate corner (coplanar and repeated input)
static geo_hull *unit_cube(double lo, double hi) {
  double p[16 * 3];
  int n = 0;
  for (int i = 0; i < 8; i++) {
    geo_v3_set(p + 3 * n++, i & 1 ? hi : lo, i & 2 ? hi : lo, i & 4 ? hi : lo);
  }
  double m = 0.5 * (lo + hi);
  for (int k = 0; k < 3; k++) {
    for (int s = 0; s < 2; s++) {
      double x[3] = {m, m, m};
      x[k] = s ? hi : lo;
      geo_v3_copy(p + 3 * n++, x);
    }
  }
  geo_v3_set(p + 3 * n++, hi, hi, hi);
  geo_v3_set(p + 3 * n++, lo, hi, lo);
  geo_hull *h = geo_hull_new(p, n, NULL, 0);
  assert_non_null(h);
  assert_int_equal(h->nvert, 8);
  return h;
}

static void test_cubes_parallel_faces(void **state) {
  (void)state;
  geo_hull *A = unit_cube(0, 1);
  geo_convex ca = geo_convex_of_hull(A);
  const double gaps[3] = {0.0, 1e-12, 0.5};
  for (int rot = 0; rot < 2; rot++) {
    for (int g = 0; g < 3; g++) {
      geo_xform XA, XB;
      geo_xform_identity(&XA);
      geo_xform_identity(&XB);
      if (rot) {
        // B turned by 90 degrees about x (still face to face), re-centred on [0,1]^3
        double q[4] = {sqrt(0.5), sqrt(0.5), 0, 0};
        geo_quat_to_mat(XB.R, q);
        geo_v3_set(XB.t, 0, 1, 0);
      }
      XB.t[0] += 1.0 + gaps[g];
      XB.t[1] += 0.2;
      XB.t[2] += 0.3;
      geo_gjk_result r;
      assert_int_equal(geo_gjk(&ca, &XA, &ca, &XB, NULL, NULL, &r), GEO_GJK_OK);
      assert_double_near(r.dist, gaps[g], 1e-15 + 1e-9 * gaps[g]);
      assert_int_equal(r.intersect, gaps[g] == 0.0);
      // witnesses on the two facing sides, over the overlap of the faces
      assert_double_near(r.pa[0], 1.0, 1e-15);
      assert_double_near(r.pb[0], 1.0 + gaps[g], 1e-15);
      assert_true(r.pa[1] >= 0.2 - 1e-15 && r.pa[2] >= 0.3 - 1e-15);
      brute b = brute_force(A, &XA, A, &XB);
      assert_double_near(b.dist, gaps[g], 1e-15 + 1e-9 * gaps[g]);
    }
  }
  geo_hull_destroy(&A);
}

static void test_cubes_parallel_faces_rotated(void **state) {
  (void)state;
  // both cubes turned by the same random rotation, B shifted along A's +x face normal by
  // 1 + gap and sideways: faces stay parallel at every gap
  geo_hull *A = unit_cube(0, 1);
  geo_convex ca = geo_convex_of_hull(A);
  const double gaps[4] = {0.0, 1e-12, 1e-6, 0.5};
  for (int t = 0; t < 50; t++) {
    geo_xform XA, XB;
    rand_xform(&XA, 3.0);
    XB = XA;
    double side[3] = {1.0 + gaps[t % 4], 0.5 * urand() - 0.25, 0.5 * urand() - 0.25}, w[3];
    geo_m3_mulv(w, XA.R, side);
    geo_v3_add(XB.t, XA.t, w);
    geo_gjk_result r;
    assert_int_equal(geo_gjk(&ca, &XA, &ca, &XB, NULL, NULL, &r), GEO_GJK_OK);
    assert_double_near(r.dist, gaps[t % 4], 2e-15 + 1e-9 * gaps[t % 4]);
    if (gaps[t % 4] >= 1e-12) {
      assert_int_equal(r.intersect, 0);
      // witnesses on the facing sides: local x = 1 on A, local x = 0 on B
      double la[3], lb[3];
      geo_xform_inv_point(la, &XA, r.pa);
      geo_xform_inv_point(lb, &XB, r.pb);
      assert_double_near(la[0], 1.0, 1e-14);
      assert_double_near(lb[0], 0.0, 1e-14);
    }
  }
  geo_hull_destroy(&A);
}

// rotation by angle about a random unit axis
static void small_rotation(double R[9], double angle) {
  double ax[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
  geo_v3_normalize(ax);
  double q[4] = {cos(angle / 2), sin(angle / 2) * ax[0], sin(angle / 2) * ax[1],
                 sin(angle / 2) * ax[2]};
  geo_quat_to_mat(R, q);
}

static void test_near_parallel_stress(void **state) {
  (void)state;
  // cubes face to face or edge to edge, tilted by 0 to 1e-4 rad, gaps 1e-9 to 0.1: GJK
  // against the brute-force face-pair distance
  geo_hull *C = unit_cube(-0.5, 0.5);
  geo_convex cc = geo_convex_of_hull(C);
  const double tilts[4] = {0.0, 1e-12, 1e-8, 1e-4}, gaps[5] = {1e-9, 1e-6, 1e-5, 1e-3, 0.1};
  for (int t = 0; t < 800; t++) {
    double tilt = tilts[t % 4], gap = gaps[(t / 4) % 5];
    int edge = (t / 20) % 2;
    geo_xform XA, XB;
    rand_xform(&XA, 1.0);
    double Rs[9], Rl[9];
    small_rotation(Rs, tilt);
    // B's local rotation relative to A: identity (faces) or 90 degrees about z (edges)
    double qz[4] = {sqrt(0.5), 0, 0, sqrt(0.5)};
    double q0[4] = {1, 0, 0, 0};
    geo_quat_to_mat(Rl, edge ? qz : q0);
    double T[9];
    geo_m3_mul(T, XA.R, Rl);
    geo_m3_mul(XB.R, T, Rs);
    double off[3];
    if (edge) {
      double s = sqrt(0.5);
      geo_v3_set(off, s * (2 * s + gap), s * (2 * s + gap), 0.6 * urand() - 0.3);
    } else {
      geo_v3_set(off, 1.0 + gap, 0.6 * urand() - 0.3, 0.6 * urand() - 0.3);
    }
    double w[3];
    geo_m3_mulv(w, XA.R, off);
    geo_v3_add(XB.t, XA.t, w);
    geo_gjk_result r;
    assert_int_equal(geo_gjk(&cc, &XA, &cc, &XB, NULL, NULL, &r), GEO_GJK_OK);
    brute b = brute_force(C, &XA, C, &XB);
    if (b.cross) {
      assert_int_equal(r.intersect, 1);
      continue;
    }
    assert_dist(r.dist, b.dist, 1e-9, 1.0);
    assert_dist(geo_v3_dist(r.pa, r.pb), r.dist, 1e-9, 1.0);
    check_feature(C, &XA, r.pa, r.fa, 1e-12);
    check_feature(C, &XB, r.pb, r.fb, 1e-12);
  }
  geo_hull_destroy(&C);
}

static void test_nested_cubes(void **state) {
  (void)state;
  geo_hull *A = unit_cube(0, 1), *B = unit_cube(0.4, 0.6);
  geo_convex ca = geo_convex_of_hull(A), cb = geo_convex_of_hull(B);
  geo_xform X;
  geo_xform_identity(&X);
  geo_gjk_result r;
  assert_int_equal(geo_gjk(&ca, &X, &cb, &X, NULL, NULL, &r), GEO_GJK_OK);
  assert_int_equal(r.intersect, 1);
  assert_double_near(r.dist, 0.0, 0.0);
  assert_true(inside_dist(B, &X, r.pa) <= 1e-15);
  assert_true(inside_dist(A, &X, r.pa) <= 1e-15);
  // and the other way round
  assert_int_equal(geo_gjk(&cb, &X, &ca, &X, NULL, NULL, &r), GEO_GJK_OK);
  assert_int_equal(r.intersect, 1);
  geo_hull_destroy(&A);
  geo_hull_destroy(&B);
}

static void test_parallel_and_crossed_edges(void **state) {
  (void)state;
  geo_hull *C = unit_cube(-0.5, 0.5);
  geo_convex cc = geo_convex_of_hull(C);
  double s = sqrt(0.5);
  // both cubes turned 45 degrees about x: A's top edge and B's bottom edge run along x
  double qx[4] = {cos(M_PI_4_ / 2), sin(M_PI_4_ / 2), 0, 0};
  double qy[4] = {cos(M_PI_4_ / 2), 0, sin(M_PI_4_ / 2), 0};
  double p0[3] = {0, 0, 0};
  geo_xform XA, XB;
  geo_xform_from_pose(&XA, p0, qx);
  for (int crossed = 0; crossed < 2; crossed++) {
    for (int g = 0; g < 3; g++) {
      double gap = (double[]){0.25, 1e-9, 0.0}[g];
      double pb[3] = {0.3, 0, 2 * s + gap};
      geo_xform_from_pose(&XB, pb, crossed ? qy : qx);
      geo_gjk_result r;
      assert_int_equal(geo_gjk(&cc, &XA, &cc, &XB, NULL, NULL, &r), GEO_GJK_OK);
      assert_double_near(r.dist, gap, 1e-15 + 1e-9 * gap);
      assert_double_near(r.pa[2], s, 1e-15);
      assert_double_near(r.pa[1], 0.0, 1e-15);
      if (!crossed) {
        assert_true(r.pa[0] >= -0.2 - 1e-15 && r.pa[0] <= 0.5 + 1e-15);
      }
      if (gap > 0) {
        // both witnesses on edges (or their end vertices), never on a face interior
        assert_true(r.fa.type <= GEO_CF_EDGE);
        assert_true(r.fb.type <= GEO_CF_EDGE);
        check_feature(C, &XA, r.pa, r.fa, 1e-14);
        check_feature(C, &XB, r.pb, r.fb, 1e-14);
      }
      brute b = brute_force(C, &XA, C, &XB);
      assert_double_near(b.dist, gap, 1e-15 + 1e-9 * gap);
    }
  }
  geo_hull_destroy(&C);
}

static void test_primitives_vs_closed_form(void **state) {
  (void)state;
  geo_xform I;
  geo_xform_identity(&I);
  for (int t = 0; t < 2000; t++) {
    double P[9], Q[9];
    for (int i = 0; i < 9; i++) {
      P[i] = 2 * urand() - 1;
      Q[i] = 2 * urand() - 1 + (i % 3 == 0 ? 1.0 + urand() : 0.0);
    }
    // triangle - triangle
    geo_convex a = geo_convex_points(P, 3), b = geo_convex_points(Q, 3);
    geo_gjk_result r;
    geo_tt_result tt;
    assert_int_equal(geo_gjk(&a, &I, &b, &I, NULL, NULL, &r), GEO_GJK_OK);
    double d = geo_tritri_dist(P, Q, &tt);
    assert_int_equal(r.intersect, tt.intersect);
    assert_dist(r.dist, d, 1e-9, 1.0);
    if (!tt.intersect) {
      assert_int_equal(r.fa.type, tt.fa.type);
      assert_int_equal(r.fa.id, tt.fa.id);
      assert_int_equal(r.fb.type, tt.fb.type);
      assert_int_equal(r.fb.id, tt.fb.id);
    }
    // segment - segment
    double s, u, c1[3], c2[3];
    a = geo_convex_points(P, 2);
    b = geo_convex_points(Q, 2);
    assert_int_equal(geo_gjk(&a, &I, &b, &I, NULL, NULL, &r), GEO_GJK_OK);
    d = sqrt(geo_closest_seg_seg(P, P + 3, Q, Q + 3, &s, &u, c1, c2));
    assert_dist(r.dist, d, 1e-9, 1.0);
    int ta = (s > 0 && s < 1) ? GEO_CF_EDGE : GEO_CF_VERTEX;
    assert_int_equal(r.fa.type, ta);
    // point - triangle
    a = geo_convex_points(P, 1);
    b = geo_convex_points(Q, 3);
    assert_int_equal(geo_gjk(&a, &I, &b, &I, NULL, NULL, &r), GEO_GJK_OK);
    geo_cfeat f;
    d = sqrt(geo_closest_point_triangle(P, Q, c1, &f));
    assert_dist(r.dist, d, 1e-9, 1.0);
    assert_int_equal(r.fb.type, f.type);
    assert_int_equal(r.fb.id, f.id);
    assert_int_equal(r.fa.type, GEO_CF_VERTEX);
  }
  // a point exactly on a triangle: touching
  double T[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, p[3] = {0.25, 0.25, 0};
  geo_convex a = geo_convex_points(p, 1), b = geo_convex_points(T, 3);
  geo_gjk_result r;
  geo_gjk(&a, &I, &b, &I, NULL, NULL, &r);
  assert_int_equal(r.intersect, 1);
  assert_double_near(r.dist, 0.0, 0.0);
}

static void test_indexed_sets(void **state) {
  (void)state;
  // a pool of 50 points; sets are id lists into it; answers come back in pool ids
  double pool[50 * 3];
  for (int i = 0; i < 150; i++) {
    pool[i] = 2 * urand() - 1;
  }
  for (int i = 25; i < 50; i++) {
    pool[3 * i] += 3.0;
  }
  geo_xform I;
  geo_xform_identity(&I);
  for (int t = 0; t < 300; t++) {
    // triangle vs triangle by ids, against the same triangles copied out
    int ia[3] = {(int)(urand() * 25), 0, 0}, ib[3] = {25 + (int)(urand() * 25), 0, 0};
    ia[1] = (ia[0] + 1 + (int)(urand() * 23)) % 25;
    ia[2] = (ia[1] + 1) % 25 == ia[0] ? (ia[1] + 2) % 25 : (ia[1] + 1) % 25;
    ib[1] = 25 + (ib[0] - 25 + 1 + (int)(urand() * 23)) % 25;
    ib[2] = 25 + ((ib[1] - 25 + 1) % 25 == ib[0] - 25 ? (ib[1] - 25 + 2) % 25
                                                       : (ib[1] - 25 + 1) % 25);
    double P[9], Q[9];
    for (int k = 0; k < 3; k++) {
      geo_v3_copy(P + 3 * k, pool + 3 * ia[k]);
      geo_v3_copy(Q + 3 * k, pool + 3 * ib[k]);
    }
    geo_convex a = geo_convex_indexed(pool, ia, 3), b = geo_convex_indexed(pool, ib, 3);
    geo_gjk_result r;
    geo_tt_result tt;
    assert_int_equal(geo_gjk(&a, &I, &b, &I, NULL, NULL, &r), GEO_GJK_OK);
    assert_dist(r.dist, geo_tritri_dist(P, Q, &tt), 1e-9, 1.0);
    if (!tt.intersect) {
      assert_int_equal(r.fa.type, tt.fa.type);
      assert_int_equal(r.fb.type, tt.fb.type);
      if (tt.fa.type == GEO_CF_VERTEX) {
        assert_int_equal(r.fa.id, ia[tt.fa.id]);
      } else {
        assert_int_equal(r.fa.id, tt.fa.id);
      }
      for (int i = 0; i < r.nvb; i++) {
        assert_true(r.vb[i] == ib[0] || r.vb[i] == ib[1] || r.vb[i] == ib[2]);
      }
    }
  }
  // the two halves of the pool as indexed sets = the hulls of the halves
  int ha[25], hb[25];
  for (int i = 0; i < 25; i++) {
    ha[i] = 24 - i;
    hb[i] = 25 + i;
  }
  geo_hull *A = geo_hull_new(pool, 25, NULL, 0), *B = geo_hull_new(pool + 75, 25, NULL, 0);
  assert_non_null(A);
  assert_non_null(B);
  geo_convex ca = geo_convex_indexed(pool, ha, 25), cb = geo_convex_indexed(pool, hb, 25);
  geo_convex hA = geo_convex_of_hull(A), hB = geo_convex_of_hull(B);
  for (int t = 0; t < 50; t++) {
    geo_xform XA, XB;
    rand_xform(&XA, 1.0);
    rand_xform(&XB, 1.0);
    geo_gjk_result r1, r2;
    geo_gjk(&ca, &XA, &cb, &XB, NULL, NULL, &r1);
    geo_gjk(&hA, &XA, &hB, &XB, NULL, NULL, &r2);
    assert_int_equal(r1.intersect, r2.intersect);
    assert_dist(r1.dist, r2.dist, 1e-12, 1.0);
    if (!r1.intersect && r1.fa.type == GEO_CF_VERTEX) {
      // pool id of the witness vertex = the hull vertex's input index
      assert_int_equal(r1.fa.id, A->src[r2.fa.id]);
    }
  }
  geo_hull_destroy(&A);
  geo_hull_destroy(&B);
}

static void test_degenerate_sets(void **state) {
  (void)state;
  geo_xform I;
  geo_xform_identity(&I);
  for (int t = 0; t < 300; t++) {
    // flat hulls (random planar polygons, > 16 vertices half the time) against brute force
    int n = t % 2 ? 40 : 8;
    double p[40 * 3];
    double q[4] = {urand(), urand() - 0.5, urand() - 0.5, urand() - 0.5};
    geo_quat_normalize(q);
    double R[9];
    geo_quat_to_mat(R, q);
    for (int i = 0; i < n; i++) {
      double l[3] = {2 * urand() - 1, 2 * urand() - 1, 0.0};
      geo_m3_mulv(p + 3 * i, R, l);
    }
    geo_hull *F = geo_hull_new(p, n, NULL, 0), *B = rand_hull(12);
    assert_non_null(F);
    assert_int_equal(F->flat, 1);
    geo_xform XF, XB;
    rand_xform(&XF, 0.0);
    rand_xform(&XB, 0.0);
    double dir[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    geo_v3_normalize(dir);
    geo_v3_scale(XB.t, dir, (0.5 + 1.5 * urand()) * (F->radius + B->radius));
    geo_convex cf = geo_convex_of_hull(F), cb = geo_convex_of_hull(B);
    geo_gjk_result r;
    assert_int_equal(geo_gjk(&cf, &XF, &cb, &XB, NULL, NULL, &r), GEO_GJK_OK);
    brute b = brute_force(F, &XF, B, &XB);
    if (b.cross || b.nested) {
      assert_int_equal(r.intersect, 1);
    } else {
      assert_int_equal(r.intersect, 0);
      assert_dist(r.dist, b.dist, 1e-9, 1.0);
      check_feature(F, &XF, r.pa, r.fa, 1e-12);
    }
    // two flat hulls
    assert_int_equal(geo_gjk(&cf, &XF, &cf, &XB, NULL, NULL, &r), GEO_GJK_OK);
    b = brute_force(F, &XF, F, &XB);
    if (b.cross || b.nested) {
      assert_int_equal(r.intersect, 1);
    } else {
      assert_dist(r.dist, b.dist, 1e-9, 1.0);
    }
    geo_hull_destroy(&F);
    geo_hull_destroy(&B);
    // collinear point sets with repeats are segments
    double s0[3], s1[3], u0[3], u1[3], pa[6 * 3], pb[6 * 3];
    for (int k = 0; k < 3; k++) {
      s0[k] = 2 * urand() - 1;
      s1[k] = 2 * urand() - 1;
      u0[k] = 2 * urand() - 1 + 1.5;
      u1[k] = 2 * urand() - 1 + 1.5;
    }
    const double ts[6] = {0.5, 0.0, 0.25, 1.0, 0.5, 0.75};
    for (int i = 0; i < 6; i++) {
      geo_v3_lerp(pa + 3 * i, s0, s1, ts[i]);
      geo_v3_lerp(pb + 3 * i, u0, u1, ts[5 - i]);
    }
    geo_convex a = geo_convex_points(pa, 6), c = geo_convex_points(pb, 6);
    assert_int_equal(geo_gjk(&a, &I, &c, &I, NULL, NULL, &r), GEO_GJK_OK);
    double ss, tt, c1[3], c2[3];
    double d = sqrt(geo_closest_seg_seg(s0, s1, u0, u1, &ss, &tt, c1, c2));
    assert_dist(r.dist, d, 1e-9, 1.0);
  }
}

static void test_warm_start(void **state) {
  (void)state;
  int cold_it = 0, warm_it = 0;
  for (int t = 0; t < 200; t++) {
    geo_hull *A = rand_hull(60), *B = rand_hull(60);
    geo_convex ca = geo_convex_of_hull(A), cb = geo_convex_of_hull(B);
    geo_xform XA, XB;
    rand_xform(&XA, 0.0);
    rand_xform(&XB, 0.0);
    geo_v3_set(XB.t, A->radius + B->radius + 0.1, 0, 0);
    geo_gjk_cache cache;
    memset(&cache, 0, sizeof cache);
    geo_gjk_result r0, r1, rc;
    geo_gjk(&ca, &XA, &cb, &XB, NULL, &cache, &r0);
    // a small motion: the warm query equals a cold one at the new pose
    XB.t[1] += 1e-3;
    XB.t[2] -= 2e-3;
    assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, NULL, &cache, &r1), GEO_GJK_OK);
    assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, NULL, NULL, &rc), GEO_GJK_OK);
    assert_dist(r1.dist, rc.dist, 1e-12, 1.0);
    brute b = brute_force(A, &XA, B, &XB);
    assert_dist(r1.dist, b.dist, 1e-9, 1.0);
    warm_it += r1.iters;
    cold_it += rc.iters;
    // garbage in the cache is ignored
    geo_gjk_cache bad = {3, {-5, 999999, 2, 0}, {7, 1, 123456, 0}, -3, 1 << 30};
    assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, NULL, &bad, &r1), GEO_GJK_OK);
    assert_dist(r1.dist, rc.dist, 1e-12, 1.0);
    geo_hull_destroy(&A);
    geo_hull_destroy(&B);
  }
  print_message("mean iterations: cold %.2f, warm %.2f\n", cold_it / 200.0, warm_it / 200.0);
  assert_true(warm_it < cold_it);
}

static void test_climb_matches_brute_support(void **state) {
  (void)state;
  // a 300-vertex hull queried as a hull (hill-climbing) and as a plain point set
  int n = 300;
  double *p = malloc(sizeof(double) * 3 * (size_t)n);
  assert_non_null(p);
  for (int i = 0; i < n; i++) {
    double v[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    geo_v3_normalize(v);
    geo_v3_copy(p + 3 * i, v);
  }
  geo_hull *A = geo_hull_new(p, n, NULL, 0), *B = rand_hull(8);
  assert_non_null(A);
  geo_convex ch = geo_convex_of_hull(A), cp = geo_convex_points(A->vert, A->nvert);
  geo_convex cb = geo_convex_of_hull(B);
  for (int t = 0; t < 200; t++) {
    geo_xform XA, XB;
    rand_xform(&XA, 1.0);
    rand_xform(&XB, 5.0);
    geo_gjk_result r1, r2;
    geo_gjk(&ch, &XA, &cb, &XB, NULL, NULL, &r1);
    geo_gjk(&cp, &XA, &cb, &XB, NULL, NULL, &r2);
    assert_int_equal(r1.intersect, r2.intersect);
    assert_dist(r1.dist, r2.dist, 1e-12, 1.0);
  }
  geo_hull_destroy(&A);
  geo_hull_destroy(&B);
  free(p);
}

static void test_early_exits(void **state) {
  (void)state;
  geo_hull *A = rand_hull(30), *B = rand_hull(30);
  geo_convex ca = geo_convex_of_hull(A), cb = geo_convex_of_hull(B);
  geo_xform XA, XB;
  geo_xform_identity(&XA);
  geo_xform_identity(&XB);
  XB.t[0] = A->radius + B->radius + 1.0;
  geo_gjk_result r;
  geo_gjk(&ca, &XA, &cb, &XB, NULL, NULL, &r);
  double d = r.dist;
  assert_true(d > 1.0 - 1e-12);
  geo_gjk_opts o = {0};
  o.stop_above = 0.5 * d;
  assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, &o, NULL, &r), GEO_GJK_ABOVE);
  assert_true(r.lower > 0.5 * d && r.lower <= d * (1 + 1e-12));
  assert_true(r.dist >= d * (1 - 1e-12));
  memset(&o, 0, sizeof o);
  o.stop_below = 2.0 * d;
  assert_int_equal(geo_gjk(&ca, &XA, &cb, &XB, &o, NULL, &r), GEO_GJK_BELOW);
  assert_true(r.dist < 2.0 * d && r.dist >= d * (1 - 1e-12));
  assert_double_near(geo_v3_dist(r.pa, r.pb), r.dist, 1e-12);
  geo_convex empty = geo_convex_points(A->vert, 0);
  assert_int_equal(geo_gjk(&empty, &XA, &cb, &XB, NULL, NULL, &r), GEO_GJK_EINVAL);
  memset(&o, 0, sizeof o);
  o.max_iter = 1;
  int st = geo_gjk(&ca, &XA, &cb, &XB, &o, NULL, &r);
  assert_true(st == GEO_GJK_MAXITER || st == GEO_GJK_OK);
  assert_true(r.dist >= d * (1 - 1e-12));
  geo_hull_destroy(&A);
  geo_hull_destroy(&B);
}

// the geo_vec.h helpers GJK (and the rest of the module) builds on
static void test_vec_helpers(void **state) {
  (void)state;
  for (int t = 0; t < 200; t++) {
    double a[4], b[4], ab[4], Ra[9], Rb[9], Rab[9], M[9];
    for (int k = 0; k < 4; k++) {
      a[k] = urand() - 0.5;
      b[k] = urand() - 0.5;
    }
    geo_quat_normalize(a);
    geo_quat_normalize(b);
    geo_quat_mul(ab, a, b);
    geo_quat_to_mat(Ra, a);
    geo_quat_to_mat(Rb, b);
    geo_quat_to_mat(Rab, ab);
    geo_m3_mul(M, Ra, Rb);
    for (int i = 0; i < 9; i++) {
      assert_double_near(M[i], Rab[i], 1e-14);
    }
    // R R^T = I
    geo_m3_tmul(M, Ra, Ra);
    for (int i = 0; i < 9; i++) {
      assert_double_near(M[i], i % 4 == 0 ? 1.0 : 0.0, 1e-14);
    }
    // rel and mul are inverse; inv_point undoes point
    geo_xform A, B, C, D;
    rand_xform(&A, 3.0);
    rand_xform(&B, 3.0);
    geo_xform_rel(&C, &A, &B);
    geo_xform_mul(&D, &A, &C);
    for (int i = 0; i < 9; i++) {
      assert_double_near(D.R[i], B.R[i], 1e-14);
    }
    for (int i = 0; i < 3; i++) {
      assert_double_near(D.t[i], B.t[i], 1e-14);
    }
    double p[3] = {urand(), urand(), urand()}, w[3], l[3];
    geo_xform_point(w, &A, p);
    geo_xform_inv_point(l, &A, w);
    assert_double_near(geo_v3_dist(l, p), 0.0, 1e-14);
  }
  // a quarter turn about z takes x to y; the cross product is right-handed
  double q[4] = {sqrt(0.5), 0, 0, sqrt(0.5)}, x[3] = {1, 0, 0}, y[3], z[3];
  geo_quat_rotate(y, q, x);
  assert_double_near(y[1], 1.0, 1e-15);
  geo_v3_cross(z, x, y);
  assert_double_near(z[2], 1.0, 1e-15);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vec_helpers),
      cmocka_unit_test(test_random_polytope_pairs),
      cmocka_unit_test(test_random_pairs_brought_close),
      cmocka_unit_test(test_cubes_parallel_faces),
      cmocka_unit_test(test_cubes_parallel_faces_rotated),
      cmocka_unit_test(test_near_parallel_stress),
      cmocka_unit_test(test_nested_cubes),
      cmocka_unit_test(test_parallel_and_crossed_edges),
      cmocka_unit_test(test_primitives_vs_closed_form),
      cmocka_unit_test(test_indexed_sets),
      cmocka_unit_test(test_degenerate_sets),
      cmocka_unit_test(test_warm_start),
      cmocka_unit_test(test_climb_matches_brute_support),
      cmocka_unit_test(test_early_exits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
