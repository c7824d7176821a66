// Rock-N-Stack geometry benchmark (issue 3): hierarchy build, minimum distance, proximity
// cold and with the coherence cache, pair counts before and after merging; medians over
// BG_NPOSE jittered poses. With --fcl FILE (the output of bench_geom_fcl) it also prints
// each figure as a ratio ccsim / FCL.
//   bench_geom_fcl > fcl.txt && bench_geom --fcl fcl.txt
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_geom_scene.h"
#include "geo_bvh.h"
#include "geo_prim.h"
#include "geo_query.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct figures {
  int rings;
  double lift;
  double build_ms, min_us, min_cache_us, prox_us, prox_cache_us;
  int raw, merged;
  double mind;
  long leafsum;
} figures;

static int find_fcl(const char *path, int rings, double lift, figures *f) {
  FILE *fp = path ? fopen(path, "r") : NULL;
  if (fp == NULL) {
    return 0;
  }
  char line[512];
  int found = 0;
  while (fgets(line, sizeof line, fp)) {
    figures g;
    if (sscanf(line,
               "rings=%d lift=%lf build_ms=%lf min_us=%lf prox_us=%lf raw=%d mind=%lf "
               "leafsum=%ld",
               &g.rings, &g.lift, &g.build_ms, &g.min_us, &g.prox_us, &g.raw, &g.mind,
               &g.leafsum) == 8 &&
        g.rings == rings && g.lift == lift) {
      *f = g;
      found = 1;
    }
  }
  fclose(fp);
  return found;
}

