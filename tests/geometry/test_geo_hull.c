// Convex hull: containment of every input, vertices are inputs, Euler characteristic,
// symmetric adjacency, convexity, flat and degenerate input, relocation, support mappings.
// ctest-label: unit
// ctest-timeout: 60
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_hull.h"
#include "geo_vec.h"

static const double PI_ = 3.14159265358979323846;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

// the invariants every hull must satisfy for its input pts (n x 3)
static void check_hull(const geo_hull *h, const double *pts, int n) {
  assert_true(h->nvert >= 3);
  assert_int_equal(h->nvert - h->nedge + h->nface, 2);
  assert_int_equal(2 * h->nedge, 3 * h->nface);
  // every hull vertex is exactly an input point, src increasing
  for (int v = 0; v < h->nvert; v++) {
    assert_true(h->src[v] >= 0 && h->src[v] < n);
    if (v > 0) {
      assert_true(h->src[v] > h->src[v - 1]);
    }
    assert_memory_equal(h->vert + 3 * v, pts + 3 * h->src[v], 3 * sizeof(double));
  }
  // every input point inside or on the hull
  for (int i = 0; i < n; i++) {
    for (int f = 0; f < h->nface; f++) {
      const double *pl = h->plane + 4 * f;
      double d = geo_v3_dot(pl, pts + 3 * i) - pl[3];
      if (d > h->tol) {
        print_error("point %d is %.3g above face %d (tol %.3g) nv %d\n", i, d, f, h->tol, h->nvert);
        fail();
      }
    }
  }
  // planes: unit normals through their vertices, pointing out (normal = ordered cross)
  for (int f = 0; f < h->nface; f++) {
    const double *pl = h->plane + 4 * f;
    const int *fv = h->face + 3 * f;
    assert_double_near(geo_v3_norm(pl), 1.0, 1e-12);
    double e1[3], e2[3], c[3];
    geo_v3_sub(e1, h->vert + 3 * fv[1], h->vert + 3 * fv[0]);
    geo_v3_sub(e2, h->vert + 3 * fv[2], h->vert + 3 * fv[0]);
    geo_v3_cross(c, e1, e2);
    assert_true(geo_v3_dot(c, pl) > 0.0);
    for (int k = 0; k < 3; k++) {
      assert_double_near(geo_v3_dot(pl, h->vert + 3 * fv[k]), pl[3], 4 * h->tol);
    }
  }
  // face adjacency symmetric across the same edge; edges consistent
  for (int f = 0; f < h->nface; f++) {
    for (int k = 0; k < 3; k++) {
      int a = h->face[3 * f + k], b = h->face[3 * f + (k + 1) % 3];
      int g = h->fadj[3 * f + k];
      assert_true(g >= 0 && g < h->nface && g != f);
      int m = -1;
      for (int j = 0; j < 3; j++) {
        if (h->face[3 * g + j] == b && h->face[3 * g + (j + 1) % 3] == a) {
          m = j;
        }
      }
      assert_true(m >= 0);
      assert_int_equal(h->fadj[3 * g + m], f);
      int e = h->fedge[3 * f + k];
      assert_int_equal(h->fedge[3 * g + m], e);
      assert_int_equal(h->edge[2 * e], a < b ? a : b);
      assert_int_equal(h->edge[2 * e + 1], a < b ? b : a);
    }
  }
  // vertex adjacency: symmetric, the left face holds the directed edge
  assert_int_equal(h->vadj_start[h->nvert], 2 * h->nedge);
  for (int v = 0; v < h->nvert; v++) {
    for (int k = h->vadj_start[v]; k < h->vadj_start[v + 1]; k++) {
      int w = h->vadj[k], found = 0;
      for (int j = h->vadj_start[w]; j < h->vadj_start[w + 1]; j++) {
        found += h->vadj[j] == v;
      }
      assert_int_equal(found, 1);
      const int *fv = h->face + 3 * h->vadj_face[k];
      int ok = 0;
      for (int j = 0; j < 3; j++) {
        ok |= fv[j] == v && fv[(j + 1) % 3] == w;
      }
      assert_true(ok);
      int e = h->vadj_edge[k];
      assert_true((h->edge[2 * e] == v && h->edge[2 * e + 1] == w) ||
                  (h->edge[2 * e] == w && h->edge[2 * e + 1] == v));
    }
  }
}

