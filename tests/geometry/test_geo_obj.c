// OBJ reader: accepted forms (quads and polygons fan-triangulated, negative indices,
// v/vt/vn corners, comments, CRLF, ignored statements, no trailing newline, C locale),
// each malformed-input class rejected with "file:LINE: reason", and geo_mesh_load.
// ctest-label: unit
#include "ccsim_test.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geo_mass.h"
#include "geo_mesh.h"

static geo_mesh *parse(const char *s, char *err, size_t err_sz) {
  return geo_mesh_parse_obj(s, strlen(s), "t.obj", err, err_sz);
}

static const char *kCube =
    "# a unit cube, quads\n"
    "mtllib cube.mtl\n"
    "o cube\n"
    "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
    "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
    "vt 0 0\nvn 0 0 1\n"
    "g sides\ns off\nusemtl red\n"
    "f 1 4 3 2\n"          // bottom, -z
    "f 5 6 7 8\n"          // top
    "f 1/1 2/1 6/1 5/1\n"  // -y
    "f 2//1 3//1 7//1 6//1\n"
    "f 3/1/1 4/1/1 8/1/1 7/1/1\n"
    "f -8 -4 -1 -5 # -x, negative indices\n";

static void check_unit_cube(const geo_mesh *m) {
  assert_int_equal(m->nvert, 8);
  assert_int_equal(m->ntri, 12);
  assert_int_equal(m->nedge, 18);
  assert_int_equal(m->closed, 1);
  geo_mass g;
  assert_int_equal(geo_mass_properties(m, 1, &g, NULL, 0), 0);
  assert_double_near(g.volume, 1.0, 1e-15);
  for (int k = 0; k < 3; k++) assert_double_near(g.com[k], 0.5, 1e-15);
}

static void test_cube(void **state) {
  (void)state;
  char e[256] = "";
  geo_mesh *m = parse(kCube, e, sizeof e);
  if (!m) print_error("%s\n", e);
  assert_non_null(m);
  check_unit_cube(m);
  assert_string_equal(m->source, "t.obj");
  // fan triangulation (v0, vi, vi+1): the first quad 1 4 3 2 -> (0,3,2), (0,2,1)
  assert_int_equal(m->tri[0], 0);
  assert_int_equal(m->tri[1], 3);
  assert_int_equal(m->tri[2], 2);
  assert_int_equal(m->tri[3], 0);
  assert_int_equal(m->tri[4], 2);
  assert_int_equal(m->tri[5], 1);
  geo_mesh_destroy(&m);
}

static void test_crlf_no_newline_polygon(void **state) {
  (void)state;
  // CRLF, tabs, a hexagon as one polygon, vertex with w, no final newline
  const char *s =
      "v 0 0 0 1.0\r\nv 2 0 0\r\n\tv\t3 1 0\r\nv 2 2 0\r\nv 0 2 0\r\nv -1 1 0\r\n"
      "f 1 2 3 4 5 6";
  char e[256] = "";
  geo_mesh *m = parse(s, e, sizeof e);
  if (!m) print_error("%s\n", e);
  assert_non_null(m);
  assert_int_equal(m->ntri, 4);
  assert_int_equal(m->n_border_edges, 6);
  for (int t = 0; t < 4; t++) assert_double_near(m->tri_normal[3 * t + 2], 1.0, 1e-15);
  geo_mesh_destroy(&m);
  // forward reference: a face may name a vertex defined later (positive indices)
  m = parse("f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 1 0\n", e, sizeof e);
  assert_non_null(m);
  geo_mesh_destroy(&m);
  // numbers: exponents, signs, leading '+'
  m = parse("v 0e0 -0 +0\nv 1E-0 0 0\nv 0 .1e1 0\nf 1 2 3\n", e, sizeof e);
  assert_non_null(m);
  assert_true(m->vert[7] == 1.0);
  geo_mesh_destroy(&m);
}

// Numbers are read in the C locale even if the process uses a comma decimal separator.
static void test_locale(void **state) {
  (void)state;
  const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
  const char *got = NULL;
  for (size_t i = 0; i < 4 && !got; i++) got = setlocale(LC_NUMERIC, names[i]);
  if (!got) {
    print_message("no comma-decimal locale installed; locale test skipped\n");
    skip();
  }
  geo_mesh *m = parse("v 0 0 0\nv 0.5 0 0\nv 0 0.5 0\nf 1 2 3\n", NULL, 0);
  setlocale(LC_NUMERIC, "C");
  assert_non_null(m);
  assert_true(m->vert[3] == 0.5);
  geo_mesh_destroy(&m);
}

static void expect(const char *src, const char *what) {
  char e[256] = "";
  geo_mesh *m = parse(src, e, sizeof e);
  if (m) geo_mesh_destroy(&m);
  if (!strstr(e, what)) print_error("input:\n%s\nmessage '%s' lacks '%s'\n", src, e, what);
  assert_non_null(strstr(e, what));
}

