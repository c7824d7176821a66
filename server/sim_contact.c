#include "sim_contact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geo_vec.h"

#ifndef SIM_CACHE_PAIRS
#define SIM_CACHE_PAIRS 2048  // collidable pairs up to which each gets a coherence cache
#endif
#define SIM_CACHE_CAP 8192    // candidate leaf pairs one cache keeps
#define SIM_PARALLEL_ANGLE 0.05  // [rad] faces closer to parallel meet at overlap corners

struct sim_collider {
  geo_query_ws *ws;      // one workspace sized for the two largest hierarchies
  geo_query_cache **cache; // (nbody (nbody - 1) / 2) per body pair, NULL entries for pairs
                           // that cannot collide; NULL when the model has too many pairs
  geo_pair *pairs;       // (cap) proximity output of one body pair
  sim_contact *contacts; // (cap) contacts of the last sim_collide
  size_t nslots;         // entries of cache
  int cap, n;
  double max_depth;      // [m]
  uint64_t geometry_ns;
  char err[256];
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// bodies that can touch: both have geometry, at least one is free
static int collidable(const sim_model *m, int a, int b) {
  return m->bvh[a] && m->bvh[b] &&
         (m->type[a] == SIM_BODY_FREE || m->type[b] == SIM_BODY_FREE);
}

// index of the unordered pair a < b among nbody (nbody - 1) / 2 slots
static size_t pair_slot(const sim_model *m, int a, int b) {
  return (size_t)a * (size_t)(2 * m->nbody - a - 1) / 2 + (size_t)(b - a - 1);
}

sim_collider *sim_collider_new(const sim_model *m, int cap, char *err, size_t err_sz) {
  sim_collider *c = calloc(1, sizeof *c);
  if (!c) {
    if (err) snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  c->cap = cap > 0 ? cap : 16384;
  c->pairs = calloc((size_t)c->cap, sizeof *c->pairs);
  c->contacts = calloc((size_t)c->cap, sizeof *c->contacts);
  if (!c->pairs || !c->contacts) {
    if (err) snprintf(err, err_sz, "out of memory for %d contacts", c->cap);
    sim_collider_destroy(&c);
    return NULL;
  }
  // the workspace must fit the largest pair of hierarchies that can ever be queried
  int big = -1, second = -1;
  for (int i = 0; i < m->nbody; i++) {
    if (!m->bvh[i]) continue;
    if (big < 0 || m->bvh[i]->ntri > m->bvh[big]->ntri) {
      second = big;
      big = i;
    } else if (second < 0 || m->bvh[i]->ntri > m->bvh[second]->ntri) {
      second = i;
    }
  }
  if (big >= 0 && second >= 0) {
    char gerr[256] = "";
    c->ws = geo_query_ws_new(m->bvh[big], m->bvh[second], 4 * c->cap, gerr, sizeof gerr);
    if (!c->ws) {
      if (err) snprintf(err, err_sz, "contact workspace: %s", gerr);
      sim_collider_destroy(&c);
      return NULL;
    }
    // Faces within this angle count as parallel and are held at the corners of their
    // overlap. With the engine's default (1e-3 rad) a box rocking on another flips between
    // four corners and the one closest pair per triangle pair, and its support jumps; at a
    // few degrees only the corners near the lower edge are within the standoff anyway, so
    // the two rules agree where they meet and the force stays continuous.
    geo_query_ws_set_parallel_angle(c->ws, SIM_PARALLEL_ANGLE);
  }
  // coherence caches: consecutive evaluations (Newton iterations, small steps) query
  // nearby poses, where the cache answers from the leaf pairs it kept; the answers are
  // identical to cold queries. One per collidable pair, while their memory stays modest.
  long npairs = 0;
  for (int a = 0; a < m->nbody; a++) {
    for (int b = a + 1; b < m->nbody; b++) npairs += collidable(m, a, b);
  }
  if (c->ws && npairs <= SIM_CACHE_PAIRS) {
    size_t slots = (size_t)m->nbody * (size_t)(m->nbody - 1) / 2;
    c->cache = calloc(slots, sizeof *c->cache);
    if (!c->cache) {
      if (err) snprintf(err, err_sz, "out of memory for contact caches");
      sim_collider_destroy(&c);
      return NULL;
    }
    c->nslots = slots;
    for (int a = 0; a < m->nbody; a++) {
      for (int b = a + 1; b < m->nbody; b++) {
        if (!collidable(m, a, b)) continue;
        char gerr[256] = "";
        double margin = fmax(m->contact.standoff, 1e-4);
        c->cache[pair_slot(m, a, b)] =
            geo_query_cache_new(SIM_CACHE_CAP, margin, gerr, sizeof gerr);
        if (!c->cache[pair_slot(m, a, b)]) {
          if (err) snprintf(err, err_sz, "contact cache: %s", gerr);
          sim_collider_destroy(&c);
          return NULL;
        }
      }
    }
  }
  return c;
}

void sim_collider_destroy(sim_collider **pc) {
  if (!pc || !*pc) return;
  sim_collider *c = *pc;
  for (size_t i = 0; c->cache && i < c->nslots; i++) geo_query_cache_destroy(&c->cache[i]);
  free(c->cache);
  geo_query_ws_destroy(&c->ws);
  free(c->pairs);
  free(c->contacts);
  free(c);
  *pc = NULL;
}

const sim_contact *sim_collider_contacts(const sim_collider *c, int *n) {
  *n = c->n;
  return c->contacts;
}

double sim_collider_max_depth(const sim_collider *c) { return c->max_depth; }

uint64_t sim_collider_geometry_ns(const sim_collider *c) { return c->geometry_ns; }

const char *sim_collider_errmsg(const sim_collider *c) { return c->err; }

void sim_pair_params(const sim_model *m, int a, int b, sim_contact_params *out) {
  sim_contact_params pa = m->contact, pb = m->contact;
  const sim_contact_params *oa = &m->body_contact[a], *ob = &m->body_contact[b];
#define OVERRIDE(p, o, field, bit) \
  if ((o)->set & (bit)) (p).field = (o)->field
  OVERRIDE(pa, oa, k, SIM_CP_K);
  OVERRIDE(pa, oa, alpha, SIM_CP_ALPHA);
  OVERRIDE(pa, oa, n, SIM_CP_N);
  OVERRIDE(pa, oa, standoff, SIM_CP_STANDOFF);
  OVERRIDE(pa, oa, mu, SIM_CP_MU);
  OVERRIDE(pa, oa, mu_dynamic, SIM_CP_MU_DYNAMIC);
  OVERRIDE(pb, ob, k, SIM_CP_K);
  OVERRIDE(pb, ob, alpha, SIM_CP_ALPHA);
  OVERRIDE(pb, ob, n, SIM_CP_N);
  OVERRIDE(pb, ob, standoff, SIM_CP_STANDOFF);
  OVERRIDE(pb, ob, mu, SIM_CP_MU);
  OVERRIDE(pb, ob, mu_dynamic, SIM_CP_MU_DYNAMIC);
#undef OVERRIDE
  // a body overriding mu but not mu_dynamic slides with its own mu
  if ((oa->set & SIM_CP_MU) && !(oa->set & SIM_CP_MU_DYNAMIC)) pa.mu_dynamic = pa.mu;
  if ((ob->set & SIM_CP_MU) && !(ob->set & SIM_CP_MU_DYNAMIC)) pb.mu_dynamic = pb.mu;
  out->k = pa.k + pb.k > 0 ? 2 * pa.k * pb.k / (pa.k + pb.k) : 0;
  out->alpha = 0.5 * (pa.alpha + pb.alpha);
  out->n = fmax(pa.n, pb.n);
  out->standoff = fmax(pa.standoff, pb.standoff);
  out->mu = sqrt(pa.mu * pb.mu);
  out->mu_dynamic = sqrt(pa.mu_dynamic * pb.mu_dynamic);
  out->set = 0;
}

// gap between the bounding spheres about the COM (a lower bound of the distance)
static double sphere_gap(const sim_model *m, const sim_kinematics *k, int a, int b) {
  return geo_v3_dist(k->com + 3 * a, k->com + 3 * b) - m->bound_r[a] - m->bound_r[b];
}

static geo_pose pose_of(const sim_kinematics *k, int b) {
  geo_pose x;
  geo_v3_copy(x.p, k->pos + 3 * b);
  memcpy(x.q, k->quat + 4 * b, sizeof x.q);
  return x;
}

// velocity of the material point p of body b [m/s]
static void point_vel(const sim_kinematics *k, int b, const double p[3], double out[3]) {
  double r[3], wxr[3];
  geo_v3_sub(r, p, k->com + 3 * b);
  geo_v3_cross(wxr, k->omega + 3 * b, r);
  geo_v3_add(out, k->vel + 3 * b, wxr);
}

// add force f at world point p to body b's wrench (force, torque about the COM)
static void add_wrench(const sim_kinematics *k, double *wrench, int b, const double p[3],
                       const double f[3]) {
  double r[3], t[3];
  geo_v3_sub(r, p, k->com + 3 * b);
  geo_v3_cross(t, r, f);
  double *w = wrench + 6 * b;
  geo_v3_add(w, w, f);
  geo_v3_add(w + 3, w + 3, t);
}

ccsim_status sim_collide(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                         double *wrench) {
  c->n = 0;
  c->max_depth = 0;
  if (!c->ws) {
    return CCSIM_OK;  // fewer than two bodies with geometry
  }
  for (int a = 0; a < m->nbody; a++) {
    for (int b = a + 1; b < m->nbody; b++) {
      if (!collidable(m, a, b)) continue;
      sim_contact_params cp;
      sim_pair_params(m, a, b, &cp);
      if (sphere_gap(m, k, a, b) >= cp.standoff) continue;
      geo_pose xa = pose_of(k, a), xb = pose_of(k, b);
      geo_prox_info info;
      uint64_t t0 = now_ns();
      geo_query_cache *cache = c->cache ? c->cache[pair_slot(m, a, b)] : NULL;
      int rc = geo_proximity(m->bvh[a], &xa, m->bvh[b], &xb, cp.standoff, c->ws, cache,
                             c->pairs, c->cap - c->n, &info);
      c->geometry_ns += now_ns() - t0;
      if (rc == GEO_QELIMIT) {
        snprintf(c->err, sizeof c->err,
                 "more than %d contacts (bodies \"%s\" and \"%s\" alone have %d)", c->cap,
                 m->name[a], m->name[b], info.n);
        return CCSIM_ELIMIT;
      }
      if (rc != GEO_QOK) {
        snprintf(c->err, sizeof c->err, "proximity query between \"%s\" and \"%s\" failed (%d)",
                 m->name[a], m->name[b], rc);
        return CCSIM_ESOLVER;
      }
      double lambda = 1.5 * cp.alpha * cp.k;
      for (int i = 0; i < info.n; i++) {
        const geo_pair *p = &c->pairs[i];
        if (p->flags & GEO_PAIR_TOUCH) {
          // the surfaces meet: the depth past the standoff is invisible to the geometry
          snprintf(c->err, sizeof c->err,
                   "\"%s\" and \"%s\" touch (past the standoff of %g m): contact too soft "
                   "for the load or the step too long",
                   m->name[a], m->name[b], cp.standoff);
          return CCSIM_ESOLVER;
        }
        double delta = cp.standoff - p->dist;
        if (!(delta > 0)) continue;
        double va[3], vb[3], dv[3];
        point_vel(k, a, p->pa, va);
        point_vel(k, b, p->pb, vb);
        geo_v3_sub(dv, vb, va);
        double rate = -geo_v3_dot(dv, p->normal);
        double dn = cp.n == 1.0 ? delta : pow(delta, cp.n);
        double f = dn * (cp.k + lambda * rate);  // Marhefka-Orin
        sim_contact *ct = &c->contacts[c->n++];
        ct->body_a = a;
        ct->body_b = b;
        geo_v3_copy(ct->pa, p->pa);
        geo_v3_copy(ct->pb, p->pb);
        geo_v3_copy(ct->normal, p->normal);
        ct->depth = delta;
        ct->depth_rate = rate;
        ct->fa = p->fa;
        ct->fb = p->fb;
        ct->flags = p->flags;
        if (delta > c->max_depth) c->max_depth = delta;
        if (f <= 0) {
          // separating faster than the spring pushes: no pull (the clamp of the model)
          ct->force = 0;
          ct->dF_ddepth = ct->dF_drate = 0;
          continue;
        }
        ct->force = f;
        double dn1 = cp.n == 1.0 ? 1.0 : cp.n * pow(delta, cp.n - 1);
        ct->dF_ddepth = dn1 * (cp.k + lambda * rate);
        ct->dF_drate = lambda * dn;
        double fb[3], fa[3];
        geo_v3_scale(fb, p->normal, f);
        geo_v3_scale(fa, p->normal, -f);
        add_wrench(k, wrench, a, p->pa, fa);
        add_wrench(k, wrench, b, p->pb, fb);
      }
    }
  }
  return CCSIM_OK;
}

double sim_collider_time_bound(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                               double dv_extra, double horizon) {
  double best = horizon;
  if (!c->ws) return best;
  int next = 0;  // contacts are stored pair by pair in this same loop order
  for (int a = 0; a < m->nbody; a++) {
    for (int b = a + 1; b < m->nbody; b++) {
      if (!collidable(m, a, b)) continue;
      int touching = 0;
      while (next < c->n && (c->contacts[next].body_a < a ||
                             (c->contacts[next].body_a == a && c->contacts[next].body_b <= b))) {
        touching |= c->contacts[next].body_a == a && c->contacts[next].body_b == b;
        next++;
      }
      // within the standoff already: the springs act there. Skipping on the last
      // evaluation's contacts only saves a query: the pair would be skipped below anyway
      // (contacts exist exactly when the distance is below the standoff), so the bound
      // depends on the state alone and a restored checkpoint replays it
      if (touching) continue;
      sim_contact_params cp;
      sim_pair_params(m, a, b, &cp);
      // approach speed bound: relative COM speed, rim speeds of both spheres, and what
      // accelerations can add over the horizon
      double dv[3];
      geo_v3_sub(dv, k->vel + 3 * b, k->vel + 3 * a);
      double speed = geo_v3_norm(dv) + geo_v3_norm(k->omega + 3 * a) * m->bound_r[a] +
                     geo_v3_norm(k->omega + 3 * b) * m->bound_r[b] + dv_extra;
      if (!(speed > 0)) continue;
      double target = 0.5 * cp.standoff;  // a step may end at most half-way into the standoff
      double g = sphere_gap(m, k, a, b);
      if (g > cp.standoff && (g - target) / speed >= best) {
        continue;  // the sphere gap bounds the distance from below: cannot tighten the bound
      }
      geo_pose xa = pose_of(k, a), xb = pose_of(k, b);
      geo_pair p;
      uint64_t t0 = now_ns();
      geo_query_cache *cache = c->cache ? c->cache[pair_slot(m, a, b)] : NULL;
      int rc = geo_min_distance(m->bvh[a], &xa, m->bvh[b], &xb, c->ws, cache, &p);
      c->geometry_ns += now_ns() - t0;
      if (rc != GEO_QOK || p.dist <= cp.standoff) continue;  // in contact: the springs act
      double t = (p.dist - target) / speed;
      if (t < best) best = t;
    }
  }
  return best < horizon ? best : INFINITY;
}
