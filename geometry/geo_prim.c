// Generated primitive meshes (inscribed tessellations). Layout conventions in geo_prim.h.
#include "geo_err.h"
#include "geo_prim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const double kTau = 6.283185307179586476925286766559;

static int check_size(const char *prim, const char *what, double x, char *err, size_t err_sz) {
  if (!isfinite(x) || !(x > 0.0) || x > GEO_MESH_MAX_COORD) {
    geo_set_err(err, err_sz, "%s: %s = %g must be finite, > 0 and <= %g m", prim, what, x,
            GEO_MESH_MAX_COORD);
    return -1;
  }
  return 0;
}

static int check_res(const char *prim, const char *what, int *n, int def, int min, char *err,
                     size_t err_sz) {
  if (*n <= 0) *n = def;
  if (*n < min || *n > GEO_PRIM_MAX_RES) {
    geo_set_err(err, err_sz, "%s: %s = %d must be in [%d, %d] (or <= 0 for the default %d)", prim,
            what, *n, min, GEO_PRIM_MAX_RES, def);
    return -1;
  }
  return 0;
}

static long long res_or(int n, int def) {
  return n > 0 ? n : def;
}

long long geo_sphere_triangles(int slices, int stacks) {
  // a fan at each pole, two triangles per quad between the stacks - 1 rings
  return 2 * res_or(slices, GEO_SPHERE_DEFAULT_SLICES) *
         (res_or(stacks, GEO_SPHERE_DEFAULT_STACKS) - 1);
}

long long geo_cylinder_triangles(int segments) {
  return 4 * res_or(segments, GEO_CYLINDER_DEFAULT_SEGMENTS);  // side quads and two caps
}

long long geo_cone_triangles(int segments, int rings) {
  // the base fan, rings - 1 bands of quads and the apex fan
  return 2 * res_or(segments, GEO_CONE_DEFAULT_SEGMENTS) * res_or(rings, GEO_CONE_DEFAULT_RINGS);
}

long long geo_torus_triangles(int nmajor, int nminor) {
  return 2 * res_or(nmajor, GEO_TORUS_DEFAULT_MAJOR) * res_or(nminor, GEO_TORUS_DEFAULT_MINOR);
}

// A triangle list under construction. For the convex primitives each triangle is oriented
// so that its normal points away from a reference point strictly inside the solid (every
// face plane of a convex polyhedron has interior points on its inner side), which gives
// counter-clockwise-from-outside without hand-ordering every face. The torus is not convex:
// its quads are ordered by hand.
typedef struct builder {
  double *v;
  int *t;
  int nv, nt;
} builder;

// Checked before allocating: resolutions up to GEO_PRIM_MAX_RES can ask for more.
static int check_count(const char *prim, long long nt, char *err, size_t err_sz) {
  if (nt > GEO_MESH_MAX_TRI) {
    geo_set_err(err, err_sz, "%s: too many triangles (%lld > cap %d)", prim, nt, GEO_MESH_MAX_TRI);
    return -1;
  }
  return 0;
}

static int builder_init(builder *b, int nv, int nt) {
  b->v = malloc((size_t)nv * 3 * sizeof *b->v);
  b->t = malloc((size_t)nt * 3 * sizeof *b->t);
  b->nv = 0;
  b->nt = 0;
  return (b->v && b->t) ? 0 : -1;
}

static void builder_fini(builder *b) {
  free(b->v);
  free(b->t);
}

static void add_v(builder *b, double x, double y, double z) {
  b->v[3 * b->nv] = x;
  b->v[3 * b->nv + 1] = y;
  b->v[3 * b->nv + 2] = z;
  b->nv++;
}

static void add_t(builder *b, int i, int j, int k, const double *ref) {  // ref NULL: as given
  const double *p = b->v + 3 * i, *q = b->v + 3 * j, *r = b->v + 3 * k;
  double e1[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
  double e2[3] = {r[0] - p[0], r[1] - p[1], r[2] - p[2]};
  double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                 e1[0] * e2[1] - e1[1] * e2[0]};
  double dot = 1.0;
  if (ref) {
    double c[3] = {(p[0] + q[0] + r[0]) / 3 - ref[0], (p[1] + q[1] + r[1]) / 3 - ref[1],
                   (p[2] + q[2] + r[2]) / 3 - ref[2]};
    dot = n[0] * c[0] + n[1] * c[1] + n[2] * c[2];
  }
  int *t = b->t + 3 * b->nt++;
  t[0] = i;
  if (dot >= 0) {
    t[1] = j;
    t[2] = k;
  } else {
    t[1] = k;
    t[2] = j;
  }
}

