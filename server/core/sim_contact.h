// Compliant contact (LaFarge & Lewis 1998; Marhefka & Orin 1997): every witness pair the
// distance engine finds closer than the standoff d_s carries the normal force
//
//   F = max(0, k delta^n + lambda delta^n delta'),  delta = d_s - d,  lambda = 1.5 alpha k
//
// acting along the pair's normal at its witness points, equal and opposite on the two
// bodies. The collider owns the per-session scratch of the geometry queries; it is
// created once (sim_collider_new) at the capacity its model can need (sim_contact_capacity)
// and allocates nothing afterwards.
//
// Parameters of a body pair: each body's value is its override or the scene's; then
//   k          harmonic mean 2 k_a k_b / (k_a + k_b) (springs in series, scaled so two
//              equal bodies keep their k; the softer body dominates)
//   alpha      arithmetic mean
//   n          the larger (Hertz wins over linear)
//   standoff   the larger
//   mu, mu_dynamic  geometric mean sqrt(mu_a mu_b)
// so a scene without overrides uses exactly the scene's values.
//
// Friction (pairs with mu > 0): every contact carries a tangential spring-damper towards
// an anchor, capped by the Coulomb cone (Featherstone, RBDA section 11.8, with a static
// and a sliding coefficient):
//
//   trial = -(k_t s + c_t v_t),  k_t = k delta^(n-1),  c_t = lambda delta^n
//   F_t   = trial                      when |trial| <= mu F_n   (stuck: an elastic spring,
//                                       so a static load is held without creep)
//   F_t   = mu F_n trial / |trial|     otherwise               (on the cone)
//
// with mu = mu_dynamic while the contact's anchor is sliding, else mu (static); s the
// spring's stretch (tangential, world) and v_t the tangential relative velocity of B's
// and A's material points at the witness points. F_t acts on B at pb, -F_t on A at pa.
//
// The anchors are session state kept beside CVODE's state (sim_friction_commit): within
// one integrator step they are constants, and s(y) = T (s0 + u(y)) is the anchor's
// stretch s0 at the step's start plus the tangential displacement u of the two material
// points that were at the witness points then, so the right-hand side is a continuous
// function of (t, y) that CVODE's error control and Newton iteration see whole. After
// every accepted step the anchors move on to the new witness points carrying their
// stretch; a saturated one is returned to the cone (its stretch set so the trial force
// is exactly mu F_n along the same direction), which leaves the force at the accepted
// state unchanged. A stuck anchor dragged on the cone turns to sliding friction after a
// slip distance SIM_SLIP_DISTANCE (as rate-and-state friction's characteristic length):
// a rigid body's interface then gives way as a whole, at mu F_n summed. A sliding anchor
// sticks again at a commit where its trial force is within the sliding cone or no longer
// opposes the slip (v_t . trial >= 0: the slip stopped or turned), so static friction
// returns as soon as the slip ends. Only a stuck -> sliding switch with mu_dynamic < mu
// changes the force there (the physical drop from static to sliding friction);
// sim_friction_commit says so and the caller restarts the integrator. Rolling moves the
// witness points over both surfaces without relative motion at them, so it does not
// stretch the spring.
//
// Contact identity: an anchor belongs to a physical contact of one body pair. A contact
// of a new evaluation takes the anchor with the same pair of witness features; otherwise
// the nearest free anchor of the pair whose material point on A or on B (carried with its
// body) lies within SIM_ANCHOR_RADIUS standoffs of the witness point on that body. So an
// edge handing over to its neighbouring face, or a corner crossing into the next
// triangle, keeps its anchor. A contact left without an anchor but within that radius
// (plus the length of its witness features, up to ten times the radius: the edges of a
// fine mesh crossing those of the other body appear mid-patch, a mesh spacing from their
// neighbours) of a taken one is a
// new point of the same patch (a polygon corner appearing): it starts with that anchor's
// stretch and phase, the patch's deformation being continuous.
// Elsewhere a new contact starts with s = 0, stuck. One vertex over a fine mesh is
// reported against several triangles (the one under it, and its neighbours at their
// shared edges and vertices); only the pair that is a closest point of the other surface
// leads and owns an anchor, the others follow it (sim_contact.lead) and draw their
// stretch from that anchor, so crossing from triangle to triangle never splits or resets
// the vertex's spring.
#ifndef SIM_CONTACT_H
#define SIM_CONTACT_H

