// Round trip per Step for a one-body scene: the same 1 ms stepping loop over the core
// directly, over ZeroMQ tcp loopback to a server thread, and over ipc. Prints median,
// p99 and mean per step so the transport overhead is visible.
//
//   bench_roundtrip [STEPS]     (default 10000)
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "sim_data.h"
#include "sim_model.h"
#include "srv.h"
#include "wire.h"

static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81],"
    " \"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"inertia\": [0.1, 0.2, 0.3],"
    "   \"pose\": {\"p\": [0, 0, 10]}, \"velocity\": {\"v\": [1, 0, 0], \"w\": [0.1, 1, 0.1]}}]}";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *label, double *t, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += t[i];
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("%-28s median %8.2f us   p99 %8.2f us   mean %8.2f us   (%d steps)\n", label, t[n / 2],
         t[(int)(0.99 * (n - 1))], sum / n, n);
}

static void *serve(void *arg) {
  srv_run(arg);
  return NULL;
}

static int over_transport(const char *bind, const ccsim_scene *sc, double *t, int n,
                          double *median_out) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = bind;
  char err[256];
  srv *s = srv_new(&cfg, err, sizeof err);
  if (!s) {
    fprintf(stderr, "bench: %s\n", err);
    return -1;
  }
  pthread_t th;
  pthread_create(&th, NULL, serve, s);
  ccsim_client *c = ccsim_client_new(srv_endpoint(s), err, sizeof err);
  ccsim_session *ss = c ? ccsim_session_create(c, sc) : NULL;
  int rc = ss ? 0 : -1;
  for (int k = 0; k < 100 && ss; k++) {  // warm-up
    ccsim_session_step(ss, 1e-3, NULL, 0);
  }
  for (int k = 0; k < n && ss; k++) {
    double t0 = now_us();
    if (ccsim_session_step(ss, 1e-3, NULL, 0) != CCSIM_OK) {
      fprintf(stderr, "bench: %s\n", ccsim_client_errmsg(c));
      rc = -1;
      break;
    }
    t[k] = now_us() - t0;
  }
  ccsim_session_close(&ss);
  ccsim_client_destroy(&c);
  srv_stop(s);
  pthread_join(th, NULL);
  srv_destroy(&s);
  if (rc == 0) {
    double *copy = malloc(sizeof(double) * (size_t)n);
    memcpy(copy, t, sizeof(double) * (size_t)n);
    qsort(copy, (size_t)n, sizeof *copy, cmp);
    *median_out = copy[n / 2];
    free(copy);
  }
  return rc;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  if (n < 10) n = 10;
  char err[512];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "bench", NULL, err, sizeof err);
  sim_model *m = wire_scene_compile(ccsim_scene_message(sc), err, sizeof err);
  sim_data *d = m ? sim_data_new(m, err, sizeof err) : NULL;
  if (!d) {
    fprintf(stderr, "bench: %s\n", err);
    return 1;
  }
  double *t = malloc(sizeof(double) * (size_t)n);
  for (int k = 1; k <= 100; k++) sim_step(m, d, k * 1e-3);
  double tt = sim_data_time(d);
  for (int k = 0; k < n; k++) {
    double t0 = now_us();
    tt += 1e-3;
    sim_step(m, d, tt);
    t[k] = now_us() - t0;
  }
  double *core = malloc(sizeof(double) * (size_t)n);
  memcpy(core, t, sizeof(double) * (size_t)n);
  qsort(core, (size_t)n, sizeof *core, cmp);
  double core_median = core[n / 2];
  report("core (sim_step, no network)", t, n);
  double med_tcp = 0, med_ipc = 0;
  if (over_transport("tcp://127.0.0.1:*", sc, t, n, &med_tcp) == 0) {
    report("tcp loopback (Step rtt)", t, n);
  }
  char ipc[128];
  snprintf(ipc, sizeof ipc, "ipc:///tmp/ccsim-bench-%d.sock", (int)getpid());
  if (over_transport(ipc, sc, t, n, &med_ipc) == 0) {
    report("ipc (Step rtt)", t, n);
  }
  printf("transport overhead (median): tcp %.2f us, ipc %.2f us per step\n",
         med_tcp - core_median, med_ipc - core_median);
  free(core);
  free(t);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  ccsim_scene_destroy(&sc);
  return 0;
}