static void test_random_clouds(void **state) {
  (void)state;
  for (int trial = 0; trial < 60; trial++) {
    int n = 4 + (int)(urand() * 300);
    double *p = malloc(sizeof(double) * 3 * (size_t)n);
    assert_non_null(p);
    double s = pow(10.0, 4 * urand() - 2), off = 100 * (urand() - 0.5) * s;
    for (int i = 0; i < 3 * n; i++) {
      p[i] = off + s * (2 * urand() - 1);
    }
    char err[128] = "";
    geo_hull *h = geo_hull_new(p, n, err, sizeof err);
    if (!h) {
      print_error("trial %d: %s\n", trial, err);
    }
    assert_non_null(h);
    assert_int_equal(h->flat, 0);
    check_hull(h, p, n);
    geo_hull_destroy(&h);
    assert_null(h);
    free(p);
  }
}

static void test_sphere_points_all_vertices(void **state) {
  (void)state;
  int n = 500;
  double *p = malloc(sizeof(double) * 3 * (size_t)n);
  assert_non_null(p);
  for (int i = 0; i < n; i++) {
    double v[3];
    do {
      geo_v3_set(v, 2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1);
    } while (geo_v3_norm(v) < 0.1);
    geo_v3_normalize(v);
    geo_v3_copy(p + 3 * i, v);
  }
  geo_hull *h = geo_hull_new(p, n, NULL, 0);
  assert_non_null(h);
  check_hull(h, p, n);
  // points on a sphere are in convex position: each is a vertex
  assert_int_equal(h->nvert, n);
  assert_int_equal(h->nface, 2 * n - 4);
  assert_double_near(h->radius, 1.0, 0.2);
  // hill-climbing reaches the same support value as exhaustive search
  for (int t = 0; t < 2000; t++) {
    double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    int a = geo_hull_support_brute(h, d);
    int b = geo_hull_support_climb(h, d, (int)(urand() * n));
    assert_double_near(geo_v3_dot(h->vert + 3 * a, d), geo_v3_dot(h->vert + 3 * b, d), 1e-15);
  }
  geo_hull_destroy(&h);
  free(p);
}

static void test_cube_with_duplicates_and_coplanar_points(void **state) {
  (void)state;
  // a 5 x 5 x 5 grid on [-1, 1]^3 (points on faces, edges, inside), every point twice
  int n = 2 * 125;
  double p[2 * 125 * 3];
  int m = 0;
  for (int rep = 0; rep < 2; rep++) {
    for (int i = 0; i < 5; i++) {
      for (int j = 0; j < 5; j++) {
        for (int k = 0; k < 5; k++) {
          geo_v3_set(p + 3 * m++, -1 + 0.5 * i, -1 + 0.5 * j, -1 + 0.5 * k);
        }
      }
    }
  }
  geo_hull *h = geo_hull_new(p, n, NULL, 0);
  assert_non_null(h);
  check_hull(h, p, n);
  assert_int_equal(h->nvert, 8);
  assert_int_equal(h->nface, 12);
  for (int v = 0; v < 8; v++) {
    for (int k = 0; k < 3; k++) {
      assert_double_near(fabs(h->vert[3 * v + k]), 1.0, 0.0);
    }
  }
  // every face plane is one of the six sides
  for (int f = 0; f < h->nface; f++) {
    double mx = fmax(fabs(h->plane[4 * f]), fmax(fabs(h->plane[4 * f + 1]),
                                                 fabs(h->plane[4 * f + 2])));
    assert_double_near(mx, 1.0, 1e-15);
    assert_double_near(h->plane[4 * f + 3], 1.0, 1e-15);
  }
  geo_hull_destroy(&h);
}

static void test_nearly_coplanar_box_surface(void **state) {
  (void)state;
  // points on the sides of a box pushed off their planes by 0 to 1e-9 relative, or in a
  // slab that thin: the hull must stay valid at every noise level
  for (int trial = 0; trial < 40; trial++) {
    int n = 400;
    double p[400 * 3], noise = trial < 10 ? 0.0 : pow(10.0, -16 + 7 * urand());
    for (int i = 0; i < n; i++) {
      int ax = (int)(urand() * 3), sd = urand() < 0.5 ? -1 : 1;
      for (int k = 0; k < 3; k++) {
        p[3 * i + k] = 2 * urand() - 1;
      }
      p[3 * i + ax] = sd * (1.0 + noise * (2 * urand() - 1));
      if (trial % 2) {
        // a tilted slab of thickness noise instead (flat within tol for the smallest)
        p[3 * i + 2] = 0.3 * p[3 * i] + noise * (2 * urand() - 1);
      }
    }
    char err[128] = "";
    geo_hull *h = geo_hull_new(p, n, err, sizeof err);
    if (!h) {
      print_error("trial %d (noise %.3g): %s\n", trial, noise, err);
    }
    assert_non_null(h);
    check_hull(h, p, n);
    geo_hull_destroy(&h);
  }
}

