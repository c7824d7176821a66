#include "sim_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_mass.h"
#include "geo_prim.h"
#include "geo_vec.h"

// the limits of ccsim_limits.h fit inside what the geometry library reads and builds
_Static_assert(SIM_MAX_MESH_TRIS <= GEO_MESH_MAX_TRI, "a model mesh the geometry cannot read");

void sim_contact_defaults(sim_contact_params *cp) {
  // defaults chosen for centimetre-scale parts of a few hundred grams (README, "Contact")
  if (!(cp->set & SIM_CP_K)) cp->k = 1e4;
  if (!(cp->set & SIM_CP_ALPHA)) cp->alpha = 0.2;
  if (!(cp->set & SIM_CP_N)) cp->n = 1.0;
  if (!(cp->set & SIM_CP_STANDOFF)) cp->standoff = 1e-3;
  if (!(cp->set & SIM_CP_MU)) cp->mu = 0.0;
  if (!(cp->set & SIM_CP_MU_DYNAMIC)) cp->mu_dynamic = cp->mu;
}

static int all_finite(const double *x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      return 0;
    }
  }
  return 1;
}

static int check_contact(const sim_contact_params *cp, const char *where, char *err,
                         size_t err_sz) {
  struct {
    unsigned bit;
    const char *name;
    double v, lo, hi;
  } f[] = {
      {SIM_CP_K, "k", cp->k, 0, 1e12},
      {SIM_CP_ALPHA, "alpha", cp->alpha, 0, 1e3},
      {SIM_CP_N, "n", cp->n, 1, 2},
      {SIM_CP_STANDOFF, "standoff", cp->standoff, 0, 1},
      {SIM_CP_MU, "mu", cp->mu, 0, 100},
      {SIM_CP_MU_DYNAMIC, "mu_dynamic", cp->mu_dynamic, 0, 100},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    if (!(cp->set & f[i].bit)) {
      continue;
    }
    if (!isfinite(f[i].v) || f[i].v < f[i].lo || f[i].v > f[i].hi) {
      ccsim_set_err(err, err_sz, "%s.%s = %g: must be finite and in [%g, %g]", where, f[i].name,
                    f[i].v, f[i].lo, f[i].hi);
      return -1;
    }
  }
  if ((cp->set & SIM_CP_N) && cp->n != 1.0 && cp->n != 1.5) {
    ccsim_set_err(err, err_sz, "%s.n = %g: must be 1 (polyhedra) or 1.5 (Hertz)", where, cp->n);
    return -1;
  }
  return 0;
}

// the body-frame mesh of a shape, or NULL with err filled (SIM_SHAPE_NONE: NULL, no error)
static geo_mesh *build_shape(const sim_shape_desc *s, const char *where, char *err,
                             size_t err_sz) {
  char gerr[256] = "";
  geo_mesh *mesh = NULL;
  switch (s->type) {
  case SIM_SHAPE_NONE:
    return NULL;
  case SIM_SHAPE_BOX:
    mesh = geo_mesh_box(s->size[0], s->size[1], s->size[2], gerr, sizeof gerr);
    break;
  case SIM_SHAPE_SPHERE:
    mesh = geo_mesh_sphere(s->radius, s->res[0], s->res[1], gerr, sizeof gerr);
    break;
  case SIM_SHAPE_CYLINDER:
    mesh = geo_mesh_cylinder(s->radius, s->height, s->res[0], gerr, sizeof gerr);
    break;
  case SIM_SHAPE_CONE:
    mesh = geo_mesh_cone(s->radius, s->height, s->res[0], s->res[1], gerr, sizeof gerr);
    break;
  case SIM_SHAPE_TORUS:
    mesh = geo_mesh_torus(s->major, s->minor, s->res[0], s->res[1], gerr, sizeof gerr);
    break;
  case SIM_SHAPE_MESH: {
    if (s->nvert <= 0 || s->ntri <= 0 || !s->vert || !s->tri) {
      ccsim_set_err(err, err_sz, "%s.shape.mesh: empty mesh", where);
      return NULL;
    }
    if (s->ntri > SIM_MAX_MESH_TRIS) {
      ccsim_set_err(err, err_sz, "%s.shape.mesh: %d triangles exceeds the limit of %d", where,
                    s->ntri, SIM_MAX_MESH_TRIS);
      return NULL;
    }
    int *tri = malloc(sizeof(int) * 3 * (size_t)s->ntri);
    if (!tri) {
      ccsim_set_err(err, err_sz, "%s.shape.mesh: out of memory", where);
      return NULL;
    }
    for (int i = 0; i < 3 * s->ntri; i++) {
      // out-of-range ids (including those past INT_MAX) are caught by geo_mesh_new
      tri[i] = s->tri[i] > (unsigned)s->nvert ? s->nvert : (int)s->tri[i];
    }
    mesh = geo_mesh_new(s->vert, s->nvert, tri, s->ntri, s->source ? s->source : "mesh", gerr,
                        sizeof gerr);
    free(tri);
    break;
  }
  default:
    ccsim_set_err(err, err_sz, "%s.shape: unknown shape type %d", where, (int)s->type);
    return NULL;
  }
  if (!mesh) {
    ccsim_set_err(err, err_sz, "%s.shape: %s", where, gerr);
  }
  return mesh;
}