// quad a-b-c-d (a cycle) as triangles (a, b, c) and (a, c, d)
static void add_q(builder *b, int a, int bb, int c, int d, const double *ref) {
  add_t(b, a, bb, c, ref);
  add_t(b, a, c, d, ref);
}

static geo_mesh *finish(builder *b, const char *src, char *err, size_t err_sz) {
  geo_mesh *m = geo_mesh_new(b->v, b->nv, b->t, b->nt, src, err, err_sz);
  builder_fini(b);
  return m;
}

static geo_mesh *oom(builder *b, const char *src, char *err, size_t err_sz) {
  builder_fini(b);
  geo_set_err(err, err_sz, "%s: out of memory", src);
  return NULL;
}

geo_mesh *geo_mesh_box(double sx, double sy, double sz, char *err, size_t err_sz) {
  if (check_size("box", "sx", sx, err, err_sz) || check_size("box", "sy", sy, err, err_sz) ||
      check_size("box", "sz", sz, err, err_sz))
    return NULL;
  builder b;
  if (builder_init(&b, 8, GEO_BOX_TRIANGLES)) return oom(&b, "box", err, err_sz);
  for (int id = 0; id < 8; id++)
    add_v(&b, (id & 1) ? 0.5 * sx : -0.5 * sx, (id & 2) ? 0.5 * sy : -0.5 * sy,
          (id & 4) ? 0.5 * sz : -0.5 * sz);
  static const double o[3] = {0, 0, 0};
  // each face: its four corners in cyclic order
  static const int f[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4},
                              {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};
  for (int i = 0; i < 6; i++) add_q(&b, f[i][0], f[i][1], f[i][2], f[i][3], o);
  return finish(&b, "box", err, err_sz);
}

geo_mesh *geo_mesh_sphere(double r, int slices, int stacks, char *err, size_t err_sz) {
  if (check_size("sphere", "r", r, err, err_sz) ||
      check_res("sphere", "slices", &slices, GEO_SPHERE_DEFAULT_SLICES, 3, err, err_sz) ||
      check_res("sphere", "stacks", &stacks, GEO_SPHERE_DEFAULT_STACKS, 2, err, err_sz))
    return NULL;
  int n = slices, rings = stacks - 1;
  long long nt = geo_sphere_triangles(slices, stacks);
  if (check_count("sphere", nt, err, err_sz)) return NULL;
  builder b;
  if (builder_init(&b, 2 + rings * n, (int)nt)) return oom(&b, "sphere", err, err_sz);
  static const double o[3] = {0, 0, 0};
  add_v(&b, 0, 0, r);
  for (int i = 1; i <= rings; i++) {
    double th = 0.5 * kTau * i / stacks, rho = r * sin(th), z = r * cos(th);
    for (int j = 0; j < n; j++) {
      double ph = kTau * j / n;
      add_v(&b, rho * cos(ph), rho * sin(ph), z);
    }
  }
  int south = b.nv;
  add_v(&b, 0, 0, -r);
  for (int j = 0; j < n; j++) add_t(&b, 0, 1 + j, 1 + (j + 1) % n, o);
  for (int i = 1; i < rings; i++) {
    int a0 = 1 + (i - 1) * n, b0 = 1 + i * n;
    for (int j = 0; j < n; j++) {
      int j1 = (j + 1) % n;
      add_q(&b, a0 + j, a0 + j1, b0 + j1, b0 + j, o);
    }
  }
  int l0 = 1 + (rings - 1) * n;
  for (int j = 0; j < n; j++) add_t(&b, south, l0 + j, l0 + (j + 1) % n, o);
  return finish(&b, "sphere", err, err_sz);
}

geo_mesh *geo_mesh_cylinder(double r, double h, int segments, char *err, size_t err_sz) {
  if (check_size("cylinder", "r", r, err, err_sz) ||
      check_size("cylinder", "h", h, err, err_sz) ||
      check_res("cylinder", "segments", &segments, GEO_CYLINDER_DEFAULT_SEGMENTS, 3, err, err_sz))
    return NULL;
  int n = segments;
  builder b;
  long long nt = geo_cylinder_triangles(segments);
  if (check_count("cylinder", nt, err, err_sz)) return NULL;
  if (builder_init(&b, 2 * n + 2, (int)nt)) return oom(&b, "cylinder", err, err_sz);
  static const double o[3] = {0, 0, 0};
  for (int s = 0; s < 2; s++)
    for (int j = 0; j < n; j++) {
      double ph = kTau * j / n;
      add_v(&b, r * cos(ph), r * sin(ph), s ? 0.5 * h : -0.5 * h);
    }
  add_v(&b, 0, 0, -0.5 * h);
  add_v(&b, 0, 0, 0.5 * h);
  for (int j = 0; j < n; j++) {
    int j1 = (j + 1) % n;
    add_q(&b, j, j1, n + j1, n + j, o);
    add_t(&b, 2 * n, j, j1, o);
    add_t(&b, 2 * n + 1, n + j, n + j1, o);
  }
  return finish(&b, "cylinder", err, err_sz);
}