#include <stdint.h>

#include "ccsim_status.h"
#include "geo_query.h"
#include "sim_model.h"

// One contact: a witness pair within the standoff, world frame.
typedef struct sim_contact {
  int body_a, body_b;   // body ids, body_a < body_b
  double pa[3], pb[3];  // witness points on A and B [m]
  double normal[3];     // unit, from A towards B
  double depth;         // delta = d_s - d [m], > 0
  double depth_rate;    // delta' = -(v_B(pb) - v_A(pa)) . n [m/s]
  double force;         // normal force magnitude >= 0 [N]; on B: +force n, on A: -force n
  double dF_ddepth;     // dF/d delta [N/m] (0 when clamped), for the Jacobian
  double dF_drate;      // dF/d delta' [N s/m] (0 when clamped)
  geo_feature fa, fb;   // features of the witness points (mesh ids)
  int flags;            // GEO_PAIR_* bits
  // friction (all zero for pairs with mu = 0)
  double friction[3];   // tangential force on B [N] (world); -friction acts on A
  double stretch[3];    // the tangential spring's stretch s [m] (world)
  double trial[3];      // -(k_t s + c_t v_t) [N]: the force were the contact stuck
  double slip_rate[3];  // v_t: tangential velocity of B's witness point relative to A's [m/s]
  double k_t, c_t;      // tangential stiffness [N/m] and damping [N s/m] here
  double mu;            // the coefficient in force: mu_dynamic while sliding, else mu
  double cap;           // mu F_n [N]; |trial| > cap: saturated, the force on the cone
  int anchor;           // index of its anchor in the committed table; -1: none yet;
                        // -2 - j: new in the patch of anchor j, starting from its stretch
  int sliding;          // its anchor's phase: 1 sliding (mu_dynamic), 0 stuck (mu)
  int lead;             // index among the contacts of the one whose anchor it follows:
                        // itself, or the lead of its witness vertex (see Contact identity)
} sim_contact;

#define SIM_ANCHOR_RADIUS 2.0   // anchor matching radius, in standoffs of the pair
#define SIM_SLIP_DISTANCE 0.02  // slip before static friction gives way to sliding, in
                                // standoffs of the pair (20 um at 1 mm)

// Placement and motion of every body at one instant (arrays of nbody, caller owns).
typedef struct sim_kinematics {
  const double *pos;    // (nbody x 3) reference-frame origin [m]
  const double *quat;   // (nbody x 4) reference-frame orientation (unit)
  const double *com;    // (nbody x 3) centre of mass, world [m]
  const double *vel;    // (nbody x 3) centre-of-mass velocity, world [m/s]
  const double *omega;  // (nbody x 3) angular velocity, world [rad/s]
} sim_kinematics;

typedef struct sim_collider sim_collider;


// Contacts model m's bodies a and b (any order) can have at once, and all its collidable
// pairs together: distinct witness feature pairs, at most six per pair of triangles;
// capped at cap (<= 0: SIM_CONTACTS_MAX). 0 for a pair that cannot collide.
int sim_contact_pair_capacity(const sim_model *m, int a, int b, int cap);
int sim_contact_capacity(const sim_model *m, int cap);

// Scratch for model m's contact queries, every array allocated here at
// sim_contact_capacity(m, cap) contacts (cap <= 0: SIM_CONTACTS_MAX); more contacts at once
// are CCSIM_ELIMIT. Returns the collider (caller owns; sim_collider_destroy) or NULL +
// message.
sim_collider *sim_collider_new(const sim_model *m, int cap, char *err, size_t err_sz);