// eigenvalues of symmetric a (3 x 3, row-major), ascending
static void sym_eigenvalues(const double a[9], double lam[3]) {
  double V[9];
  geo_sym3_eig(a, lam, V);
  for (int i = 0; i < 2; i++) {
    for (int k = 0; k < 2 - i; k++) {
      if (lam[k] > lam[k + 1]) {
        double tmp = lam[k];
        lam[k] = lam[k + 1], lam[k + 1] = tmp;
      }
    }
  }
}

// "[a, b, c]" for a diagonal given as 3 values, else the 3 x 3 as rows
static void format_inertia(char *buf, size_t sz, const double I[9], int n3) {
  if (n3) {
    snprintf(buf, sz, "[%g, %g, %g]", I[0], I[4], I[8]);
  } else {
    snprintf(buf, sz, "[[%g, %g, %g], [%g, %g, %g], [%g, %g, %g]]", I[0], I[1], I[2], I[3], I[4],
             I[5], I[6], I[7], I[8]);
  }
}

// A free body's inertia I (finite) must be one of a rigid body: symmetric, positive
// definite, principal moments within [SIM_MIN_INERTIA, SIM_MAX_INERTIA] and each at most
// the sum of the other two (a moment is the integral of m r^2 over two of the axes).
static int check_inertia(const double I[9], int n3, const char *where, char *err, size_t err_sz) {
  char val[200];
  format_inertia(val, sizeof val, I, n3);
  double scale = fabs(I[0]) + fabs(I[4]) + fabs(I[8]);
  for (int i = 0; i < 3; i++) {
    for (int j = i + 1; j < 3; j++) {
      double a = I[3 * i + j], b = I[3 * j + i];
      if (fabs(a - b) > SIM_INERTIA_REL * scale) {
        ccsim_set_err(err, err_sz,
                      "%s.inertia = %s: must be symmetric (row %d column %d is %g, row %d column "
                      "%d is %g)",
                      where, val, i, j, a, j, i, b);
        return -1;
      }
    }
  }
  double S[9], lam[3];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      S[3 * i + j] = 0.5 * (I[3 * i + j] + I[3 * j + i]);
    }
  }
  sym_eigenvalues(S, lam);
  char pm[120] = "";
  if (!n3) {
    snprintf(pm, sizeof pm, " (principal moments %g, %g, %g)", lam[0], lam[1], lam[2]);
  }
  if (!(lam[0] > 0)) {
    ccsim_set_err(err, err_sz, "%s.inertia = %s: must be positive definite%s", where, val, pm);
    return -1;
  }
  if (lam[0] < SIM_MIN_INERTIA || lam[2] > SIM_MAX_INERTIA) {
    ccsim_set_err(err, err_sz, "%s.inertia = %s: principal moments must be in [%g, %g] kg m^2%s",
                  where, val, SIM_MIN_INERTIA, SIM_MAX_INERTIA, pm);
    return -1;
  }
  // sorted: only the largest can exceed the sum of the others
  if (lam[0] + lam[1] < lam[2] - SIM_INERTIA_REL * (lam[0] + lam[1] + lam[2])) {
    ccsim_set_err(err, err_sz,
                  "%s.inertia = %s: principal moments must satisfy the triangle inequality "
                  "(Ixx + Iyy >= Izz, Iyy + Izz >= Ixx, Izz + Ixx >= Iyy; equality is a flat "
                  "plate)%s",
                  where, val, pm);
    return -1;
  }
  return 0;
}

