// Scene messages into the core: a decoded Scene compiled into a sim_model, every number
// checked with its field path in the error, and the triangle counts the limits compare.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_mesh.h"
#include "geo_prim.h"
#include "wire.h"

int wire_vec3_get(const Ccsim__Vec3 *v, double out[3], const double dflt[3]) {
  if (!v) {
    memcpy(out, dflt, 3 * sizeof(double));
    return 0;
  }
  out[0] = v->x, out[1] = v->y, out[2] = v->z;
  return isfinite(out[0]) && isfinite(out[1]) && isfinite(out[2]) ? 0 : -1;
}

int wire_quat_get(const Ccsim__Quat *q, double out[4]) {
  if (!q) {
    out[0] = 1, out[1] = out[2] = out[3] = 0;
    return 0;
  }
  out[0] = q->w, out[1] = q->x, out[2] = q->y, out[3] = q->z;
  for (int k = 0; k < 4; k++) {
    if (!isfinite(out[k])) {
      return -1;
    }
  }
  return 0;
}

static void read_contact(const Ccsim__ContactParams *c, sim_contact_params *out) {
  memset(out, 0, sizeof *out);
  if (!c) {
    return;
  }
#define TAKE(field, bit)       \
  if (c->has_##field) {        \
    out->field = c->field;     \
    out->set |= bit;           \
  }
  TAKE(k, SIM_CP_K)
  TAKE(alpha, SIM_CP_ALPHA)
  TAKE(n, SIM_CP_N)
  TAKE(standoff, SIM_CP_STANDOFF)
  TAKE(mu, SIM_CP_MU)
  TAKE(mu_dynamic, SIM_CP_MU_DYNAMIC)
#undef TAKE
}

// positive finite length [m] below 1 km
static int length_ok(double x) { return isfinite(x) && x > 0 && x < 1e3; }

// resolution fields: 0 = default; otherwise a sane tessellation count
static int res_ok(uint32_t r) {
  return r <= GEO_PRIM_MAX_RES;
}

long long wire_shape_triangles(const Ccsim__Shape *s) {
  if (!s) {
    return 0;
  }
  switch (s->kind_case) {
    case CCSIM__SHAPE__KIND_BOX:
      return GEO_BOX_TRIANGLES;
    case CCSIM__SHAPE__KIND_SPHERE:
      return res_ok(s->sphere->slices) && res_ok(s->sphere->stacks)
                 ? geo_sphere_triangles((int)s->sphere->slices, (int)s->sphere->stacks)
                 : -1;
    case CCSIM__SHAPE__KIND_CYLINDER:
      return res_ok(s->cylinder->segments) ? geo_cylinder_triangles((int)s->cylinder->segments)
                                           : -1;
    case CCSIM__SHAPE__KIND_CONE:
      return res_ok(s->cone->segments) && res_ok(s->cone->rings)
                 ? geo_cone_triangles((int)s->cone->segments, (int)s->cone->rings)
                 : -1;
    case CCSIM__SHAPE__KIND_TORUS:
      return res_ok(s->torus->major_segments) && res_ok(s->torus->minor_segments)
                 ? geo_torus_triangles((int)s->torus->major_segments, (int)s->torus->minor_segments)
                 : -1;
    case CCSIM__SHAPE__KIND_MESH:
      return s->mesh->has_file ? geo_mesh_file_triangles(s->mesh->file.data, s->mesh->file.len,
                                                         s->mesh->source)
                               : (long long)(s->mesh->n_triangles / 3);
    default:
      return 0;
  }
}

long long wire_scene_triangles(const Ccsim__Scene *sc) {
  long long tris = 0;
  for (size_t i = 0; i < sc->n_bodies; i++) {
    long long n = wire_shape_triangles(sc->bodies[i]->shape);
    tris += n > 0 ? n : 0;
  }
  return tris;
}

