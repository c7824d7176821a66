// The core's state out to messages and a Step's inputs in: body states, contacts (at the
// current state or at given poses), and the Step inputs checked and applied.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "geo_vec.h"
#include "wire.h"

Ccsim__Vec3 *wire_vec3_new(ccsim_arena *a, const double v[3]) {
  Ccsim__Vec3 *out = ccsim_arena_alloc(a, sizeof *out);
  if (out) {
    ccsim__vec3__init(out);
    out->has_x = out->has_y = out->has_z = 1;
    out->x = v[0], out->y = v[1], out->z = v[2];
  }
  return out;
}

Ccsim__Quat *wire_quat_new(ccsim_arena *a, const double q[4]) {
  Ccsim__Quat *out = ccsim_arena_alloc(a, sizeof *out);
  if (out) {
    ccsim__quat__init(out);
    out->has_w = out->has_x = out->has_y = out->has_z = 1;
    out->w = q[0], out->x = q[1], out->y = q[2], out->z = q[3];
  }
  return out;
}

// 1 when the model has at least two bodies with geometry (contacts are possible)
static int has_contacts(const sim_model *m) {
  int n = 0;
  for (int b = 0; b < m->nbody && n < 2; b++) n += m->bvh[b] != NULL;
  return n >= 2;
}

void wire_impulse_add(const sim_model *m, const sim_data *d, double *imp, double *span) {
  double dt = 0;
  for (int b = 0; b < m->nbody; b++) {
    double f[3], t[3];
    sim_data_body_mean_contact(m, d, b, f, t, &dt);
    for (int j = 0; j < 3; j++) {
      imp[6 * b + j] += f[j] * dt;
      imp[6 * b + 3 + j] += t[j] * dt;
    }
  }
  *span += dt;
}

int wire_bodies_new(ccsim_arena *a, const sim_model *m, sim_data *d, const double *imp,
                    double span, Ccsim__BodyState ***out, size_t *n) {
  Ccsim__BodyState **arr = ccsim_arena_alloc(a, sizeof *arr * (size_t)(m->nbody ? m->nbody : 1));
  if (!arr) {
    return -1;
  }
  // a state where the contacts cannot be evaluated still reports poses, without wrenches
  int contacts = has_contacts(m) && sim_eval_contacts(m, d) == CCSIM_OK;
  for (int b = 0; b < m->nbody; b++) {
    double p[3], q[4], v[3], w[3];
    sim_get_body(m, d, b, p, q, v, w);
    Ccsim__BodyState *bs = ccsim_arena_alloc(a, sizeof *bs);
    Ccsim__Pose *pose = ccsim_arena_alloc(a, sizeof *pose);
    Ccsim__Twist *tw = ccsim_arena_alloc(a, sizeof *tw);
    if (!bs || !pose || !tw) {
      return -1;
    }
    ccsim__body_state__init(bs);
    ccsim__pose__init(pose);
    ccsim__twist__init(tw);
    pose->p = wire_vec3_new(a, p);
    pose->q = wire_quat_new(a, q);
    tw->v = wire_vec3_new(a, v);
    tw->w = wire_vec3_new(a, w);
    if (!pose->p || !pose->q || !tw->v || !tw->w) {
      return -1;
    }
    bs->has_body = 1;
    bs->body = (uint32_t)b;
    bs->pose = pose;
    bs->twist = tw;
    if (contacts) {
      double f[3], t[3];
      int count = 0;
      sim_data_body_contact(m, d, b, f, t, &count);
      bs->contact_force = wire_vec3_new(a, f);
      bs->contact_torque = wire_vec3_new(a, t);
      if (!bs->contact_force || !bs->contact_torque) {
        return -1;
      }
      bs->has_contact_count = 1;
      bs->contact_count = (uint32_t)count;
    }
    if (imp && span > 0) {
      double f[3], t[3];
      for (int j = 0; j < 3; j++) {
        f[j] = imp[6 * b + j] / span;
        t[j] = imp[6 * b + 3 + j] / span;
      }
      if (!(bs->mean_contact_force = wire_vec3_new(a, f)) ||
          !(bs->mean_contact_torque = wire_vec3_new(a, t))) {
        return -1;
      }
    }
    arr[b] = bs;
  }
  *out = arr;
  *n = (size_t)m->nbody;
  return 0;
}