static void invert3(double out[9], const double a[9]) {
  double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
               a[2] * (a[3] * a[7] - a[4] * a[6]);
  double id = 1.0 / det;
  out[0] = (a[4] * a[8] - a[5] * a[7]) * id;
  out[1] = (a[2] * a[7] - a[1] * a[8]) * id;
  out[2] = (a[1] * a[5] - a[2] * a[4]) * id;
  out[3] = (a[5] * a[6] - a[3] * a[8]) * id;
  out[4] = (a[0] * a[8] - a[2] * a[6]) * id;
  out[5] = (a[2] * a[3] - a[0] * a[5]) * id;
  out[6] = (a[3] * a[7] - a[4] * a[6]) * id;
  out[7] = (a[1] * a[6] - a[0] * a[7]) * id;
  out[8] = (a[0] * a[4] - a[1] * a[3]) * id;
}

// mass, inertia and COM of body i from what the scene gives and its shape
static int body_inertia(sim_model *m, int i, const sim_body_desc *b, const char *where,
                        char *err, size_t err_sz) {
  const geo_mesh *mesh = m->mesh[i];
  geo_mass gm;
  int have_gm = 0;
  if (mesh && mesh->closed) {
    char gerr[256] = "";
    if (geo_mass_properties(mesh, 1.0, &gm, gerr, sizeof gerr) == 0 && gm.volume > 0) {
      have_gm = 1;
    }
  }
  double *I = m->inertia + 9 * i;
  double *com = m->com + 3 * i;
  if (b->has_com) {
    geo_v3_copy(com, b->com);
  } else if (have_gm) {
    geo_v3_copy(com, gm.com);  // uniform density: the shape's centroid
  } else {
    geo_v3_set(com, 0, 0, 0);
  }
  if (b->mass > 0) {
    m->mass[i] = b->mass;
  } else if (b->density > 0 && have_gm) {
    m->mass[i] = b->density * gm.volume;
  } else if (b->type == SIM_BODY_FREE) {
    ccsim_set_err(err, err_sz,
                  "%s: a free body needs mass > 0, or density > 0 with a closed shape%s", where,
                  b->density > 0 ? " (its shape is missing or not closed)" : "");
    return -1;
  } else {
    m->mass[i] = 0;
  }
  double mi = m->mass[i];
  if (b->type == SIM_BODY_FREE && !(mi >= SIM_MIN_MASS && mi <= SIM_MAX_MASS)) {
    if (b->mass > 0) {
      ccsim_set_err(err, err_sz, "%s.mass = %g: must be finite and in [%g, %g] kg", where, mi,
                    SIM_MIN_MASS, SIM_MAX_MASS);
    } else {
      ccsim_set_err(err, err_sz,
                    "%s.density = %g: gives a mass of %g kg (density x volume %g m^3), which must "
                    "be in [%g, %g] kg",
                    where, b->density, mi, gm.volume, SIM_MIN_MASS, SIM_MAX_MASS);
    }
    return -1;
  }
  if (b->ninertia == 3) {
    memset(I, 0, 9 * sizeof(double));
    I[0] = b->inertia[0];
    I[4] = b->inertia[1];
    I[8] = b->inertia[2];
  } else if (b->ninertia == 9) {
    memcpy(I, b->inertia, 9 * sizeof(double));
  } else if (b->ninertia == 0 && have_gm) {
    // inertia of the unit-density shape scaled to this mass (uniform density)
    for (int k = 0; k < 9; k++) {
      I[k] = gm.inertia[k] * m->mass[i] / gm.volume;
    }
  } else if (b->ninertia == 0 && b->type != SIM_BODY_FREE) {
    memset(I, 0, 9 * sizeof(double));
    I[0] = I[4] = I[8] = 1.0;  // never used: fixed and kinematic bodies are not integrated
  } else if (b->ninertia == 0) {
    ccsim_set_err(err, err_sz,
                  "%s: inertia is missing and the body has no closed shape to take it from", where);
    return -1;
  } else {
    ccsim_set_err(err, err_sz, "%s.inertia: %d values; give 3 (diagonal) or 9 (row-major)", where,
                  b->ninertia);
    return -1;
  }
  if (!all_finite(I, 9)) {
    ccsim_set_err(err, err_sz, "%s.inertia: values must be finite", where);
    return -1;
  }
  if (b->type == SIM_BODY_FREE) {
    if (check_inertia(I, b->ninertia == 3, where, err, err_sz) != 0) {
      return -1;
    }
    invert3(m->inertia_inv + 9 * i, I);
  }
  return 0;
}

