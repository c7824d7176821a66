// Generated primitives: counts (and the counting functions agree), documented vertex layout,
// vertices on the true surface, closed and outward (Euler characteristic, two faces per edge,
// positive signed volume, every face facing away from the axis / centre), argument checks.
// ctest-label: unit
#include "ccsim_test.h"

#include <string.h>

#include "geo_prim.h"

#define TAU 6.283185307179586476925286766559

// Signed volume by the divergence theorem (independent of geo_mass).
static double signed_volume(const geo_mesh *m) {
  double V = 0;
  for (int t = 0; t < m->ntri; t++) {
    const double *a = m->vert + 3 * m->tri[3 * t], *b = m->vert + 3 * m->tri[3 * t + 1],
                 *c = m->vert + 3 * m->tri[3 * t + 2];
    V += (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
          a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
  }
  return V;
}

static void check_closed(const geo_mesh *m, int euler) {
  assert_int_equal(m->closed, 1);
  assert_int_equal(m->n_border_edges, 0);
  assert_int_equal(m->n_nonmanifold_edges, 0);
  assert_int_equal(m->n_misoriented_edges, 0);
  assert_int_equal(m->nvert - m->nedge + m->ntri, euler);
  assert_int_equal(2 * m->nedge, 3 * m->ntri);
  for (int e = 0; e < m->nedge; e++) {
    assert_true(m->edge_tri[2 * e] >= 0);
    assert_true(m->edge_tri[2 * e + 1] >= 0);
  }
  assert_true(signed_volume(m) > 0);
}

// For a convex primitive: every face plane has the interior point `in` on its inner side.
static void check_outward_convex(const geo_mesh *m, const double in[3]) {
  for (int t = 0; t < m->ntri; t++) {
    const double *n = m->tri_normal + 3 * t, *p = m->vert + 3 * m->tri[3 * t];
    double d = n[0] * (p[0] - in[0]) + n[1] * (p[1] - in[1]) + n[2] * (p[2] - in[2]);
    assert_true(d > 0);
  }
}

static void test_box(void **state) {
  (void)state;
  geo_mesh *m = geo_mesh_box(1, 2, 4, NULL, 0);
  assert_non_null(m);
  assert_int_equal(m->nvert, 8);
  assert_int_equal(m->ntri, 12);
  assert_int_equal(m->ntri, GEO_BOX_TRIANGLES);
  assert_int_equal(m->nedge, 18);
  check_closed(m, 2);
  const double o[3] = {0, 0, 0};
  check_outward_convex(m, o);
  for (int id = 0; id < 8; id++) {  // id = ix + 2 iy + 4 iz
    assert_true(m->vert[3 * id] == ((id & 1) ? 0.5 : -0.5));
    assert_true(m->vert[3 * id + 1] == ((id & 2) ? 1.0 : -1.0));
    assert_true(m->vert[3 * id + 2] == ((id & 4) ? 2.0 : -2.0));
  }
  assert_true(m->aabb_min[2] == -2.0 && m->aabb_max[0] == 0.5);
  assert_string_equal(m->source, "box");
  // every face normal is an axis direction
  for (int t = 0; t < m->ntri; t++) {
    const double *n = m->tri_normal + 3 * t;
    assert_double_near(fabs(n[0]) + fabs(n[1]) + fabs(n[2]), 1.0, 1e-15);
  }
  geo_mesh_destroy(&m);
  assert_null(m);
}

static void test_sphere(void **state) {
  (void)state;
  const int res[][2] = {{0, 0}, {3, 2}, {5, 3}, {32, 16}, {7, 40}};
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    double r = 0.25;
    geo_mesh *m = geo_mesh_sphere(r, res[c][0], res[c][1], NULL, 0);
    assert_non_null(m);
    int n = res[c][0] ? res[c][0] : 32, st = res[c][1] ? res[c][1] : 16;
    assert_int_equal(m->nvert, 2 + n * (st - 1));
    assert_int_equal(m->ntri, 2 * n * (st - 1));
    assert_int_equal(m->ntri, geo_sphere_triangles(res[c][0], res[c][1]));
    check_closed(m, 2);
    const double o[3] = {0, 0, 0};
    check_outward_convex(m, o);
    for (int v = 0; v < m->nvert; v++) {
      const double *p = m->vert + 3 * v;
      assert_double_near(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), r, 4e-16 * r);
    }
    assert_true(m->vert[2] == r);                       // id 0: north pole
    assert_true(m->vert[3 * (m->nvert - 1) + 2] == -r);  // last: south pole
    double th = TAU / 2 / st;                           // ring 1, vertex 0 at azimuth 0
    assert_double_near(m->vert[3], r * sin(th), 1e-16);
    assert_double_near(m->vert[5], r * cos(th), 1e-16);
    geo_mesh_destroy(&m);
  }
}

