// libccsim's lockstep loop against a running ccsimd, for comparison with other clients
// (tests/bench/bench_python.py runs it beside the Python client's loop on one server):
// one-body scene, STEPS Steps of 1 ms, each round trip timed.
//
//   bench_client_loop ENDPOINT [STEPS]     (default 5000)
// prints: "c median_us p99_us mean_us steps"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccsim_client.h"
#include "ccsim_scene.h"

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

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_client_loop ENDPOINT [STEPS]\n");
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 5000;
  if (n < 10 || n > 10000000) {
    fprintf(stderr, "bench_client_loop: STEPS in [10, 1e7]\n");
    return 2;
  }
  char err[512];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "bench", NULL, err, sizeof err);
  ccsim_client *c = sc ? ccsim_client_new(argv[1], err, sizeof err) : NULL;
  if (!c) {
    fprintf(stderr, "bench_client_loop: %s\n", err);
    ccsim_scene_destroy(&sc);
    return 1;
  }
  ccsim_session *s = ccsim_session_create(c, sc);
  double *t = malloc(sizeof *t * (size_t)n);
  int rc = 1;
  if (s && t) {
    ccsim_input in = {.body = 0, .force = {0.1, 0, 0}};
    for (int i = 0; i < 200; i++) {  // warm-up: connections, caches, the server's inlining
      ccsim_session_step(s, 1e-3, &in, 1);
    }
    rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
      double t0 = now_us();
      rc = ccsim_session_step(s, 1e-3, &in, 1);
      t[i] = now_us() - t0;
    }
  }
  if (rc != 0 || !s) {
    fprintf(stderr, "bench_client_loop: %s\n", ccsim_client_errmsg(c));
  } else {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("c %.2f %.2f %.2f %d\n", t[n / 2], t[(int)(0.99 * (n - 1))], sum / n, n);
  }
  free(t);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  return rc != 0;
}
