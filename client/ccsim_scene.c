#include "ccsim_scene_msg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <unistd.h>

#include "ccsim_arena.h"
#include "ccsim_file.h"
#include "ccsim_limits.h"
#include "ccsim_status.h"
#include "geo_mesh.h"
#include "geo_prim.h"


struct ccsim_scene {
  ccsim_arena arena;    // every piece of msg lives here
  Ccsim__Scene *msg;
};

// parsing context: the file name and base folder for messages and mesh paths
typedef struct pctx {
  ccsim_arena *a;
  const char *name;
  const char *base_dir;
  char *err;
  size_t err_sz;
} pctx;

static int perr(pctx *p, const char *path, const char *fmt, ...) {
  if (!p->err || p->err_sz == 0) {
    return -1;
  }
  int n = snprintf(p->err, p->err_sz, "%s: %s: ", p->name, path);
  if (n >= 0 && (size_t)n < p->err_sz) {
    va_list ap;
    va_start(ap, fmt);
    ccsim_vset_err(p->err + n, p->err_sz - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static void *alloc(pctx *p, size_t n) { return ccsim_arena_alloc(p->a, n); }

// Unknown keys are errors: a misspelt key would otherwise be silently ignored.
static int check_keys(pctx *p, json_t *obj, const char *path, const char *const *allowed) {
  if (!json_is_object(obj)) {
    return perr(p, path, "expected an object");
  }
  const char *key;
  json_t *val;
  json_object_foreach(obj, key, val) {
    int ok = 0;
    for (const char *const *k = allowed; *k; k++) {
      if (strcmp(*k, key) == 0) {
        ok = 1;
        break;
      }
    }
    if (!ok) {
      char list[256] = "";
      for (const char *const *k = allowed; *k; k++) {
        strncat(list, *k, sizeof list - strlen(list) - 1);
        if (k[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
      }
      return perr(p, path, "unknown key \"%s\" (known: %s)", key, list);
    }
  }
  return 0;
}

// a number at obj[key]; absent leaves *out and *has unchanged
static int get_num(pctx *p, json_t *obj, const char *key, const char *path, double *out,
                   protobuf_c_boolean *has) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    return 0;
  }
  if (!json_is_number(v)) {
    return perr(p, path, "\"%s\" must be a number", key);
  }
  double x = json_number_value(v);
  if (!isfinite(x)) {
    return perr(p, path, "\"%s\" must be finite", key);
  }
  *out = x;
  if (has) *has = 1;
  return 0;
}

// a whole number in [0, max]; the same bounds as the server's, so a scene file learns of a
// bad value with its file name
static int get_uint(pctx *p, json_t *obj, const char *key, const char *path, uint32_t max,
                    uint32_t *out, protobuf_c_boolean *has) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    return 0;
  }
  if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) {
    return perr(p, path, "\"%s\" must be a whole number in [0, %u]", key, max);
  }
  *out = (uint32_t)json_integer_value(v);
  if (has) *has = 1;
  return 0;
}

// an array of exactly n numbers
static int get_array(pctx *p, json_t *v, const char *path, double *out, size_t n) {
  if (!json_is_array(v) || json_array_size(v) != n) {
    return perr(p, path, "expected an array of %zu numbers", n);
  }
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(v, i);
    if (!json_is_number(e) || !isfinite(json_number_value(e))) {
      return perr(p, path, "element %zu must be a finite number", i);
    }
    out[i] = json_number_value(e);
  }
  return 0;
}

static Ccsim__Vec3 *get_vec3(pctx *p, json_t *obj, const char *key, const char *path, int *fail) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    return NULL;
  }
  char sub[160];
  snprintf(sub, sizeof sub, "%s.%s", path, key);
  double x[3];
  Ccsim__Vec3 *out = NULL;
  if (get_array(p, v, sub, x, 3) == 0 && (out = alloc(p, sizeof *out))) {
    ccsim__vec3__init(out);
    out->has_x = out->has_y = out->has_z = 1;
    out->x = x[0], out->y = x[1], out->z = x[2];
    return out;
  }
  *fail = 1;
  return NULL;
}