static int check_body(const sim_body_desc *b, const char *where, char *err, size_t err_sz) {
  if (b->type != SIM_BODY_FREE && b->type != SIM_BODY_FIXED && b->type != SIM_BODY_KINEMATIC) {
    ccsim_set_err(err, err_sz, "%s.type: unknown body type %d", where, (int)b->type);
    return -1;
  }
  struct {
    const char *name;
    const double *v;
    int n;
  } vecs[] = {{"pose.p", b->pos, 3},       {"pose.q", b->quat, 4},  {"velocity.v", b->vel, 3},
              {"velocity.w", b->omega, 3}, {"com", b->com, 3},      {"mass", &b->mass, 1},
              {"density", &b->density, 1}, {"inertia", b->inertia, 9}};
  for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; k++) {
    if (!all_finite(vecs[k].v, vecs[k].n)) {
      ccsim_set_err(err, err_sz, "%s.%s: values must be finite", where, vecs[k].name);
      return -1;
    }
  }
  if (b->mass < 0 || b->density < 0) {
    ccsim_set_err(err, err_sz, "%s: mass and density must not be negative", where);
    return -1;
  }
  const char *range = sim_motion_out_of_range(b->pos, b->vel, b->omega);
  if (range) {
    ccsim_set_err(err, err_sz, "%s: pose.p / velocity: %s", where, range);
    return -1;
  }
  double qn = sqrt(b->quat[0] * b->quat[0] + b->quat[1] * b->quat[1] + b->quat[2] * b->quat[2] +
                   b->quat[3] * b->quat[3]);
  if (qn != 0 && (qn < 1e-6 || qn > 1e6)) {
    ccsim_set_err(err, err_sz,
                  "%s.pose.q: norm %g is not near 1 (give a unit quaternion w, x, y, z)", where,
                  qn);
    return -1;
  }
  return check_contact(&b->contact, where, err, err_sz);
}

const char *sim_motion_out_of_range(const double p[3], const double v[3], const double w[3]) {
  if (p && geo_v3_norm(p) > SIM_MAX_COORD) {
    return "position farther than 1e6 m from the origin";
  }
  if (v && geo_v3_norm(v) > SIM_MAX_SPEED) {
    return "velocity above 1e6 m/s";
  }
  if (w && geo_v3_norm(w) > SIM_MAX_SPIN) {
    return "angular velocity above 1e6 rad/s";
  }
  return NULL;
}