int main(int argc, char **argv) {
  const char *fcl = NULL;
  int npose = BG_NPOSE;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--fcl") == 0 && i + 1 < argc) {
      fcl = argv[++i];
    } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      npose = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--fcl FILE] [--n QUERIES]\n", argv[0]);
      return 2;
    }
  }
  if (npose < 1) {
    npose = 1;
  }
  char err[256];
  double *t = malloc((size_t)(npose > 21 ? npose : 21) * sizeof *t);
  int cap = 1 << 15;
  geo_pair *out = malloc((size_t)cap * sizeof *out), *out2 = malloc((size_t)cap * sizeof *out2);
  int ok = 1;
  printf("# ccsim geometry, Rock-N-Stack: medians over %d poses jittered < %.2g mm\n", npose,
         BG_JITTER * 1e3);
  for (int rings = 1; rings <= 16; rings += 15) {
    geo_mesh *torus = geo_mesh_torus(BG_TORUS_R, BG_TORUS_r, BG_TORUS_NMAJOR, BG_TORUS_NMINOR,
                                     err, sizeof err);
    geo_mesh *cone = geo_mesh_cone(BG_CONE_R, BG_CONE_H, BG_CONE_SEG, rings, err, sizeof err);
    if (torus == NULL || cone == NULL) {
      fprintf(stderr, "mesh: %s\n", err);
      return 1;
    }
    // build time: both hierarchies, median of 21 builds
    geo_bvh *bt = NULL, *bc = NULL;
    for (int k = 0; k < 21; k++) {
      geo_bvh_destroy(&bt);
      geo_bvh_destroy(&bc);
      double t0 = now_s();
      bt = geo_bvh_new(torus, err, sizeof err);
      bc = geo_bvh_new(cone, err, sizeof err);
      t[k] = now_s() - t0;
    }
    double build_ms = 1e3 * median(t, 21);
    geo_query_ws *ws = geo_query_ws_new(bt, bc, cap, err, sizeof err);
    geo_query_cache *cache = geo_query_cache_new(0, 0.25e-3, err, sizeof err);
    if (bt == NULL || bc == NULL || ws == NULL || cache == NULL) {
      fprintf(stderr, "setup: %s\n", err);
      return 1;
    }
    geo_pose XC = geo_pose_identity();
    for (int li = 0; li < 2; li++) {
      double lift = li ? BG_LIFT : 0.0;
      double z = bg_torus_height(lift);
      figures f = {rings, lift, build_ms, 0, 0, 0, 0, 0, 0, 0, 0};
      geo_pose XT = {{0, 0, z}, {1, 0, 0, 0}};
      geo_prox_info info;
      geo_pair mp;
      geo_proximity(bt, &XT, bc, &XC, BG_STANDOFF, ws, NULL, out, cap, &info);
      f.raw = info.n_raw;
      f.merged = info.n;
      geo_min_distance(bt, &XT, bc, &XC, ws, NULL, &mp);
      f.mind = mp.dist;
      // minimum distance, cold
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, XT.p);
        double t0 = now_s();
        geo_min_distance(bt, &XT, bc, &XC, ws, NULL, &mp);
        t[k] = now_s() - t0;
      }
      f.min_us = 1e6 * median(t, npose);
      // minimum distance, cache carried from pose to pose
      geo_query_cache_reset(cache);
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, XT.p);
        double t0 = now_s();
        geo_min_distance(bt, &XT, bc, &XC, ws, cache, &mp);
        t[k] = now_s() - t0;
      }
      f.min_cache_us = 1e6 * median(t, npose);
      // proximity, cold
      long leafsum = 0;
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, XT.p);
        double t0 = now_s();
        int rc = geo_proximity(bt, &XT, bc, &XC, BG_STANDOFF, ws, NULL, out, cap, &info);
        t[k] = now_s() - t0;
        ok &= rc == GEO_QOK;
        leafsum += info.n_raw;
      }
      f.prox_us = 1e6 * median(t, npose);
      f.leafsum = leafsum;
      // proximity with the cache; every 50th answer checked identical to the cold one
      geo_query_cache_reset(cache);
      int hits = 0;
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, XT.p);
        double t0 = now_s();
        geo_proximity(bt, &XT, bc, &XC, BG_STANDOFF, ws, cache, out, cap, &info);
        t[k] = now_s() - t0;
        hits += info.cache_hit;
        if (k % 50 == 0) {
          geo_prox_info ic;
          geo_proximity(bt, &XT, bc, &XC, BG_STANDOFF, ws, NULL, out2, cap, &ic);
          if (ic.n != info.n || memcmp(out, out2, (size_t)ic.n * sizeof *out) != 0) {
            fprintf(stderr, "cache and cold answers differ at pose %d\n", k);
            ok = 0;
          }
        }
      }
      f.prox_cache_us = 1e6 * median(t, npose);
      printf("rings=%d lift=%g build_ms=%.3f min_us=%.2f min_cache_us=%.2f prox_us=%.2f "
             "prox_cache_us=%.2f raw=%d merged=%d mind=%.9g leafsum=%ld cache_hits=%d\n",
             rings, lift, f.build_ms, f.min_us, f.min_cache_us, f.prox_us, f.prox_cache_us,
             f.raw, f.merged, f.mind, f.leafsum, hits);
      figures g;
      if (fcl != NULL && find_fcl(fcl, rings, lift, &g)) {
        printf("  ratio ccsim/FCL: build %.2f  min %.2f  min(cache) %.2f  prox %.2f  "
               "prox(cache) %.2f   leaf pairs %ld vs %ld%s  min dist %.9g vs %.9g\n",
               f.build_ms / g.build_ms, f.min_us / g.min_us, f.min_cache_us / g.min_us,
               f.prox_us / g.prox_us, f.prox_cache_us / g.prox_us, f.leafsum, g.leafsum,
               f.leafsum == g.leafsum ? " (same)" : " (DIFFERENT)", f.mind, g.mind);
        ok &= f.leafsum == g.leafsum;
      }
    }
    geo_query_cache_destroy(&cache);
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&bt);
    geo_bvh_destroy(&bc);
    geo_mesh_destroy(&torus);
    geo_mesh_destroy(&cone);
  }
  free(t);
  free(out);
  free(out2);
  return ok ? 0 : 1;
}
