// STL reader: ascii and binary cubes generated here (welded to 8 vertices, closed),
// binary files whose header starts with "solid", several solids in one ascii file, and
// each malformed-input class rejected with its message (binary: triangle index; ascii:
// line). The declared triangle count of a binary file is never trusted.
// ctest-label: unit
#include "ccsim_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geo_mass.h"
#include "geo_mesh.h"
#include "geo_prim.h"

// --- generators ------------------------------------------------------------------------

static void put32(unsigned char *p, uint32_t u) {
  p[0] = (unsigned char)u;
  p[1] = (unsigned char)(u >> 8);
  p[2] = (unsigned char)(u >> 16);
  p[3] = (unsigned char)(u >> 24);
}

static void putf(unsigned char *p, float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  put32(p, u);
}

// Binary STL of mesh m (as a soup); header text given; caller frees.
static unsigned char *binary_of(const geo_mesh *m, const char *header, size_t *len) {
  *len = 84 + 50 * (size_t)m->ntri;
  unsigned char *b = calloc(*len, 1);
  memcpy(b, header, strlen(header) < 80 ? strlen(header) : 80);
  put32(b + 80, (uint32_t)m->ntri);
  for (int t = 0; t < m->ntri; t++) {
    unsigned char *r = b + 84 + 50 * t;
    for (int k = 0; k < 3; k++) putf(r + 4 * k, (float)m->tri_normal[3 * t + k]);
    for (int c = 0; c < 3; c++)
      for (int k = 0; k < 3; k++) putf(r + 12 + 12 * c + 4 * k, (float)m->vert[3 * m->tri[3 * t + c] + k]);
  }
  return b;
}

// Ascii STL of mesh m; caller frees.
static char *ascii_of(const geo_mesh *m, const char *name) {
  size_t cap = 256 + (size_t)m->ntri * 400, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n, "solid %s\n", name);
  for (int t = 0; t < m->ntri; t++) {
    const double *nn = m->tri_normal + 3 * t;
    n += (size_t)snprintf(s + n, cap - n, "  facet normal %.9g %.9g %.9g\n    outer loop\n", nn[0],
                          nn[1], nn[2]);
    for (int c = 0; c < 3; c++) {
      const double *p = m->vert + 3 * m->tri[3 * t + c];
      n += (size_t)snprintf(s + n, cap - n, "      vertex %.17g %.17g %.17g\n", p[0], p[1], p[2]);
    }
    n += (size_t)snprintf(s + n, cap - n, "    endloop\n  endfacet\n");
  }
  snprintf(s + n, cap - n, "endsolid %s\n", name);
  return s;
}

// Same triangles, same corners in the same order (vertex ids may differ: the soup is
// welded in order of first appearance).
static void same_triangles(const geo_mesh *a, const geo_mesh *b) {
  assert_int_equal(a->ntri, b->ntri);
  for (int t = 0; t < a->ntri; t++)
    for (int c = 0; c < 3; c++)
      assert_memory_equal(a->vert + 3 * a->tri[3 * t + c], b->vert + 3 * b->tri[3 * t + c],
                          3 * sizeof(double));
}

static void check_box(const geo_mesh *m, double sx, double sy, double sz, double tol) {
  assert_int_equal(m->nvert, 8);
  assert_int_equal(m->ntri, 12);
  assert_int_equal(m->nedge, 18);
  assert_int_equal(m->closed, 1);
  geo_mass g;
  assert_int_equal(geo_mass_properties(m, 1, &g, NULL, 0), 0);
  assert_double_near(g.volume, sx * sy * sz, tol);
}

static void test_binary(void **state) {
  (void)state;
  geo_mesh *box = geo_mesh_box(1, 2, 0.5, NULL, 0);  // exact in float
  size_t len;
  unsigned char *b = binary_of(box, "binary cube", &len);
  char e[256] = "";
  geo_mesh *m = geo_mesh_parse_stl(b, len, "cube.stl", e, sizeof e);
  if (!m) print_error("%s\n", e);
  assert_non_null(m);
  check_box(m, 1, 2, 0.5, 1e-15);
  same_triangles(m, box);
  geo_mesh_destroy(&m);
  free(b);
  // a binary file whose 80-byte header starts with "solid" (common) is still binary
  b = binary_of(box, "solid but binary", &len);
  m = geo_mesh_parse_stl(b, len, "cube.stl", e, sizeof e);
  assert_non_null(m);
  check_box(m, 1, 2, 0.5, 1e-15);
  geo_mesh_destroy(&m);
  free(b);
  geo_mesh_destroy(&box);
}

