// sim_model_compile refuses what no rigid body or contact surface can be, naming the body,
// the key, the value and the rule: meshes that bound no solid (whatever mass and inertia
// are given), masses and inertias out of range or physically impossible.
// ctest-label: unit
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_prim.h"
#include "sim_model.h"

typedef struct fixture {
  geo_mesh *box;       // unit cube: the mesh bodies' vertices and triangles
  unsigned tri[36];    // the cube's triangles, edited per test
  sim_body_desc b[2];  // b[0]: a fixed box floor; b[1]: the free body under test
  sim_scene sc;
  char err[512];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  f->box = geo_mesh_box(1, 1, 1, NULL, 0);
  if (!f->box) return -1;
  for (int i = 0; i < 36; i++) f->tri[i] = (unsigned)f->box->tri[i];
  f->b[0].name = "floor";
  f->b[0].type = SIM_BODY_FIXED;
  f->b[0].shape.type = SIM_SHAPE_BOX;
  f->b[0].shape.size[0] = f->b[0].shape.size[1] = f->b[0].shape.size[2] = 1;
  f->b[0].quat[0] = 1;
  f->b[1].name = "part";
  f->b[1].mass = 1;
  f->b[1].ninertia = 3;
  f->b[1].inertia[0] = f->b[1].inertia[1] = f->b[1].inertia[2] = 0.2;
  f->b[1].quat[0] = 1;
  f->b[1].pos[2] = 2;
  f->b[1].shape.type = SIM_SHAPE_SPHERE;
  f->b[1].shape.radius = 0.5;
  f->sc.gravity[2] = -9.81;
  f->sc.nbody = 2;
  f->sc.bodies = f->b;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  geo_mesh_destroy(&f->box);
  free(f);
  return 0;
}

// b's shape: the fixture's cube with its (edited) triangles, ntri of them
static void cube_mesh(fixture *f, sim_body_desc *b, int ntri, const char *source) {
  b->shape.type = SIM_SHAPE_MESH;
  b->shape.vert = f->box->vert;
  b->shape.nvert = f->box->nvert;
  b->shape.tri = f->tri;
  b->shape.ntri = ntri;
  b->shape.source = source;
}

// compile must fail with a message holding each of the texts (NULL-terminated list)
static void refused(fixture *f, const char *const *texts) {
  f->err[0] = 0;
  sim_model *m = sim_model_compile(&f->sc, f->err, sizeof f->err);
  if (m) {
    print_error("compiled; expected a refusal saying '%s'\n", texts[0]);
    sim_model_destroy(&m);
    fail();
  }
  print_message("%s\n", f->err);
  for (int k = 0; texts[k]; k++) {
    if (!strstr(f->err, texts[k])) print_error("'%s' lacks '%s'\n", f->err, texts[k]);
    assert_non_null(strstr(f->err, texts[k]));
  }
}

static void compiles(fixture *f) {
  f->err[0] = 0;
  sim_model *m = sim_model_compile(&f->sc, f->err, sizeof f->err);
  if (!m) print_error("refused: %s\n", f->err);
  assert_non_null(m);
  sim_model_destroy(&m);
}

// The cube as a mesh compiles, on a free body (mass given) and as the fixed floor.
static void test_closed_mesh_compiles(void **state) {
  fixture *f = *state;
  cube_mesh(f, &f->b[1], 12, "cube.obj");
  cube_mesh(f, &f->b[0], 12, "floor.obj");
  compiles(f);
}

// One flipped triangle on a free body whose mass and inertia are given was accepted
// silently: its contact normal points inward.
static void test_flipped_triangle_refused(void **state) {
  fixture *f = *state;
  unsigned tmp = f->tri[16];
  f->tri[16] = f->tri[17], f->tri[17] = tmp;
  cube_mesh(f, &f->b[1], 12, "part.obj");
  refused(f, (const char *const[]){"bodies[1] (\"part\").shape.mesh: part.obj: triangle 5 is "
                                   "wound against its neighbour",
                                   NULL});
}

// An inward-wound cube, mass and inertia given: named inside out, with the fix.
static void test_inside_out_refused(void **state) {
  fixture *f = *state;
  for (int t = 0; t < 12; t++) {
    unsigned tmp = f->tri[3 * t + 1];
    f->tri[3 * t + 1] = f->tri[3 * t + 2], f->tri[3 * t + 2] = tmp;
  }
  cube_mesh(f, &f->b[1], 12, "part.obj");
  refused(f, (const char *const[]){"bodies[1] (\"part\").shape.mesh: part.obj: inside out",
                                   "reverse the winding", NULL});
}