static Ccsim__ContactParams *parse_contact(pctx *p, json_t *obj, const char *path, int *fail) {
  static const char *const keys[] = {"k", "alpha", "n", "standoff", "mu", "mu_dynamic", NULL};
  Ccsim__ContactParams *c = alloc(p, sizeof *c);
  if (!c || check_keys(p, obj, path, keys) != 0) {
    *fail = 1;
    return NULL;
  }
  ccsim__contact_params__init(c);
  if (get_num(p, obj, "k", path, &c->k, &c->has_k) ||
      get_num(p, obj, "alpha", path, &c->alpha, &c->has_alpha) ||
      get_num(p, obj, "n", path, &c->n, &c->has_n) ||
      get_num(p, obj, "standoff", path, &c->standoff, &c->has_standoff) ||
      get_num(p, obj, "mu", path, &c->mu, &c->has_mu) ||
      get_num(p, obj, "mu_dynamic", path, &c->mu_dynamic, &c->has_mu_dynamic)) {
    *fail = 1;
    return NULL;
  }
  return c;
}

// The mesh file's bytes go to the server as they are (Mesh.file): the server reads them once,
// when it compiles the scene, and its errors name the file and line. Here the file is only
// read, so that a missing or unreadable one is named at once.
static int parse_mesh_file(pctx *p, const char *file, const char *path, Ccsim__Mesh *out) {
  char full[1024];
  if (file[0] != '/' && p->base_dir && p->base_dir[0]) {
    snprintf(full, sizeof full, "%s/%s", p->base_dir, file);
  } else {
    snprintf(full, sizeof full, "%s", file);
  }
  off_t size = 0;
  const char *why = "";
  int fd = ccsim_open_regular(full, 0, &size, &why);
  if (fd < 0) {
    return perr(p, path, "cannot use mesh \"%s\": %s: %s", file, full, why);
  }
  if ((uint64_t)size > GEO_MESH_MAX_FILE) {
    close(fd);
    return perr(p, path, "cannot use mesh \"%s\": %s: file larger than the cap of %u bytes",
                file, full, (unsigned)GEO_MESH_MAX_FILE);
  }
  uint8_t *data = alloc(p, size ? (size_t)size : 1);
  out->source = ccsim_arena_strdup(p->a, file);
  if (!data || !out->source) {
    close(fd);
    return perr(p, path, "out of memory");
  }
  int rc = ccsim_read_all(fd, data, (size_t)size, &why);
  close(fd);
  if (rc != 0) {
    return perr(p, path, "cannot use mesh \"%s\": %s: %s", file, full, why);
  }
  out->has_file = 1;
  out->file.data = data;
  out->file.len = (size_t)size;
  return 0;
}