geo_mesh *geo_mesh_cone(double r, double h, int segments, int rings, char *err, size_t err_sz) {
  if (check_size("cone", "r", r, err, err_sz) || check_size("cone", "h", h, err, err_sz) ||
      check_res("cone", "segments", &segments, GEO_CONE_DEFAULT_SEGMENTS, 3, err, err_sz) ||
      check_res("cone", "rings", &rings, GEO_CONE_DEFAULT_RINGS, 1, err, err_sz))
    return NULL;
  int n = segments;
  builder b;
  long long nt = geo_cone_triangles(segments, rings);
  if (check_count("cone", nt, err, err_sz)) return NULL;
  if (builder_init(&b, rings * n + 2, (int)nt)) return oom(&b, "cone", err, err_sz);
  const double ref[3] = {0, 0, 0.25 * h};  // the centroid: inside, sees every face
  for (int i = 0; i < rings; i++) {
    double z = h * i / rings, rho = r * (double)(rings - i) / rings;
    for (int j = 0; j < n; j++) {
      double ph = kTau * j / n;
      add_v(&b, rho * cos(ph), rho * sin(ph), z);
    }
  }
  int apex = b.nv;
  add_v(&b, 0, 0, h);
  int base = b.nv;
  add_v(&b, 0, 0, 0);
  for (int j = 0; j < n; j++) {
    int j1 = (j + 1) % n;
    add_t(&b, base, j, j1, ref);
    for (int i = 0; i + 1 < rings; i++)
      add_q(&b, i * n + j, i * n + j1, (i + 1) * n + j1, (i + 1) * n + j, ref);
    add_t(&b, apex, (rings - 1) * n + j, (rings - 1) * n + j1, ref);
  }
  return finish(&b, "cone", err, err_sz);
}

geo_mesh *geo_mesh_torus(double R, double r, int nmajor, int nminor, char *err, size_t err_sz) {
  if (check_size("torus", "R", R, err, err_sz) || check_size("torus", "r", r, err, err_sz) ||
      check_res("torus", "nmajor", &nmajor, GEO_TORUS_DEFAULT_MAJOR, 3, err, err_sz) ||
      check_res("torus", "nminor", &nminor, GEO_TORUS_DEFAULT_MINOR, 3, err, err_sz))
    return NULL;
  if (!(R > r)) {
    geo_set_err(err, err_sz, "torus: major radius R = %g must exceed minor radius r = %g", R, r);
    return NULL;
  }
  if (R + r > GEO_MESH_MAX_COORD) {
    geo_set_err(err, err_sz, "torus: R + r = %g exceeds %g m", R + r, GEO_MESH_MAX_COORD);
    return NULL;
  }
  int n = nmajor, m = nminor;
  long long nt = geo_torus_triangles(nmajor, nminor);
  if (check_count("torus", nt, err, err_sz)) return NULL;
  builder b;
  if (builder_init(&b, n * m, (int)nt)) return oom(&b, "torus", err, err_sz);
  for (int i = 0; i < n; i++) {
    double u = kTau * i / n;
    for (int j = 0; j < m; j++) {
      double v = kTau * j / m, rho = R + r * cos(v);
      add_v(&b, rho * cos(u), rho * sin(u), r * sin(v));
    }
  }
  for (int i = 0; i < n; i++) {
    int i1 = (i + 1) % n;
    for (int j = 0; j < m; j++) {
      int j1 = (j + 1) % m;
      // (u, v) -> (u+, v) -> (u+, v+) -> (u, v+) is counter-clockwise seen from outside:
      // dP/du x dP/dv = r (R + r cos v) (cos u cos v, sin u cos v, sin v), the outward normal
      add_q(&b, i * m + j, i1 * m + j, i1 * m + j1, i * m + j1, NULL);
    }
  }
  return finish(&b, "torus", err, err_sz);
}
