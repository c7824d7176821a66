// Rock-N-Stack geometry benchmark (issue 3): hierarchy build, minimum distance, proximity
// cold and with the coherence cache, pair counts before and after merging; medians over
// BG_NPOSE jittered poses. With --fcl FILE (the output of bench_geom_fcl) it also prints
// each figure as a ratio ccsim / FCL. With --fcl-exe it runs the FCL program itself before
// each of R rounds of its own measurement, so both see the machine in the same state (it
// is shared and its speed drifts), and prints the median of the per-round ratios.
//   bench_geom --fcl-exe bench_geom_fcl --rounds 5
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
  int cache_hits;
} figures;

// the four cases: cone with 1 or 16 side rings, torus in contact or 1 cm higher
#define NCASE 4
#define NRATIO 5
#define MAX_ROUNDS 64
static int case_rings(int c) {
  return c < 2 ? 1 : 16;
}
static double case_lift(int c) {
  return c % 2 ? BG_LIFT : 0.0;
}

// the FCL program's line for (rings, lift) in fp's text; 1 when found
static int parse_fcl(FILE *fp, int rings, double lift, figures *f) {
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
  return found;
}

// the FCL figures of the four cases from a file or from running the FCL program now
static int fcl_figures(const char *file, const char *exe, int npose, figures g[NCASE]) {
  char cmd[1024];
  FILE *fp;
  if (exe) {
    snprintf(cmd, sizeof cmd, "'%s' --n %d", exe, npose);
    fp = popen(cmd, "r");
  } else {
    fp = fopen(file, "r");
  }
  if (fp == NULL) {
    fprintf(stderr, "bench: cannot %s %s\n", exe ? "run" : "open", exe ? exe : file);
    return 0;
  }
  // the whole text first: a pipe cannot be read twice
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, fp);
  text[n] = 0;
  int ok = exe ? pclose(fp) == 0 : (fclose(fp), 1);
  for (int c = 0; c < NCASE && ok; c++) {
    FILE *m = fmemopen(text, n + 1, "r");
    ok = m && parse_fcl(m, case_rings(c), case_lift(c), &g[c]);
    if (m) {
      fclose(m);
    }
  }
  if (!ok) {
    fprintf(stderr, "bench: %s did not give the figures of every case\n", exe ? exe : file);
  }
  return ok;
}

// scratch shared by the measurements
typedef struct bench_ws {
  double *t;
  geo_pair *out, *out2;
  int cap;
} bench_ws;

// ccsim's figures for the four cases, each a median over npose jittered poses; 0 when an
// answer was wrong (a query failed, or the cache and the cold query disagreed)
static int measure(int npose, bench_ws *w, figures f[NCASE]) {
  char err[256];
  int ok = 1;
  double *t = w->t;
  geo_pair *out = w->out, *out2 = w->out2;
  int cap = w->cap;
  for (int ri = 0; ri < 2; ri++) {
    int rings = case_rings(2 * ri);
    geo_mesh *torus, *cone;
    bg_meshes(rings, &torus, &cone, err, sizeof err);
    if (torus == NULL || cone == NULL) {
      fprintf(stderr, "mesh: %s\n", err);
      exit(1);
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
      exit(1);
    }
    geo_pose XC = geo_pose_identity();
    for (int li = 0; li < 2; li++) {
      figures *fc = &f[2 * ri + li];
      double lift = case_lift(2 * ri + li);
      double z = bg_torus_height(lift);
      *fc = (figures){rings, lift, build_ms, 0, 0, 0, 0, 0, 0, 0, 0, 0};
      geo_pose XT = {{0, 0, z}, {1, 0, 0, 0}};
      geo_prox_info info;
      geo_pair mp;
      geo_proximity(bt, &XT, bc, &XC, BG_STANDOFF, ws, NULL, out, cap, &info);
      fc->raw = info.n_raw;
      fc->merged = info.n;
      geo_min_distance(bt, &XT, bc, &XC, ws, NULL, &mp);
      fc->mind = mp.dist;
      // minimum distance, cold
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, XT.p);
        double t0 = now_s();
        geo_min_distance(bt, &XT, bc, &XC, ws, NULL, &mp);
        t[k] = now_s() - t0;
      }
      fc->min_us = 1e6 * median(t, npose);
      // minimum distance, cache carried from pose to pose
      geo_query_cache_reset(cache);
      for (int k = 0; k < npose; k++) {
        bg_pose(k, z, XT.p);
        double t0 = now_s();
        geo_min_distance(bt, &XT, bc, &XC, ws, cache, &mp);
        t[k] = now_s() - t0;
      }
      fc->min_cache_us = 1e6 * median(t, npose);
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
      fc->prox_us = 1e6 * median(t, npose);
      fc->leafsum = leafsum;
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
      fc->prox_cache_us = 1e6 * median(t, npose);
      fc->cache_hits = hits;
    }
    geo_query_cache_destroy(&cache);
    geo_query_ws_destroy(&ws);
    geo_bvh_destroy(&bt);
    geo_bvh_destroy(&bc);
    geo_mesh_destroy(&torus);
    geo_mesh_destroy(&cone);
  }
  return ok;
}