static Ccsim__Shape *parse_shape(pctx *p, json_t *obj, const char *path, int *fail) {
  static const char *const kinds[] = {"box", "sphere", "cylinder", "cone", "torus", "mesh", NULL};
  Ccsim__Shape *s = alloc(p, sizeof *s);
  if (!s || check_keys(p, obj, path, kinds) != 0) {
    *fail = 1;
    return NULL;
  }
  if (json_object_size(obj) != 1) {
    perr(p, path, "give exactly one of box, sphere, cylinder, cone, torus, mesh");
    *fail = 1;
    return NULL;
  }
  ccsim__shape__init(s);
  const char *kind = json_object_iter_key(json_object_iter(obj));
  json_t *v = json_object_iter_value(json_object_iter(obj));
  char sub[200];
  if (snprintf(sub, sizeof sub, "%s.%s", path, kind) >= (int)sizeof sub) {
    sub[sizeof sub - 1] = 0;  // a path that long is only ever shown, never parsed
  }
  int bad = 0;
  if (!strcmp(kind, "box")) {
    static const char *const k[] = {"size", NULL};
    Ccsim__Box *b = alloc(p, sizeof *b);
    if (!b || check_keys(p, v, sub, k)) goto fail;
    ccsim__box__init(b);
    b->size = get_vec3(p, v, "size", sub, &bad);
    if (bad) goto fail;
    if (!b->size) {
      perr(p, sub, "\"size\" is required: [x, y, z] full edge lengths in metres");
      goto fail;
    }
    s->kind_case = CCSIM__SHAPE__KIND_BOX;
    s->box = b;
  } else if (!strcmp(kind, "sphere")) {
    static const char *const k[] = {"radius", "slices", "stacks", NULL};
    Ccsim__Sphere *b = alloc(p, sizeof *b);
    if (!b || check_keys(p, v, sub, k)) goto fail;
    ccsim__sphere__init(b);
    if (get_num(p, v, "radius", sub, &b->radius, &b->has_radius) ||
        get_uint(p, v, "slices", sub, GEO_PRIM_MAX_RES, &b->slices, &b->has_slices) ||
        get_uint(p, v, "stacks", sub, GEO_PRIM_MAX_RES, &b->stacks, &b->has_stacks))
      goto fail;
    s->kind_case = CCSIM__SHAPE__KIND_SPHERE;
    s->sphere = b;
  } else if (!strcmp(kind, "cylinder")) {
    static const char *const k[] = {"radius", "height", "segments", NULL};
    Ccsim__Cylinder *b = alloc(p, sizeof *b);
    if (!b || check_keys(p, v, sub, k)) goto fail;
    ccsim__cylinder__init(b);
    if (get_num(p, v, "radius", sub, &b->radius, &b->has_radius) ||
        get_num(p, v, "height", sub, &b->height, &b->has_height) ||
        get_uint(p, v, "segments", sub, GEO_PRIM_MAX_RES, &b->segments, &b->has_segments))
      goto fail;
    s->kind_case = CCSIM__SHAPE__KIND_CYLINDER;
    s->cylinder = b;
  } else if (!strcmp(kind, "cone")) {
    static const char *const k[] = {"radius", "height", "segments", "rings", NULL};
    Ccsim__Cone *b = alloc(p, sizeof *b);
    if (!b || check_keys(p, v, sub, k)) goto fail;
    ccsim__cone__init(b);
    if (get_num(p, v, "radius", sub, &b->radius, &b->has_radius) ||
        get_num(p, v, "height", sub, &b->height, &b->has_height) ||
        get_uint(p, v, "segments", sub, GEO_PRIM_MAX_RES, &b->segments, &b->has_segments) ||
        get_uint(p, v, "rings", sub, GEO_PRIM_MAX_RES, &b->rings, &b->has_rings))
      goto fail;
    s->kind_case = CCSIM__SHAPE__KIND_CONE;
    s->cone = b;
  } else if (!strcmp(kind, "torus")) {
    static const char *const k[] = {"major_radius", "minor_radius", "major_segments",
                                    "minor_segments", NULL};
    Ccsim__Torus *b = alloc(p, sizeof *b);
    if (!b || check_keys(p, v, sub, k)) goto fail;
    ccsim__torus__init(b);
    if (get_num(p, v, "major_radius", sub, &b->major_radius, &b->has_major_radius) ||
        get_num(p, v, "minor_radius", sub, &b->minor_radius, &b->has_minor_radius) ||
        get_uint(p, v, "major_segments", sub, GEO_PRIM_MAX_RES, &b->major_segments,
                 &b->has_major_segments) ||
        get_uint(p, v, "minor_segments", sub, GEO_PRIM_MAX_RES, &b->minor_segments,
                 &b->has_minor_segments))
      goto fail;
    s->kind_case = CCSIM__SHAPE__KIND_TORUS;
    s->torus = b;
  } else {  // mesh: "file.obj" or {"file": "file.obj"}
    Ccsim__Mesh *b = alloc(p, sizeof *b);
    if (!b) goto fail;
    ccsim__mesh__init(b);
    const char *file = NULL;
    if (json_is_string(v)) {
      file = json_string_value(v);
    } else {
      static const char *const k[] = {"file", NULL};
      if (check_keys(p, v, sub, k)) goto fail;
      file = json_string_value(json_object_get(v, "file"));
    }
    if (!file || !file[0]) {
      perr(p, sub, "expected a mesh file name (OBJ or STL), as \"mesh\": \"part.obj\"");
      goto fail;
    }
    if (parse_mesh_file(p, file, sub, b) != 0) goto fail;
    s->kind_case = CCSIM__SHAPE__KIND_MESH;
    s->mesh = b;
  }
  return s;
fail:
  *fail = 1;
  return NULL;
}

