// geo_mesh_new: validation (each class rejected with its message), exact welding, and the
// adjacency invariants (edges, edge faces, triangle edges, vertex CSR lists, normals, areas).
// ctest-label: unit
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_mesh.h"
#include "geo_prim.h"

// Every adjacency invariant the header promises.
static void check_adjacency(const geo_mesh *m) {
  int nv = m->nvert, nt = m->ntri, ne = m->nedge;
  assert_true(nv > 0 && nt > 0 && ne > 0);
  int *cnt = calloc((size_t)ne, sizeof *cnt);
  int *vused = calloc((size_t)nv, sizeof *vused);
  for (int e = 0; e < ne; e++) {
    assert_true(m->edge[2 * e] >= 0 && m->edge[2 * e] < m->edge[2 * e + 1]);
    assert_true(m->edge[2 * e + 1] < nv);
  }
  int next_new = 0;  // edge ids in order of first appearance
  for (int t = 0; t < nt; t++) {
    const int *f = m->tri + 3 * t;
    for (int k = 0; k < 3; k++) {
      assert_true(f[k] >= 0 && f[k] < nv);
      vused[f[k]] = 1;
      int e = m->tri_edge[3 * t + k], a = f[k], b = f[(k + 1) % 3];
      assert_true(e >= 0 && e < ne);
      if (e == next_new) next_new++;
      assert_true(e < next_new);
      assert_int_equal(m->edge[2 * e], a < b ? a : b);
      assert_int_equal(m->edge[2 * e + 1], a < b ? b : a);
      cnt[e]++;
      // this triangle is one of the edge's recorded faces when it is among the first two
      if (cnt[e] <= 2) assert_int_equal(m->edge_tri[2 * e + cnt[e] - 1], t);
    }
    // normal and area
    const double *p = m->vert + 3 * f[0], *q = m->vert + 3 * f[1], *r = m->vert + 3 * f[2];
    double e1[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    double e2[3] = {r[0] - p[0], r[1] - p[1], r[2] - p[2]};
    double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                   e1[0] * e2[1] - e1[1] * e2[0]};
    double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    assert_double_near(m->tri_area[t], 0.5 * nn, 1e-14 * nn);
    for (int k = 0; k < 3; k++) assert_double_near(m->tri_normal[3 * t + k], n[k] / nn, 1e-15);
  }
  assert_int_equal(next_new, ne);
  int nb = 0, nnm = 0;
  for (int e = 0; e < ne; e++) {
    assert_true(cnt[e] >= 1);
    if (cnt[e] == 1) {
      nb++;
      assert_int_equal(m->edge_tri[2 * e + 1], -1);
    }
    if (cnt[e] > 2) nnm++;
  }
  assert_int_equal(m->n_border_edges, nb);
  assert_int_equal(m->n_nonmanifold_edges, nnm);
  for (int v = 0; v < nv; v++) assert_true(vused[v]);  // no isolated vertex
  // CSR: triangles around v = exactly those containing v, increasing
  assert_int_equal(m->vert_tri_start[0], 0);
  assert_int_equal(m->vert_tri_start[nv], 3 * nt);
  assert_int_equal(m->vert_edge_start[0], 0);
  assert_int_equal(m->vert_edge_start[nv], 2 * ne);
  for (int v = 0; v < nv; v++) {
    int c = 0;
    for (int t = 0; t < nt; t++)
      if (m->tri[3 * t] == v || m->tri[3 * t + 1] == v || m->tri[3 * t + 2] == v) {
        int i = m->vert_tri_start[v] + c++;
        assert_true(i < m->vert_tri_start[v + 1]);
        assert_int_equal(m->vert_tri[i], t);
      }
    assert_int_equal(m->vert_tri_start[v] + c, m->vert_tri_start[v + 1]);
    c = 0;
    for (int e = 0; e < ne; e++)
      if (m->edge[2 * e] == v || m->edge[2 * e + 1] == v) {
        int i = m->vert_edge_start[v] + c++;
        assert_true(i < m->vert_edge_start[v + 1]);
        assert_int_equal(m->vert_edge[i], e);
      }
    assert_int_equal(m->vert_edge_start[v] + c, m->vert_edge_start[v + 1]);
  }
  for (int k = 0; k < 3; k++)
    for (int v = 0; v < nv; v++) {
      assert_true(m->vert[3 * v + k] >= m->aabb_min[k]);
      assert_true(m->vert[3 * v + k] <= m->aabb_max[k]);
    }
  free(cnt);
  free(vused);
}

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

