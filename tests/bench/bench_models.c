// Sessions of one large scene sharing its compiled model: a sphere of about 2 million
// triangles (its poles turned sideways: it touches the floor, within the standoff, at its
// equator's coarser triangles; written to a temporary OBJ file and read by the client
// library as any mesh would be) above a floor box, on a server embedded in this process
// over tcp loopback.
// Times the first CreateSession (which compiles the scene) and the later ones (which find
// it in the model cache), and the process's resident memory after 1 and after 10 sessions,
// each session stepped a few times so that its own contact workspace is in use.
// Resident memory is read from /proc/self/statm after malloc_trim(0) (memory freed but kept
// by the allocator is not what a session holds); it includes the client's copy of the scene.
// Goals: the second create < 5 % of the first; the tenth session adds < 10 % of what the
// first did.
//
//   bench_models [--slices N] [--stacks N] [--sessions N] [--steps N] [--roll N]
//   (defaults 1001 x 1000: 1 999 998 triangles; 10 sessions; 10 steps of 1 ms each; --roll:
//   then the first session rolls on for N steps, and its resident growth is printed)
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "geo_prim.h"
#include "srv.h"
#include "srv_models.h"
#include "wire.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// resident memory of this process [MiB], after handing freed memory back
// (*virt: the address space reserved, most of it never touched [MiB])
static double rss_mib(double *virt) {
  malloc_trim(0);
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, res = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = size = 0;
    fclose(f);
  }
  double page = (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
  *virt = (double)size * page;
  return (double)res * page;
}

static void *server_main(void *arg) {
  srv_run(arg);
  return NULL;
}