static void test_malformed(void **state) {
  (void)state;
  const char *tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
  (void)tri;
  // empty
  expect("", "t.obj: empty mesh (no vertices)");
  expect("# nothing\n\n   \n", "t.obj: empty mesh (no vertices)");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\n", "t.obj: empty mesh (no faces)");
  // numbers
  expect("v 0 0 0\nv 1 x 0\n", "t.obj:2: malformed number 'x' in vertex");
  expect("v 0 0 0\nv 1 1.5.2 0\n", "t.obj:2: malformed number '1.5.2' in vertex");
  expect("v 0 0\n", "t.obj:1: vertex needs 3 coordinates, got 2");
  expect("v 0 0 # 1\n", "t.obj:1: vertex needs 3 coordinates, got 2");
  expect("v\n", "t.obj:1: vertex needs 3 coordinates, got 0");
  // non-finite and absurd coordinates
  expect("v 0 0 0\n\nv nan 0 0\n", "t.obj:3: non-finite vertex coordinate 'nan'");
  expect("v inf 0 0\n", "t.obj:1: non-finite vertex coordinate 'inf'");
  expect("v 0 -Infinity 0\n", "t.obj:1: non-finite vertex coordinate '-Infinity'");
  expect("v 0 0 1e400\n", "t.obj:1: non-finite vertex coordinate '1e400'");
  expect("v 0 0 1000001\n", "t.obj:1: vertex coordinate 1e+06 exceeds the cap |x| <= 1e+06 m");
  // faces
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", "t.obj:4: face with 2 vertices (need at least 3)");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n",
         "t.obj:4: vertex index 0 is invalid (OBJ indices start at 1)");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",
         "t.obj:4: vertex index 4 out of range (the file defines 3 vertices)");
  expect("v 0 0 0\nv 1 0 0\nf -1 -2 -3\nv 0 1 0\n",
         "t.obj:3: vertex index -3 out of range (only 2 vertices defined so far)");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n",
         "t.obj:4: vertex index 99999999999999999999 out of range");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 a\n", "t.obj:4: malformed face corner 'a'");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3x\n", "t.obj:4: malformed face corner '3x'");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 /3\n", "t.obj:4: malformed face corner '/3'");
  // degenerate and duplicate triangles, reported at the face's line
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n",
         "t.obj:4: triangle 0: degenerate triangle: corners 1 and 2 are the same vertex 1");
  expect("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n",
         "t.obj:4: triangle 0: degenerate triangle: zero area");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 0 0\nf 1 2 3\nf 1 4 3\n",
         "t.obj:6: triangle 1: duplicate triangle: same vertices as triangle 0 (line 5)");
  expect("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3 4\n# c\nf 3 2 1\n",
         "t.obj:7: triangle 2: duplicate triangle: same vertices as triangle 0 (line 5)");
  // a polygon whose fan has a zero-area triangle
  expect("v 0 0 0\nv 1 0 0\nv 2 0 0\nv 1 1 0\nf 1 2 3 4\n",
         "t.obj:5: triangle 0: degenerate triangle: zero area");
}

static void test_load(void **state) {
  (void)state;
  char dir[] = "/tmp/ccsim_objXXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], path2[256];
  snprintf(path, sizeof path, "%s/cube.OBJ", dir);
  snprintf(path2, sizeof path2, "%s/cube.mesh", dir);  // unknown extension: by content
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(i ? path2 : path, "wb");
    assert_non_null(f);
    fputs(kCube, f);
    fclose(f);
  }
  char e[512] = "";
  geo_mesh *m = geo_mesh_load(path, e, sizeof e);
  if (!m) print_error("%s\n", e);
  assert_non_null(m);
  check_unit_cube(m);
  assert_string_equal(m->source, path);
  geo_mesh_destroy(&m);
  m = geo_mesh_load(path2, e, sizeof e);
  assert_non_null(m);
  check_unit_cube(m);
  geo_mesh_destroy(&m);
  // a message names the file and line
  FILE *f = fopen(path, "wb");
  fputs("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n", f);
  fclose(f);
  assert_null(geo_mesh_load(path, e, sizeof e));
  char want[300];
  snprintf(want, sizeof want, "%s:4: vertex index 7 out of range", path);
  assert_non_null(strstr(e, want));
  // missing file
  char missing[300];
  snprintf(missing, sizeof missing, "%s/none.obj", dir);
  assert_null(geo_mesh_load(missing, e, sizeof e));
  assert_non_null(strstr(e, "none.obj: cannot open"));
  assert_null(geo_mesh_load(NULL, e, sizeof e));
  assert_non_null(strstr(e, "no path"));
  unlink(path);
  unlink(path2);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cube),      cmocka_unit_test(test_crlf_no_newline_polygon),
      cmocka_unit_test(test_locale),    cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