static void test_primitives_adjacency(void **state) {
  (void)state;
  geo_mesh *ms[] = {geo_mesh_box(1, 2, 3, NULL, 0),        geo_mesh_sphere(1, 12, 7, NULL, 0),
                    geo_mesh_cylinder(1, 2, 9, NULL, 0),   geo_mesh_cone(1, 2, 11, 4, NULL, 0),
                    geo_mesh_torus(2, 0.5, 10, 6, NULL, 0)};
  const int euler[] = {2, 2, 2, 2, 0};
  for (int i = 0; i < 5; i++) {
    assert_non_null(ms[i]);
    check_adjacency(ms[i]);
    assert_int_equal(ms[i]->closed, 1);
    assert_int_equal(ms[i]->nvert - ms[i]->nedge + ms[i]->ntri, euler[i]);
    assert_true(signed_volume(ms[i]) > 0);
    // closed: the two faces of each edge traverse it in opposite directions
    for (int e = 0; e < ms[i]->nedge; e++) {
      int dir[2] = {-1, -1};
      for (int s = 0; s < 2; s++) {
        int t = ms[i]->edge_tri[2 * e + s];
        for (int k = 0; k < 3; k++)
          if (ms[i]->tri_edge[3 * t + k] == e) dir[s] = ms[i]->tri[3 * t + k] == ms[i]->edge[2 * e];
      }
      assert_int_not_equal(dir[0], dir[1]);
    }
    geo_mesh_destroy(&ms[i]);
  }
  geo_mesh_destroy(&ms[0]);  // NULL-safe
  geo_mesh_destroy(NULL);
}

// The box as a soup of 12 separate triangles (36 vertices): welding recovers the 8
// corners, in order of first appearance, and the same closed adjacency.
static void test_weld_soup(void **state) {
  (void)state;
  geo_mesh *box = geo_mesh_box(1, 2, 3, NULL, 0);
  double soup[36 * 3];
  int tri[36];
  for (int t = 0; t < 12; t++)
    for (int k = 0; k < 3; k++) {
      memcpy(soup + 9 * t + 3 * k, box->vert + 3 * box->tri[3 * t + k], 3 * sizeof(double));
      tri[3 * t + k] = 3 * t + k;
    }
  geo_mesh *m = geo_mesh_new(soup, 36, tri, 12, "soup", NULL, 0);
  assert_non_null(m);
  check_adjacency(m);
  assert_int_equal(m->nvert, 8);
  assert_int_equal(m->nedge, 18);
  assert_int_equal(m->closed, 1);
  assert_string_equal(m->source, "soup");
  assert_memory_equal(m->vert, soup, 3 * sizeof(double));  // first appearance keeps id 0
  for (int t = 0; t < 12; t++)
    for (int k = 0; k < 3; k++)
      assert_memory_equal(m->vert + 3 * m->tri[3 * t + k], soup + 9 * t + 3 * k,
                          3 * sizeof(double));
  assert_double_near(signed_volume(m), 6.0, 1e-14);

  // -0 and +0 weld; the welded coordinate is +0
  double z[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, -0.0, -0.0, 0};
  int zt[6] = {0, 1, 2, 3, 2, 1};  // two triangles: 3 == 0 after welding -> duplicate
  char err[256];
  geo_mesh *d = geo_mesh_new(z, 4, zt, 2, "zeros", err, sizeof err);
  assert_null(d);
  assert_non_null(strstr(err, "zeros: triangle 1: duplicate triangle: same vertices as triangle 0"));

  // exact welding: a vertex one ulp away is NOT merged; the box then has a crack
  soup[0] = nextafter(soup[0], 1.0);
  geo_mesh *c = geo_mesh_new(soup, 36, tri, 12, "cracked", NULL, 0);
  assert_non_null(c);
  check_adjacency(c);
  assert_int_equal(c->nvert, 9);
  assert_int_equal(c->closed, 0);
  assert_true(c->n_border_edges > 0);
  geo_mesh_destroy(&c);

  // unused input vertices are dropped, ids otherwise keep their order
  double v5[5 * 3] = {9, 9, 9, 0, 0, 0, 7, 7, 7, 1, 0, 0, 0, 1, 0};
  int t1[3] = {1, 3, 4};
  geo_mesh *u = geo_mesh_new(v5, 5, t1, 1, NULL, NULL, 0);
  assert_non_null(u);
  check_adjacency(u);
  assert_int_equal(u->nvert, 3);
  assert_int_equal(u->tri[0], 0);
  assert_int_equal(u->tri[1], 1);
  assert_int_equal(u->tri[2], 2);
  assert_true(u->vert[3] == 1.0 && u->vert[7] == 1.0);
  assert_string_equal(u->source, "mesh");  // default name
  assert_int_equal(u->n_border_edges, 3);
  assert_int_equal(u->edge_tri[1], -1);
  geo_mesh_destroy(&u);
  geo_mesh_destroy(&m);
  geo_mesh_destroy(&box);
}

