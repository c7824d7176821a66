// Triangle-triangle distance against dense sampling, hand-made feature cases, crossing
// detection, and the overlap polygon of parallel triangles.
// ctest-label: unit
// ctest-timeout: 60
#include "ccsim_test.h"

#include <float.h>
#include <string.h>

#include "geo_tritri.h"
#include "geo_vec.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

static void rand_tri(double T[9], double c, double s) {
  for (int i = 0; i < 9; i++) {
    T[i] = (i % 3 == 0 ? c : 0.0) + s * (2 * urand() - 1);
  }
}

// point of T at barycentric (1 - u - v, u, v)
static void tri_point(double p[3], const double T[9], double u, double v) {
  for (int k = 0; k < 3; k++) {
    p[k] = (1 - u - v) * T[k] + u * T[3 + k] + v * T[6 + k];
  }
}

// distance of p to triangle T's plane and whether its projection is inside T (bary >= -eps)
static double dist_to_tri_bruteforce(const double p[3], const double T[9]) {
  // minimise over a fine barycentric grid then refine locally: independent of Ericson
  double best = DBL_MAX, bu = 0, bv = 0;
  int N = 60;
  for (int i = 0; i <= N; i++) {
    for (int j = 0; i + j <= N; j++) {
      double x[3];
      tri_point(x, T, (double)i / N, (double)j / N);
      double d = geo_v3_dist2(p, x);
      if (d < best) {
        best = d;
        bu = (double)i / N;
        bv = (double)j / N;
      }
    }
  }
  // local pattern search refinement inside the triangle
  for (double h = 1.0 / N; h > 1e-13; h *= 0.5) {
    int moved = 1;
    while (moved) {
      moved = 0;
      for (int dir = 0; dir < 6; dir++) {
        static const double du[6] = {1, -1, 0, 0, 1, -1}, dv[6] = {0, 0, 1, -1, -1, 1};
        double u = bu + h * du[dir], v = bv + h * dv[dir];
        if (u < 0 || v < 0 || u + v > 1) {
          continue;
        }
        double x[3];
        tri_point(x, T, u, v);
        double d = geo_v3_dist2(p, x);
        if (d < best) {
          best = d;
          bu = u;
          bv = v;
          moved = 1;
        }
      }
    }
  }
  return sqrt(best);
}

static void test_point_triangle_vs_search(void **state) {
  (void)state;
  for (int t = 0; t < 200; t++) {
    double T[9], p[3], c[3];
    rand_tri(T, 0, 1);
    geo_v3_set(p, 3 * urand() - 1.5, 3 * urand() - 1.5, 3 * urand() - 1.5);
    geo_cfeat f;
    double d = sqrt(geo_closest_point_triangle(p, T, c, &f));
    assert_double_near(d, dist_to_tri_bruteforce(p, T), 1e-9);
    assert_double_near(geo_v3_dist(p, c), d, 1e-12);
  }
}

static void test_tritri_vs_sampling(void **state) {
  (void)state;
  // dense sampling gives an upper bound within the sampling resolution of the true distance
  int N = 30;
  for (int t = 0; t < 40; t++) {
    double P[9], Q[9];
    rand_tri(P, 0, 1);
    rand_tri(Q, 1.0 + 2 * urand(), 1);
    geo_tt_result r;
    double d = geo_tritri_dist(P, Q, &r);
    double best = DBL_MAX;
    for (int i = 0; i <= N; i++) {
      for (int j = 0; i + j <= N; j++) {
        double x[3];
        tri_point(x, P, (double)i / N, (double)j / N);
        // exact point-triangle distance by independent search is too slow here: sample Q too
        for (int a = 0; a <= N; a++) {
          for (int b = 0; a + b <= N; b++) {
            double y[3];
            tri_point(y, Q, (double)a / N, (double)b / N);
            best = fmin(best, geo_v3_dist2(x, y));
          }
        }
      }
    }
    best = sqrt(best);
    assert_true(d <= best + 1e-12);
    assert_true(d >= best - 0.2);  // two grid half-diagonals of a 2-wide triangle
    // witnesses lie on their triangles and realise the distance
    assert_double_near(geo_v3_dist(r.pa, r.pb), d, 1e-12);
    if (!r.intersect) {
      assert_double_near(dist_to_tri_bruteforce(r.pa, P), 0.0, 1e-9);
      assert_double_near(dist_to_tri_bruteforce(r.pb, Q), 0.0, 1e-9);
    }
    // no pair of sampled points is closer than the reported minimum
    for (int i = 0; i <= 6; i++) {
      double x[3], y[3];
      tri_point(x, P, urand() * 0.5, urand() * 0.5);
      tri_point(y, Q, urand() * 0.5, urand() * 0.5);
      assert_true(geo_v3_dist(x, y) >= d - 1e-12);
    }
  }
}