// Free and set *c to NULL. NULL-safe.
void sim_collider_destroy(sim_collider **c);

// Find every contact at the placement k and add the contact wrenches to wrench (nbody x 6:
// force [N] and torque about the COM [N m], world frame; caller zeroes it). Allocates
// nothing. Returns CCSIM_OK; CCSIM_ESOLVER when a pair is past the standoff (distance 0:
// the geometry cannot see the depth) — recoverable, a smaller step avoids it; CCSIM_ELIMIT
// when more contacts exist than the collider's capacity.
// sim_collider_errmsg explains.
ccsim_status sim_collide(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                         double *wrench);

// Forget what the queries cached and the last sim_collide's contacts (not the anchors): the
// collider answers from here on as a new one would. NULL-safe.
void sim_collider_forget(sim_collider *c);

// The contacts of the last sim_collide (borrowed; valid until the next call), count in *n.
const sim_contact *sim_collider_contacts(const sim_collider *c, int *n);

// Largest depth of the last sim_collide [m] (0 without contacts).
double sim_collider_max_depth(const sim_collider *c);

// Wall time spent in proximity queries since creation [ns].
uint64_t sim_collider_geometry_ns(const sim_collider *c);

// Message of the last failure (borrowed). Never NULL.
const char *sim_collider_errmsg(const sim_collider *c);

// Friction anchors: forget them all (a reset), or those of body b (it was placed anew).
void sim_friction_clear(sim_collider *c, int body);

// Whether the model has any collidable pair with mu > 0 (then steps commit anchors).
int sim_friction_active(const sim_collider *c);

// After an accepted integrator step: the contacts of the last sim_collide (which must be
// at the accepted state, placed as k) become the committed anchors, each carrying its stretch, a
// saturated one returned to the cone; anchors without a contact there are dropped.
// Returns 1 when a contact switched from stuck to sliding with mu_dynamic < mu (the force
// dropped: the integrator must restart), else 0. Allocation-free.
int sim_friction_commit(const sim_model *m, sim_collider *c, const sim_kinematics *k);

// Anchors committed (alive) now.
int sim_friction_anchors(const sim_collider *c);

// Make dst's committed anchors a copy of src's (two colliders of one model). CCSIM_ELIMIT
// (dst unchanged) when dst's capacity cannot hold them.
ccsim_status sim_friction_copy(sim_collider *dst, const sim_collider *src);

// Doubles of the committed anchors in a snapshot (1 + SIM_ANCHOR_DOUBLES per anchor).
#define SIM_ANCHOR_DOUBLES 20
size_t sim_friction_snapshot_size(const sim_collider *c);

// Write the anchors into buf (sim_friction_snapshot_size doubles).
void sim_friction_snapshot_get(const sim_collider *c, double *buf);

// Read anchors written by sim_friction_snapshot_get for model m from buf (n doubles);
// CCSIM_EINVAL (nothing changed) when malformed, bodies are out of range or there are more
// anchors than c's capacity. Allocates nothing.
ccsim_status sim_friction_snapshot_set(const sim_model *m, sim_collider *c, const double *buf,
                                       size_t n);

// Combined contact parameters of bodies a and b (rule in the header comment).
void sim_pair_params(const sim_model *m, int a, int b, sim_contact_params *out);

// Conservative advancement bound: the shortest time in which any pair of bodies not yet
// within its standoff (no contact at the last sim_collide) could come half-way into it, given
// the velocities in k and a bound accel [m/s^2] on their approach's acceleration.
// With touching_too, a pair within its standoff counts as well: the time it needs to leave
// and come back half-way in (the compliant mode's springs do not hold a pair that flies
// off; the rigid mode's LCP does). INFINITY when no pair could get there within the horizon.
double sim_collider_time_bound(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                               double accel, double horizon, int touching_too);

#endif
