// Compliant contact (LaFarge & Lewis 1998; Marhefka & Orin 1997): every witness pair the
// distance engine finds closer than the standoff d_s carries the normal force
//
//   F = max(0, k delta^n + lambda delta^n delta'),  delta = d_s - d,  lambda = 1.5 alpha k
//
// acting along the pair's normal at its witness points, equal and opposite on the two
// bodies. The collider owns the per-session scratch of the geometry queries; it is
// created once (sim_collider_new) and allocation-free afterwards.
//
// Parameters of a body pair: each body's value is its override or the scene's; then
//   k          harmonic mean 2 k_a k_b / (k_a + k_b) (springs in series, scaled so two
//              equal bodies keep their k; the softer body dominates)
//   alpha      arithmetic mean
//   n          the larger (Hertz wins over linear)
//   standoff   the larger
//   mu, mu_dynamic  geometric mean sqrt(mu_a mu_b)
// so a scene without overrides uses exactly the scene's values.
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
} sim_contact;

// Placement and motion of every body at one instant (arrays of nbody, caller owns).
typedef struct sim_kinematics {
  const double *pos;    // (nbody x 3) reference-frame origin [m]
  const double *quat;   // (nbody x 4) reference-frame orientation (unit)
  const double *com;    // (nbody x 3) centre of mass, world [m]
  const double *vel;    // (nbody x 3) centre-of-mass velocity, world [m/s]
  const double *omega;  // (nbody x 3) angular velocity, world [rad/s]
} sim_kinematics;

typedef struct sim_collider sim_collider;

// Scratch for model m's contact queries: up to cap contacts at once (<= 0: 16384).
// Returns the collider (caller owns; sim_collider_destroy) or NULL + message.
sim_collider *sim_collider_new(const sim_model *m, int cap, char *err, size_t err_sz);

// Free and set *c to NULL. NULL-safe.
void sim_collider_destroy(sim_collider **c);

// Find every contact at the placement k and add the contact wrenches to wrench (nbody x 6:
// force [N] and torque about the COM [N m], world frame; caller zeroes it). Allocation-free.
// Returns CCSIM_OK; CCSIM_ESOLVER when a pair is past the standoff (distance 0: the
// geometry cannot see the depth) — recoverable, a smaller step avoids it; CCSIM_ELIMIT
// when more than cap contacts exist. sim_collider_errmsg explains.
ccsim_status sim_collide(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                         double *wrench);

// The contacts of the last sim_collide (borrowed; valid until the next call), count in *n.
const sim_contact *sim_collider_contacts(const sim_collider *c, int *n);

// Largest depth of the last sim_collide [m] (0 without contacts).
double sim_collider_max_depth(const sim_collider *c);

// Wall time spent in proximity queries since creation [ns].
uint64_t sim_collider_geometry_ns(const sim_collider *c);

// Message of the last failure (borrowed). Never NULL.
const char *sim_collider_errmsg(const sim_collider *c);

// Combined contact parameters of bodies a and b (rule in the header comment).
void sim_pair_params(const sim_model *m, int a, int b, sim_contact_params *out);

// Conservative advancement bound: the shortest time in which any pair of bodies not yet
// within its standoff (no contact at the last sim_collide) could come half-way into it, given the
// velocities in k plus a bound dv_extra [m/s] on what accelerations add over the horizon [s].
// INFINITY when no pair could get there within the horizon.
double sim_collider_time_bound(const sim_model *m, sim_collider *c, const sim_kinematics *k,
                               double dv_extra, double horizon);

#endif