// A mesh given as its file's bytes, read into *parsed (the caller frees it once the model
// is compiled: out borrows its arrays). The triangles are counted before anything is built.
static int read_mesh_file(const Ccsim__Mesh *mesh, sim_shape_desc *out, geo_mesh **parsed,
                          const char *where, char *err, size_t err_sz) {
  const char *name = mesh->source && mesh->source[0] ? mesh->source : "mesh";
  if (mesh->n_vertices || mesh->n_triangles) {
    ccsim_set_err(err, err_sz, "%s.shape.mesh: give vertices and triangles or a file, not both",
                  where);
    return -1;
  }
  long long nt = geo_mesh_file_triangles(mesh->file.data, mesh->file.len, mesh->source);
  if (nt > SIM_MAX_MESH_TRIS) {
    ccsim_set_err(err, err_sz, "%s.shape: %lld triangles exceed the limit of %d per body", where,
                  nt, SIM_MAX_MESH_TRIS);
    return -1;
  }
  char gerr[300] = "";
  *parsed = geo_mesh_parse(mesh->file.data, mesh->file.len, name, gerr, sizeof gerr);
  if (!*parsed) {
    ccsim_set_err(err, err_sz, "%s.shape.mesh: cannot use mesh \"%s\": %s", where, name, gerr);
    return -1;
  }
  // the welded mesh's arrays (ids are never negative: the same bits as unsigned)
  out->vert = (*parsed)->vert;
  out->nvert = (*parsed)->nvert;
  out->tri = (const unsigned *)(*parsed)->tri;
  out->ntri = (*parsed)->ntri;
  out->source = name;
  return 0;
}

static int read_shape_kind(const Ccsim__Shape *s, sim_shape_desc *out, geo_mesh **parsed,
                           const char *where, char *err, size_t err_sz) {
  memset(out, 0, sizeof *out);
  if (!s || s->kind_case == CCSIM__SHAPE__KIND__NOT_SET) {
    out->type = SIM_SHAPE_NONE;
    return 0;
  }
  switch (s->kind_case) {
  case CCSIM__SHAPE__KIND_BOX: {
    out->type = SIM_SHAPE_BOX;
    const double zero[3] = {0, 0, 0};
    if (wire_vec3_get(s->box->size, out->size, zero) != 0 || !length_ok(out->size[0]) ||
        !length_ok(out->size[1]) || !length_ok(out->size[2])) {
      ccsim_set_err(err, err_sz, "%s.shape.box.size: three lengths, each finite, > 0 and < 1000 m",
                    where);
      return -1;
    }
    return 0;
  }
  case CCSIM__SHAPE__KIND_SPHERE:
    out->type = SIM_SHAPE_SPHERE;
    out->radius = s->sphere->radius;
    out->res[0] = (int)s->sphere->slices;
    out->res[1] = (int)s->sphere->stacks;
    if (!length_ok(out->radius) || !res_ok(s->sphere->slices) || !res_ok(s->sphere->stacks)) {
      ccsim_set_err(err, err_sz,
                    "%s.shape.sphere: radius in (0, 1000) m, slices and stacks <= 4096", where);
      return -1;
    }
    return 0;
  case CCSIM__SHAPE__KIND_CYLINDER:
    out->type = SIM_SHAPE_CYLINDER;
    out->radius = s->cylinder->radius;
    out->height = s->cylinder->height;
    out->res[0] = (int)s->cylinder->segments;
    if (!length_ok(out->radius) || !length_ok(out->height) || !res_ok(s->cylinder->segments)) {
      ccsim_set_err(err, err_sz,
                    "%s.shape.cylinder: radius and height in (0, 1000) m, segments <= 4096", where);
      return -1;
    }
    return 0;
  case CCSIM__SHAPE__KIND_CONE:
    out->type = SIM_SHAPE_CONE;
    out->radius = s->cone->radius;
    out->height = s->cone->height;
    out->res[0] = (int)s->cone->segments;
    out->res[1] = (int)s->cone->rings;
    if (!length_ok(out->radius) || !length_ok(out->height) || !res_ok(s->cone->segments) ||
        !res_ok(s->cone->rings)) {
      ccsim_set_err(err, err_sz,
                    "%s.shape.cone: radius and height in (0, 1000) m, segments and rings <= 4096",
                    where);
      return -1;
    }
    return 0;
  case CCSIM__SHAPE__KIND_TORUS:
    out->type = SIM_SHAPE_TORUS;
    out->major = s->torus->major_radius;
    out->minor = s->torus->minor_radius;
    out->res[0] = (int)s->torus->major_segments;
    out->res[1] = (int)s->torus->minor_segments;
    if (!length_ok(out->major) || !length_ok(out->minor) || !(out->minor < out->major) ||
        !res_ok(s->torus->major_segments) || !res_ok(s->torus->minor_segments)) {
      ccsim_set_err(err, err_sz,
                    "%s.shape.torus: 0 < minor_radius < major_radius < 1000 m, segments <= 4096",
                    where);
      return -1;
    }
    return 0;
  case CCSIM__SHAPE__KIND_MESH: {
    const Ccsim__Mesh *mesh = s->mesh;
    out->type = SIM_SHAPE_MESH;
    if (mesh->has_file) {
      return read_mesh_file(mesh, out, parsed, where, err, err_sz);
    }
    if (mesh->n_vertices % 3 != 0 || mesh->n_triangles % 3 != 0) {
      ccsim_set_err(err, err_sz, "%s.shape.mesh: vertices and triangles must come in threes",
                    where);
      return -1;
    }
    // the triangles are counted against the per-body limit by read_shape, as a primitive's
    if (mesh->n_vertices / 3 > (size_t)SIM_MAX_MESH_TRIS * 3) {
      ccsim_set_err(err, err_sz, "%s.shape.mesh: more than %d vertices", where,
                    3 * SIM_MAX_MESH_TRIS);
      return -1;
    }
    out->vert = mesh->vertices;
    out->nvert = (int)(mesh->n_vertices / 3);
    out->tri = mesh->triangles;
    out->ntri = (int)(mesh->n_triangles / 3);
    out->source = mesh->source;
    return 0;
  }
  default:
    ccsim_set_err(err, err_sz, "%s.shape: unknown kind %d", where, (int)s->kind_case);
    return -1;
  }
}