static void test_open_nonmanifold_misoriented(void **state) {
  (void)state;
  geo_mesh *box = geo_mesh_box(1, 1, 1, NULL, 0);
  // open: drop one triangle
  geo_mesh *o = geo_mesh_new(box->vert, 8, box->tri, 11, "open", NULL, 0);
  assert_non_null(o);
  check_adjacency(o);
  assert_int_equal(o->closed, 0);
  assert_int_equal(o->n_border_edges, 3);
  assert_int_equal(o->n_nonmanifold_edges, 0);
  // misoriented: flip triangle 5
  int t[36];
  memcpy(t, box->tri, sizeof t);
  int tmp = t[16];
  t[16] = t[17];
  t[17] = tmp;
  geo_mesh *f = geo_mesh_new(box->vert, 8, t, 12, "flipped", NULL, 0);
  assert_non_null(f);
  check_adjacency(f);
  assert_int_equal(f->closed, 0);
  assert_int_equal(f->n_border_edges, 0);
  assert_int_equal(f->n_misoriented_edges, 3);
  // non-manifold: three triangles on the edge (0,1)
  double v[5 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, -1, -1};
  int nt[9] = {0, 1, 2, 1, 0, 3, 0, 1, 4};
  geo_mesh *n = geo_mesh_new(v, 5, nt, 3, "fin", NULL, 0);
  assert_non_null(n);
  check_adjacency(n);
  assert_int_equal(n->closed, 0);
  assert_int_equal(n->n_nonmanifold_edges, 1);
  assert_int_equal(n->edge_tri[0], 0);  // the two lowest triangle ids
  assert_int_equal(n->edge_tri[1], 1);
  geo_mesh_destroy(&n);
  geo_mesh_destroy(&f);
  geo_mesh_destroy(&o);
  geo_mesh_destroy(&box);
}

static void expect_text(const char *err, const char *what) {
  if (!strstr(err, what)) print_error("message '%s' lacks '%s'\n", err, what);
  assert_non_null(strstr(err, what));
}