const char *sim_input_out_of_range(const double f[3], const double t[3]) {
  if (f && geo_v3_norm(f) > SIM_MAX_FORCE) {
    return "force above 1e12 N";
  }
  if (t && geo_v3_norm(t) > SIM_MAX_TORQUE) {
    return "torque above 1e12 N m";
  }
  return NULL;
}

void sim_twist_between(const double p0[3], const double q0[4], const double p1[3],
                       const double q1[4], double dt, double v[3], double w[3]) {
  double dq[4], q0c[4] = {q0[0], -q0[1], -q0[2], -q0[3]};
  geo_v3_sub(v, p1, p0);
  geo_v3_scale(v, v, 1.0 / dt);
  geo_quat_mul(dq, q1, q0c);  // world-frame rotation from q0 to q1
  if (dq[0] < 0) {
    for (int j = 0; j < 4; j++) dq[j] = -dq[j];  // the short way round
  }
  double sn = sqrt(dq[1] * dq[1] + dq[2] * dq[2] + dq[3] * dq[3]);
  geo_v3_set(w, 0, 0, 0);
  if (sn > 0) {
    double angle = 2 * atan2(sn, dq[0]);
    for (int j = 0; j < 3; j++) w[j] = dq[1 + j] / sn * angle / dt;
  }
}

void sim_pose_advance(const double p0[3], const double q0[4], const double v[3], const double w[3],
                      double h, double pos[3], double quat[4]) {
  geo_v3_madd(pos, p0, h, v);
  double wn = geo_v3_norm(w), dq[4] = {1, 0, 0, 0};
  if (wn * h != 0) {
    double half = 0.5 * wn * h, sn = sin(half) / wn;
    dq[0] = cos(half), dq[1] = w[0] * sn, dq[2] = w[1] * sn, dq[3] = w[2] * sn;
  }
  geo_quat_mul(quat, dq, q0);  // world-frame rotation: left multiply
  geo_quat_normalize(quat);
}

