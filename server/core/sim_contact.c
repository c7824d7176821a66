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
#define SIM_RAW_PER_CONTACT \
  4                              // workspace room for witness pairs before merging, per
                                 // contact of the limit
#define SIM_PARALLEL_ANGLE 0.05  // [rad] faces closer to parallel meet at overlap corners

// A friction anchor: the tangential spring of one physical contact, committed after an
// accepted integrator step (sim_contact.h explains the model).
typedef struct sim_anchor {
  int body_a, body_b;
  geo_feature fa, fb;   // witness features at the commit
  double ra[3], rb[3];  // witness points at the commit, in A's and B's reference frames [m]
  double gap[3];        // pb - pa at the commit, in A's reference frame [m]
  double s[3];          // stretch at the commit (world) [m]
  double slip;          // distance it was dragged on the cone since it last stuck [m]
  int sliding;          // 1: sliding (mu_dynamic), 0: stuck (mu)
} sim_anchor;

struct sim_collider {
  geo_query_ws *ws;         // one workspace sized for the two largest hierarchies
  geo_query_cache **cache;  // (nbody (nbody - 1) / 2) per body pair, NULL entries for pairs
                            // that cannot collide; NULL when the model has too many pairs
  geo_pair *pairs;          // (cap) proximity output of one body pair
  sim_contact *contacts;    // (cap) contacts of the last sim_collide
  size_t nslots;            // entries of cache
  int cap;                  // entries of the arrays marked (cap), allocated at _new:
                            // more contacts at once are CCSIM_ELIMIT
  int limit;                // the limit asked of sim_collider_new (sizes the raw workspace)
  int n;
  double max_depth;  // [m]
  uint64_t geometry_ns;
  // friction
  int friction;            // some collidable pair has mu > 0
  sim_anchor *anc;         // (cap) committed anchors, sorted by body pair like the contacts
  sim_anchor *anc_next;    // (cap) the table being committed
  double *anc_world;       // (cap x 6) an evaluation's anchor points A(ra), B(rb) (world)
  unsigned char *claimed;  // (cap) anchors taken by a contact in this evaluation
  int nanc;
  // the lead contact of each vertex in one body pair's evaluation (find_leads)
  int nvert;             // entries of each table below: the largest mesh's vertex count
  unsigned stamp;        // current pair evaluation; a table entry is valid if it matches
  unsigned *lead_stamp;  // (2 x nvert) for A's vertices, then B's; NULL without friction
  int *lead_of;          // (2 x nvert) contact index of the vertex's deepest lead
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

// Contacts one body pair can have at once: distinct witness feature pairs (a merged
// contact is one pair of features), and at most one raw pair per leaf pair, or six (the
// corners of two parallel triangles' overlap). 0 for pairs that cannot collide.
static double pair_capacity(const sim_model *m, int a, int b) {
  if (!collidable(m, a, b)) return 0;
  const geo_bvh *ba = m->bvh[a], *bb = m->bvh[b];
  double fa = (double)ba->nvert + ba->nedge + ba->ntri, fb = (double)bb->nvert + bb->nedge + bb->ntri;
  double raw = 6.0 * ba->ntri * bb->ntri;
  return fa * fb < raw ? fa * fb : raw;
}

int sim_contact_pair_capacity(const sim_model *m, int a, int b, int cap) {
  int lim = cap > 0 ? cap : SIM_CONTACTS_MAX;
  double n = pair_capacity(m, a, b);
  return n < lim ? (int)n : lim;
}

int sim_contact_capacity(const sim_model *m, int cap) {
  int lim = cap > 0 ? cap : SIM_CONTACTS_MAX;
  double n = 0;
  for (int a = 0; a < m->nbody && n < lim; a++) {
    for (int b = a + 1; b < m->nbody && n < lim; b++) n += pair_capacity(m, a, b);
  }
  return n < lim ? (int)n : lim;
}

sim_collider *sim_collider_new(const sim_model *m, int cap, char *err, size_t err_sz) {
  sim_collider *c = calloc(1, sizeof *c);
  if (!c) {
    if (err) snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  // every array at its capacity now: a step never grows them
  c->limit = cap > 0 ? cap : SIM_CONTACTS_MAX;
  c->cap = sim_contact_capacity(m, c->limit);
  size_t n = c->cap > 0 ? (size_t)c->cap : 1;
  c->pairs = malloc(n * sizeof *c->pairs);
  c->contacts = malloc(n * sizeof *c->contacts);
  c->anc = malloc(n * sizeof *c->anc);
  c->anc_next = malloc(n * sizeof *c->anc_next);
  c->anc_world = malloc(n * 6 * sizeof *c->anc_world);
  c->claimed = malloc(n * sizeof *c->claimed);
  if (!c->pairs || !c->contacts || !c->anc || !c->anc_next || !c->anc_world || !c->claimed) {
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
    c->ws = geo_query_ws_new(m->bvh[big], m->bvh[second], SIM_RAW_PER_CONTACT * c->limit, gerr,
                             sizeof gerr);
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
    for (int b = a + 1; b < m->nbody; b++) {
      if (!collidable(m, a, b)) continue;
      npairs++;
      sim_contact_params cp;
      sim_pair_params(m, a, b, &cp);
      if (cp.mu > 0 || cp.mu_dynamic > 0) c->friction = 1;
    }
  }
  if (c->friction) {
    // find_leads' tables, for friction pairs only
    for (int i = 0; i < m->nbody; i++) {
      if (m->mesh[i] && m->mesh[i]->nvert > c->nvert) c->nvert = m->mesh[i]->nvert;
    }
    c->lead_stamp = calloc(2 * (size_t)c->nvert + 1, sizeof *c->lead_stamp);
    c->lead_of = calloc(2 * (size_t)c->nvert + 1, sizeof *c->lead_of);
    if (!c->lead_stamp || !c->lead_of) {
      if (err)
        snprintf(err, err_sz, "out of memory for the friction tables of %d vertices", c->nvert);
      sim_collider_destroy(&c);
      return NULL;
    }
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
        // two standoffs: the list is sorted and bounded per candidate, so a longer one costs
        // little per query while refills (full traversals) halve (Rock-N-Stack: 198 -> 78)
        double margin = fmax(2.0 * m->contact.standoff, 1e-4);
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
  free(c->anc);
  free(c->anc_next);
  free(c->anc_world);
  free(c->claimed);
  free(c->lead_stamp);
  free(c->lead_of);
  free(c);
  *pc = NULL;
}

void sim_collider_forget(sim_collider *c) {
  if (!c) return;
  for (size_t i = 0; c->cache && i < c->nslots; i++) geo_query_cache_reset(c->cache[i]);
  c->n = 0;
  c->max_depth = 0;
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

// ---- friction ----------------------------------------------------------------------

static int same_feature(geo_feature x, geo_feature y) { return x.type == y.type && x.id == y.id; }

// body b's reference frame at k
static void xform_of(const sim_kinematics *k, int b, geo_xform *X) {
  geo_xform_from_pose(X, k->pos + 3 * b, k->quat + 4 * b);
}

// The anchors of pair (a, b) among the committed ones, which are sorted by pair: the
// first index at or after *from, and the count. Advances *from past them.
static int pair_anchors(const sim_collider *c, int a, int b, int *from) {
  int j = *from;
  while (j < c->nanc && (c->anc[j].body_a < a || (c->anc[j].body_a == a && c->anc[j].body_b < b))) {
    j++;
  }
  int j0 = j;
  while (j < c->nanc && c->anc[j].body_a == a && c->anc[j].body_b == b) j++;
  *from = j;
  return j0;
}

// The anchor a contact draws its stretch from: its own, or (anchor <= -2) the one of the
// patch it was born into; NULL for none.
static const sim_anchor *anchor_of(const sim_collider *c, const sim_contact *ct) {
  return ct->anchor >= 0 ? &c->anc[ct->anchor] : ct->anchor <= -2 ? &c->anc[-2 - ct->anchor] : NULL;
}

enum { MATCH_SAME_FEATURES, MATCH_FREE, MATCH_ANY };

// The nearest anchor among [j0, j1) (of ct's pair) within squared radius r2 of ct's
// witness point on A or on B (anchor points carried with bodies), restricted by rule;
// -1 when none.
static int nearest_anchor(const sim_collider *c, const sim_contact *ct, int j0, int j1,
                          double r2, int rule) {
  int pick = -1;
  for (int j = j0; j < j1; j++) {
    const sim_anchor *an = &c->anc[j];
    if (rule != MATCH_ANY && c->claimed[j]) continue;
    if (rule == MATCH_SAME_FEATURES &&
        !(same_feature(an->fa, ct->fa) && same_feature(an->fb, ct->fb))) {
      continue;
    }
    const double *w = c->anc_world + 6 * j;
    double d2 = fmin(geo_v3_dist2(w, ct->pa), geo_v3_dist2(w + 3, ct->pb));
    if (d2 < r2) r2 = d2, pick = j;
  }
  return pick;
}

// Set ct->lead for contacts [i0, i1) of pair (a, b) placed at xa, xb. A vertex over
// triangle F1 of a fine mesh is one physical contact, but the engine also reports it
// against F1's neighbours, at their shared edges or vertices (each the closest point of
// its own triangle, not of the surface: the other surface comes closer just off that
// feature, geo_mesh_descends). Those follow the vertex's lead -- a pair of the same
// vertex that is a closest point of the other surface, the deepest if there are several
// (a vertex in a groove) -- and draw their stretch from its anchor instead of keeping
// their own: one anchor per physical contact, whichever triangle lies under it. Their
// normal forces stay as they are (the spring sum is continuous in the poses), and each
// still caps its own friction at mu times its own normal force.
static void find_leads(const sim_model *m, sim_collider *c, const geo_xform *xa,
                       const geo_xform *xb, int a, int b, int i0, int i1) {
  const geo_mesh *mesh[2] = {m->mesh[a], m->mesh[b]};
  const geo_xform *x[2] = {xa, xb};
  if (++c->stamp == 0) {  // wrapped: forget every entry
    memset(c->lead_stamp, 0, 2 * (size_t)c->nvert * sizeof *c->lead_stamp);
    c->stamp = 1;
  }
  for (int i = i0; i < i1; i++) {
    sim_contact *ct = &c->contacts[i];
    const geo_feature f[2] = {ct->fa, ct->fb};
    const double *p[2] = {ct->pa, ct->pb};
    ct->lead = i;
    for (int s = 0; s < 2 && ct->lead == i; s++) {
      if (f[s].type != GEO_FEAT_VERTEX) continue;
      // from the other body's witness point towards the vertex, in that body's frame
      double d[3], dl[3];
      geo_v3_sub(d, p[s], p[1 - s]);
      geo_m3_tmulv(dl, x[1 - s]->R, d);
      if (geo_mesh_descends(mesh[1 - s], f[1 - s], dl)) ct->lead = -1 - s;  // follows s
    }
    if (ct->lead != i) continue;
    for (int s = 0; s < 2; s++) {  // a lead for each of its vertices
      if (f[s].type != GEO_FEAT_VERTEX) continue;
      size_t slot = (size_t)s * (size_t)c->nvert + (size_t)f[s].id;
      if (c->lead_stamp[slot] != c->stamp || c->contacts[c->lead_of[slot]].depth < ct->depth) {
        c->lead_stamp[slot] = c->stamp;
        c->lead_of[slot] = i;
      }
    }
  }
  for (int i = i0; i < i1; i++) {
    sim_contact *ct = &c->contacts[i];
    if (ct->lead >= 0) continue;
    int s = -1 - ct->lead;
    size_t slot = (size_t)s * (size_t)c->nvert + (size_t)(s == 0 ? ct->fa.id : ct->fb.id);
    ct->lead = c->lead_stamp[slot] == c->stamp ? c->lead_of[slot] : i;
  }
}

// Followers among contacts [i0, i1) draw from their lead's anchor (the lead's own, or the
// patch's it was born into); run after the leads' anchors are set.
static void follow_leads(sim_collider *c, int i0, int i1) {
  for (int i = i0; i < i1; i++) {
    sim_contact *ct = &c->contacts[i];
    if (ct->lead == i) continue;
    int j = c->contacts[ct->lead].anchor;
    ct->anchor = j >= 0 ? -2 - j : j;
  }
}

// the longest edge on or around feature f of mesh m (a vertex's incident edges, an edge, a
// face's sides) [m]
static double feature_size(const geo_mesh *m, geo_feature f) {
  double l2 = 0;
  if (f.type == GEO_FEAT_VERTEX) {
    for (int k = m->vert_edge_start[f.id]; k < m->vert_edge_start[f.id + 1]; k++) {
      const int *e = m->edge + 2 * m->vert_edge[k];
      l2 = fmax(l2, geo_v3_dist2(m->vert + 3 * e[0], m->vert + 3 * e[1]));
    }
  } else if (f.type == GEO_FEAT_EDGE) {
    const int *e = m->edge + 2 * f.id;
    l2 = geo_v3_dist2(m->vert + 3 * e[0], m->vert + 3 * e[1]);
  } else {
    const int *t = m->tri + 3 * f.id;
    for (int k = 0; k < 3; k++) {
      l2 = fmax(l2, geo_v3_dist2(m->vert + 3 * t[k], m->vert + 3 * t[(k + 1) % 3]));
    }
  }
  return sqrt(l2);
}

// Give contacts [i0, i1) of the pair placed at xa, xb their anchors among [j0, j1): the
// nearest free one with the same witness features, else the nearest free one, each within
// radius r. A contact still without one but within r (plus the length of its witness
// features, up to 10 r in all) of a taken one is a new point of an existing patch (a polygon
// corner, or an edge crossing appearing): it starts from that anchor's stretch, as the patch's
// deformation is continuous, and stays stuck or sliding with it (anchor = -2 - j).
static void match_anchors(const sim_model *m, sim_collider *c, const geo_xform *xa,
                          const geo_xform *xb, int i0, int i1, int j0, int j1, double r) {
  for (int j = j0; j < j1; j++) {
    double *w = c->anc_world + 6 * j;
    geo_xform_point(w, xa, c->anc[j].ra);
    geo_xform_point(w + 3, xb, c->anc[j].rb);
    c->claimed[j] = 0;
  }
  for (int i = i0; i < i1; i++) c->contacts[i].anchor = -1;
  // with no anchors every contact stays without one (and nothing needs measuring)
  for (int rule = MATCH_SAME_FEATURES; rule <= MATCH_ANY && j1 > j0; rule++) {
    for (int i = i0; i < i1; i++) {
      sim_contact *ct = &c->contacts[i];
      if (ct->anchor != -1 || ct->lead != i) continue;
      // a point born into a patch may lie a feature's length from its nearest neighbour
      // there (an edge of one body newly crossing an edge of the other mid-patch); no
      // farther than ten radii, so a big face does not join far-apart patches
      double rr = r;
      if (rule == MATCH_ANY) {
        rr += fmin(9 * r, fmax(feature_size(m->mesh[ct->body_a], ct->fa),
                               feature_size(m->mesh[ct->body_b], ct->fb)));
      }
      int j = nearest_anchor(c, ct, j0, j1, rr * rr, rule);
      if (j < 0) continue;
      if (rule == MATCH_ANY) {
        ct->anchor = -2 - j;
      } else {
        c->claimed[j] = 1;
        ct->anchor = j;
      }
    }
  }
  follow_leads(c, i0, i1);
}

// Reduced mass of bodies a and b [kg]: a body that is not free counts as infinitely heavy.
static double pair_mass(const sim_model *m, int a, int b) {
  double inv = 0;
  if (m->type[a] == SIM_BODY_FREE && m->mass[a] > 0) inv += 1 / m->mass[a];
  if (m->type[b] == SIM_BODY_FREE && m->mass[b] > 0) inv += 1 / m->mass[b];
  return inv > 0 ? 1 / inv : 0;
}

// The friction force of contact ct of the pair placed at xa with parameters cp
// (sim_contact.h), from its anchor (or none), into ct and the bodies' wrenches.
// ct->slip_rate is set by the caller.
static void contact_friction(const sim_collider *c, const sim_kinematics *k, const geo_xform *xa,
                             const sim_contact_params *cp, double mred, sim_contact *ct,
                             double *wrench) {
  double s[3] = {0, 0, 0};
  const sim_anchor *an = anchor_of(c, ct);
  ct->sliding = an ? an->sliding : 0;
  if (an) {
    const double *w = c->anc_world + 6 * (an - c->anc);
    double gap[3], u[3], s0[3];
    // the committed stretch turned into this contact's tangent plane (its length kept:
    // the normal turns with the bodies, or differs for a point born into the patch),
    // plus the tangential displacement of the anchored material points since the commit
    geo_v3_reject(s0, an->s, ct->normal);
    double lp = geo_v3_norm(s0);
    if (lp > 0) geo_v3_scale(s0, s0, geo_v3_norm(an->s) / lp);
    geo_m3_mulv(gap, xa->R, an->gap);
    geo_v3_sub(u, w + 3, w);
    geo_v3_sub(u, u, gap);
    geo_v3_reject(s, u, ct->normal);
    geo_v3_add(s, s, s0);
  }
  double lambda = 1.5 * cp->alpha * cp->k;
  ct->k_t = cp->n == 1.0 ? cp->k : cp->k * pow(ct->depth, cp->n - 1);
  // the normal law's damping vanishes with the depth, which leaves a stuck contact ringing
  // on its tangential spring (damping ratio ~0.01 at rest) for CVODE to resolve for
  // seconds. A bristle damper (LuGre's sigma1) of a quarter of critical for one contact
  // alone makes a resting patch of ~16 contacts critically damped (the ratio grows with
  // the square root of their number). Measured on the Rock-N-Stack with friction: 1/4 of
  // critical 6.6k CVODE steps in the first second, 1 x critical 29k, 2 x 46k (a sliding
  // contact's direction then turns on a velocity scale cap / c_t that is too fine).
  ct->c_t =
      lambda * (cp->n == 1.0 ? ct->depth : pow(ct->depth, cp->n)) + 0.5 * sqrt(ct->k_t * mred);
  ct->mu = ct->sliding ? cp->mu_dynamic : cp->mu;
  ct->cap = ct->mu * ct->force;
  geo_v3_copy(ct->stretch, s);
  for (int j = 0; j < 3; j++) ct->trial[j] = -(ct->k_t * s[j] + ct->c_t * ct->slip_rate[j]);
  double tn = geo_v3_norm(ct->trial);
  geo_v3_scale(ct->friction, ct->trial, tn <= ct->cap ? 1.0 : ct->cap / tn);
  double fa[3];
  geo_v3_scale(fa, ct->friction, -1.0);
  add_wrench(k, wrench, ct->body_a, ct->pa, fa);
  add_wrench(k, wrench, ct->body_b, ct->pb, ct->friction);
}

void sim_friction_clear(sim_collider *c, int body) {
  int n = 0;
  for (int j = 0; j < c->nanc; j++) {
    if (body < 0 || c->anc[j].body_a == body || c->anc[j].body_b == body) continue;
    c->anc[n++] = c->anc[j];
  }
  c->nanc = n;
  for (int i = 0; i < c->n; i++) c->contacts[i].anchor = -1;  // indices are stale
}

int sim_friction_active(const sim_collider *c) { return c && c->friction; }

int sim_friction_anchors(const sim_collider *c) { return c ? c->nanc : 0; }

int sim_friction_commit(const sim_model *m, sim_collider *c, const sim_kinematics *k) {
  int restart = 0, n = 0, a = -1, b = -1;
  geo_xform xa = {{0}, {0}}, xb = xa;  // of the pair (a, b): contacts come pair by pair
  for (int i = 0; i < c->n; i++) {
    sim_contact *ct = &c->contacts[i];
    if (!(ct->k_t > 0)) {
      ct->anchor = -1;  // frictionless pair
      continue;
    }
    if (ct->lead != i) continue;  // a follower: its lead's anchor is the contact's
    sim_anchor *an = &c->anc_next[n];
    if (ct->body_a != a || ct->body_b != b) {
      a = ct->body_a, b = ct->body_b;
      xform_of(k, a, &xa);
      xform_of(k, b, &xb);
    }
    an->body_a = a, an->body_b = b;
    an->fa = ct->fa, an->fb = ct->fb;
    geo_xform_inv_point(an->ra, &xa, ct->pa);
    geo_xform_inv_point(an->rb, &xb, ct->pb);
    double r[3];
    geo_v3_sub(r, ct->pb, ct->pa);
    geo_m3_tmulv(an->gap, xa.R, r);
    geo_v3_copy(an->s, ct->stretch);
    double tn = geo_v3_norm(ct->trial);
    const sim_anchor *prev = anchor_of(c, ct);
    an->slip = prev ? prev->slip : 0;
    if (tn > ct->cap && !(ct->sliding && geo_v3_dot(ct->slip_rate, ct->trial) >= 0)) {
      // saturated: the anchor is dragged. Return the trial force to the cone along its
      // own direction, s' = s + e (|trial| - cap') / k_t, so the force at this state stays
      // what the integrator saw -- unless the coefficient drops from static to sliding,
      // the physical drop of the force, which needs a restart. Static friction gives way
      // to sliding friction after a slip distance (SIM_SLIP_DISTANCE standoffs, the
      // characteristic length of the static-to-kinetic transition): one corner of a
      // rigid body reaching its cap while the others still hold is not a slip.
      double cap = ct->cap;
      an->slip += (tn - cap) / ct->k_t;
      an->sliding = ct->sliding;
      sim_contact_params cp;
      sim_pair_params(m, a, b, &cp);
      if (!ct->sliding && an->slip > SIM_SLIP_DISTANCE * cp.standoff) {
        an->sliding = 1;
        cap = cp.mu_dynamic * ct->force;
        if (cp.mu_dynamic < ct->mu) restart = 1;
      }
      geo_v3_madd(an->s, an->s, (tn - cap) / (tn * ct->k_t), ct->trial);
    } else {
      an->sliding = 0;  // within the cone, or the slip stopped: stuck (again)
      an->slip = 0;
    }
    ct->anchor = n++;
  }
  follow_leads(c, 0, c->n);  // frictionless contacts lead themselves
  sim_anchor *t = c->anc;
  c->anc = c->anc_next;
  c->anc_next = t;
  c->nanc = n;
  return restart;
}

ccsim_status sim_friction_copy(sim_collider *dst, const sim_collider *src) {
  if (src->nanc > dst->cap) return CCSIM_ELIMIT;  // colliders of one model have one capacity
  memcpy(dst->anc, src->anc, sizeof(sim_anchor) * (size_t)src->nanc);
  dst->nanc = src->nanc;
  return CCSIM_OK;
}

size_t sim_friction_snapshot_size(const sim_collider *c) {
  return 1 + (size_t)(c ? c->nanc : 0) * SIM_ANCHOR_DOUBLES;
}

void sim_friction_snapshot_get(const sim_collider *c, double *buf) {
  int n = c ? c->nanc : 0;
  *buf++ = n;
  for (int j = 0; j < n; j++, buf += SIM_ANCHOR_DOUBLES) {
    const sim_anchor *an = &c->anc[j];
    buf[0] = an->body_a, buf[1] = an->body_b;
    buf[2] = an->fa.type, buf[3] = an->fa.id, buf[4] = an->fb.type, buf[5] = an->fb.id;
    geo_v3_copy(buf + 6, an->ra);
    geo_v3_copy(buf + 9, an->rb);
    geo_v3_copy(buf + 12, an->gap);
    geo_v3_copy(buf + 15, an->s);
    buf[18] = an->sliding;
    buf[19] = an->slip;
  }
}

// an integer-valued double within [lo, hi]
static int int_in(double x, double lo, double hi) { return x >= lo && x <= hi && x == floor(x); }

ccsim_status sim_friction_snapshot_set(const sim_model *m, sim_collider *c, const double *buf,
                                       size_t n) {
  if (n < 1 || !int_in(buf[0], 0, c ? c->cap : 0) ||
      n != 1 + (size_t)buf[0] * SIM_ANCHOR_DOUBLES) {
    return CCSIM_EINVAL;
  }
  int na = (int)buf[0];
  const double *in = buf + 1;
  for (int j = 0; j < na; j++, in += SIM_ANCHOR_DOUBLES) {
    int ok = int_in(in[0], 0, m->nbody - 1) && int_in(in[1], in[0] + 1, m->nbody - 1) &&
             int_in(in[2], 0, 2) && int_in(in[4], 0, 2) && int_in(in[3], 0, INT32_MAX) &&
             int_in(in[5], 0, INT32_MAX) && (in[18] == 0 || in[18] == 1);
    // sorted by body pair, as sim_collide visits them
    if (ok && j > 0) ok = in[0] > in[-SIM_ANCHOR_DOUBLES] ||
                          (in[0] == in[-SIM_ANCHOR_DOUBLES] && in[1] >= in[1 - SIM_ANCHOR_DOUBLES]);
    for (int l = 6; ok && l < 18; l++) ok = isfinite(in[l]);
    ok = ok && isfinite(in[19]) && in[19] >= 0;
    if (!ok) return CCSIM_EINVAL;
  }
  in = buf + 1;
  for (int j = 0; j < na; j++, in += SIM_ANCHOR_DOUBLES) {
    sim_anchor *an = &c->anc[j];
    an->body_a = (int)in[0], an->body_b = (int)in[1];
    an->fa.type = (int)in[2], an->fa.id = (int)in[3];
    an->fb.type = (int)in[4], an->fb.id = (int)in[5];
    geo_v3_copy(an->ra, in + 6);
    geo_v3_copy(an->rb, in + 9);
    geo_v3_copy(an->gap, in + 12);
    geo_v3_copy(an->s, in + 15);
    an->sliding = (int)in[18];
    an->slip = in[19];
  }
  if (c) c->nanc = na;
  for (int i = 0; c && i < c->n; i++) c->contacts[i].anchor = -1;
  return CCSIM_OK;
}

ccsim_status sim_collide(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                         double *wrench) {
  c->n = 0;
  c->max_depth = 0;
  if (!c->ws) {
    return CCSIM_OK;  // fewer than two bodies with geometry
  }
  int anc_from = 0;  // committed anchors are visited pair by pair in this loop's order
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
      int rc = geo_proximity(m->bvh[a], &xa, m->bvh[b], &xb, cp.standoff, c->ws, cache, c->pairs,
                             c->cap - c->n, &info);
      c->geometry_ns += now_ns() - t0;
      if (rc == GEO_QELIMIT) {
        // either the merged pairs or, before merging, the workspace's raw ones overflowed
        if (info.n > 0) {
          snprintf(c->err, sizeof c->err,
                   "more than %d contacts, the capacity of this scene's contact arrays "
                   "(bodies \"%s\" and \"%s\" alone have %d)",
                   c->cap, m->name[a], m->name[b], info.n);
        } else {
          snprintf(c->err, sizeof c->err,
                   "more than %d witness pairs before merging, the room of a limit of %d "
                   "contacts (bodies \"%s\" and \"%s\" alone have %d)",
                   SIM_RAW_PER_CONTACT * c->limit, c->limit, m->name[a], m->name[b], info.n_raw);
        }
        return CCSIM_ELIMIT;
      }
      if (rc != GEO_QOK) {
        snprintf(c->err, sizeof c->err, "proximity query between \"%s\" and \"%s\" failed (%d)",
                 m->name[a], m->name[b], rc);
        return CCSIM_ESOLVER;
      }
      double lambda = 1.5 * cp.alpha * cp.k;
      int i0 = c->n;
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
        memset(ct, 0, sizeof *ct);
        ct->anchor = -1;
        ct->lead = c->n - 1;  // its own, unless find_leads says otherwise
        ct->body_a = a;
        ct->body_b = b;
        geo_v3_copy(ct->pa, p->pa);
        geo_v3_copy(ct->pb, p->pb);
        geo_v3_copy(ct->normal, p->normal);
        ct->depth = delta;
        ct->depth_rate = rate;
        geo_v3_reject(ct->slip_rate, dv, p->normal);
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
      if (cp.mu > 0 || cp.mu_dynamic > 0) {
        int j0 = pair_anchors(c, a, b, &anc_from);
        if (c->n > i0) {
          geo_xform Xa, Xb;
          geo_xform_from_pose(&Xa, xa.p, xa.q);
          geo_xform_from_pose(&Xb, xb.p, xb.q);
          find_leads(m, c, &Xa, &Xb, a, b, i0, c->n);
          match_anchors(m, c, &Xa, &Xb, i0, c->n, j0, anc_from, SIM_ANCHOR_RADIUS * cp.standoff);
          double mred = pair_mass(m, a, b);
          for (int i = i0; i < c->n; i++) {
            contact_friction(c, k, &Xa, &cp, mred, &c->contacts[i], wrench);
          }
        }
      }
    }
  }
  return CCSIM_OK;
}

// The time a pair approaching at speed v [m/s], its approach accelerating at most by accel
// [m/s^2], needs to close the distance d [m]: the root of v t + accel t^2 / 2 = d (in a
// form that keeps its digits when accel is small or zero)
static double time_to_close(double d, double v, double accel) {
  return 2 * d / (v + sqrt(v * v + 2 * accel * d));
}

double sim_collider_time_bound(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                               double accel, double horizon, int touching_too) {
  double best = horizon;
  if (!c->ws) return best;
  int next = 0;  // contacts are stored pair by pair in this same loop order
  for (int a = 0; a < m->nbody; a++) {
    for (int b = a + 1; b < m->nbody; b++) {
      if (!collidable(m, a, b)) continue;
      if (!touching_too) {
        // the rigid mode's LCP holds the pairs of its last contacts: skipped without a query
        int touching = 0;
        while (next < c->n && (c->contacts[next].body_a < a ||
                               (c->contacts[next].body_a == a && c->contacts[next].body_b <= b))) {
          touching |= c->contacts[next].body_a == a && c->contacts[next].body_b == b;
          next++;
        }
        if (touching) continue;
      }
      sim_contact_params cp;
      sim_pair_params(m, a, b, &cp);
      // approach speed bound: relative COM speed and rim speeds of both spheres
      double dv[3];
      geo_v3_sub(dv, k->vel + 3 * b, k->vel + 3 * a);
      double speed = geo_v3_norm(dv) + geo_v3_norm(k->omega + 3 * a) * m->bound_r[a] +
                     geo_v3_norm(k->omega + 3 * b) * m->bound_r[b];
      if (!(speed > 0) && !(accel > 0)) continue;
      double target = 0.5 * cp.standoff;  // a step may end at most half-way into the standoff
      double g = sphere_gap(m, k, a, b);
      if (g > cp.standoff && time_to_close(g - target, speed, accel) >= best) {
        continue;  // the sphere gap bounds the distance from below: cannot tighten the bound
      }
      geo_pose xa = pose_of(k, a), xb = pose_of(k, b);
      geo_pair p;
      uint64_t t0 = now_ns();
      geo_query_cache *cache = c->cache ? c->cache[pair_slot(m, a, b)] : NULL;
      // only a pair that can close to target within best can tighten the bound: the query
      // skips the exact distance of any farther one (most pairs while bodies approach).
      // That covers a pair within the standoff whose own bound (below) is tighter: it is
      // closer than 2 target. The margin keeps rounding from dropping a pair the
      // comparison below would take
      double below = (target + speed * best + 0.5 * accel * best * best) * (1 + 1e-9) + 1e-12;
      int rc = geo_min_distance_below(m->bvh[a], &xa, m->bvh[b], &xb, below, c->ws, cache, &p);
      c->geometry_ns += now_ns() - t0;
      if (rc != GEO_QOK) continue;
      double t;
      if (p.dist > cp.standoff) {
        t = time_to_close(p.dist - target, speed, accel);
      } else if (touching_too) {
        // Within the standoff already: the springs act there, but the pair may leave it
        // and come back inside the stretch, and in free flight CVODE's steps grow until
        // one crosses the whole other body (a ball bouncing once, then falling through
        // the floor in a 0.8 s request). Out and back half-way in is half the standoff at
        // least. Decided on the distance at this state, so a restored checkpoint, whose
        // contacts are not yet evaluated, bounds its steps as the live session does
        t = time_to_close(target, speed, accel);
      } else {
        continue;  // in contact: the LCP acts
      }
      if (t < best) best = t;
    }
  }
  return best < horizon ? best : INFINITY;
}