static void test_flat_input(void **state) {
  (void)state;
  // 12 points on a circle and 50 inside, in a tilted plane: a flat 12-gon
  double q[4] = {0.9, 0.3, -0.2, 0.25}, R[9], p[62 * 3];
  geo_quat_normalize(q);
  geo_quat_to_mat(R, q);
  for (int i = 0; i < 62; i++) {
    double a = 2 * PI_ * i / 12.0, r = 1.0;
    if (i >= 12) {
      a = 2 * PI_ * urand();
      r = 0.95 * urand();
    }
    double l[3] = {r * cos(a), r * sin(a), 0.0};
    geo_m3_mulv(p + 3 * i, R, l);
    p[3 * i] += 3.0;
  }
  char err[128];
  geo_hull *h = geo_hull_new(p, 62, err, sizeof err);
  assert_non_null(h);
  assert_int_equal(h->flat, 1);
  check_hull(h, p, 62);
  assert_int_equal(h->nvert, 12);
  for (int v = 0; v < 12; v++) {
    assert_int_equal(h->src[v], v);
  }
  geo_hull_destroy(&h);
}

static void test_bad_input(void **state) {
  (void)state;
  char err[128];
  double line[5 * 3];
  for (int i = 0; i < 5; i++) {
    geo_v3_set(line + 3 * i, i, 2 * i, -i);
  }
  assert_null(geo_hull_new(line, 5, err, sizeof err));
  assert_non_null(strstr(err, "collinear"));
  double same[4 * 3] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  assert_null(geo_hull_new(same, 4, err, sizeof err));
  assert_non_null(strstr(err, "collinear"));
  assert_null(geo_hull_new(same, 2, err, sizeof err));
  assert_non_null(strstr(err, "at least 3"));
  double bad[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, NAN};
  assert_null(geo_hull_new(bad, 4, err, sizeof err));
  assert_non_null(strstr(err, "non-finite"));
  assert_null(geo_hull_new(NULL, 4, NULL, 0));
  geo_hull *h = NULL;
  geo_hull_destroy(&h);
  geo_hull_destroy(NULL);
}

static void test_copy_into_caller_storage(void **state) {
  (void)state;
  double p[40 * 3];
  for (int i = 0; i < 120; i++) {
    p[i] = urand();
  }
  geo_hull *h = geo_hull_new(p, 40, NULL, 0);
  assert_non_null(h);
  size_t bytes = h->bytes;
  double *mem = malloc(bytes + 64);
  assert_non_null(mem);
  assert_null(geo_hull_copy(h, mem, bytes - 8));
  geo_hull *c = geo_hull_copy(h, mem, bytes);
  assert_non_null(c);
  int nv = h->nvert, nf = h->nface;
  double v0[3];
  geo_v3_copy(v0, h->vert + 3 * (nv - 1));
  int f0 = h->fadj[3 * nf - 1];
  geo_hull_destroy(&h);
  // the copy is self-contained after the original is gone
  assert_int_equal(c->nvert, nv);
  assert_memory_equal(c->vert + 3 * (nv - 1), v0, sizeof v0);
  assert_int_equal(c->fadj[3 * nf - 1], f0);
  assert_true((char *)c->vadj_edge < (char *)mem + bytes);
  check_hull(c, p, 40);
  free(mem);
}

static void test_indexed_input(void **state) {
  (void)state;
  // a pool of points; the hull of an id list reports pool ids
  double pool[100 * 3];
  for (int i = 0; i < 300; i++) {
    pool[i] = 2 * urand() - 1;
  }
  int ids[40];
  for (int i = 0; i < 40; i++) {
    ids[i] = 99 - 2 * i;
  }
  double sub[40 * 3];
  for (int i = 0; i < 40; i++) {
    geo_v3_copy(sub + 3 * i, pool + 3 * ids[i]);
  }
  geo_hull *h = geo_hull_new_indexed(pool, ids, 40, NULL, 0);
  geo_hull *g = geo_hull_new(sub, 40, NULL, 0);
  assert_non_null(h);
  assert_non_null(g);
  assert_int_equal(h->nvert, g->nvert);
  assert_int_equal(h->nface, g->nface);
  for (int v = 0; v < h->nvert; v++) {
    assert_int_equal(h->src[v], ids[g->src[v]]);
    assert_memory_equal(h->vert + 3 * v, pool + 3 * h->src[v], 3 * sizeof(double));
  }
  geo_hull_destroy(&h);
  geo_hull_destroy(&g);
  assert_null(geo_hull_new_indexed(pool, NULL, 40, NULL, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_clouds),
      cmocka_unit_test(test_sphere_points_all_vertices),
      cmocka_unit_test(test_cube_with_duplicates_and_coplanar_points),
      cmocka_unit_test(test_nearly_coplanar_box_surface),
      cmocka_unit_test(test_flat_input),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_copy_into_caller_storage),
      cmocka_unit_test(test_indexed_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