// geo_mesh_check_solid names what keeps a mesh from bounding a solid: inside out, one
// triangle wound against its neighbours, holes, fins; closed outward meshes pass.
static void test_check_solid(void **state) {
  (void)state;
  char err[512] = "";
  geo_mesh *box = geo_mesh_box(1, 2, 3, NULL, 0);
  geo_mesh *torus = geo_mesh_torus(1, 0.25, 16, 8, NULL, 0);
  assert_int_equal(geo_mesh_check_solid(box, err, sizeof err), 0);
  assert_int_equal(geo_mesh_check_solid(torus, err, sizeof err), 0);
  assert_double_near(box->volume, 6.0, 1e-12);
  // inside out: every triangle reversed is closed, consistently wound, with volume -6
  int t[36];
  for (int i = 0; i < 12; i++) {
    t[3 * i] = box->tri[3 * i], t[3 * i + 1] = box->tri[3 * i + 2], t[3 * i + 2] = box->tri[3 * i + 1];
  }
  geo_mesh *inv = geo_mesh_new(box->vert, 8, t, 12, "inv.obj", NULL, 0);
  assert_int_equal(inv->closed, 1);
  assert_double_near(inv->volume, -6.0, 1e-12);
  assert_true(geo_mesh_check_solid(inv, err, sizeof err) < 0);
  expect_text(err, "inv.obj: inside out: signed volume -6 m^3");
  expect_text(err, "reverse the winding");
  // one flipped triangle (5): named, with a neighbour across one of its edges
  memcpy(t, box->tri, sizeof t);
  int tmp = t[16];
  t[16] = t[17];
  t[17] = tmp;
  geo_mesh *f = geo_mesh_new(box->vert, 8, t, 12, "flip.obj", NULL, 0);
  assert_true(geo_mesh_check_solid(f, err, sizeof err) < 0);
  expect_text(err, "flip.obj: triangle 5 is wound against its neighbour ");
  expect_text(err, "(3 such edges)");
  // the same with triangle 0 flipped: the odd one out is named, not its lowest neighbour
  memcpy(t, box->tri, sizeof t);
  tmp = t[1], t[1] = t[2], t[2] = tmp;
  geo_mesh *f0 = geo_mesh_new(box->vert, 8, t, 12, "flip0.obj", NULL, 0);
  assert_true(geo_mesh_check_solid(f0, err, sizeof err) < 0);
  expect_text(err, "flip0.obj: triangle 0 is wound against its neighbour ");
  // open: the top's second triangle dropped leaves 3 border edges
  geo_mesh *o = geo_mesh_new(box->vert, 8, box->tri, 11, "open.obj", NULL, 0);
  assert_true(geo_mesh_check_solid(o, err, sizeof err) < 0);
  expect_text(err, "open.obj: open mesh: 3 edges used by one triangle only");
  const int *d = box->tri + 33;  // the dropped triangle: its first side is a border edge
  char side[64];
  snprintf(side, sizeof side, "%d-%d (", d[0] < d[1] ? d[0] : d[1], d[0] < d[1] ? d[1] : d[0]);
  expect_text(err, side);
  // a fin: three triangles on one edge
  double v[5 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, -1, -1};
  int nt[9] = {0, 1, 2, 1, 0, 3, 0, 1, 4};
  geo_mesh *n = geo_mesh_new(v, 5, nt, 3, "fin", NULL, 0);
  assert_true(geo_mesh_check_solid(n, err, sizeof err) < 0);
  expect_text(err, "fin: open mesh");  // its other edges are open: holes come first
  geo_mesh_destroy(&n);
  geo_mesh_destroy(&o);
  geo_mesh_destroy(&f0);
  geo_mesh_destroy(&f);
  geo_mesh_destroy(&inv);
  geo_mesh_destroy(&torus);
  geo_mesh_destroy(&box);
}

static void expect(geo_mesh *m, const char *err, const char *what) {
  if (m) geo_mesh_destroy(&m);
  assert_null(m);
  if (!strstr(err, what)) print_error("message '%s' lacks '%s'\n", err, what);
  assert_non_null(strstr(err, what));
}

