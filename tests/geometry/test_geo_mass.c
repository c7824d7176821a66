// Mass properties: boxes exactly; sphere, cylinder, cone and torus against (1) the exact
// mass properties of the inscribed polyhedron, derived in closed form here independently
// of the mesh code, to 1e-12 relative, and (2) the analytic smooth solid within a
// tessellation-error bound stated at each check.
// ctest-label: unit
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_mass.h"
#include "geo_prim.h"

// |a - b| <= rel * max(|a|, |b|) (a local helper: ccsim_test.h's assert_double_rel nests
// assert_double_near and trips -Wshadow)
#define assert_rel(a, b, rel) assert_double_near((a), (b), (rel) * fmax(fabs(a), fabs(b)))

#define TAU 6.283185307179586476925286766559
#define PI (0.5 * TAU)

static geo_mass mass_of(const geo_mesh *m, double rho) {
  geo_mass g;
  char err[256] = "";
  int rc = geo_mass_properties(m, rho, &g, err, sizeof err);
  if (rc != 0) print_error("geo_mass_properties: %s\n", err);
  assert_int_equal(rc, 0);
  return g;
}

// Inertia of a solid box (full sides a, b, c, mass M) about its centre.
static void box_inertia(double M, double a, double b, double c, double I[3]) {
  I[0] = M * (b * b + c * c) / 12;
  I[1] = M * (a * a + c * c) / 12;
  I[2] = M * (a * a + b * b) / 12;
}

static void test_box_exact(void **state) {
  (void)state;
  const double dims[][3] = {{1, 2, 3}, {0.01, 0.2, 7.5}, {1e-3, 1e-3, 1e-3}, {300, 0.5, 40}};
  for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++) {
    const double *d = dims[c];
    geo_mesh *m = geo_mesh_box(d[0], d[1], d[2], NULL, 0);
    assert_non_null(m);
    double rho = 2700.0;
    geo_mass g = mass_of(m, rho);
    double V = d[0] * d[1] * d[2], I[3];
    box_inertia(rho * V, d[0], d[1], d[2], I);
    assert_rel(g.volume, V, 1e-12);
    assert_rel(g.mass, rho * V, 1e-12);
    double L = fmax(d[0], fmax(d[1], d[2]));
    for (int k = 0; k < 3; k++) assert_double_near(g.com[k], 0.0, 1e-12 * L);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        assert_double_near(g.inertia[3 * i + j], i == j ? I[i] : 0.0, 1e-12 * fmax(I[0], fmax(I[1], I[2])));
    geo_mesh_destroy(&m);
  }
}

// A box moved off the origin and rotated: com = the offset, inertia = R I R^T.
static void test_box_rotated_translated(void **state) {
  (void)state;
  const double a = 0.3, b = 0.7, c = 1.9, off[3] = {12.5, -3.25, 0.125}, rho = 1000;
  geo_mesh *box = geo_mesh_box(a, b, c, NULL, 0);
  assert_non_null(box);
  // rotation from a unit quaternion
  double q[4] = {0.8, 0.2, -0.4, 0.4};
  double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; k++) q[k] /= qn;
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                 2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  double *v = malloc((size_t)box->nvert * 3 * sizeof *v);
  for (int i = 0; i < box->nvert; i++)
    for (int r = 0; r < 3; r++) {
      double s = off[r];
      for (int k = 0; k < 3; k++) s += R[3 * r + k] * box->vert[3 * i + k];
      v[3 * i + r] = s;
    }
  geo_mesh *m = geo_mesh_new(v, box->nvert, box->tri, box->ntri, "moved box", NULL, 0);
  assert_non_null(m);
  geo_mass g = mass_of(m, rho);
  double M = rho * a * b * c, I[3];
  box_inertia(M, a, b, c, I);
  assert_rel(g.volume, a * b * c, 1e-12);
  for (int k = 0; k < 3; k++) assert_double_near(g.com[k], off[k], 1e-12 * 12.5);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double e = 0;
      for (int k = 0; k < 3; k++) e += R[3 * i + k] * I[k] * R[3 * j + k];
      // the offset (|off| ~ 13 against sides ~ 1) costs a few digits in the vertex
      // coordinates themselves; 1e-12 of the largest principal moment still holds
      assert_double_near(g.inertia[3 * i + j], e, 1e-12 * I[0] * 10);
    }
  free(v);
  geo_mesh_destroy(&m);
  geo_mesh_destroy(&box);
}