// A pose from the keys "p" (position) and "q" (quaternion w, x, y, z, not zero) of the
// object v; either may be absent (origin, identity). NULL after reporting at path.
static Ccsim__Pose *parse_pose(pctx *p, json_t *v, const char *path) {
  int bad = 0;
  Ccsim__Pose *pose = alloc(p, sizeof *pose);
  if (!pose) return NULL;
  ccsim__pose__init(pose);
  pose->p = get_vec3(p, v, "p", path, &bad);
  json_t *q = json_object_get(v, "q");
  if (q) {
    double x[4];
    char qs[200];
    snprintf(qs, sizeof qs, "%s.q", path);
    if (get_array(p, q, qs, x, 4)) return NULL;
    if (!(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3] > 0)) {
      perr(p, qs, "the quaternion [w, x, y, z] must not be zero");
      return NULL;
    }
    pose->q = alloc(p, sizeof *pose->q);
    if (!pose->q) return NULL;
    ccsim__quat__init(pose->q);
    pose->q->has_w = pose->q->has_x = pose->q->has_y = pose->q->has_z = 1;
    pose->q->w = x[0], pose->q->x = x[1], pose->q->y = x[2], pose->q->z = x[3];
  }
  return bad ? NULL : pose;
}

static Ccsim__Body *parse_body(pctx *p, json_t *obj, const char *path) {
  static const char *const keys[] = {"name",     "fixed",   "kinematic", "type",  "mass",
                                     "inertia",  "density", "com",       "shape", "pose",
                                     "velocity", "contact", "path",      NULL};
  Ccsim__Body *b = alloc(p, sizeof *b);
  if (!b || check_keys(p, obj, path, keys) != 0) {
    return NULL;
  }
  ccsim__body__init(b);
  int bad = 0;
  json_t *v = json_object_get(obj, "name");
  if (!json_is_string(v) || !json_string_value(v)[0]) {
    perr(p, path, "\"name\" is required (a non-empty string)");
    return NULL;
  }
  b->name = ccsim_arena_strdup(p->a, json_string_value(v));
  b->has_type = 1;
  b->type = CCSIM__BODY_TYPE__BODY_FREE;
  if ((v = json_object_get(obj, "type"))) {
    const char *t = json_string_value(v);
    if (t && !strcmp(t, "free")) b->type = CCSIM__BODY_TYPE__BODY_FREE;
    else if (t && !strcmp(t, "fixed")) b->type = CCSIM__BODY_TYPE__BODY_FIXED;
    else if (t && !strcmp(t, "kinematic")) b->type = CCSIM__BODY_TYPE__BODY_KINEMATIC;
    else {
      perr(p, path, "\"type\" must be \"free\", \"fixed\" or \"kinematic\"");
      return NULL;
    }
  }
  const char *flags[] = {"fixed", "kinematic"};
  const Ccsim__BodyType ftype[] = {CCSIM__BODY_TYPE__BODY_FIXED, CCSIM__BODY_TYPE__BODY_KINEMATIC};
  const char *typed_by = json_object_get(obj, "type") ? "\"type\"" : NULL;
  for (int k = 0; k < 2; k++) {
    if ((v = json_object_get(obj, flags[k]))) {
      if (!json_is_boolean(v)) {
        perr(p, path, "\"%s\" must be true or false", flags[k]);
        return NULL;
      }
      if (json_is_true(v)) {
        // which one would win is no rule a reader of the scene could guess
        if (typed_by && b->type != ftype[k]) {
          perr(p, path, "\"%s\": true contradicts %s", flags[k], typed_by);
          return NULL;
        }
        b->type = ftype[k];
        typed_by = k == 0 ? "\"fixed\": true" : "\"kinematic\": true";
      }
    }
  }
  if (get_num(p, obj, "mass", path, &b->mass, &b->has_mass) ||
      get_num(p, obj, "density", path, &b->density, &b->has_density)) {
    return NULL;
  }
  if ((v = json_object_get(obj, "inertia"))) {
    char sub[160];
    snprintf(sub, sizeof sub, "%s.inertia", path);
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    b->inertia = alloc(p, 9 * sizeof(double));
    if (!b->inertia) return NULL;
    if (n == 3 && json_is_array(json_array_get(v, 0))) {  // [[..],[..],[..]]
      for (size_t r = 0; r < 3; r++) {
        if (get_array(p, json_array_get(v, r), sub, b->inertia + 3 * r, 3)) return NULL;
      }
      n = 9;
    } else if (n == 3 || n == 9) {
      if (get_array(p, v, sub, b->inertia, n)) return NULL;
    } else {
      perr(p, sub, "give [Ixx, Iyy, Izz], 9 numbers row-major, or a 3x3 array [kg m^2]");
      return NULL;
    }
    b->n_inertia = n;
  }
  b->com = get_vec3(p, obj, "com", path, &bad);
  if (bad) return NULL;
  char sub[160];
  if ((v = json_object_get(obj, "shape"))) {
    snprintf(sub, sizeof sub, "%s.shape", path);
    b->shape = parse_shape(p, v, sub, &bad);
    if (bad) return NULL;
  }
  if ((v = json_object_get(obj, "pose"))) {
    static const char *const k[] = {"p", "q", NULL};
    snprintf(sub, sizeof sub, "%s.pose", path);
    if (check_keys(p, v, sub, k) || !(b->pose = parse_pose(p, v, sub))) return NULL;
  }
  if ((v = json_object_get(obj, "path"))) {
    static const char *const k[] = {"t", "p", "q", NULL};
    snprintf(sub, sizeof sub, "%s.path", path);
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (n == 0) {
      perr(p, sub,
           "expected a non-empty array of waypoints {\"t\": s, \"p\": [x, y, z], "
           "\"q\": [w, x, y, z]}");
      return NULL;
    }
    b->path = alloc(p, n * sizeof *b->path);
    if (!b->path) return NULL;
    for (size_t i = 0; i < n; i++) {
      char wsub[200];
      snprintf(wsub, sizeof wsub, "%s[%zu]", sub, i);
      json_t *w = json_array_get(v, i);
      Ccsim__Waypoint *wp = alloc(p, sizeof *wp);
      if (!wp || check_keys(p, w, wsub, k)) return NULL;
      ccsim__waypoint__init(wp);
      if (!json_object_get(w, "t")) {
        perr(p, wsub, "\"t\" is required (the waypoint's time in seconds)");
        return NULL;
      }
      if (get_num(p, w, "t", wsub, &wp->t, &wp->has_t) || !(wp->pose = parse_pose(p, w, wsub))) {
        return NULL;
      }
      b->path[b->n_path++] = wp;
    }
  }
  if ((v = json_object_get(obj, "velocity"))) {
    static const char *const k[] = {"v", "w", NULL};
    snprintf(sub, sizeof sub, "%s.velocity", path);
    Ccsim__Twist *tw = alloc(p, sizeof *tw);
    if (!tw || check_keys(p, v, sub, k)) return NULL;
    ccsim__twist__init(tw);
    tw->v = get_vec3(p, v, "v", sub, &bad);
    tw->w = get_vec3(p, v, "w", sub, &bad);
    if (bad) return NULL;
    b->twist = tw;
  }
  if ((v = json_object_get(obj, "contact"))) {
    snprintf(sub, sizeof sub, "%s.contact", path);
    b->contact = parse_contact(p, v, sub, &bad);
    if (bad) return NULL;
  }
  return b;
}