// A fixed floor missing a face let a ball fall into it: refused, its open edges named.
static void test_open_floor_refused(void **state) {
  fixture *f = *state;
  cube_mesh(f, &f->b[0], 10, "floor.obj");  // the cube's last face (two triangles) dropped
  refused(f, (const char *const[]){"bodies[0] (\"floor\").shape.mesh: floor.obj: open mesh: 4 "
                                   "edges used by one triangle only",
                                   "e.g. vertices ", NULL});
}

// Principal moments that break the triangle inequality: no body has them.
static void test_inertia_triangle_inequality(void **state) {
  fixture *f = *state;
  f->b[1].inertia[0] = 1, f->b[1].inertia[1] = 1, f->b[1].inertia[2] = 3;
  refused(f, (const char *const[]){"bodies[1] (\"part\").inertia = [1, 1, 3]: principal moments "
                                   "must satisfy the triangle inequality (Ixx + Iyy >= Izz",
                                   NULL});
  // the same moments as a 3 x 3, in another order: the sorted moments are named
  double R[9] = {3, 0, 0, 0, 1, 0, 0, 0, 1};
  f->b[1].ninertia = 9;
  memcpy(f->b[1].inertia, R, sizeof R);
  refused(f, (const char *const[]){"inertia = [[3, 0, 0], [0, 1, 0], [0, 0, 1]]: principal "
                                   "moments must satisfy the triangle inequality",
                                   "(principal moments 1, 1, 3)", NULL});
  // a flat plate sits on the bound (Izz = Ixx + Iyy): accepted, and so is rounding past it
  f->b[1].ninertia = 3;
  f->b[1].inertia[0] = 1, f->b[1].inertia[1] = 2, f->b[1].inertia[2] = 3 * (1 + 1e-12);
  compiles(f);
}

// A 3 x 3 that is not symmetric, or symmetric but not positive definite.
static void test_inertia_matrix(void **state) {
  fixture *f = *state;
  double asym[9] = {1, 0.5, 0, 0, 1, 0, 0, 0, 1};
  f->b[1].ninertia = 9;
  memcpy(f->b[1].inertia, asym, sizeof asym);
  refused(f, (const char *const[]){"inertia = [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]: must be "
                                   "symmetric (row 0 column 1 is 0.5, row 1 column 0 is 0)",
                                   NULL});
  // eigenvalues -1, 3, 1: a positive diagonal, and no body
  double indef[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
  memcpy(f->b[1].inertia, indef, sizeof indef);
  refused(f, (const char *const[]){"must be positive definite (principal moments -1, 1, 3)",
                                   NULL});
  // a genuine one with products of inertia: diag(1, 1.5, 2) rotated about z by 30 degrees
  const double pi = acos(-1.0), c = cos(pi / 6), s = sin(pi / 6);
  double ok[9] = {c * c * 1 + s * s * 1.5, c * s * (1.5 - 1), 0, c * s * (1.5 - 1),
                  s * s * 1 + c * c * 1.5, 0, 0, 0, 2};
  memcpy(f->b[1].inertia, ok, sizeof ok);
  compiles(f);
  // moments out of range
  f->b[1].ninertia = 3;
  f->b[1].inertia[0] = f->b[1].inertia[1] = f->b[1].inertia[2] = 1e30;
  refused(f, (const char *const[]){"inertia = [1e+30, 1e+30, 1e+30]: principal moments must be "
                                   "in [1e-21, 1e+21] kg m^2",
                                   NULL});
}

// mass 1e300 reached CVODE, whose failure named no body; density can give as much.
static void test_mass_range(void **state) {
  fixture *f = *state;
  f->b[1].mass = 1e300;
  refused(f, (const char *const[]){"bodies[1] (\"part\").mass = 1e+300: must be finite and in "
                                   "[1e-09, 1e+09] kg",
                                   NULL});
  f->b[1].mass = 1e-12;
  refused(f, (const char *const[]){".mass = 1e-12: must be finite and in [1e-09, 1e+09] kg", NULL});
  f->b[1].mass = 0;
  f->b[1].density = 1e20;
  f->b[1].ninertia = 0;
  f->b[1].shape.type = SIM_SHAPE_BOX;
  f->b[1].shape.size[0] = f->b[1].shape.size[1] = f->b[1].shape.size[2] = 1;
  refused(f, (const char *const[]){"bodies[1] (\"part\").density = 1e+20: gives a mass of 1e+20 "
                                   "kg (density x volume 1 m^3), which must be in [1e-09, 1e+09] kg",
                                   NULL});
  f->b[1].density = 1000;
  compiles(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_closed_mesh_compiles, setup, teardown),
      cmocka_unit_test_setup_teardown(test_flipped_triangle_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inside_out_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_open_floor_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inertia_triangle_inequality, setup, teardown),
      cmocka_unit_test_setup_teardown(test_inertia_matrix, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mass_range, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
