// Conservative advancement on the hierarchy's minimum-distance query.
#include "geo_toi.h"

#include <math.h>
#include <string.h>

#include "geo_vec.h"

void geo_motion_pose(const geo_motion *m, double t, geo_pose *out) {
  for (int i = 0; i < 3; i++) {
    out->p[i] = m->x0.p[i] + m->v[i] * t;
  }
  // q(t) = exp(w t / 2) q0, the rotation by |w| t about w applied after q0 (world frame)
  double wn = geo_v3_norm(m->w);
  double q0[4] = {m->x0.q[0], m->x0.q[1], m->x0.q[2], m->x0.q[3]};
  geo_quat_normalize(q0);
  if (wn == 0.0 || t == 0.0) {
    memcpy(out->q, q0, sizeof q0);
    return;
  }
  double h = 0.5 * wn * t, s = sin(h) / wn;
  double dq[4] = {cos(h), s * m->w[0], s * m->w[1], s * m->w[2]};
  geo_quat_mul(out->q, dq, q0);
  geo_quat_normalize(out->q);
}

// largest distance of a vertex of b from its body origin (bound from the root sphere)
static double reach(const geo_bvh *b) { return geo_v3_norm(b->node[0].c) + b->node[0].r; }

static int motion_valid(const geo_motion *m) {
  if (m == NULL || !geo_pose_valid(&m->x0)) {
    return 0;
  }
  for (int i = 0; i < 3; i++) {
    if (!isfinite(m->v[i]) || !isfinite(m->w[i])) {
      return 0;
    }
  }
  return 1;
}

int geo_toi(const geo_bvh *a, const geo_motion *ma, const geo_bvh *b, const geo_motion *mb,
            double T, double d_min, double tol, int max_iter, geo_query_ws *ws,
            geo_query_cache *cache, geo_toi_result *res) {
  if (a == NULL || b == NULL || res == NULL || !motion_valid(ma) || !motion_valid(mb) ||
      !isfinite(T) || T < 0.0 || !isfinite(d_min) || d_min < 0.0 || !isfinite(tol)) {
    return GEO_QEINVAL;
  }
  memset(res, 0, sizeof *res);
  if (tol <= 0.0) {
    tol = 1e-9 * (a->scale + b->scale);
  }
  if (max_iter <= 0) {
    max_iter = 10000;
  }
  // rate bound on the shrinking of the distance
  double dv[3];
  geo_v3_sub(dv, ma->v, mb->v);
  double mu = geo_v3_norm(dv) + geo_v3_norm(ma->w) * reach(a) + geo_v3_norm(mb->w) * reach(b);
  double t = 0.0;
  res->converged = 1;
  for (;;) {
    geo_pose xa, xb;
    geo_motion_pose(ma, t, &xa);
    geo_motion_pose(mb, t, &xb);
    int rc = geo_min_distance(a, &xa, b, &xb, ws, cache, &res->pair);
    if (rc != GEO_QOK) {
      return rc;
    }
    res->iters++;
    double d = res->pair.dist;
    res->t = t;
    res->dist = d;
    if (d <= d_min + tol) {
      res->hit = 1;
      return GEO_QOK;
    }
    // nothing reaches d_min before t + (d - d_min) / mu
    if (mu == 0.0 || t + (d - d_min) / mu > T) {
      res->hit = 0;
      if (t < T) {
        // report the end of the interval and the distance there
        geo_motion_pose(ma, T, &xa);
        geo_motion_pose(mb, T, &xb);
        rc = geo_min_distance(a, &xa, b, &xb, ws, cache, &res->pair);
        if (rc != GEO_QOK) {
          return rc;
        }
        res->iters++;
        res->t = T;
        res->dist = res->pair.dist;
      }
      return GEO_QOK;
    }
    if (res->iters >= max_iter) {
      res->hit = 1;
      res->converged = 0;
      return GEO_QOK;
    }
    t += (d - d_min) / mu;
  }
}