static Ccsim__Scene *parse_scene(pctx *p, json_t *root) {
  static const char *const keys[] = {"description", "gravity", "contact", "integrator", "mode",
                                     "rigid_dt", "friction_directions", "bodies", NULL};
  Ccsim__Scene *s = alloc(p, sizeof *s);
  if (!s || check_keys(p, root, "scene", keys) != 0) {
    return NULL;
  }
  ccsim__scene__init(s);
  int bad = 0;
  s->gravity = get_vec3(p, root, "gravity", "scene", &bad);
  if (bad) return NULL;
  json_t *v;
  if ((v = json_object_get(root, "contact"))) {
    s->contact = parse_contact(p, v, "contact", &bad);
    if (bad) return NULL;
  }
  if ((v = json_object_get(root, "integrator"))) {
    static const char *const k[] = {"rtol", "atol", "max_step", "linear_solver", NULL};
    Ccsim__IntegratorParams *ip = alloc(p, sizeof *ip);
    if (!ip || check_keys(p, v, "integrator", k)) return NULL;
    ccsim__integrator_params__init(ip);
    if (get_num(p, v, "rtol", "integrator", &ip->rtol, &ip->has_rtol) ||
        get_num(p, v, "atol", "integrator", &ip->atol, &ip->has_atol) ||
        get_num(p, v, "max_step", "integrator", &ip->max_step, &ip->has_max_step))
      return NULL;
    json_t *ls = json_object_get(v, "linear_solver");
    if (ls) {
      const char *name = json_string_value(ls);
      if (!name || (strcmp(name, "auto") && strcmp(name, "dense") && strcmp(name, "klu"))) {
        perr(p, "integrator", "\"linear_solver\" must be \"auto\", \"dense\" or \"klu\"");
        return NULL;
      }
      ip->linear_solver = ccsim_arena_strdup(p->a, name);
      if (!ip->linear_solver) return NULL;
    }
    s->integrator = ip;
  }
  if ((v = json_object_get(root, "mode"))) {
    const char *m = json_string_value(v);
    s->has_mode = 1;
    if (m && !strcmp(m, "compliant")) s->mode = CCSIM__MODE__MODE_COMPLIANT;
    else if (m && !strcmp(m, "rigid")) s->mode = CCSIM__MODE__MODE_RIGID;
    else {
      perr(p, "mode", "must be \"compliant\" or \"rigid\"");
      return NULL;
    }
  }
  if (get_num(p, root, "rigid_dt", "scene", &s->rigid_dt, &s->has_rigid_dt) ||
      get_uint(p, root, "friction_directions", "scene", 64 /* as the server */,
               &s->friction_directions, &s->has_friction_directions))
    return NULL;
  v = json_object_get(root, "bodies");
  if (!json_is_array(v) || json_array_size(v) == 0) {
    perr(p, "bodies", "required: a non-empty array of bodies");
    return NULL;
  }
  s->n_bodies = json_array_size(v);
  s->bodies = alloc(p, sizeof *s->bodies * s->n_bodies);
  if (!s->bodies) return NULL;
  for (size_t i = 0; i < s->n_bodies; i++) {
    char path[48];
    snprintf(path, sizeof path, "bodies[%zu]", i);
    if (!(s->bodies[i] = parse_body(p, json_array_get(v, i), path))) {
      return NULL;
    }
  }
  return s;
}