int wire_inputs_check(const sim_model *m, const Ccsim__Step *st, char *err, size_t err_sz) {
  const double zero[3] = {0, 0, 0};
  for (size_t i = 0; i < st->n_inputs; i++) {
    const Ccsim__BodyInput *in = st->inputs[i];
    if (!in->has_body || in->body >= (uint32_t)m->nbody) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu].body: %s (the scene has %d bodies)", i,
                    in->has_body ? "out of range" : "missing", m->nbody);
      return -1;
    }
    const char *name = m->name[in->body];
    sim_body_type type = m->type[in->body];
    if ((in->force || in->torque) && type != SIM_BODY_FREE) {
      ccsim_set_err(err, err_sz,
                    "step.inputs[%zu]: body %u (\"%s\") is not free: forces and torques "
                    "act on free bodies only",
                    i, in->body, name);
      return -1;
    }
    if ((in->pose || in->twist) && type != SIM_BODY_KINEMATIC) {
      ccsim_set_err(err, err_sz,
                    "step.inputs[%zu]: body %u (\"%s\") is not kinematic: only "
                    "kinematic bodies take a pose or twist",
                    i, in->body, name);
      return -1;
    }
    if ((in->pose || in->twist) && m->path_n[in->body] > 0) {
      ccsim_set_err(err, err_sz,
                    "step.inputs[%zu]: body %u (\"%s\") follows the path its scene "
                    "gives it and takes no pose or twist",
                    i, in->body, name);
      return -1;
    }
    double f[3], t[3], q[4];
    if (wire_vec3_get(in->force, f, zero) != 0 || wire_vec3_get(in->torque, t, zero) != 0) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu]: force and torque must be finite", i);
      return -1;
    }
    const char *big = sim_input_out_of_range(f, t);
    if (big) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu]: %s", i, big);
      return -1;
    }
    if (in->pose && (wire_vec3_get(in->pose->p, f, zero) != 0 ||
                     wire_quat_get(in->pose->q, q) != 0 ||
                     (in->pose->q && q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] == 0))) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu].pose: must be finite with a non-zero quaternion",
                    i);
      return -1;
    }
    const char *range = in->pose ? sim_motion_out_of_range(f, NULL, NULL) : NULL;
    if (range) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu].pose: %s", i, range);
      return -1;
    }
    if (in->twist && (wire_vec3_get(in->twist->v, f, zero) != 0 ||
                      wire_vec3_get(in->twist->w, t, zero) != 0)) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu].twist: must be finite", i);
      return -1;
    }
    if (in->twist && (range = sim_motion_out_of_range(NULL, f, t))) {
      ccsim_set_err(err, err_sz, "step.inputs[%zu].twist: %s", i, range);
      return -1;
    }
  }
  return 0;
}

void wire_inputs_apply(const sim_model *m, sim_data *d, const Ccsim__Step *st, double dt) {
  const double zero[3] = {0, 0, 0};
  sim_clear_inputs(m, d);
  for (size_t i = 0; i < st->n_inputs; i++) {
    const Ccsim__BodyInput *in = st->inputs[i];
    int b = (int)in->body;
    double f[3], t[3];
    if (m->type[b] == SIM_BODY_FREE) {
      wire_vec3_get(in->force, f, zero);
      wire_vec3_get(in->torque, t, zero);
      sim_set_input(m, d, b, f, t);
    } else if (in->pose) {
      double p[3], q[4];
      wire_vec3_get(in->pose->p, p, zero);
      wire_quat_get(in->pose->q, q);
      sim_set_kinematic(m, d, b, p, q, zero, zero, dt);
    } else if (in->twist) {
      wire_vec3_get(in->twist->v, f, zero);
      wire_vec3_get(in->twist->w, t, zero);
      sim_set_kinematic(m, d, b, NULL, NULL, f, t, dt);
    }
  }
}

// Contact messages from contacts c (nc of them; force = normal + friction) into a
static int contacts_msgs(ccsim_arena *a, const sim_contact *c, int nc, Ccsim__Contact ***out,
                         size_t *n) {
  Ccsim__Contact **arr = ccsim_arena_alloc(a, sizeof *arr * (size_t)(nc ? nc : 1));
  if (!arr) return CCSIM_ENOMEM;
  for (int i = 0; i < nc; i++) {
    Ccsim__Contact *ct = ccsim_arena_alloc(a, sizeof *ct);
    if (!ct) return CCSIM_ENOMEM;
    ccsim__contact__init(ct);
    double f[3];
    geo_v3_scale(f, c[i].normal, c[i].force);
    geo_v3_add(f, f, c[i].friction);
    ct->has_body_a = ct->has_body_b = ct->has_depth = ct->has_depth_rate = 1;
    ct->body_a = (uint32_t)c[i].body_a;
    ct->body_b = (uint32_t)c[i].body_b;
    ct->depth = c[i].depth;
    ct->depth_rate = c[i].depth_rate;
    ct->point_a = wire_vec3_new(a, c[i].pa);
    ct->point_b = wire_vec3_new(a, c[i].pb);
    ct->normal = wire_vec3_new(a, c[i].normal);
    ct->force = wire_vec3_new(a, f);
    if (!ct->point_a || !ct->point_b || !ct->normal || !ct->force) return CCSIM_ENOMEM;
    arr[i] = ct;
  }
  *out = arr;
  *n = (size_t)nc;
  return 0;
}

