// Rigid mode benchmark: Lemke on the frictional contact LCP (Tan et al. eq. 14, d = 4) of
// a box at rest on a plane and of the Rock-N-Stack torus at rest on its cone (mu = 0.5 set
// on the scene), Dantzig on their frictionless LCPs; and the wall time per rigid step while
// each settles.
//
//   bench_rigid [ROCK_N_STACK.json] [--settle T] [--reps N]
//
// Default scene path: $CCSIM_SOURCE_DIR/examples/rock_n_stack.json, else
// examples/rock_n_stack.json. Each LCP is solved N times (default 200, 20 for the torus);
// the median time, the pivots and the status (SOLVED means verified at the stepper's
// tolerance, SIM_RIGID_VERIFY_TOL) are printed.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccsim_scene_msg.h"
#include "ccsim_test_scenes.h"
#include "sim_dantzig.h"
#include "sim_data.h"
#include "sim_lemke.h"
#include "sim_model.h"
#include "sim_rigid.h"
#include "wire.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

// settle d for `settle` seconds in rigid steps; returns the mean wall time per step [s]
static double settle_for(const sim_model *m, sim_data *d, sim_rigid *r, double settle,
                         int *ok) {
  double t = sim_data_time(d), t0 = now_s();
  long steps = 0;
  *ok = 1;
  while (t < settle - 1e-12) {
    double reached = t;
    if (sim_rigid_step(m, sim_data_rigid_io(d), r, t, t + m->rigid_dt, &reached) != CCSIM_OK) {
      fprintf(stderr, "bench_rigid: step at t = %g: %s\n", t, sim_rigid_errmsg(r));
      *ok = 0;
      break;
    }
    sim_set_time(m, d, reached);
    t = reached;
    steps++;
  }
  return steps ? (now_s() - t0) / (double)steps : 0;
}

// the step LCP at d's state, solved reps times by the solver its structure asks for
static void solve_report(const char *label, const sim_model *m, sim_data *d, sim_rigid *r,
                         int reps) {
  int n = 0;
  const double *M = NULL, *q = NULL;
  if (sim_rigid_step_lcp(m, sim_data_rigid_io(d), r, sim_data_time(d), m->rigid_dt, &n, &M, &q) != CCSIM_OK) {
    fprintf(stderr, "bench_rigid: %s: %s\n", label, sim_rigid_errmsg(r));
    return;
  }
  int nc = 0;
  sim_rigid_contacts(r, &nc);
  int frictional = n > nc;
  double *z = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  double *times = malloc((size_t)reps * sizeof(double));
  // the stepper's verification tolerance (sim_rigid.h)
  sim_lemke_opts lo = sim_lemke_opts_default();
  sim_dantzig_opts dopt = sim_dantzig_opts_default();
  lo.verify_tol = dopt.verify_tol = SIM_RIGID_VERIFY_TOL;
  sim_lemke *lk = frictional ? sim_lemke_new(n > 0 ? n : 1, &lo, NULL, 0) : NULL;
  sim_dantzig *dz = frictional ? NULL : sim_dantzig_new(n > 0 ? n : 1, &dopt, NULL, 0);
  if (!z || !w || !times || (!lk && !dz)) {
    fprintf(stderr, "bench_rigid: out of memory at n = %d\n", n);
    free(z), free(w), free(times);
    sim_lemke_destroy(&lk), sim_dantzig_destroy(&dz);
    return;
  }
  sim_lcp_info info;
  sim_lcp_status st = SIM_LCP_SOLVED;
  for (int i = 0; i < reps; i++) {
    double t0 = now_s();
    st = lk ? sim_lemke_solve(lk, n, M, q, z, w, &info)
            : sim_dantzig_solve(dz, n, M, q, z, w, NULL, NULL, &info);
    times[i] = now_s() - t0;
  }
  qsort(times, (size_t)reps, sizeof(double), cmp_double);
  printf("%-30s %-8s contacts %5d  n %5d  median %10.3f us  pivots %5d  status %s  "
         "(min w %.2e)\n",
         label, lk ? "lemke" : "dantzig", nc, n, 1e6 * times[reps / 2], info.pivots,
         sim_lcp_status_name(st), info.check.min_w);
  free(z), free(w), free(times);
  sim_lemke_destroy(&lk);
  sim_dantzig_destroy(&dz);
}