void sim_model_path_pose(const sim_model *m, int b, double t, double pos[3], double quat[4]) {
  const double *w = m->path[b];
  int n = m->path_n[b];
  if (t <= w[0] || n == 1 || t >= w[SIM_PATH_STRIDE * (n - 1)]) {
    const double *at = t <= w[0] ? w : w + SIM_PATH_STRIDE * (n - 1);
    geo_v3_copy(pos, at + 1);
    memcpy(quat, at + 4, 4 * sizeof(double));
    return;
  }
  int lo = 0, hi = n - 1;  // w[lo].t <= t < w[hi].t
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (w[SIM_PATH_STRIDE * mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  const double *a = w + SIM_PATH_STRIDE * lo, *c = w + SIM_PATH_STRIDE * hi;
  // the twist that runs the segment, applied for the time since its start: the same
  // motion a kinematic body makes when driven from waypoint to waypoint
  double v[3], om[3], h = t - a[0];
  sim_twist_between(a + 1, a + 4, c + 1, c + 4, c[0] - a[0], v, om);
  sim_pose_advance(a + 1, a + 4, v, om, h, pos, quat);
}

// Copy and check body i's path: kinematic only, times finite, >= 0 and strictly rising,
// finite poses with non-zero quaternions (normalised here). The body starts where the
// path puts it at time 0, moving as its first segment does.
static int compile_path(sim_model *m, int i, const sim_body_desc *b, const char *where, char *err,
                        size_t err_sz) {
  if (b->type != SIM_BODY_KINEMATIC) {
    ccsim_set_err(err, err_sz, "%s.path: only kinematic bodies follow a path", where);
    return -1;
  }
  if (b->npath < 0 || b->npath > SIM_MAX_PATH || !b->path) {
    ccsim_set_err(err, err_sz, "%s.path: %d waypoints (give 1 to %d)", where, b->npath,
                  SIM_MAX_PATH);
    return -1;
  }
  double *w = malloc((size_t)b->npath * SIM_PATH_STRIDE * sizeof(double));
  if (!w) {
    ccsim_set_err(err, err_sz, "out of memory");
    return -1;
  }
  m->path[i] = w;
  memcpy(w, b->path, (size_t)b->npath * SIM_PATH_STRIDE * sizeof(double));
  for (int k = 0; k < b->npath; k++) {
    double *at = w + SIM_PATH_STRIDE * k;
    if (!all_finite(at, SIM_PATH_STRIDE)) {
      ccsim_set_err(err, err_sz, "%s.path[%d]: values must be finite", where, k);
      return -1;
    }
    const char *range = sim_motion_out_of_range(at + 1, NULL, NULL);
    if (range) {
      ccsim_set_err(err, err_sz, "%s.path[%d].p: %s", where, k, range);
      return -1;
    }
    if (at[0] < 0 || (k > 0 && !(at[0] > at[-SIM_PATH_STRIDE]))) {
      ccsim_set_err(err, err_sz, "%s.path[%d].t: %g; times must be >= 0 and strictly rising", where,
                    k, at[0]);
      return -1;
    }
    if (geo_quat_normalize(at + 4) == 0) {
      ccsim_set_err(err, err_sz, "%s.path[%d].q: the quaternion must not be zero", where, k);
      return -1;
    }
  }
  m->path_n[i] = b->npath;
  sim_model_path_pose(m, i, 0, m->pos0 + 3 * i, m->quat0 + 4 * i);
  int seg = 0;
  while (seg + 1 < b->npath && w[SIM_PATH_STRIDE * (seg + 1)] <= 0) seg++;
  geo_v3_set(m->vel0 + 3 * i, 0, 0, 0);
  geo_v3_set(m->omega0 + 3 * i, 0, 0, 0);
  if (seg + 1 < b->npath && w[SIM_PATH_STRIDE * seg] <= 0) {
    const double *a = w + SIM_PATH_STRIDE * seg, *c = a + SIM_PATH_STRIDE;
    sim_twist_between(a + 1, a + 4, c + 1, c + 4, c[0] - a[0], m->vel0 + 3 * i, m->omega0 + 3 * i);
  }
  return 0;
}

sim_model *sim_model_compile(const sim_scene *s, char *err, size_t err_sz) {
  if (!s || s->nbody < 0 || (s->nbody > 0 && !s->bodies)) {
    ccsim_set_err(err, err_sz, "scene: no bodies array");
    return NULL;
  }
  if (s->nbody > SIM_MAX_BODIES) {
    ccsim_set_err(err, err_sz, "scene: %d bodies exceeds the limit of %d", s->nbody,
                  SIM_MAX_BODIES);
    return NULL;
  }
  if (!all_finite(s->gravity, 3) || fabs(s->gravity[0]) > 1e4 || fabs(s->gravity[1]) > 1e4 ||
      fabs(s->gravity[2]) > 1e4) {
    ccsim_set_err(err, err_sz, "scene.gravity: must be finite and below 1e4 m/s^2");
    return NULL;
  }
  if (!isfinite(s->rtol) || !isfinite(s->atol) || !isfinite(s->max_step) || s->rtol < 0 ||
      s->atol < 0 || s->max_step < 0 || (s->rtol > 0 && s->rtol < 1e-15) || s->rtol > 0.1) {
    ccsim_set_err(
        err, err_sz,
        "scene.integrator: rtol must be in [1e-15, 0.1], atol and max_step finite and >= 0");
    return NULL;
  }
  // 0 selects the default; a step far below a microsecond would make one request run for
  // ages (1e-300 s: never finish) while holding a worker
  if (!isfinite(s->rigid_dt) || s->rigid_dt < 0 || s->rigid_dt > 1 ||
      (s->rigid_dt > 0 && s->rigid_dt < SIM_MIN_RIGID_DT)) {
    ccsim_set_err(err, err_sz, "scene.rigid_dt = %g s: must be in [%g, 1] s (0: the default)",
                  s->rigid_dt, SIM_MIN_RIGID_DT);
    return NULL;
  }
  if (s->friction_dirs < 0 || s->friction_dirs > 64) {
    ccsim_set_err(err, err_sz, "scene.friction_directions: must be in [0, 64]");
    return NULL;
  }
  if (s->mode != SIM_MODE_COMPLIANT && s->mode != SIM_MODE_RIGID) {
    ccsim_set_err(err, err_sz, "scene.mode: unknown mode %d", (int)s->mode);
    return NULL;
  }
  if (check_contact(&s->contact, "scene.contact", err, err_sz) != 0) {
    return NULL;
  }

  sim_model *m = calloc(1, sizeof *m);
  if (!m) {
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  int n = s->nbody;
  size_t nb = n > 0 ? (size_t)n : 1;
  m->nbody = n;
  geo_v3_copy(m->gravity, s->gravity);
  m->rtol = s->rtol > 0 ? s->rtol : 1e-6;
  m->atol = s->atol > 0 ? s->atol : 1e-9;
  m->max_step = s->max_step;
  if (s->linsolver != SIM_LINSOLVER_AUTO && s->linsolver != SIM_LINSOLVER_DENSE &&
      s->linsolver != SIM_LINSOLVER_KLU) {
    ccsim_set_err(err, err_sz, "scene.integrator.linear_solver: unknown solver %d",
                  (int)s->linsolver);
    sim_model_destroy(&m);
    return NULL;
  }
  m->linsolver = s->linsolver;
  m->mode = s->mode;
  m->rigid_dt = s->rigid_dt > 0 ? s->rigid_dt : 1e-3;
  m->friction_dirs = s->friction_dirs > 0 ? s->friction_dirs : 4;
  m->contact = s->contact;
  sim_contact_defaults(&m->contact);

  m->name = calloc(nb, sizeof *m->name);
  m->type = calloc(nb, sizeof *m->type);
  m->state_index = calloc(nb, sizeof(int));
  m->mass = calloc(nb, sizeof(double));
  m->inertia = calloc(nb * 9, sizeof(double));
  m->inertia_inv = calloc(nb * 9, sizeof(double));
  m->com = calloc(nb * 3, sizeof(double));
  m->pos0 = calloc(nb * 3, sizeof(double));
  m->quat0 = calloc(nb * 4, sizeof(double));
  m->vel0 = calloc(nb * 3, sizeof(double));
  m->omega0 = calloc(nb * 3, sizeof(double));
  m->body_contact = calloc(nb, sizeof *m->body_contact);
  m->shape_type = calloc(nb, sizeof *m->shape_type);
  m->mesh = calloc(nb, sizeof *m->mesh);
  m->bvh = calloc(nb, sizeof *m->bvh);
  m->bound_r = calloc(nb, sizeof(double));
  m->path_n = calloc(nb, sizeof(int));
  m->path = calloc(nb, sizeof *m->path);
  if (!m->path_n || !m->path || !m->bvh || !m->bound_r || !m->name || !m->type || !m->state_index ||
      !m->mass || !m->inertia || !m->inertia_inv || !m->com || !m->pos0 || !m->quat0 || !m->vel0 ||
      !m->omega0 || !m->body_contact || !m->shape_type || !m->mesh) {
    ccsim_set_err(err, err_sz, "out of memory");
    sim_model_destroy(&m);
    return NULL;
  }

  for (int i = 0; i < n; i++) {
    const sim_body_desc *b = &s->bodies[i];
    char where[96];
    snprintf(where, sizeof where, "bodies[%d]", i);
    if (!b->name || !b->name[0]) {
      ccsim_set_err(err, err_sz, "%s.name: missing", where);
      goto fail;
    }
    if (strlen(b->name) >= SIM_NAME_MAX) {
      ccsim_set_err(err, err_sz, "%s.name: longer than %d characters", where, SIM_NAME_MAX - 1);
      goto fail;
    }
    snprintf(where, sizeof where, "bodies[%d] (\"%s\")", i, b->name);
    for (int j = 0; j < i; j++) {
      if (strcmp(m->name[j], b->name) == 0) {
        ccsim_set_err(err, err_sz, "%s.name: the name is already used by bodies[%d]", where, j);
        goto fail;
      }
    }
    if (check_body(b, where, err, err_sz) != 0) {
      goto fail;
    }
    snprintf(m->name[i], SIM_NAME_MAX, "%s", b->name);
    m->type[i] = b->type;
    m->shape_type[i] = b->shape.type;
    m->body_contact[i] = b->contact;
    if (b->shape.type != SIM_SHAPE_NONE) {
      m->mesh[i] = build_shape(&b->shape, where, err, err_sz);
      if (!m->mesh[i]) {
        goto fail;
      }
      // contact's inside/outside tests and hulls, and mass properties, take the surface
      // as a solid's boundary wound outward: a hole lets bodies fall in, a flipped
      // triangle or an inside-out mesh pushes the wrong way, whatever mass is given
      char gerr[768] = "";
      if (geo_mesh_check_solid(m->mesh[i], gerr, sizeof gerr) != 0) {
        ccsim_set_err(err, err_sz, "%s.shape%s: %s", where,
                      b->shape.type == SIM_SHAPE_MESH ? ".mesh" : "", gerr);
        goto fail;
      }
    }
    if (body_inertia(m, i, b, where, err, err_sz) != 0) {
      goto fail;
    }
    if (m->mesh[i]) {
      char gerr[256] = "";
      m->bvh[i] = geo_bvh_new(m->mesh[i], gerr, sizeof gerr);
      if (!m->bvh[i]) {
        ccsim_set_err(err, err_sz, "%s.shape: %s", where, gerr);
        goto fail;
      }
      const geo_mesh *mesh = m->mesh[i];
      for (int v = 0; v < mesh->nvert; v++) {
        double r = geo_v3_dist(mesh->vert + 3 * v, m->com + 3 * i);
        if (r > m->bound_r[i]) m->bound_r[i] = r;
      }
    }
    geo_v3_copy(m->pos0 + 3 * i, b->pos);
    double *q = m->quat0 + 4 * i;
    memcpy(q, b->quat, 4 * sizeof(double));
    if (geo_quat_normalize(q) == 0) {
      q[0] = 1;  // the zero quaternion (protobuf's default) means identity
    }
    geo_v3_copy(m->vel0 + 3 * i, b->vel);
    geo_v3_copy(m->omega0 + 3 * i, b->omega);
    if (b->npath != 0 && compile_path(m, i, b, where, err, err_sz) != 0) {
      goto fail;
    }
    if (b->type == SIM_BODY_FREE) {
      m->state_index[i] = SIM_NQ * m->nfree++;
    } else {
      m->state_index[i] = -1;
    }
  }
  return m;

fail:
  sim_model_destroy(&m);
  return NULL;
}

void sim_model_destroy(sim_model **pm) {
  if (!pm || !*pm) {
    return;
  }
  sim_model *m = *pm;
  for (int i = 0; i < m->nbody; i++) {
    if (m->bvh) geo_bvh_destroy(&m->bvh[i]);
    if (m->mesh) geo_mesh_destroy(&m->mesh[i]);
  }
  free(m->name);
  free(m->type);
  free(m->state_index);
  free(m->mass);
  free(m->inertia);
  free(m->inertia_inv);
  free(m->com);
  free(m->pos0);
  free(m->quat0);
  free(m->vel0);
  free(m->omega0);
  free(m->body_contact);
  free(m->shape_type);
  free(m->mesh);
  free(m->bvh);
  free(m->bound_r);
  for (int i = 0; m->path && i < m->nbody; i++) free(m->path[i]);
  free(m->path);
  free(m->path_n);
  free(m);
  *pm = NULL;
}

int sim_model_body(const sim_model *m, const char *name) {
  for (int i = 0; i < m->nbody; i++) {
    if (strcmp(m->name[i], name) == 0) {
      return i;
    }
  }
  return -1;
}
