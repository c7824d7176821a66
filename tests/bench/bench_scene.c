// Play a scene on the core directly (no network) and report the figures of the Compliant
// mode benchmark: wall time, real-time factor, CVODE statistics, share of time in
// geometry, contacts, and the support force on one body against its weight.
//
//   bench_scene SCENE.json [--duration T] [--dt DT] [--body NAME] [--every N] [--csv FILE]
//
// --every N prints a progress line every N steps; --csv writes t, the body's position,
// velocity, vertical contact force and contact count per step.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccsim_scene_msg.h"
#include "sim_data.h"
#include "sim_model.h"
#include "wire.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  const char *path = NULL, *body = NULL, *csv = NULL;
  double duration = 1.0, dt = 1e-3;
  long every = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--duration") && i + 1 < argc) duration = atof(argv[++i]);
    else if (!strcmp(argv[i], "--dt") && i + 1 < argc) dt = atof(argv[++i]);
    else if (!strcmp(argv[i], "--body") && i + 1 < argc) body = argv[++i];
    else if (!strcmp(argv[i], "--every") && i + 1 < argc) every = atol(argv[++i]);
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    else if (argv[i][0] != '-') path = argv[i];
    else {
      fprintf(stderr, "usage: bench_scene SCENE.json [--duration T] [--dt DT] [--body NAME] "
                      "[--every N] [--csv FILE]\n");
      return 2;
    }
  }
  if (!path || !(dt > 0) || !(duration > 0)) {
    fprintf(stderr, "bench_scene: a scene file and positive --dt, --duration are needed\n");
    return 2;
  }
  char err[1024];
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) {
    fprintf(stderr, "bench_scene: %s\n", err);
    return 1;
  }
  double t_build = now_s();
  sim_model *m = wire_scene_compile(ccsim_scene_message(sc), err, sizeof err);
  sim_data *d = m ? sim_data_new(m, err, sizeof err) : NULL;
  if (!d) {
    fprintf(stderr, "bench_scene: %s\n", err);
    return 1;
  }
  t_build = now_s() - t_build;
  int b = body ? sim_model_body(m, body) : m->nbody - 1;
  if (b < 0) {
    fprintf(stderr, "bench_scene: no body \"%s\"\n", body);
    return 1;
  }
  double weight = m->mass[b] * sqrt(m->gravity[0] * m->gravity[0] +
                                    m->gravity[1] * m->gravity[1] + m->gravity[2] * m->gravity[2]);
  FILE *out = csv ? fopen(csv, "w") : NULL;
  if (out) fprintf(out, "t,x,y,z,vx,vy,vz,fz,contacts\n");
  long n = lround(duration / dt);
  double t0 = now_s(), wall_step = 0;
  int failed = 0;
  for (long k = 1; k <= n; k++) {
    double s0 = now_s();
    if (sim_step(m, d, k * dt) != CCSIM_OK) {
      fprintf(stderr, "bench_scene: %s\n", sim_data_errmsg(d));
      failed = 1;
      break;
    }
    wall_step += now_s() - s0;
    if (out || (every > 0 && k % every == 0) || k == n) {
      double p[3], v[3], f[3], tq[3];
      int count = 0;
      sim_eval_contacts(m, d);
      sim_get_body(m, d, b, p, NULL, v, NULL);
      sim_data_body_contact(m, d, b, f, tq, &count);
      if (out) {
        fprintf(out, "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", sim_data_time(d), p[0], p[1],
                p[2], v[0], v[1], v[2], f[2], count);
      }
      if ((every > 0 && k % every == 0) || k == n) {
        const sim_stats *st = sim_data_stats(d);
        printf(
            "t %7.3f s  z %.6f m  vz %+.5f m/s  support %.5f N (weight %.5f N, %+.3f %%)  "
            "contacts %d  max depth %.3g m  steps %llu  last step %.3g s  anchors %u  "
            "restarts %llu\n",
            sim_data_time(d), p[2], v[2], f[2], weight, 100 * (f[2] - weight) / weight, count,
            st->max_depth, (unsigned long long)st->steps, st->last_step, st->anchors,
            (unsigned long long)st->friction_restarts);
        fflush(stdout);
      }
    }
  }
  double wall = now_s() - t0;
  const sim_stats *st = sim_data_stats(d);
  printf("scene %s: %d bodies, build %.3f s\n", path, m->nbody, t_build);
  printf("simulated %.3f s in %.3f s wall: real-time factor %.3f (stepping alone %.3f s)\n",
         sim_data_time(d), wall, sim_data_time(d) / wall, wall_step);
  printf("cvode: %llu steps, %llu rhs evals, %llu jacobians, %llu newton fails, %llu error test "
         "fails; geometry %.1f %% of physics time; %llu evaluations past the standoff\n",
         (unsigned long long)st->steps, (unsigned long long)st->rhs_evals,
         (unsigned long long)st->jac_evals, (unsigned long long)st->newton_fails,
         (unsigned long long)st->error_fails,
         st->physics_ns ? 100.0 * (double)st->geometry_ns / (double)st->physics_ns : 0.0,
         (unsigned long long)st->penetrations);
  printf("friction: %u anchors alive at the end, %llu integrator restarts at break-away; "
         "%u contacts carrying force\n",
         st->anchors, (unsigned long long)st->friction_restarts, st->contacts);
  if (out) fclose(out);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  ccsim_scene_destroy(&sc);
  return failed;
}