// the sphere's mesh as an OBJ file at path; 0 or -1
static int write_sphere(const char *path, int slices, int stacks, int *ntri) {
  char err[256];
  geo_mesh *m = geo_mesh_sphere(0.5, slices, stacks, err, sizeof err);
  if (!m) {
    fprintf(stderr, "bench_models: %s\n", err);
    return -1;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    geo_mesh_destroy(&m);
    return -1;
  }
  for (int v = 0; v < m->nvert; v++) {
    fprintf(f, "v %.9g %.9g %.9g\n", m->vert[3 * v], m->vert[3 * v + 1], m->vert[3 * v + 2]);
  }
  for (int t = 0; t < m->ntri; t++) {
    fprintf(f, "f %d %d %d\n", m->tri[3 * t] + 1, m->tri[3 * t + 1] + 1, m->tri[3 * t + 2] + 1);
  }
  *ntri = m->ntri;
  geo_mesh_destroy(&m);
  return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  int slices = 1001, stacks = 1000, nsess = 10, nsteps = 10, roll = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--slices")) slices = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--stacks")) stacks = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--sessions")) nsess = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) nsteps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--roll")) roll = atoi(argv[i + 1]);
  }
  if (nsess < 2 || nsess > 64) nsess = 10;
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[512], obj[600];
  snprintf(dir, sizeof dir, "%s/bench_models-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    perror("bench_models: mkdtemp");
    return 1;
  }
  snprintf(obj, sizeof obj, "%s/sphere.obj", dir);
  int ntri = 0;
  double t0 = now_s();
  if (write_sphere(obj, slices, stacks, &ntri) != 0) {
    fprintf(stderr, "bench_models: cannot write %s\n", obj);
    return 1;
  }
  printf("mesh: %d triangles, written in %.2f s\n", ntri, now_s() - t0);
  char json[1024], err[512];
  snprintf(json, sizeof json,
           "{\"gravity\": [0, 0, -9.81], \"contact\": {\"k\": 1e6, \"alpha\": 0.3, "
           "\"standoff\": 0.001, \"mu\": 0.5},"
           " \"bodies\": [{\"name\": \"floor\", \"fixed\": true,"
           "   \"shape\": {\"box\": {\"size\": [4, 4, 0.2]}}, \"pose\": {\"p\": [0, 0, -0.1]}},"
           "  {\"name\": \"ball\", \"density\": 50, \"shape\": {\"mesh\": \"sphere.obj\"},"
           "   \"pose\": {\"p\": [0, 0, 0.5005],"
           "   \"q\": [0.70710678118654752, 0.70710678118654752, 0, 0]},"
           "   \"velocity\": {\"v\": [0.5, 0, 0], \"w\": [0, 1, 0]}}]}");
  t0 = now_s();
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "bench_models", dir, err, sizeof err);
  unlink(obj);
  rmdir(dir);
  if (!sc) {
    fprintf(stderr, "bench_models: %s\n", err);
    return 1;
  }
  printf("client: scene read in %.2f s\n", now_s() - t0);

  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 2;
  cfg.max_triangles = 2100000;
  cfg.max_msg_bytes = (size_t)512 << 20;
  cfg.max_sessions = 64;
  srv *s = srv_new(&cfg, err, sizeof err);
  if (!s) {
    fprintf(stderr, "bench_models: srv_new: %s\n", err);
    return 1;
  }
  pthread_t th;
  pthread_create(&th, NULL, server_main, s);
  ccsim_client *c = ccsim_client_new(srv_endpoint(s), err, sizeof err);
  if (!c) {
    fprintf(stderr, "bench_models: %s\n", err);
    return 1;
  }
  ccsim_client_set_timeout(c, 600000);
  ccsim_client_set_retries(c, 0);

  ccsim_session *ss[64] = {0};
  double create_s[64], rss[65], virt[65];
  rss[0] = rss_mib(&virt[0]);
  int ok = 1;
  for (int k = 0; k < nsess && ok; k++) {
    t0 = now_s();
    ss[k] = ccsim_session_create(c, sc);
    create_s[k] = now_s() - t0;
    if (!ss[k]) {
      fprintf(stderr, "bench_models: create %d: %s\n", k + 1, ccsim_client_errmsg(c));
      ok = 0;
      break;
    }
    for (int n = 0; n < nsteps; n++) {
      if (ccsim_session_step(ss[k], 1e-3, NULL, 0) != CCSIM_OK) {
        fprintf(stderr, "bench_models: step: %s\n", ccsim_client_errmsg(c));
        ok = 0;
        break;
      }
    }
    rss[k + 1] = rss_mib(&virt[k + 1]);
    printf("session %2d: create %8.3f s, resident %8.1f MiB (+%.1f), virtual %8.1f MiB (+%.1f)\n",
           k + 1, create_s[k], rss[k + 1], rss[k + 1] - rss[k], virt[k + 1],
           virt[k + 1] - virt[k]);
    fflush(stdout);
  }
  if (ok) {
    srv_models_stat st;
    srv_models_stats(srv_models_of(s), &st);
    double first = create_s[0];
    double later[64];
    memcpy(later, create_s + 1, (size_t)(nsess - 1) * sizeof *later);
    double med = median(later, nsess - 1);
    double d1 = rss[1] - rss[0];
    double dlast = rss[nsess] - rss[nsess - 1];
    double davg = (rss[nsess] - rss[1]) / (nsess - 1);
    // the cache's own part of a later create: pack, digest, compare every byte
    double look[5];
    for (int k = 0; k < 5; k++) {
      int code;
      t0 = now_s();
      srv_model *r = srv_models_acquire(srv_models_of(s), ccsim_scene_message(sc), &code, err,
                                        sizeof err);
      look[k] = now_s() - t0;
      srv_model_release(&r);
    }
    printf("cache lookup of the scene alone (pack, digest, compare): median %.3f s\n",
           median(look, 5));
    // the other parts of a later create on the server: the limits' triangle count and the
    // session's own data (contact workspace, integrator primed)
    double count[5], data[5];
    int code;
    srv_model *r = srv_models_acquire(srv_models_of(s), ccsim_scene_message(sc), &code, err,
                                      sizeof err);
    for (int k = 0; k < 5; k++) {
      t0 = now_s();
      volatile long long nt = wire_scene_triangles(ccsim_scene_message(sc));
      (void)nt;
      count[k] = now_s() - t0;
      t0 = now_s();
      sim_data *d = sim_data_new(srv_model_sim(r), err, sizeof err);
      data[k] = now_s() - t0;
      sim_data_destroy(&d);
    }
    srv_model_release(&r);
    printf("limits' triangle count: median %.3f s; sim_data_new: median %.3f s\n",
           median(count, 5), median(data, 5));
    printf("model cache: %llu hits, %llu misses, %d models, %.1f MiB estimated\n",
           (unsigned long long)st.hits, (unsigned long long)st.misses, st.models,
           (double)st.bytes / (1024.0 * 1024.0));
    printf("first create %.3f s; later creates median %.3f s (%.2f %% of the first; goal < 5 %%)"
           " %s\n",
           first, med, 100 * med / first, med < 0.05 * first ? "MET" : "MISSED");
    printf("resident: before %.1f MiB; first session +%.1f MiB; session %d +%.1f MiB "
           "(%.2f %%), mean of sessions 2..%d +%.1f MiB (%.2f %%; goal < 10 %%) %s\n",
           rss[0], d1, nsess, dlast, 100 * dlast / d1, nsess, davg, 100 * davg / d1,
           dlast < 0.1 * d1 && davg < 0.1 * d1 ? "MET" : "MISSED");
  }
  if (ok && roll > 0) {
    // one session rolls on: its contact workspace's pages are touched over the surface it
    // rolls over (the workspace is sized by the meshes, filled as it is used)
    double v0, before = rss_mib(&v0);
    t0 = now_s();
    for (int n = 0; n < roll && ok; n++) {
      ok = ccsim_session_step(ss[0], 1e-3, NULL, 0) == CCSIM_OK;
    }
    double after = rss_mib(&v0);
    printf("session 1 rolled %d steps of 1 ms (%.2f s, ball at x = %.3f m): resident +%.1f MiB\n",
           roll, now_s() - t0, ccsim_session_bodies(ss[0])[1].p[0], after - before);
  }
  for (int k = 0; k < nsess; k++) ccsim_session_close(&ss[k]);
  ccsim_client_destroy(&c);
  srv_stop(s);
  pthread_join(th, NULL);
  srv_destroy(&s);
  ccsim_scene_destroy(&sc);
  return ok ? 0 : 1;
}