// --- exact mass properties of a stack of regular n-gon frusta -------------------------
// The inscribed sphere, cylinder and cone are all the solid whose cross-section at height z
// is the regular n-gon (vertices at azimuths 2 pi j / n) with circumradius rho(z), rho
// piecewise linear between profile points (z_k, rho_k): the side quads of the meshes are
// planar isosceles trapezoids (both rings have vertices at the same azimuths), so their
// diagonal split does not change the solid. With alpha = 2 pi / n:
//   area A(z) = (n/2) sin(alpha) rho^2,  polar moment J(z) = n sin(alpha) (2 + cos alpha)
//   rho^4 / 12 (sum of the n triangles (0, p1, p2): A_t/6 (|p1|^2 + |p2|^2 + p1.p2)), and
//   the area's second moment is isotropic (n >= 3) so int x^2 dA = J / 2.
// The integrands in z are polynomials of degree <= 4 per band: 3-point Gauss-Legendre
// (exact to degree 5) gives them to rounding.
typedef struct stack_props {
  double V, zc, Ixx, Izz;  // volume, com height, inertia about the com (density 1)
} stack_props;

static stack_props ngon_stack(int n, const double *z, const double *rho, int np) {
  const double gx[3] = {-sqrt(0.6), 0.0, sqrt(0.6)}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
  double al = TAU / n, ka = 0.5 * n * sin(al), kj = n * sin(al) * (2 + cos(al)) / 12;
  double V = 0, Mz = 0, Szz = 0, J = 0;
  for (int k = 0; k + 1 < np; k++) {
    double h = z[k + 1] - z[k];
    for (int q = 0; q < 3; q++) {
      double s = 0.5 * (gx[q] + 1), zz = z[k] + s * h, r = rho[k] + s * (rho[k + 1] - rho[k]);
      double w = 0.5 * gw[q] * h, A = ka * r * r;
      V += w * A;
      Mz += w * A * zz;
      Szz += w * A * zz * zz;
      J += w * kj * r * r * r * r;
    }
  }
  stack_props p;
  p.V = V;
  p.zc = Mz / V;
  p.Izz = J;
  p.Ixx = 0.5 * J + Szz - V * p.zc * p.zc;
  return p;
}

static void check_axisym(const geo_mass *g, stack_props p, double rho, double L) {
  assert_rel(g->volume, p.V, 1e-12);
  assert_double_near(g->com[0], 0, 1e-12 * L);
  assert_double_near(g->com[1], 0, 1e-12 * L);
  assert_double_near(g->com[2], p.zc, 1e-12 * L);
  double Imax = rho * fmax(p.Ixx, p.Izz);
  assert_double_near(g->inertia[0], rho * p.Ixx, 1e-12 * Imax);
  assert_double_near(g->inertia[4], rho * p.Ixx, 1e-12 * Imax);
  assert_double_near(g->inertia[8], rho * p.Izz, 1e-12 * Imax);
  assert_double_near(g->inertia[1], 0, 1e-12 * Imax);
  assert_double_near(g->inertia[2], 0, 1e-12 * Imax);
  assert_double_near(g->inertia[5], 0, 1e-12 * Imax);
}

// within [lo, hi] up to a 1e-12 relative slack for rounding
static void assert_between(double x, double lo, double hi) {
  double s = 1e-12 * fabs(hi);
  if (!(x >= lo - s && x <= hi + s)) {
    print_error("%.17g not in [%.17g, %.17g]\n", x, lo, hi);
    fail();
  }
}