static void test_ascii(void **state) {
  (void)state;
  geo_mesh *s = geo_mesh_sphere(0.3, 10, 6, NULL, 0);
  char *a = ascii_of(s, "ball");
  char e[256] = "";
  geo_mesh *m = geo_mesh_parse_stl((const unsigned char *)a, strlen(a), "ball.stl", e, sizeof e);
  if (!m) print_error("%s\n", e);
  assert_non_null(m);
  assert_int_equal(m->nvert, s->nvert);  // %.17g round-trips: exact welding works
  assert_int_equal(m->ntri, s->ntri);
  assert_int_equal(m->closed, 1);
  same_triangles(m, s);
  geo_mesh_destroy(&m);
  free(a);
  geo_mesh_destroy(&s);
  // uppercase keywords, two solids, no final newline, a missing last endsolid tolerated
  const char *two =
      "SOLID a\nFACET NORMAL 0 0 0\nOUTER LOOP\nVERTEX 0 0 0\nVERTEX 1 0 0\nVERTEX 0 1 0\n"
      "ENDLOOP\nENDFACET\nENDSOLID a\n"
      "solid b\r\nfacet normal nan 0 0\r\nouter loop\r\nvertex 0 0 0\r\nvertex 0 1 0\r\n"
      "vertex 0 0 1\r\nendloop\r\nendfacet";
  m = geo_mesh_parse_stl((const unsigned char *)two, strlen(two), "two.stl", e, sizeof e);
  if (!m) print_error("%s\n", e);
  assert_non_null(m);
  assert_int_equal(m->ntri, 2);
  assert_int_equal(m->nvert, 4);
  assert_int_equal(m->n_border_edges, 4);
  geo_mesh_destroy(&m);
}

static void expect_bin(const unsigned char *b, size_t len, const char *what) {
  char e[256] = "";
  geo_mesh *m = geo_mesh_parse_stl(b, len, "b.stl", e, sizeof e);
  if (m) geo_mesh_destroy(&m);
  if (!strstr(e, what)) print_error("message '%s' lacks '%s'\n", e, what);
  assert_non_null(strstr(e, what));
}

static void expect_txt(const char *s, const char *what) {
  expect_bin((const unsigned char *)s, strlen(s), what);
}

static void test_binary_malformed(void **state) {
  (void)state;
  geo_mesh *box = geo_mesh_box(1, 1, 1, NULL, 0);
  size_t len;
  unsigned char *b = binary_of(box, "x", &len);
  // the declared count is checked against the length, never trusted for allocation
  put32(b + 80, 0xffffffffu);
  expect_bin(b, len,
             "b.stl: binary STL declares 4294967295 triangles, which needs 214748364834 bytes, "
             "but the file has 684 bytes");
  put32(b + 80, 13);
  expect_bin(b, len, "declares 13 triangles, which needs 734 bytes, but the file has 684 bytes");
  put32(b + 80, 12);
  expect_bin(b, len - 1, "declares 12 triangles, which needs 684 bytes, but the file has 683");
  // zero triangles
  unsigned char hdr[84] = {0};
  expect_bin(hdr, 84, "b.stl: empty mesh (binary STL with 0 triangles)");
  expect_bin(hdr, 10, "b.stl: not an STL file (10 bytes");
  expect_bin(hdr, 0, "b.stl: empty file");
  // non-finite and absurd coordinates, reported by triangle index and corner
  putf(b + 84 + 50 * 7 + 12 + 12 * 2 + 4, NAN);
  expect_bin(b, len, "b.stl: triangle 7: non-finite coordinate (corner 2, y = nan)");
  putf(b + 84 + 50 * 7 + 12 + 12 * 2 + 4, INFINITY);
  expect_bin(b, len, "b.stl: triangle 7: non-finite coordinate (corner 2, y = inf)");
  putf(b + 84 + 50 * 7 + 12 + 12 * 2 + 4, 3e6f);
  expect_bin(b, len, "b.stl: triangle 7: coordinate 3e+06 (corner 2, y) exceeds the cap");
  free(b);
  // degenerate (collapsed corner) and duplicate triangles by index
  b = binary_of(box, "x", &len);
  memcpy(b + 84 + 50 * 4 + 12 + 12, b + 84 + 50 * 4 + 12, 12);  // corner 1 := corner 0
  expect_bin(b, len,
             "b.stl: triangle 4: degenerate triangle: corners 0 and 1 (vertices 12 and 13) are "
             "at the same point");
  free(b);
  b = binary_of(box, "x", &len);
  memcpy(b + 84 + 50 * 9, b + 84 + 50 * 2, 50);
  expect_bin(b, len, "b.stl: triangle 9: duplicate triangle: same vertices as triangle 2");
  free(b);
  geo_mesh_destroy(&box);
}