static void test_cylinder(void **state) {
  (void)state;
  const int res[] = {0, 3, 4, 17, 256};
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    double r = 0.1, h = 0.5;
    geo_mesh *m = geo_mesh_cylinder(r, h, res[c], NULL, 0);
    assert_non_null(m);
    int n = res[c] ? res[c] : 32;
    assert_int_equal(m->nvert, 2 * n + 2);
    assert_int_equal(m->ntri, 4 * n);
    assert_int_equal(m->ntri, geo_cylinder_triangles(res[c]));
    check_closed(m, 2);
    const double o[3] = {0, 0, 0};
    check_outward_convex(m, o);
    for (int j = 0; j < 2 * n; j++) {
      const double *p = m->vert + 3 * j;
      assert_double_near(hypot(p[0], p[1]), r, 4e-16 * r);
      assert_true(p[2] == (j < n ? -0.5 * h : 0.5 * h));
      double ph = TAU * (j % n) / n;
      assert_double_near(p[0], r * cos(ph), 1e-16);
    }
    assert_true(m->vert[6 * n] == 0 && m->vert[6 * n + 2] == -0.5 * h);  // bottom centre
    assert_true(m->vert[6 * n + 5] == 0.5 * h);                         // top centre
    geo_mesh_destroy(&m);
  }
}

static void test_cone(void **state) {
  (void)state;
  const int res[][2] = {{0, 0}, {3, 1}, {64, 16}, {5, 7}, {64, -3}};
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    double r = 0.06, h = 0.2;
    geo_mesh *m = geo_mesh_cone(r, h, res[c][0], res[c][1], NULL, 0);
    assert_non_null(m);
    int n = res[c][0] ? res[c][0] : 64, rings = res[c][1] > 0 ? res[c][1] : 1;
    assert_int_equal(m->nvert, rings * n + 2);
    assert_int_equal(m->ntri, 2 * n * rings);
    assert_int_equal(m->ntri, geo_cone_triangles(res[c][0], res[c][1]));
    check_closed(m, 2);
    const double in[3] = {0, 0, 0.25 * h};
    check_outward_convex(m, in);
    for (int i = 0; i < rings; i++)
      for (int j = 0; j < n; j++) {
        const double *p = m->vert + 3 * (i * n + j);
        assert_double_near(p[2], h * i / rings, 1e-17);
        // on the smooth cone: rho = r (1 - z / h)
        assert_double_near(hypot(p[0], p[1]), r * (1 - p[2] / h), 1e-16);
      }
    const double *apex = m->vert + 3 * rings * n, *base = apex + 3;
    assert_true(apex[0] == 0 && apex[1] == 0 && apex[2] == h);
    assert_true(base[0] == 0 && base[1] == 0 && base[2] == 0);
    assert_true(m->aabb_min[2] == 0 && m->aabb_max[2] == h);
    geo_mesh_destroy(&m);
  }
}