// Sphere: (1) exact inscribed polyhedron; (2) it contains the ball of radius r_in = the
// smallest distance from the centre to a face plane and is contained in the ball of radius
// r (convex, vertices on the sphere), so volume and every principal moment lie between the
// two balls' values. That sandwich is the tessellation-error bound.
static void test_sphere(void **state) {
  (void)state;
  const int res[][2] = {{0, 0}, {8, 4}, {32, 16}, {64, 32}, {128, 64}};
  const double r = 0.37, rho = 7800;
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    geo_mesh *m = geo_mesh_sphere(r, res[c][0], res[c][1], NULL, 0);
    assert_non_null(m);
    int n = res[c][0] ? res[c][0] : GEO_SPHERE_DEFAULT_SLICES;
    int st = res[c][1] ? res[c][1] : GEO_SPHERE_DEFAULT_STACKS;
    double z[4096], pr[4096];
    for (int i = 0; i <= st; i++) {
      double th = PI * (st - i) / st;  // increasing z
      z[i] = r * cos(th);
      pr[i] = r * sin(th);
    }
    z[0] = -r;
    z[st] = r;
    pr[0] = pr[st] = 0;
    geo_mass g = mass_of(m, rho);
    check_axisym(&g, ngon_stack(n, z, pr, st + 1), rho, r);
    double rin = r;
    for (int t = 0; t < m->ntri; t++) {
      const double *nn = m->tri_normal + 3 * t, *p = m->vert + 3 * m->tri[3 * t];
      rin = fmin(rin, nn[0] * p[0] + nn[1] * p[1] + nn[2] * p[2]);
    }
    assert_true(rin > 0.5 * r);
    double Vo = 2 * TAU / 3 * r * r * r, Vi = Vo * pow(rin / r, 3);
    assert_between(g.volume, Vi, Vo);
    double Io = 0.4 * rho * Vo * r * r, Ii = 0.4 * rho * Vi * rin * rin;
    for (int k = 0; k < 3; k++) assert_between(g.inertia[4 * k], Ii, Io);
    geo_mesh_destroy(&m);
  }
}

// Cylinder: (1) exact prism; (2) between the cylinders of radius r cos(pi/n) (the polygon's
// inradius) and r, same height.
static void test_cylinder(void **state) {
  (void)state;
  const int res[] = {0, 3, 7, 32, 100, 1000};
  const double r = 0.05, h = 0.3, rho = 1200;
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    geo_mesh *m = geo_mesh_cylinder(r, h, res[c], NULL, 0);
    assert_non_null(m);
    int n = res[c] ? res[c] : GEO_CYLINDER_DEFAULT_SEGMENTS;
    double z[2] = {-0.5 * h, 0.5 * h}, pr[2] = {r, r};
    geo_mass g = mass_of(m, rho);
    check_axisym(&g, ngon_stack(n, z, pr, 2), rho, h);
    double ri = r * cos(PI / n);
    double Vo = PI * r * r * h, Vi = PI * ri * ri * h;
    assert_between(g.volume, Vi, Vo);
    assert_between(g.inertia[8], 0.5 * rho * Vi * ri * ri, 0.5 * rho * Vo * r * r);
    assert_between(g.inertia[0], rho * Vi * (3 * ri * ri + h * h) / 12,
                   rho * Vo * (3 * r * r + h * h) / 12);
    geo_mesh_destroy(&m);
  }
}

// Cone: (1) exact pyramid, the same solid for every rings value; (2) between the cones of
// base radius r cos(pi/n) and r, same height (each horizontal section is the scaled
// polygon, containing the scaled incircle); all three have their com at h/4, so inertia
// about the com is monotone under inclusion.
static void test_cone(void **state) {
  (void)state;
  const int res[][2] = {{0, 0}, {3, 1}, {64, 1}, {64, 16}, {17, 5}, {500, 3}};
  const double r = 0.06, h = 0.2, rho = 500;
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    geo_mesh *m = geo_mesh_cone(r, h, res[c][0], res[c][1], NULL, 0);
    assert_non_null(m);
    int n = res[c][0] ? res[c][0] : GEO_CONE_DEFAULT_SEGMENTS;
    double z[2] = {0, h}, pr[2] = {r, 0};
    geo_mass g = mass_of(m, rho);
    stack_props p = ngon_stack(n, z, pr, 2);
    assert_rel(p.zc, 0.25 * h, 1e-14);
    check_axisym(&g, p, rho, h);
    double ri = r * cos(PI / n);
    double Vo = PI * r * r * h / 3, Vi = PI * ri * ri * h / 3;
    assert_between(g.volume, Vi, Vo);
    // solid cone about its com: Izz = 3/10 M r^2, Ixx = M (3/20 r^2 + 3/80 h^2)
    assert_between(g.inertia[8], 0.3 * rho * Vi * ri * ri, 0.3 * rho * Vo * r * r);
    assert_between(g.inertia[0], rho * Vi * (0.15 * ri * ri + 0.0375 * h * h),
                   rho * Vo * (0.15 * r * r + 0.0375 * h * h));
    geo_mesh_destroy(&m);
  }
}