static void test_ascii_malformed(void **state) {
  (void)state;
  const char *head = "solid t\n facet normal 0 0 1\n  outer loop\n";
  char buf[1024];
#define WITH(body) (snprintf(buf, sizeof buf, "%s%s", head, body), buf)
  expect_txt("solid t\nendsolid t\n", "b.stl: empty mesh (ascii STL with no facets)");
  expect_txt("solid", "b.stl: empty mesh (ascii STL with no facets)");
  expect_txt("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
             "endloop\nendfacet\nendsolid t\ngarbage\n",
             "b.stl:10: expected 'solid' or end of file after 'endsolid', got 'garbage'");
  expect_txt("solid t\n\n  facets normal 0 0 1\n", "b.stl:3: expected 'facet' or 'endsolid', got 'facets'");
  expect_txt("solid t\nfacet 0 0 1\n", "b.stl:2: expected 'normal', got '0'");
  expect_txt("solid t\nfacet normal 0 zero 1\n", "b.stl:2: malformed number 'zero' in facet normal");
  expect_txt("solid t\nfacet normal 0 0\n", "b.stl:3: unexpected end of file in facet normal");
  expect_txt("solid t\nfacet normal 0 0 1\nouter\n", "b.stl:4: unexpected end of file, expected 'loop'");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 0 0\n vertex 0 1\n endloop\n"),
             "b.stl:7: malformed number 'endloop' in vertex");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 0 0\n vertex 0 1 0\n vertex 1 1 1\n"),
             "b.stl:7: expected 'endloop', got 'vertex'");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 0 0\n vertex 0 1 0\n endloop\n endsolid\n"),
             "b.stl:8: expected 'endfacet', got 'endsolid'");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 nan 0\n"), "b.stl:5: non-finite vertex coordinate 'nan'");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 -inf 0\n"), "b.stl:5: non-finite vertex coordinate '-inf'");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 0 1e300\n"),
             "b.stl:5: vertex coordinate 1e+300 exceeds the cap |x| <= 1e+06 m");
  // degenerate and duplicate: the line of the facet
  expect_txt(WITH("vertex 0 0 0\n vertex 1 1 1\n vertex 2 2 2\n endloop\nendfacet\n"),
             "b.stl:2: triangle 0: degenerate triangle: zero area");
  expect_txt(WITH("vertex 0 0 0\n vertex 1 0 0\n vertex 0 0 0\n endloop\nendfacet\n"),
             "b.stl:2: triangle 0: degenerate triangle: corners 0 and 2 (vertices 0 and 2) are at "
             "the same point (0, 0, 0)");
  expect_txt("solid t\n"
             "facet normal 0 0 1 outer loop vertex 0 0 0 vertex 1 0 0 vertex 0 1 0 endloop endfacet\n"
             "facet normal 0 0 1 outer loop vertex 1 0 0 vertex 0 1 0 vertex 0 0 0 endloop endfacet\n"
             "endsolid t\n",
             "b.stl:3: triangle 1: duplicate triangle: same vertices as triangle 0 (line 2)");
  // neither binary (length) nor ascii ("solid")
  expect_txt("facet normal 0 0 1\n", "b.stl: not an STL file");
  char big[200];
  memset(big, 'x', sizeof big);
  expect_bin((const unsigned char *)big, sizeof big, "b.stl: binary STL declares");
  // "solid" header with NUL bytes and a wrong length: reported as a binary length mismatch
  unsigned char sb[200] = "solid x";
  expect_bin(sb, sizeof sb, "b.stl: binary STL declares 0 triangles, which needs 84 bytes");
#undef WITH
}

static void test_load(void **state) {
  (void)state;
  char dir[] = "/tmp/ccsim_stlXXXXXX";
  assert_non_null(mkdtemp(dir));
  geo_mesh *box = geo_mesh_box(2, 1, 1, NULL, 0);
  size_t len;
  unsigned char *b = binary_of(box, "solid looks ascii", &len);
  char *a = ascii_of(box, "box");
  char p1[300], p2[300], p3[300];
  snprintf(p1, sizeof p1, "%s/box.STL", dir);
  snprintf(p2, sizeof p2, "%s/box_bin", dir);  // no extension: binary by its length
  snprintf(p3, sizeof p3, "%s/box_ascii", dir);  // no extension: "solid" + "facet"
  FILE *f = fopen(p1, "wb");
  fwrite(b, 1, len, f);
  fclose(f);
  f = fopen(p2, "wb");
  fwrite(b, 1, len, f);
  fclose(f);
  f = fopen(p3, "wb");
  fputs(a, f);
  fclose(f);
  const char *ps[3] = {p1, p2, p3};
  for (int i = 0; i < 3; i++) {
    char e[512] = "";
    geo_mesh *m = geo_mesh_load(ps[i], e, sizeof e);
    if (!m) print_error("%s: %s\n", ps[i], e);
    assert_non_null(m);
    check_box(m, 2, 1, 1, 1e-15);
    assert_string_equal(m->source, ps[i]);
    geo_mesh_destroy(&m);
    unlink(ps[i]);
  }
  rmdir(dir);
  free(a);
  free(b);
  geo_mesh_destroy(&box);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_binary),           cmocka_unit_test(test_ascii),
      cmocka_unit_test(test_binary_malformed), cmocka_unit_test(test_ascii_malformed),
      cmocka_unit_test(test_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