// A shape's description, refused when its tessellation would exceed the per-body limit:
// a primitive's resolutions can ask for tens of millions of triangles, which the server
// would otherwise spend gigabytes and minutes building before any limit saw them.
static int read_shape(const Ccsim__Shape *s, sim_shape_desc *out, geo_mesh **parsed,
                      const char *where, char *err, size_t err_sz) {
  if (read_shape_kind(s, out, parsed, where, err, err_sz) != 0) {
    return -1;
  }
  long long nt = wire_shape_triangles(s);
  if (nt > SIM_MAX_MESH_TRIS) {
    ccsim_set_err(err, err_sz, "%s.shape: %lld triangles exceed the limit of %d per body", where,
                  nt, SIM_MAX_MESH_TRIS);
    return -1;
  }
  return 0;
}

sim_model *wire_scene_compile(const Ccsim__Scene *sc, char *err, size_t err_sz) {
  if (!sc) {
    ccsim_set_err(err, err_sz, "scene: missing");
    return NULL;
  }
  if (sc->n_bodies > SIM_MAX_BODIES) {
    ccsim_set_err(err, err_sz, "scene.bodies: %zu bodies exceeds the limit of %d", sc->n_bodies,
                  SIM_MAX_BODIES);
    return NULL;
  }
  sim_scene s;
  memset(&s, 0, sizeof s);
  const double zero[3] = {0, 0, 0};
  if (wire_vec3_get(sc->gravity, s.gravity, zero) != 0) {
    ccsim_set_err(err, err_sz, "scene.gravity: values must be finite");
    return NULL;
  }
  read_contact(sc->contact, &s.contact);
  if (sc->integrator) {
    s.rtol = sc->integrator->rtol;
    s.atol = sc->integrator->atol;
    s.max_step = sc->integrator->max_step;
    const char *ls = sc->integrator->linear_solver;
    if (ls && strcmp(ls, "auto") != 0 && strcmp(ls, "dense") != 0 && strcmp(ls, "klu") != 0) {
      ccsim_set_err(err, err_sz,
                    "scene.integrator.linear_solver: \"%.40s\" is not \"auto\", "
                    "\"dense\" or \"klu\"",
                    ls);
      return NULL;
    }
    s.linsolver = !ls || !strcmp(ls, "auto") ? SIM_LINSOLVER_AUTO
                  : !strcmp(ls, "dense")     ? SIM_LINSOLVER_DENSE
                                             : SIM_LINSOLVER_KLU;
  }
  s.mode = sc->has_mode ? (sim_mode)sc->mode : SIM_MODE_COMPLIANT;
  s.rigid_dt = sc->rigid_dt;
  s.friction_dirs = sc->friction_directions > 64 ? 65 : (int)sc->friction_directions;
  s.nbody = (int)sc->n_bodies;
  sim_body_desc *bodies = calloc(sc->n_bodies ? sc->n_bodies : 1, sizeof *bodies);
  if (!bodies) {
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  s.bodies = bodies;
  sim_model *m = NULL;
  double *paths = NULL;  // every body's waypoints, back to back
  geo_mesh **parsed = calloc(sc->n_bodies ? sc->n_bodies : 1, sizeof *parsed);  // mesh files
  if (!parsed) {
    free(bodies);
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  size_t npath = 0, used = 0;
  for (size_t i = 0; i < sc->n_bodies; i++) {
    if (sc->bodies[i]->n_path > SIM_MAX_PATH) {
      ccsim_set_err(err, err_sz, "bodies[%zu].path: %zu waypoints exceeds the limit of %d", i,
                    sc->bodies[i]->n_path, SIM_MAX_PATH);
      goto done;
    }
    npath += sc->bodies[i]->n_path;
  }
  if (npath && !(paths = malloc(npath * SIM_PATH_STRIDE * sizeof(double)))) {
    ccsim_set_err(err, err_sz, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < sc->n_bodies; i++) {
    const Ccsim__Body *pb = sc->bodies[i];
    sim_body_desc *b = &bodies[i];
    char where[48];
    snprintf(where, sizeof where, "bodies[%zu]", i);
    b->name = pb->name ? pb->name : "";
    b->type = pb->has_type ? (sim_body_type)pb->type : SIM_BODY_FREE;
    b->mass = pb->mass;
    b->density = pb->density;
    if (pb->n_inertia != 0 && pb->n_inertia != 3 && pb->n_inertia != 9) {
      ccsim_set_err(err, err_sz, "%s.inertia: %zu values; give 3 (diagonal) or 9 (row-major)",
                    where, pb->n_inertia);
      goto done;
    }
    b->ninertia = (int)pb->n_inertia;
    if (pb->n_inertia) {
      memcpy(b->inertia, pb->inertia, pb->n_inertia * sizeof(double));
    }
    if (pb->com) {
      b->has_com = 1;
      if (wire_vec3_get(pb->com, b->com, zero) != 0) {
        ccsim_set_err(err, err_sz, "%s.com: values must be finite", where);
        goto done;
      }
    }
    if (read_shape(pb->shape, &b->shape, &parsed[i], where, err, err_sz) != 0) {
      goto done;
    }
    if (wire_vec3_get(pb->pose ? pb->pose->p : NULL, b->pos, zero) != 0 ||
        wire_quat_get(pb->pose ? pb->pose->q : NULL, b->quat) != 0) {
      ccsim_set_err(err, err_sz, "%s.pose: values must be finite", where);
      goto done;
    }
    if (wire_vec3_get(pb->twist ? pb->twist->v : NULL, b->vel, zero) != 0 ||
        wire_vec3_get(pb->twist ? pb->twist->w : NULL, b->omega, zero) != 0) {
      ccsim_set_err(err, err_sz, "%s.velocity: values must be finite", where);
      goto done;
    }
    read_contact(pb->contact, &b->contact);
    if (pb->n_path && (pb->pose || pb->twist)) {
      ccsim_set_err(err, err_sz,
                    "%s: give a pose and velocity or a path, not both (the path "
                    "places the body at time 0)",
                    where);
      goto done;
    }
    b->npath = (int)pb->n_path;
    b->path = paths ? paths + used : NULL;
    for (size_t k = 0; k < pb->n_path; k++, used += SIM_PATH_STRIDE) {
      const Ccsim__Waypoint *wp = pb->path[k];
      paths[used] = wp->t;
      if (!wp->pose || wire_vec3_get(wp->pose->p, paths + used + 1, zero) != 0 ||
          wire_quat_get(wp->pose->q, paths + used + 4) != 0 || !wp->has_t) {
        ccsim_set_err(err, err_sz, "%s.path[%zu]: needs a finite time t and pose", where, k);
        goto done;
      }
    }
  }
  m = sim_model_compile(&s, err, err_sz);
done:
  for (size_t i = 0; i < sc->n_bodies; i++) {
    geo_mesh_destroy(&parsed[i]);
  }
  free(parsed);
  free(paths);
  free(bodies);
  return m;
}
