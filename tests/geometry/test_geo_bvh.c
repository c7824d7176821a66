// Hierarchy structure: every triangle in exactly one leaf, boxes, spheres and hull vertex
// sets containing their subtrees (checked here by brute force, independently of
// geo_bvh_check), the triangle kernel's per-triangle data, logarithmic depth, rejected input.
// ctest-label: unit
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "geo_bvh.h"
#include "geo_prim.h"

static unsigned long long rng = 0x0123456789ABCDEFull;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

// The kernel data of every triangle equals, bit for bit, what the query kernel computed
// from the corners before it read tri_data (written out here once more): the kernel's
// answers depend on it being the same bits.
static void check_tri_data(const geo_mesh *m, const geo_bvh *b) {
  for (int t = 0; t < m->ntri; t++) {
    const geo_tri_data *td = &b->tri_data[t];
    const int *id = m->tri + 3 * t;
    const double *n = m->tri_normal + 3 * t;
    for (int k = 0; k < 3; k++) {
      int k1 = (k + 1) % 3;
      const double *u = m->vert + 3 * id[k], *v = m->vert + 3 * id[k1];
      double e[3] = {v[0] - u[0], v[1] - u[1], v[2] - u[2]};
      double mk[3] = {n[1] * e[2] - n[2] * e[1], n[2] * e[0] - n[0] * e[2],
                      n[0] * e[1] - n[1] * e[0]};
      for (int i = 0; i < 3; i++) {
        assert_true(td->m[3 * k + i] == mk[i]);
        assert_true(td->mid[3 * k + i] == u[i] + 0.5 * (v[i] - u[i]));
      }
      assert_true(td->mn2[k] == mk[0] * mk[0] + mk[1] * mk[1] + mk[2] * mk[2]);
      // the side's offset and inverse length, as the hull test reads them
      double len = sqrt(mk[0] * mk[0] + mk[1] * mk[1] + mk[2] * mk[2]);
      assert_true(b->tri_side_off[6 * t + 2 * k] == mk[0] * u[0] + mk[1] * u[1] + mk[2] * u[2]);
      assert_true(b->tri_side_off[6 * t + 2 * k + 1] == (len > 0.0 ? 1.0 / len : 0.0));
      // side k from its lower vertex id
      const double *lo = id[k] < id[k1] ? u : v, *hi = id[k] < id[k1] ? v : u;
      double d[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
      for (int i = 0; i < 3; i++) assert_true(td->ed[3 * k + i] == d[i]);
      assert_true(td->en2[k] == d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
    const double *v0 = m->vert + 3 * id[0], *v1 = m->vert + 3 * id[1], *v2 = m->vert + 3 * id[2];
    double e1[3], e2[3];
    for (int i = 0; i < 3; i++) {
      e1[i] = v1[i] - v0[i];
      e2[i] = v2[i] - v0[i];
      assert_true(td->e1[i] == e1[i]);
      assert_true(td->e2[i] == e2[i]);
    }
    double a = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    double bb = e1[0] * e2[0] + e1[1] * e2[1] + e1[2] * e2[2];
    double c = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
    assert_true(td->gram[0] == a);
    assert_true(td->gram[1] == bb);
    assert_true(td->gram[2] == c);
    assert_true(td->gram[3] == a * c - bb * bb);
  }
}

// brute-force checks of one hierarchy
static void check_tree(const geo_mesh *m, const geo_bvh *b) {
  char err[256];
  int crc = geo_bvh_check(b, err, sizeof err);
  if (crc != 0) print_error("%s\n", err);
  assert_int_equal(crc, 0);
  assert_int_equal(b->nnode, 2 * m->ntri - 1);
  assert_true(b->depth <= 64);
  int *seen = calloc((size_t)m->ntri, sizeof *seen);
  for (int id = 0; id < b->nnode; id++) {
    const geo_bvh_node *nd = &b->node[id];
    if (nd->tri >= 0) {
      seen[nd->tri]++;
      assert_int_equal(nd->count, 1);
    }
    // axes orthonormal
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        double d = 0;
        for (int k = 0; k < 3; k++) d += nd->ax[3 * i + k] * nd->ax[3 * j + k];
        assert_double_near(d, i == j ? 1.0 : 0.0, 1e-12);
      }
    }
    // random directions: the hull vertex set attains the subtree's support, and the box
    // and sphere contain every vertex of the subtree
    for (int trial = 0; trial < 4; trial++) {
      double dir[3] = {urand() - 0.5, urand() - 0.5, urand() - 0.5};
      double sub = -INFINITY, hull = -INFINITY;
      for (int i = 0; i < nd->count; i++) {
        const int *t = m->tri + 3 * b->tri_order[nd->first + i];
        for (int k = 0; k < 3; k++) {
          const double *v = m->vert + 3 * t[k];
          sub = fmax(sub, dir[0] * v[0] + dir[1] * v[1] + dir[2] * v[2]);
        }
      }
      for (int i = 0; i < nd->hull_n; i++) {
        const double *v = m->vert + 3 * b->hull_vert[nd->hull_first + i];
        hull = fmax(hull, dir[0] * v[0] + dir[1] * v[1] + dir[2] * v[2]);
      }
      assert_double_near(hull, sub, 1e-12);
    }
    for (int i = 0; i < nd->count; i++) {
      const int *t = m->tri + 3 * b->tri_order[nd->first + i];
      for (int k = 0; k < 3; k++) {
        const double *v = m->vert + 3 * t[k];
        double d[3] = {v[0] - nd->c[0], v[1] - nd->c[1], v[2] - nd->c[2]};
        assert_true(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) <= nd->r);
        for (int a = 0; a < 3; a++) {
          double s = d[0] * nd->ax[3 * a] + d[1] * nd->ax[3 * a + 1] + d[2] * nd->ax[3 * a + 2];
          assert_true(fabs(s) <= nd->h[a]);
        }
      }
    }
    if (nd->tri < 0) {
      // children partition the parent's range
      const geo_bvh_node *l = &b->node[nd->left], *r = &b->node[nd->right];
      assert_int_equal(l->first, nd->first);
      assert_int_equal(r->first, nd->first + l->count);
      assert_int_equal(l->count + r->count, nd->count);
      assert_true(l->count > 0 && r->count > 0);
    }
  }
  for (int t = 0; t < m->ntri; t++) assert_int_equal(seen[t], 1);
  free(seen);
  check_tri_data(m, b);
}

