// The Rock-N-Stack benchmark scene shared by bench_geom.c and bench_geom_fcl.cpp, so both
// programs query the very same meshes (built by our primitives) at the very same poses.
// Torus R = 0.05 m, r = 0.015 m, 48 x 24, coaxial over a closed cone r = 0.06 m,
// h = 0.2 m, 64 segments (side in 1 or 16 rings); the torus centre at the height where its
// tube circle is 0.25 mm from the smooth cone surface, or 1 cm higher; standoff 1 mm.
// Poses: the torus translated by a jitter uniform in a ball of radius 0.1 mm (seeded).
#ifndef BENCH_GEOM_SCENE_H
#define BENCH_GEOM_SCENE_H

#include <math.h>

#include "geo_prim.h"

#define BG_TORUS_R 0.05
#define BG_TORUS_r 0.015
#define BG_TORUS_NMAJOR 48
#define BG_TORUS_NMINOR 24
#define BG_CONE_R 0.06
#define BG_CONE_H 0.2
#define BG_CONE_SEG 64
#define BG_GAP 0.25e-3    // [m] tube circle to smooth cone surface
#define BG_LIFT 0.01      // [m] the "1 cm higher" case
#define BG_STANDOFF 1e-3  // [m]
#define BG_JITTER 0.1e-3  // [m] jitter radius (poses differ by less than this from nominal)
#define BG_NPOSE 1000     // queries per figure

// height of the torus centre (its tube circle `gap` from the smooth cone side)
static inline double bg_torus_height(double lift) {
  double nrm = sqrt(BG_CONE_H * BG_CONE_H + BG_CONE_R * BG_CONE_R);
  return ((BG_TORUS_r + BG_GAP) * nrm - BG_CONE_H * BG_TORUS_R + BG_CONE_R * BG_CONE_H) /
             BG_CONE_R + lift;
}

// The torus and the cone with `rings` rings on its side (caller owns both; either NULL
// with the reason in err when it cannot be built): the one place both programs take the
// scene's meshes from
static inline void bg_meshes(int rings, geo_mesh **torus, geo_mesh **cone, char *err,
                             size_t err_sz) {
  *torus = geo_mesh_torus(BG_TORUS_R, BG_TORUS_r, BG_TORUS_NMAJOR, BG_TORUS_NMINOR, err, err_sz);
  *cone = geo_mesh_cone(BG_CONE_R, BG_CONE_H, BG_CONE_SEG, rings, err, err_sz);
}

// deterministic generator shared by both programs
static inline double bg_urand(unsigned long long *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

// jittered torus position k: nominal (0, 0, z) plus a point of the ball of radius BG_JITTER
static inline void bg_pose(int k, double z, double p[3]) {
  unsigned long long s = 0x2545F4914F6CDD1Dull ^ (unsigned long long)(k + 1) * 0x9E3779B97F4A7C15ull;
  double d[3], n2;
  do {
    for (int i = 0; i < 3; i++) {
      d[i] = 2.0 * bg_urand(&s) - 1.0;
    }
    n2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  } while (n2 > 1.0);
  p[0] = BG_JITTER * d[0];
  p[1] = BG_JITTER * d[1];
  p[2] = z + BG_JITTER * d[2];
}

#endif