// --- torus ---------------------------------------------------------------------------
// Exact inscribed torus. Between meridians at azimuths u_i, u_i + D the mesh is the wedge
// { (x', y', z) : (x' / cos(D/2), z) in P, |y'| <= x' tan(D/2) } (x' along the mid
// azimuth), P the regular m-gon of circumradius r centred at (R, 0) in the (rho, z)
// half-plane: each side quad is the planar trapezoid swept by the chord at radius rho.
// Hence, with s = sin(D/2), c = cos(D/2), per wedge:
//   V = 2 s c I[rho],  Izz = (2 s c^3 + 2/3 s^3 c) I[rho^3],  int z^2 = 2 s c I[rho z^2],
// I[f] the integral of f over P, and Ixx = Izz / 2 + int z^2 by the n-fold symmetry.
// I[f] is computed over the fan of P with a collapsed-square 3x3 Gauss rule, exact for
// degree <= 4.
static double poly_int(int m, double R, double r, int a, int b) {  // I[rho^a z^b]
  const double gx[3] = {-sqrt(0.6), 0.0, sqrt(0.6)}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
  double sum = 0;
  for (int j = 0; j < m; j++) {
    double v0 = TAU * j / m, v1 = TAU * (j + 1) / m;
    double p1[2] = {R + r * cos(v0), r * sin(v0)}, p2[2] = {R + r * cos(v1), r * sin(v1)};
    double A2 = fabs((p1[0] - R) * p2[1] - p1[1] * (p2[0] - R));  // twice the area
    for (int qi = 0; qi < 3; qi++)
      for (int qj = 0; qj < 3; qj++) {
        double xi = 0.5 * (gx[qi] + 1), et = 0.5 * (gx[qj] + 1);
        double x = R + xi * ((1 - et) * (p1[0] - R) + et * (p2[0] - R));
        double y = xi * ((1 - et) * p1[1] + et * p2[1]);
        sum += 0.25 * gw[qi] * gw[qj] * A2 * xi * pow(x, a) * pow(y, b);
      }
  }
  return sum;
}

static void test_torus(void **state) {
  (void)state;
  const int res[][2] = {{0, 0}, {3, 3}, {12, 6}, {48, 24}, {96, 48}, {192, 96}};
  const double R = 0.05, r = 0.015, rho = 1000;
  double prev_err = -1;
  for (size_t c = 0; c < sizeof res / sizeof res[0]; c++) {
    geo_mesh *m = geo_mesh_torus(R, r, res[c][0], res[c][1], NULL, 0);
    assert_non_null(m);
    int n = res[c][0] ? res[c][0] : GEO_TORUS_DEFAULT_MAJOR;
    int k = res[c][1] ? res[c][1] : GEO_TORUS_DEFAULT_MINOR;
    geo_mass g = mass_of(m, rho);
    double D = TAU / n, s = sin(0.5 * D), co = cos(0.5 * D);
    double V = n * 2 * s * co * poly_int(k, R, r, 1, 0);
    double Izz = n * (2 * s * co * co * co + 2.0 / 3 * s * s * s * co) * poly_int(k, R, r, 3, 0);
    double Ixx = 0.5 * Izz + n * 2 * s * co * poly_int(k, R, r, 1, 2);
    // closed form of the volume as a cross-check of the quadrature
    assert_rel(V, n * sin(D) * R * 0.5 * k * r * r * sin(TAU / k), 1e-13);
    assert_rel(g.volume, V, 1e-12);
    for (int i = 0; i < 3; i++) assert_double_near(g.com[i], 0, 1e-12 * R);
    double Imax = rho * Izz;
    assert_double_near(g.inertia[0], rho * Ixx, 1e-12 * Imax);
    assert_double_near(g.inertia[4], rho * Ixx, 1e-12 * Imax);
    assert_double_near(g.inertia[8], rho * Izz, 1e-12 * Imax);
    assert_double_near(g.inertia[1], 0, 1e-12 * Imax);
    assert_double_near(g.inertia[2], 0, 1e-12 * Imax);
    assert_double_near(g.inertia[5], 0, 1e-12 * Imax);
    // Analytic smooth torus. Volume: V_mesh / V_true = sinc(x) sinc(y) exactly (x = 2 pi/n,
    // y = 2 pi / m), and 1 - sinc(x) <= x^2 / 6, so the relative error is <= (x^2 + y^2)/6.
    // Inertia: expanding the same formulas, the leading relative error of Izz and Ixx is
    // at most (x^2 + y^2) / 3 (the chord factor 2sc^3 + 2/3 s^3 c = x (1 - x^2/3 + ...)
    // and the m-gon's polar moment sinc(y)(2 + cos y)/3 = 1 - y^2/3 + ...); higher terms
    // alternate and are smaller for n, m >= 3. Asserted with that bound.
    double x = TAU / n, y = TAU / k, Vt = PI * TAU * R * r * r, Mt = rho * Vt;
    double Izt = Mt * (R * R + 0.75 * r * r), Ixt = Mt * (0.5 * R * R + 0.625 * r * r);
    double bv = (x * x + y * y) / 6, bi = (x * x + y * y) / 3;
    assert_true(g.volume <= Vt);
    assert_double_near(g.volume / Vt, 1.0, bv);
    assert_double_near(g.inertia[8] / Izt, 1.0, bi);
    assert_double_near(g.inertia[0] / Ixt, 1.0, bi);
    // second-order convergence: doubling both resolutions quarters the error
    double e = fabs(g.volume / Vt - 1);
    if (c >= 4 && prev_err > 0) assert_double_near(prev_err / e, 4.0, 0.05);
    prev_err = e;
    geo_mesh_destroy(&m);
  }
}