ccsim_scene *ccsim_scene_parse(const char *json, size_t len, const char *name,
                               const char *base_dir, char *err, size_t err_sz) {
  ccsim_scene *sc = calloc(1, sizeof *sc);
  if (!sc) {
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  ccsim_arena_init(&sc->arena, 64 * 1024, 0);
  pctx p = {.a = &sc->arena, .name = name ? name : "scene", .base_dir = base_dir, .err = err,
            .err_sz = err_sz};
  json_error_t jerr;
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) {
    ccsim_set_err(err, err_sz, "%s: line %d, column %d: %s", p.name, jerr.line, jerr.column,
                  jerr.text);
    ccsim_scene_destroy(&sc);
    return NULL;
  }
  sc->msg = parse_scene(&p, root);
  json_decref(root);
  if (!sc->msg) {
    ccsim_scene_destroy(&sc);
  }
  return sc;
}

ccsim_scene *ccsim_scene_load(const char *path, char *err, size_t err_sz) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    ccsim_set_err(err, err_sz, "%s: cannot open the scene file", path);
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? 2 * cap : 65536;
      char *nb = cap <= CCSIM_SCENE_MAX_FILE ? realloc(buf, cap) : NULL;
      if (!nb) {
        free(buf);
        fclose(f);
        ccsim_set_err(err, err_sz, "%s: too large or out of memory", path);
        return NULL;
      }
      buf = nb;
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  int ferr = ferror(f);
  fclose(f);
  if (ferr) {
    free(buf);
    ccsim_set_err(err, err_sz, "%s: read error", path);
    return NULL;
  }
  // meshes named by the scene are found beside it
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else snprintf(dir, sizeof dir, ".");
  ccsim_scene *sc = ccsim_scene_parse(buf, len, path, dir, err, err_sz);
  free(buf);
  return sc;
}

void ccsim_scene_destroy(ccsim_scene **ps) {
  if (!ps || !*ps) {
    return;
  }
  ccsim_arena_fini(&(*ps)->arena);
  free(*ps);
  *ps = NULL;
}

const Ccsim__Scene *ccsim_scene_message(const ccsim_scene *s) { return s->msg; }

const char *ccsim_scene_mode(const ccsim_scene *s) {
  return s->msg->has_mode && s->msg->mode == CCSIM__MODE__MODE_RIGID ? "rigid" : "compliant";
}

int ccsim_scene_set_mode(ccsim_scene *s, const char *mode) {
  if (!strcmp(mode, "compliant")) {
    s->msg->mode = CCSIM__MODE__MODE_COMPLIANT;
  } else if (!strcmp(mode, "rigid")) {
    s->msg->mode = CCSIM__MODE__MODE_RIGID;
  } else {
    return -1;
  }
  s->msg->has_mode = 1;
  return 0;
}