static void test_torus(void **state) {
  (void)state;
  const int res[][2] = {{0, 0}, {3, 3}, {5, 4}, {48, 24}, {7, 60}};
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    double R = 0.05, r = 0.015;
    geo_mesh *m = geo_mesh_torus(R, r, res[c][0], res[c][1], NULL, 0);
    assert_non_null(m);
    int n = res[c][0] ? res[c][0] : 48, k = res[c][1] ? res[c][1] : 24;
    assert_int_equal(m->nvert, n * k);
    assert_int_equal(m->ntri, 2 * n * k);
    assert_int_equal(m->ntri, geo_torus_triangles(res[c][0], res[c][1]));
    check_closed(m, 0);
    for (int v = 0; v < m->nvert; v++) {
      const double *p = m->vert + 3 * v;
      double d = hypot(hypot(p[0], p[1]) - R, p[2]);
      assert_double_near(d, r, 4e-16 * (R + r));  // a few ulps of the coordinates
    }
    // id = i * nminor + j: vertex (1, 0) at u = 2 pi / n, v = 0
    assert_double_near(m->vert[3 * k], (R + r) * cos(TAU / n), 1e-17);
    assert_double_near(m->vert[3 * k + 1], (R + r) * sin(TAU / n), 1e-17);
    // outward: each face normal points away from the tube's centre circle (the nearest
    // point of the circle of radius R to the face centroid). A heuristic that holds once
    // the faces are small against the tube; closed + positive volume above already imply
    // outward for every face of a connected closed manifold.
    for (int t = 0; n >= 5 && k >= 4 && t < m->ntri; t++) {
      double cen[3] = {0, 0, 0};
      for (int q = 0; q < 3; q++)
        for (int a = 0; a < 3; a++) cen[a] += m->vert[3 * m->tri[3 * t + q] + a] / 3;
      double rr = hypot(cen[0], cen[1]);
      double axis[3] = {R * cen[0] / rr, R * cen[1] / rr, 0};
      const double *nn = m->tri_normal + 3 * t;
      double d = nn[0] * (cen[0] - axis[0]) + nn[1] * (cen[1] - axis[1]) + nn[2] * cen[2];
      assert_true(d > 0);
    }
    geo_mesh_destroy(&m);
  }
}

static void expect_fail(geo_mesh *m, const char *err, const char *what) {
  if (m) geo_mesh_destroy(&m);
  assert_null(m);
  if (!strstr(err, what)) print_error("message '%s' lacks '%s'\n", err, what);
  assert_non_null(strstr(err, what));
}

static void test_bad_arguments(void **state) {
  (void)state;
  char e[256];
  expect_fail(geo_mesh_box(0, 1, 1, e, sizeof e), e, "box: sx = 0 must be finite, > 0");
  expect_fail(geo_mesh_box(1, NAN, 1, e, sizeof e), e, "box: sy = nan must be finite");
  expect_fail(geo_mesh_box(1, 1, -2, e, sizeof e), e, "box: sz = -2 must be");
  expect_fail(geo_mesh_box(1, 1, 3e6, e, sizeof e), e, "<= 1e+06 m");
  expect_fail(geo_mesh_sphere(INFINITY, 0, 0, e, sizeof e), e, "sphere: r = inf must be");
  expect_fail(geo_mesh_sphere(1, 2, 0, e, sizeof e), e, "sphere: slices = 2 must be in [3, 4096]");
  expect_fail(geo_mesh_sphere(1, 8, 1, e, sizeof e), e, "sphere: stacks = 1 must be in [2, 4096]");
  expect_fail(geo_mesh_cylinder(1, 0, 8, e, sizeof e), e, "cylinder: h = 0 must be");
  expect_fail(geo_mesh_cylinder(1, 1, 5000, e, sizeof e), e, "cylinder: segments = 5000");
  expect_fail(geo_mesh_cone(1, 1, 2, 1, e, sizeof e), e, "cone: segments = 2 must be in [3,");
  expect_fail(geo_mesh_cone(1, 1, 8, 9999, e, sizeof e), e, "cone: rings = 9999");
  expect_fail(geo_mesh_torus(1, 1, 8, 8, e, sizeof e), e,
              "torus: major radius R = 1 must exceed minor radius r = 1");
  expect_fail(geo_mesh_torus(1, 2, 8, 8, e, sizeof e), e, "must exceed");
  expect_fail(geo_mesh_torus(2, 1, 2, 8, e, sizeof e), e, "torus: nmajor = 2");
  expect_fail(geo_mesh_torus(2, 1, 8, 2, e, sizeof e), e, "torus: nminor = 2");
  // too many triangles for the mesh cap
  expect_fail(geo_mesh_sphere(1, 4096, 4096, e, sizeof e), e, "too many triangles");
  // NULL err is allowed
  assert_null(geo_mesh_box(-1, 1, 1, NULL, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box),   cmocka_unit_test(test_sphere),
      cmocka_unit_test(test_cylinder), cmocka_unit_test(test_cone),
      cmocka_unit_test(test_torus), cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