static void test_validation(void **state) {
  (void)state;
  char e[256];
  double v[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  int t[6] = {0, 1, 2, 0, 3, 1};
  // empty
  expect(geo_mesh_new(v, 0, t, 1, "m", e, sizeof e), e, "m: empty mesh (no vertices)");
  expect(geo_mesh_new(NULL, 3, t, 1, "m", e, sizeof e), e, "m: empty mesh (no vertices)");
  expect(geo_mesh_new(v, 3, t, 0, "m", e, sizeof e), e, "m: empty mesh (no triangles)");
  expect(geo_mesh_new(v, 3, NULL, 1, "m", e, sizeof e), e, "m: empty mesh (no triangles)");
  // absurd sizes: refused before the arrays are read
  expect(geo_mesh_new(v, 3 * GEO_MESH_MAX_TRI + 1, t, 1, "m", e, sizeof e), e,
         "m: too many vertices (30000001 > cap 30000000)");
  expect(geo_mesh_new(v, 3, t, GEO_MESH_MAX_TRI + 1, "m", e, sizeof e), e,
         "m: too many triangles (10000001 > cap 10000000)");
  // non-finite and too-large coordinates
  double w[4 * 3];
  memcpy(w, v, sizeof w);
  w[4] = NAN;
  expect(geo_mesh_new(w, 4, t, 2, "m", e, sizeof e), e, "m: vertex 1: non-finite coordinate y = nan");
  w[4] = -INFINITY;
  expect(geo_mesh_new(w, 4, t, 2, "m", e, sizeof e), e, "m: vertex 1: non-finite coordinate y = -inf");
  w[4] = 0;
  w[11] = 2e6;
  expect(geo_mesh_new(w, 4, t, 2, "m", e, sizeof e), e,
         "m: vertex 3: coordinate z = 2e+06 exceeds the cap |x| <= 1e+06 m");
  // out-of-range indices
  int bad[6] = {0, 1, 2, 0, 4, 1};
  expect(geo_mesh_new(v, 4, bad, 2, "m", e, sizeof e), e,
         "m: triangle 1: vertex index 4 out of range [0, 4)");
  bad[4] = -1;
  expect(geo_mesh_new(v, 4, bad, 2, "m", e, sizeof e), e,
         "m: triangle 1: vertex index -1 out of range [0, 4)");
  // degenerate: repeated index, two indices welded onto one point, collinear corners
  int rep[3] = {2, 1, 2};
  expect(geo_mesh_new(v, 4, rep, 1, "m", e, sizeof e), e,
         "m: triangle 0: degenerate triangle: corners 0 and 2 are the same vertex 2");
  double wv[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0};
  int wt[6] = {0, 1, 2, 1, 3, 2};
  expect(geo_mesh_new(wv, 4, wt, 2, "m", e, sizeof e), e,
         "m: triangle 1: degenerate triangle: corners 0 and 1 (vertices 1 and 3) are at the same "
         "point (1, 0, 0)");
  double col[3 * 3] = {0, 0, 0, 1, 1, 1, 3, 3, 3};
  int ct[3] = {0, 1, 2};
  expect(geo_mesh_new(col, 3, ct, 1, "m", e, sizeof e), e,
         "m: triangle 0: degenerate triangle: zero area (collinear corners");
  // nearly collinear within rounding: rejected; clearly thin but real: accepted
  double thin[3 * 3] = {0, 0, 0, 1, 0, 0, 0.5, 1e-13, 0};
  expect(geo_mesh_new(thin, 3, ct, 1, "m", e, sizeof e), e, "zero area");
  thin[7] = 1e-9;
  geo_mesh *ok = geo_mesh_new(thin, 3, ct, 1, "m", e, sizeof e);
  assert_non_null(ok);
  geo_mesh_destroy(&ok);
  // duplicates: same order, rotated, reversed
  int dup[9] = {0, 1, 2, 0, 3, 1, 1, 2, 0};
  expect(geo_mesh_new(v, 4, dup, 3, "m", e, sizeof e), e,
         "m: triangle 2: duplicate triangle: same vertices as triangle 0");
  int rev[9] = {0, 1, 2, 0, 3, 1, 3, 0, 1};
  expect(geo_mesh_new(v, 4, rev, 3, "m", e, sizeof e), e,
         "m: triangle 2: duplicate triangle: same vertices as triangle 1");
  // line numbers when given
  int lines[3] = {10, 11, 42};
  expect(geo_mesh_new_lines(v, 4, rev, 3, "f.obj", lines, e, sizeof e), e,
         "f.obj:42: triangle 2: duplicate triangle: same vertices as triangle 1 (line 11)");
  // err may be NULL or short (always NUL-terminated)
  assert_null(geo_mesh_new(v, 4, rev, 3, "m", NULL, 0));
  char small[8];
  memset(small, 'x', sizeof small);
  assert_null(geo_mesh_new(v, 4, rev, 3, "m", small, sizeof small));
  assert_int_equal(strlen(small), 7);
}

static void test_deterministic(void **state) {
  (void)state;
  geo_mesh *a = geo_mesh_torus(1, 0.3, 17, 9, NULL, 0), *b = geo_mesh_torus(1, 0.3, 17, 9, NULL, 0);
  assert_int_equal(a->nedge, b->nedge);
  assert_memory_equal(a->vert, b->vert, (size_t)a->nvert * 3 * sizeof(double));
  assert_memory_equal(a->tri, b->tri, (size_t)a->ntri * 3 * sizeof(int));
  assert_memory_equal(a->edge, b->edge, (size_t)a->nedge * 2 * sizeof(int));
  assert_memory_equal(a->edge_tri, b->edge_tri, (size_t)a->nedge * 2 * sizeof(int));
  assert_memory_equal(a->tri_edge, b->tri_edge, (size_t)a->ntri * 3 * sizeof(int));
  assert_memory_equal(a->vert_edge, b->vert_edge, (size_t)a->nedge * 2 * sizeof(int));
  // feature naming: a witness on a face / edge / vertex is named by these ids
  geo_feature f = {GEO_FEAT_EDGE, a->tri_edge[0]};
  assert_int_equal(f.type, 1);
  assert_true(f.id >= 0 && f.id < a->nedge);
  geo_mesh_destroy(&a);
  geo_mesh_destroy(&b);
}

// the edge id between vertices u and v of m, or -1
static int edge_between(const geo_mesh *m, int u, int v) {
  for (int e = 0; e < m->nedge; e++) {
    if ((m->edge[2 * e] == u && m->edge[2 * e + 1] == v) ||
        (m->edge[2 * e] == v && m->edge[2 * e + 1] == u)) {
      return e;
    }
  }
  return -1;
}

// geo_mesh_descends: whether the surface comes closer to a point than the feature does,
// on a flat square split along a diagonal, a convex ridge and a concave valley
static void test_descends(void **state) {
  (void)state;
  char err[256] = "";
  const double sq_v[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  const int sq_t[] = {0, 1, 2, 0, 2, 3};
  geo_mesh *sq = geo_mesh_new(sq_v, 4, sq_t, 2, "square", err, sizeof err);
  assert_non_null(sq);
  geo_feature diag = {GEO_FEAT_EDGE, edge_between(sq, 0, 2)};
  assert_true(diag.id >= 0);
  // a point over (0.7, 0.3), inside triangle 0: triangle 1 sees it at the diagonal's
  // (0.5, 0.5), from where triangle 0's inside leads towards it
  const double over0[3] = {0.2, -0.2, 0.1}, above[3] = {0, 0, 0.1};
  assert_int_equal(geo_mesh_descends(sq, diag, over0), 1);
  assert_int_equal(geo_mesh_descends(sq, diag, above), 0);  // straight above: the closest
  geo_feature face = {GEO_FEAT_FACE, 0};
  assert_int_equal(geo_mesh_descends(sq, face, over0), 0);  // a face never descends
  geo_feature v0 = {GEO_FEAT_VERTEX, 0};
  const double inside[3] = {0.1, 0.1, 1}, outside[3] = {-0.1, -0.1, 1}, zero[3] = {0};
  assert_int_equal(geo_mesh_descends(sq, v0, inside), 1);   // over the square, off v0
  assert_int_equal(geo_mesh_descends(sq, v0, outside), 0);  // beyond the corner
  assert_int_equal(geo_mesh_descends(sq, v0, zero), 0);     // touching
  // rounding: a direction a hair off the normal does not count
  const double hair[3] = {1e-13, -1e-13, 1};
  assert_int_equal(geo_mesh_descends(sq, diag, hair), 0);
  geo_mesh_destroy(&sq);

  // a ridge along y (faces sloping down to either side) and the same turned into a valley
  for (int valley = 0; valley < 2; valley++) {
    double z = valley ? 0.5 : -0.5;
    const double rv[] = {0, 0, 0, 0, 1, 0, 1, 0.5, z, -1, 0.5, z};
    const int rt_up[] = {0, 2, 1, 0, 1, 3};  // outward up for both shapes
    geo_mesh *r = geo_mesh_new(rv, 4, rt_up, 2, "ridge", err, sizeof err);
    assert_non_null(r);
    geo_feature ridge = {GEO_FEAT_EDGE, edge_between(r, 0, 1)};
    const double up[3] = {0, 0, 1}, right[3] = {0.6, 0, 0.5};
    // over a ridge the ridge is the closest point; over a valley both faces are closer
    assert_int_equal(geo_mesh_descends(r, ridge, up), valley);
    // well over the right face: that face is closer either way
    assert_int_equal(geo_mesh_descends(r, ridge, right), 1);
    geo_mesh_destroy(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_primitives_adjacency),
      cmocka_unit_test(test_weld_soup),
      cmocka_unit_test(test_open_nonmanifold_misoriented),
      cmocka_unit_test(test_check_solid),
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_descends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
