// Conservative time of impact between two moving meshes (conservative advancement,
// Mirtich 1996; the step bound Drumwright uses): from t, the distance d(t) between the
// surfaces can shrink at most at the rate mu = |v_a - v_b| + |w_a| r_a + |w_b| r_b (r: the
// largest distance of a mesh vertex from its body origin), so nothing can reach the
// distance d_min before t + (d(t) - d_min) / mu; advance by that and repeat until the
// remaining gap is below tol. The answer is never later than the true first time the
// distance reaches d_min, and for linear motion it stops within tol / (closing speed) of it.
#ifndef GEO_TOI_H
#define GEO_TOI_H

#include "geo_bvh.h"
#include "geo_query.h"

// A rigid motion with constant velocities over the interval.
typedef struct geo_motion {
  geo_pose x0;   // pose at t = 0
  double v[3];   // linear velocity of the body origin, world frame [m/s]
  double w[3];   // angular velocity, world frame [rad/s] (rotation about the body origin)
} geo_motion;

typedef struct geo_toi_result {
  int hit;        // 1: the distance reaches d_min + tol at time t (t <= true first contact);
                  // 0: it stays above d_min over the whole interval (t = T)
  int converged;  // 0 when max_iter ran out first: t is still a safe (early) bound
  double t;       // [s] conservative time of impact, in [0, T]
  double dist;    // [m] distance at t
  int iters;      // minimum-distance queries used
  geo_pair pair;  // closest pair at t (world frame)
} geo_toi_result;

// Pose of motion m at time t [s]: p = p0 + v t, q = exp(w t / 2) q0. Pure.
void geo_motion_pose(const geo_motion *m, double t, geo_pose *out);

// First time in [0, T] at which the distance between A (motion ma) and B (motion mb)
// reaches d_min [m] (0: contact; a standoff for compliant contact), conservatively.
// tol [m] (> 0; <= 0 selects 1e-9 of the meshes' size) is the gap at which the iteration
// stops; max_iter (<= 0: 10000) caps the distance queries. ws as in geo_query.h; cache
// nullable (warm starts the distance queries). Allocation-free. Returns GEO_QOK or
// GEO_QEINVAL (NULL, non-finite motion, T < 0, d_min < 0).
int geo_toi(const geo_bvh *a, const geo_motion *ma, const geo_bvh *b, const geo_motion *mb,
            double T, double d_min, double tol, int max_iter, geo_query_ws *ws,
            geo_query_cache *cache, geo_toi_result *res);

#endif