static void print_figures(const figures *f) {
  printf(
      "rings=%d lift=%g build_ms=%.3f min_us=%.2f min_cache_us=%.2f prox_us=%.2f "
      "prox_cache_us=%.2f raw=%d merged=%d mind=%.9g leafsum=%ld cache_hits=%d\n",
      f->rings, f->lift, f->build_ms, f->min_us, f->min_cache_us, f->prox_us, f->prox_cache_us,
      f->raw, f->merged, f->mind, f->leafsum, f->cache_hits);
}

// the ratios ccsim / FCL of one case: build, min, min(cache), prox, prox(cache)
static void ratios(const figures *f, const figures *g, double r[NRATIO]) {
  r[0] = f->build_ms / g->build_ms;
  r[1] = f->min_us / g->min_us;
  r[2] = f->min_cache_us / g->min_us;
  r[3] = f->prox_us / g->prox_us;
  r[4] = f->prox_cache_us / g->prox_us;
}

int main(int argc, char **argv) {
  const char *fcl = NULL, *fcl_exe = NULL;
  int npose = BG_NPOSE, rounds = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--fcl") == 0 && i + 1 < argc) {
      fcl = argv[++i];
    } else if (strcmp(argv[i], "--fcl-exe") == 0 && i + 1 < argc) {
      fcl_exe = argv[++i];
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
      npose = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--fcl FILE | --fcl-exe PROGRAM [--rounds R]] [--n QUERIES]\n",
              argv[0]);
      return 2;
    }
  }
  if (npose < 1) {
    npose = 1;
  }
  if (rounds < 1 || !fcl_exe) {
    rounds = 1;
  }
  if (rounds > MAX_ROUNDS) {
    rounds = MAX_ROUNDS;
  }
  int cap = 1 << 15;
  bench_ws w = {malloc((size_t)(npose > 21 ? npose : 21) * sizeof(double)),
                malloc((size_t)cap * sizeof(geo_pair)), malloc((size_t)cap * sizeof(geo_pair)),
                cap};
  int ok = 1;
  printf("# ccsim geometry, Rock-N-Stack: medians over %d poses jittered < %.2g mm%s\n", npose,
         BG_JITTER * 1e3, fcl_exe ? "; FCL and ccsim measured in turn, ratios per round" : "");
  // per round and case: ccsim's and FCL's figures and the ratios
  static figures f[MAX_ROUNDS][NCASE], g[MAX_ROUNDS][NCASE];
  static double r[NRATIO][NCASE][MAX_ROUNDS];
  int have_fcl = fcl || fcl_exe;
  for (int k = 0; k < rounds; k++) {
    if (have_fcl && !fcl_figures(fcl, fcl_exe, npose, g[k])) {
      return 1;
    }
    ok &= measure(npose, &w, f[k]);
    for (int c = 0; c < NCASE; c++) {
      double rr[NRATIO];
      if (have_fcl) {
        ratios(&f[k][c], &g[k][c], rr);
        for (int q = 0; q < NRATIO; q++) {
          r[q][c][k] = rr[q];
        }
        // the same leaf pairs over all poses
        ok &= f[k][c].leafsum == g[k][c].leafsum;
      }
      if (rounds > 1) {
        printf("round %d: ", k + 1);
      }
      print_figures(&f[k][c]);
      if (have_fcl) {
        printf(
            "  ratio ccsim/FCL: build %.2f  min %.2f  min(cache) %.2f  prox %.2f  "
            "prox(cache) %.2f   leaf pairs %ld vs %ld%s  min dist %.9g vs %.9g\n",
            rr[0], rr[1], rr[2], rr[3], rr[4], f[k][c].leafsum, g[k][c].leafsum,
            f[k][c].leafsum == g[k][c].leafsum ? " (same)" : " (DIFFERENT)", f[k][c].mind,
            g[k][c].mind);
      }
    }
    fflush(stdout);
  }
  if (have_fcl && rounds > 1) {
    static const char *name[NRATIO] = {"build", "min", "min(cache)", "prox", "prox(cache)"};
    printf("# medians of the per-round ratios ccsim/FCL over %d rounds (lowest-highest)\n", rounds);
    for (int c = 0; c < NCASE; c++) {
      printf("rings=%d lift=%g:", case_rings(c), case_lift(c));
      for (int q = 0; q < NRATIO; q++) {
        double lo = r[q][c][0], hi = lo;
        for (int k = 1; k < rounds; k++) {
          lo = r[q][c][k] < lo ? r[q][c][k] : lo;
          hi = r[q][c][k] > hi ? r[q][c][k] : hi;
        }
        printf("  %s %.2f (%.2f-%.2f)", name[q], median(r[q][c], rounds), lo, hi);
      }
      printf("\n");
    }
  }
  free(w.t);
  free(w.out);
  free(w.out2);
  return ok ? 0 : 1;
}