static sim_model *box_model(double mu) {
  sim_body_desc b[2];
  test_box_on_floor(b, 0.0005);
  b[1].pos[0] = 0.1, b[1].pos[1] = 0.3;
  sim_scene s;
  memset(&s, 0, sizeof s);
  s.gravity[2] = -9.81;
  s.contact.standoff = 1e-3, s.contact.mu = mu;
  s.contact.set = SIM_CP_STANDOFF | SIM_CP_MU;
  s.mode = SIM_MODE_RIGID;
  s.nbody = 2;
  s.bodies = b;
  char err[256];
  sim_model *m = sim_model_compile(&s, err, sizeof err);
  if (!m) fprintf(stderr, "bench_rigid: %s\n", err);
  return m;
}

// z_set > 0: the last body is first set down centred at that height, at rest
static void run_case(const char *label, sim_model *m, double settle, int reps, double z_set) {
  char err[256] = "";
  sim_data *d = m ? sim_data_new(m, err, sizeof err) : NULL;
  sim_rigid *r = d ? sim_rigid_new(m, err, sizeof err) : NULL;
  if (r && z_set > 0) {
    double p[3] = {0, 0, z_set}, q[4] = {1, 0, 0, 0}, zero[3] = {0, 0, 0};
    sim_set_body(m, d, m->nbody - 1, p, q, zero, zero);
  }
  if (!r) {
    fprintf(stderr, "bench_rigid: %s: %s\n", label, err);
  } else {
    int ok = 0;
    double per = settle_for(m, d, r, settle, &ok);
    const sim_stats *st = sim_data_stats(d);
    // the last step's vertical contact force on the last body, and its speed
    int nc = 0;
    const sim_contact *c = sim_rigid_contacts(r, &nc);
    int b = m->nbody - 1;
    double fz = 0, v[3];
    for (int i = 0; i < nc; i++) {
      double f = c[i].force * c[i].normal[2] + c[i].friction[2];
      fz += c[i].body_b == b ? f : c[i].body_a == b ? -f : 0;
    }
    sim_get_body(m, d, b, NULL, NULL, v, NULL);
    printf("%-30s settle %.2f s: %.1f us per step, %llu LCP pivots, %llu failures%s; support "
           "%.6g N (weight %.6g N), speed %.2g m/s\n",
           label, sim_data_time(d), 1e6 * per, (unsigned long long)st->lcp_pivots,
           (unsigned long long)st->lcp_failures, ok ? "" : " (stopped)", fz,
           m->mass[b] * fabs(m->gravity[2]), sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    solve_report(label, m, d, r, reps);
  }
  sim_rigid_destroy(&r);
  sim_data_destroy(&d);
}

static sim_model *scene_model(const char *path, double mu) {
  char err[1024];
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) {
    fprintf(stderr, "bench_rigid: %s\n", err);
    return NULL;
  }
  Ccsim__Scene s = *ccsim_scene_message(sc);
  Ccsim__ContactParams cp;
  if (s.contact) {
    cp = *s.contact;
  } else {
    ccsim__contact_params__init(&cp);
  }
  cp.has_mu = 1, cp.mu = mu;
  cp.has_mu_dynamic = 1, cp.mu_dynamic = mu;
  s.contact = &cp;
  s.has_mode = 1, s.mode = CCSIM__MODE__MODE_RIGID;
  sim_model *m = wire_scene_compile(&s, err, sizeof err);
  if (!m) fprintf(stderr, "bench_rigid: %s\n", err);
  ccsim_scene_destroy(&sc);
  return m;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  double settle = 2.0;
  int reps = 200;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--settle") && i + 1 < argc) settle = atof(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (argv[i][0] != '-') path = argv[i];
    else {
      fprintf(stderr, "usage: bench_rigid [ROCK_N_STACK.json] [--settle T] [--reps N]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  char def[1024];
  if (!path) {
    const char *src = getenv("CCSIM_SOURCE_DIR");
    snprintf(def, sizeof def, "%s%sexamples/rock_n_stack.json", src ? src : "", src ? "/" : "");
    path = def;
  }
  sim_model *m = box_model(0.5);
  run_case("box at rest, mu 0.5", m, 0.2, reps, 0);
  sim_model_destroy(&m);
  m = box_model(0);
  run_case("box at rest, mu 0", m, 0.2, reps, 0);
  sim_model_destroy(&m);
  // the torus set down centred on the cone (rest height in rigid mode: 0.08749 m), and
  // dropped as the scene file has it
  int few = reps < 20 ? reps : 20;
  m = scene_model(path, 0.5);
  run_case("rock-n-stack set down, mu 0.5", m, 0.5, few, 0.0877);
  run_case("rock-n-stack dropped, mu 0.5", m, settle, few, 0);
  sim_model_destroy(&m);
  m = scene_model(path, 0);
  run_case("rock-n-stack set down, mu 0", m, 0.5, few, 0.0877);
  run_case("rock-n-stack dropped, mu 0", m, settle, few, 0);
  sim_model_destroy(&m);
  return 0;
}