static void test_primitives(void **state) {
  (void)state;
  char err[256];
  geo_mesh *ms[5] = {
      geo_mesh_box(0.3, 0.2, 0.1, err, sizeof err),
      geo_mesh_sphere(0.5, 24, 12, err, sizeof err),
      geo_mesh_cone(0.06, 0.2, 64, 16, err, sizeof err),
      geo_mesh_torus(0.05, 0.015, 48, 24, err, sizeof err),
      geo_mesh_cylinder(0.1, 0.5, 32, err, sizeof err),
  };
  for (int i = 0; i < 5; i++) {
    assert_non_null(ms[i]);
    geo_bvh *b = geo_bvh_new(ms[i], err, sizeof err);
    assert_non_null(b);
    assert_ptr_equal(geo_bvh_mesh(b), ms[i]);
    check_tree(ms[i], b);
    // balanced enough: depth within a small factor of log2(ntri)
    assert_true(b->depth <= 3 * (int)ceil(log2((double)ms[i]->ntri + 1)) + 2);
    geo_bvh_destroy(&b);
    assert_null(b);
    geo_mesh_destroy(&ms[i]);
  }
}

// a triangle soup with clustered, badly spread sizes
static void test_random_soup(void **state) {
  (void)state;
  char err[256];
  int nt = 500;
  double *v = malloc((size_t)nt * 9 * sizeof *v);
  int *t = malloc((size_t)nt * 3 * sizeof *t);
  for (int i = 0; i < nt; i++) {
    double c[3], s = pow(10.0, -3.0 * urand());
    for (int k = 0; k < 3; k++) c[k] = (i % 3 == 0 ? 100.0 : 1.0) * urand();
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 3; k++) v[9 * i + 3 * j + k] = c[k] + s * (urand() - 0.5);
      t[3 * i + j] = 3 * i + j;
    }
  }
  geo_mesh *m = geo_mesh_new(v, 3 * nt, t, nt, "soup", err, sizeof err);
  assert_non_null(m);
  geo_bvh *b = geo_bvh_new(m, err, sizeof err);
  assert_non_null(b);
  check_tree(m, b);
  geo_bvh_destroy(&b);
  geo_mesh_destroy(&m);
  free(v);
  free(t);
}

static void test_bad_input(void **state) {
  (void)state;
  char err[256] = "";
  assert_null(geo_bvh_new(NULL, err, sizeof err));
  assert_true(strlen(err) > 0);
  geo_bvh_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_primitives),
      cmocka_unit_test(test_random_soup),
      cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