static void test_errors(void **state) {
  (void)state;
  char err[256];
  geo_mass g;
  memset(&g, 0x5a, sizeof g);
  geo_mass g0 = g;
  // open mesh: a box without its last triangle
  geo_mesh *box = geo_mesh_box(1, 1, 1, NULL, 0);
  geo_mesh *open = geo_mesh_new(box->vert, box->nvert, box->tri, box->ntri - 1, "open", NULL, 0);
  assert_non_null(open);
  assert_int_equal(open->closed, 0);
  assert_true(geo_mass_properties(open, 1, &g, err, sizeof err) < 0);
  assert_non_null(strstr(err, "open: mass properties need a closed mesh (3 open border edges"));
  assert_memory_equal(&g, &g0, sizeof g);
  // inside out: every triangle reversed
  int *t = malloc((size_t)box->ntri * 3 * sizeof *t);
  for (int i = 0; i < box->ntri; i++) {
    t[3 * i] = box->tri[3 * i];
    t[3 * i + 1] = box->tri[3 * i + 2];
    t[3 * i + 2] = box->tri[3 * i + 1];
  }
  geo_mesh *inv = geo_mesh_new(box->vert, box->nvert, t, box->ntri, "inverted", NULL, 0);
  assert_non_null(inv);
  assert_int_equal(inv->closed, 1);
  assert_true(geo_mass_properties(inv, 1, &g, err, sizeof err) < 0);
  assert_non_null(strstr(err, "inverted: signed volume -1 is not positive: faces point inward"));
  // density
  assert_true(geo_mass_properties(box, 0.0, &g, err, sizeof err) < 0);
  assert_non_null(strstr(err, "density 0 must be finite and > 0"));
  assert_true(geo_mass_properties(box, NAN, &g, err, sizeof err) < 0);
  assert_non_null(strstr(err, "must be finite and > 0"));
  assert_true(geo_mass_properties(NULL, 1, &g, err, sizeof err) < 0);
  assert_true(geo_mass_properties(box, 1, &g, NULL, 0) == 0);
  free(t);
  geo_mesh_destroy(&inv);
  geo_mesh_destroy(&open);
  geo_mesh_destroy(&box);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_exact),   cmocka_unit_test(test_box_rotated_translated),
      cmocka_unit_test(test_sphere),      cmocka_unit_test(test_cylinder),
      cmocka_unit_test(test_cone),        cmocka_unit_test(test_torus),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