static void test_tritri_refined_by_point_search(void **state) {
  (void)state;
  // the true distance is min over points of P of dist(x, Q); refine from r.pa by pattern
  // search on P with the independent point-triangle search: it must not improve
  for (int t = 0; t < 30; t++) {
    double P[9], Q[9];
    rand_tri(P, 0, 1);
    rand_tri(Q, 1.5 + urand(), 1);
    geo_tt_result r;
    double d = geo_tritri_dist(P, Q, &r);
    if (r.intersect) {
      continue;
    }
    double best = DBL_MAX;
    int N = 16;
    for (int i = 0; i <= N; i++) {
      for (int j = 0; i + j <= N; j++) {
        double x[3];
        tri_point(x, P, (double)i / N, (double)j / N);
        best = fmin(best, dist_to_tri_bruteforce(x, Q));
      }
    }
    assert_true(d <= best + 1e-9);
  }
}

static void test_features_hand_made(void **state) {
  (void)state;
  geo_tt_result r;
  // vertex 2 of P above the interior of Q (Q in z = 0)
  double Q[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
  double P[9] = {5, 5, 3, 6, 5, 3, 1, 1, 0.5};
  assert_double_near(geo_tritri_dist(P, Q, &r), 0.5, 1e-15);
  assert_int_equal(r.fa.type, GEO_CF_VERTEX);
  assert_int_equal(r.fa.id, 2);
  assert_int_equal(r.fb.type, GEO_CF_FACE);
  assert_double_near(r.pb[0], 1.0, 1e-15);
  assert_double_near(r.pb[1], 1.0, 1e-15);
  // skew edges: P's edge 0 (x = 2, z = 1 + y / 2) passes over Q's edge 0 (the x axis);
  // min of y^2 + (1 + y/2)^2 at y = -0.4
  double P2[9] = {2, -1, 0.5, 2, 1, 1.5, 2, 0, 3};
  assert_double_near(geo_tritri_dist(P2, Q, &r), sqrt(0.8), 1e-15);
  assert_int_equal(r.fa.type, GEO_CF_EDGE);
  assert_int_equal(r.fa.id, 0);
  assert_int_equal(r.fb.type, GEO_CF_EDGE);
  assert_int_equal(r.fb.id, 0);
  assert_double_near(r.pa[0], 2.0, 1e-15);
  assert_double_near(r.pa[1], -0.4, 1e-15);
  assert_double_near(r.pb[0], 2.0, 1e-15);
  // vertex-vertex: corner to corner along the diagonal
  double P3[9] = {-1, -1, -1, -3, -1, -1, -1, -3, -1};
  assert_double_near(geo_tritri_dist(P3, Q, &r), sqrt(3.0), 1e-15);
  assert_int_equal(r.fa.type, GEO_CF_VERTEX);
  assert_int_equal(r.fa.id, 0);
  assert_int_equal(r.fb.type, GEO_CF_VERTEX);
  assert_int_equal(r.fb.id, 0);
  // crossing: P pierces Q
  double P4[9] = {1, 1, -1, 1, 1, 1, 3, 3, 1};
  assert_double_near(geo_tritri_dist(P4, Q, &r), 0.0, 0.0);
  assert_int_equal(r.intersect, 1);
  assert_double_near(r.pa[2], 0.0, 1e-15);
  assert_double_near(geo_v3_dist(r.pa, r.pb), 0.0, 0.0);
  // touching at a point (vertex on face): distance 0
  double P5[9] = {1, 1, 0, 2, 1, 1, 1, 2, 1};
  assert_double_near(geo_tritri_dist(P5, Q, &r), 0.0, 1e-15);
  // coplanar, crossing in their plane (a star): intersecting
  double S1[9] = {0, 0, 0, 2, 0, 0, 1, 2, 0}, S2[9] = {0, 1.5, 0, 1, -0.5, 0, 2, 1.5, 0};
  assert_double_near(geo_tritri_dist(S1, S2, &r), 0.0, 0.0);
  assert_int_equal(r.intersect, 1);
  // coplanar and apart: the in-plane gap
  double S3[9] = {3, 0, 0, 5, 0, 0, 4, 2, 0};
  assert_double_near(geo_tritri_dist(S1, S3, &r), 1.0, 1e-15);
  assert_int_equal(r.intersect, 0);
  // parallel edges: the minimum is still exact
  double P6[9] = {1, -2, 0, 3, -2, 0, 2, -3, 0};
  assert_double_near(geo_tritri_dist(P6, Q, &r), 2.0, 1e-15);
}

static void test_nearly_parallel_segments(void **state) {
  (void)state;
  // P on the x axis; Q in the plane z = h, direction (1, theta, 0), crossing y = 0 above
  // x = 0.3: the common perpendicular is along z, so the distance is exactly h, at an
  // interior point, however small theta (the normal equations fail below theta ~ 1e-7)
  const double thetas[4] = {1e-3, 1e-6, 1e-8, 1e-11};
  for (int i = 0; i < 4; i++) {
    double th = thetas[i], h = 1e-9;
    double p0[3] = {0, 0, 0}, p1[3] = {1, 0, 0};
    double q0[3] = {-0.2, th * (-0.5), h}, q1[3] = {0.9, th * 0.6, h};
    double s, t, c1[3], c2[3];
    double d = sqrt(geo_closest_seg_seg(p0, p1, q0, q1, &s, &t, c1, c2));
    assert_double_near(d, h, 1e-17);
    assert_double_near(geo_v3_dist(c1, c2), d, 1e-20);
    // the tri-tri distance of triangles built on these edges sees the same
    double P[9] = {0, 0, 0, 1, 0, 0, 0.5, -1, -0.5};
    double Q[9] = {-0.2, th * (-0.5), h, 0.9, th * 0.6, h, 0.4, 1, 0.6};
    geo_tt_result r;
    assert_double_near(geo_tritri_dist(P, Q, &r), h, 1e-17);
    assert_int_equal(r.fa.type, GEO_CF_EDGE);
    assert_int_equal(r.fb.type, GEO_CF_EDGE);
  }
}

static double poly_area(const geo_tt_patch *p) {
  // area of the 3D polygon pa by the cross-product sum
  double s[3] = {0, 0, 0};
  for (int i = 0; i < p->n; i++) {
    double c[3];
    geo_v3_cross(c, p->pa[i], p->pa[(i + 1) % p->n]);
    geo_v3_add(s, s, c);
  }
  return 0.5 * geo_v3_norm(s);
}

static int has_corner(const geo_tt_patch *p, double x, double y, double z) {
  for (int i = 0; i < p->n; i++) {
    if (fabs(p->pa[i][0] - x) < 1e-12 && fabs(p->pa[i][1] - y) < 1e-12 &&
        fabs(p->pa[i][2] - z) < 1e-12) {
      return 1;
    }
  }
  return 0;
}

static void test_parallel_patch(void **state) {
  (void)state;
  geo_tt_patch pt;
  // small triangle (facing down) inside the projection of a big one (facing up), gap 1
  double P[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
  double Q[9] = {1, 1, 1, 1, 2, 1, 2, 1, 1};
  assert_int_equal(geo_tritri_parallel_patch(P, Q, 1e-9, &pt), 3);
  assert_double_near(pt.area, 0.5, 1e-14);
  assert_double_near(poly_area(&pt), 0.5, 1e-14);
  assert_true(has_corner(&pt, 1, 1, 0) && has_corner(&pt, 2, 1, 0) && has_corner(&pt, 1, 2, 0));
  for (int i = 0; i < 3; i++) {
    assert_int_equal(pt.fa[i].type, GEO_CF_FACE);
    assert_int_equal(pt.fb[i].type, GEO_CF_VERTEX);
    // the matching point on Q is the corner lifted by the gap, and is Q's vertex fb.id
    assert_double_near(pt.pb[i][2], 1.0, 1e-15);
    assert_double_near(geo_v3_dist(pt.pb[i], Q + 3 * pt.fb[i].id), 0.0, 1e-14);
  }
  // each corner pair is a closest pair: its length is the triangle distance
  geo_tt_result r;
  assert_double_near(geo_tritri_dist(P, Q, &r), 1.0, 1e-15);

  // star of David: two equilateral triangles, one rotated by 180 degrees, overlap in a
  // regular hexagon of 2/3 the triangle area; corners are edge-edge crossings
  double A[9], B[9];
  for (int k = 0; k < 3; k++) {
    double a = 2 * 3.14159265358979323846 * k / 3.0;
    geo_v3_set(A + 3 * k, cos(a), sin(a), 0.0);
    geo_v3_set(B + 3 * k, -cos(a), -sin(a), 0.25);
  }
  double tri_area = 3.0 * sqrt(3.0) / 4.0;
  assert_int_equal(geo_tritri_parallel_patch(A, B, 1e-9, &pt), 6);
  assert_double_near(pt.area, 2.0 / 3.0 * tri_area, 1e-13);
  assert_double_near(poly_area(&pt), 2.0 / 3.0 * tri_area, 1e-13);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(pt.fa[i].type, GEO_CF_EDGE);
    assert_int_equal(pt.fb[i].type, GEO_CF_EDGE);
    // the corner lies on A's edge fa.id and on B's edge fb.id (projected)
    double c[3], s, t, c2[3];
    double d = geo_closest_seg_seg(pt.pa[i], pt.pa[i], A + 3 * pt.fa[i].id,
                                   A + 3 * ((pt.fa[i].id + 1) % 3), &s, &t, c, c2);
    assert_double_near(sqrt(d), 0.0, 1e-14);
    d = geo_closest_seg_seg(pt.pb[i], pt.pb[i], B + 3 * pt.fb[i].id,
                            B + 3 * ((pt.fb[i].id + 1) % 3), &s, &t, c, c2);
    assert_double_near(sqrt(d), 0.0, 1e-14);
    assert_double_near(pt.pb[i][2] - pt.pa[i][2], 0.25, 1e-15);
  }

  // half overlap: P's corner region x >= 1 clipped by Q's side: triangle of area 0.5
  double P2[9] = {0, 0, 0, 2, 0, 0, 0, 2, 0};
  double Q2[9] = {1, 0, 0.5, 3, 0, 0.5, 1, 2, 0.5};
  int n = geo_tritri_parallel_patch(P2, Q2, 1e-9, &pt);
  assert_int_equal(n, 3);
  assert_double_near(pt.area, 0.5, 1e-14);
  assert_true(has_corner(&pt, 1, 0, 0) && has_corner(&pt, 2, 0, 0) && has_corner(&pt, 1, 1, 0));

  // not parallel, or parallel without overlap: no patch
  double Q3[9] = {1, 1, 1, 2, 1, 1.5, 1, 2, 1};
  assert_int_equal(geo_tritri_parallel_patch(P, Q3, 1e-9, &pt), 0);
  assert_int_equal(pt.n, 0);
  double Q4[9] = {10, 10, 1, 11, 10, 1, 10, 11, 1};
  assert_int_equal(geo_tritri_parallel_patch(P, Q4, 1e-9, &pt), 0);

  // a slightly tilted copy is parallel within a loose tolerance only
  double Q5[9] = {1, 1, 1, 2, 1, 1 + 1e-7, 1, 2, 1};
  assert_int_equal(geo_tritri_parallel_patch(P, Q5, 1e-9, &pt), 0);
  assert_int_equal(geo_tritri_parallel_patch(P, Q5, 1e-6, &pt), 3);
}

static int has_pair(const geo_tt_patch *p, const double a[3], const double b[3]) {
  for (int i = 0; i < p->n; i++) {
    if (geo_v3_dist(p->pa[i], a) < 1e-12 && geo_v3_dist(p->pb[i], b) < 1e-12) {
      return 1;
    }
  }
  return 0;
}

static void test_closest_set(void **state) {
  (void)state;
  geo_tt_patch pt;
  // P's edge 0 (z = 1, y = 0, x in [0, 2]) rests over the interior of Q (z = 0)
  double P[9] = {0, 0, 1, 2, 0, 1, 1, -1, 3};
  double Q[9] = {-1, -1, 0, 4, -1, 0, -1, 4, 0};
  assert_int_equal(geo_tritri_closest_set(P, Q, 1e-9, 1e-12, &pt), 2);
  double a0[3] = {0, 0, 1}, b0[3] = {0, 0, 0}, a1[3] = {2, 0, 1}, b1[3] = {2, 0, 0};
  assert_true(has_pair(&pt, a0, b0) && has_pair(&pt, a1, b1));
  for (int i = 0; i < 2; i++) {
    assert_int_equal(pt.fa[i].type, GEO_CF_VERTEX);
    assert_int_equal(pt.fb[i].type, GEO_CF_FACE);
  }
  // the same edge over a triangle covering only x >= 1: clipped by Q's edge 2 (x = 1)
  double Q2[9] = {1, -1, 0, 4, -1, 0, 1, 4, 0};
  assert_int_equal(geo_tritri_closest_set(P, Q2, 1e-9, 1e-12, &pt), 2);
  double c0[3] = {1, 0, 1}, d0[3] = {1, 0, 0};
  assert_true(has_pair(&pt, c0, d0) && has_pair(&pt, a1, b1));
  for (int i = 0; i < 2; i++) {
    int at1 = pt.pa[i][0] < 1.5;
    assert_int_equal(pt.fa[i].type, at1 ? GEO_CF_EDGE : GEO_CF_VERTEX);
    assert_int_equal(pt.fb[i].type, at1 ? GEO_CF_EDGE : GEO_CF_FACE);
    if (at1) {
      assert_int_equal(pt.fb[i].id, 2);
    }
  }
  // swapped roles: the face is the first triangle
  assert_int_equal(geo_tritri_closest_set(Q2, P, 1e-9, 1e-12, &pt), 2);
  assert_true(has_pair(&pt, d0, c0) && has_pair(&pt, b1, a1));
  // two parallel edges overlapping over x in [1, 2], distance 1, faces turned apart
  double P3[9] = {0, 0, 1, 2, 0, 1, 1, 1, 2};
  double Q3[9] = {1, 0, 0, 3, 0, 0, 2, 1, -1};
  assert_int_equal(geo_tritri_closest_set(P3, Q3, 1e-9, 1e-12, &pt), 2);
  double e0[3] = {1, 0, 1}, f0[3] = {1, 0, 0}, e1[3] = {2, 0, 1}, f1[3] = {2, 0, 0};
  assert_true(has_pair(&pt, e0, f0) && has_pair(&pt, e1, f1));
  for (int i = 0; i < 2; i++) {
    int at1 = pt.pa[i][0] < 1.5;
    assert_int_equal(pt.fa[i].type, at1 ? GEO_CF_EDGE : GEO_CF_VERTEX);
    assert_int_equal(pt.fb[i].type, at1 ? GEO_CF_VERTEX : GEO_CF_EDGE);
  }
  // a face on a face: the polygon
  double P4[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0}, Q4[9] = {1, 1, 1, 1, 2, 1, 2, 1, 1};
  assert_int_equal(geo_tritri_closest_set(P4, Q4, 1e-9, 1e-12, &pt), 3);
  assert_double_near(pt.area, 0.5, 1e-14);
  // generic position: one pair, the tri-tri witnesses
  double P5[9] = {0, 0, 1, 2, 0.5, 1.5, 1, -1, 3};
  geo_tt_result r;
  double d = geo_tritri_dist(P5, Q, &r);
  assert_int_equal(geo_tritri_closest_set(P5, Q, 1e-9, 1e-12, &pt), 1);
  assert_double_near(geo_v3_dist(pt.pa[0], pt.pb[0]), d, 1e-15);
  // crossing triangles: no set
  double P6[9] = {1, 1, -1, 1, 1, 1, 3, 3, 1};
  assert_int_equal(geo_tritri_closest_set(P6, Q, 1e-9, 1e-12, &pt), 0);
  // on random pairs every corner pair realises the minimum distance
  for (int t = 0; t < 200; t++) {
    double A[9], B[9];
    rand_tri(A, 0, 1);
    rand_tri(B, 2.5, 1);
    if (t % 2) {
      // make B parallel to A, lifted along A's normal
      double n[3], u[3], v[3];
      geo_v3_sub(u, A + 3, A);
      geo_v3_sub(v, A + 6, A);
      geo_v3_cross(n, u, v);
      geo_v3_normalize(n);
      for (int k = 0; k < 3; k++) {
        double s1 = urand(), s2 = urand() * (1 - s1);
        for (int c = 0; c < 3; c++) {
          B[3 * k + c] = A[c] + 1.5 * s1 * u[c] + 1.5 * s2 * v[c] - 0.3 * u[c] + 0.4 * n[c];
        }
      }
    }
    double dd = geo_tritri_dist(A, B, &r);
    int m = geo_tritri_closest_set(A, B, 1e-9, 1e-12, &pt);
    if (r.intersect) {
      assert_int_equal(m, 0);
      continue;
    }
    assert_true(m >= 1);
    for (int i = 0; i < m; i++) {
      assert_double_near(geo_v3_dist(pt.pa[i], pt.pb[i]), dd, 1e-12);
      assert_double_near(dist_to_tri_bruteforce(pt.pa[i], A), 0.0, 1e-9);
      assert_double_near(dist_to_tri_bruteforce(pt.pb[i], B), 0.0, 1e-9);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_point_triangle_vs_search),
      cmocka_unit_test(test_tritri_vs_sampling),
      cmocka_unit_test(test_tritri_refined_by_point_search),
      cmocka_unit_test(test_features_hand_made),
      cmocka_unit_test(test_nearly_parallel_segments),
      cmocka_unit_test(test_parallel_patch),
      cmocka_unit_test(test_closest_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