int wire_contacts_new(ccsim_arena *a, const sim_model *m, sim_data *d, Ccsim__Contact ***out,
                      size_t *n) {
  *out = NULL;
  *n = 0;
  if (!has_contacts(m)) {
    return 0;
  }
  int st = sim_eval_contacts(m, d);
  if (st != CCSIM_OK) {
    return st;
  }
  int nc = 0;
  const sim_contact *c = sim_data_contacts(d, &nc);
  return contacts_msgs(a, c, nc, out, n);
}

int wire_contacts_at_new(ccsim_arena *a, const sim_model *m, sim_data *d,
                         Ccsim__BodyState *const *poses, size_t nposes, Ccsim__Contact ***out,
                         size_t *n, char *err, size_t err_sz) {
  *out = NULL;
  *n = 0;
  size_t nb = (size_t)(m->nbody ? m->nbody : 1);
  int *given = ccsim_arena_alloc(a, sizeof(int) * nb);
  double *pos = ccsim_arena_alloc(a, sizeof(double) * 3 * nb);
  double *quat = ccsim_arena_alloc(a, sizeof(double) * 4 * nb);
  double *vel = ccsim_arena_alloc(a, sizeof(double) * 3 * nb);
  double *omega = ccsim_arena_alloc(a, sizeof(double) * 3 * nb);
  if (!given || !pos || !quat || !vel || !omega) {
    ccsim_set_err(err, err_sz, "out of memory");
    return CCSIM_ENOMEM;
  }
  const double zero[3] = {0, 0, 0};
  for (size_t i = 0; i < nposes; i++) {
    const Ccsim__BodyState *bs = poses[i];
    if (!bs->has_body || bs->body >= (uint32_t)m->nbody || !bs->pose) {
      ccsim_set_err(err, err_sz, "query_contacts.poses[%zu]: body %s and a pose are required", i,
                    bs->has_body && bs->body >= (uint32_t)m->nbody ? "in range" : "index");
      return CCSIM_EINVAL;
    }
    int b = (int)bs->body;
    double q[4];
    if (wire_vec3_get(bs->pose->p, pos + 3 * b, zero) != 0 || wire_quat_get(bs->pose->q, q) != 0 ||
        (bs->pose->q && q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] == 0)) {
      ccsim_set_err(err, err_sz, "query_contacts.poses[%zu].pose: must be finite with a "
                    "non-zero quaternion", i);
      return CCSIM_EINVAL;
    }
    const char *range = sim_motion_out_of_range(pos + 3 * b, NULL, NULL);
    if (range) {
      ccsim_set_err(err, err_sz, "query_contacts.poses[%zu].pose: %s", i, range);
      return CCSIM_EINVAL;
    }
    memcpy(quat + 4 * b, q, sizeof q);
    given[b] = SIM_GIVEN_POSE;
    if (bs->twist) {
      if (wire_vec3_get(bs->twist->v, vel + 3 * b, zero) != 0 ||
          wire_vec3_get(bs->twist->w, omega + 3 * b, zero) != 0) {
        ccsim_set_err(err, err_sz, "query_contacts.poses[%zu].twist: must be finite", i);
        return CCSIM_EINVAL;
      }
      if ((range = sim_motion_out_of_range(NULL, vel + 3 * b, omega + 3 * b))) {
        ccsim_set_err(err, err_sz, "query_contacts.poses[%zu].twist: %s", i, range);
        return CCSIM_EINVAL;
      }
      given[b] |= SIM_GIVEN_TWIST;
    }
  }
  if (!has_contacts(m)) {
    return 0;
  }
  int nc = 0;
  const sim_contact *c = NULL;
  int st = sim_eval_contacts_at(m, d, given, pos, quat, vel, omega, &c, &nc);
  if (st != CCSIM_OK) {
    ccsim_set_err(err, err_sz, "%s", sim_data_errmsg(d));
    return st;
  }
  st = contacts_msgs(a, c, nc, out, n);
  if (st != 0) ccsim_set_err(err, err_sz, "out of memory");
  return st;
}
