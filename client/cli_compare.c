// `ccsim compare`: one scene played in both contact modes on the core directly, side by
// side: final states, closest approach and penetration, the support force (the contact
// force on all free bodies along -g) over time, wall time.
//
//   ccsim compare SCENE.json --duration T [--dt DT] [--window W] [--csv FILE]
//
// The support compared is the mean over the last W seconds (default the last quarter of the
// run) of each step's mean contact force (sim_data_body_mean_contact: the impulse over the
// step / dt), so that two modes are compared on what they transmit, not on where a rocking
// or ringing body happens to be at the last instant; the end sample is printed beside it.
// Penetration is measured against each mode's own contact surface: the compliant springs'
// largest deformation (standoff - distance), and in rigid mode how far a pair came inside
// the rest distance (half the standoff). The rigid run uses the scene's rigid_dt (default
// 1 ms) inside every DT. Held inputs and kinematic targets are not applied (a scene file has
// none).
#include "cli_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccsim_scene_msg.h"
#include "geo_vec.h"
#include "sim_data.h"
#include "sim_model.h"
#include "sim_rigid.h"
#include "wire.h"
#include "cli.h"

typedef struct mode_run {
  const char *label;
  sim_model *m;
  sim_data *d;
  int rigid;           // rigid mode: the step's contacts are its last LCP step's
  double wall;         // [s] inside the steps
  double min_dist;     // closest approach of any contact pair [m]
  double max_pen;      // deepest penetration past the mode's contact surface [m]
  double support;      // contact force on the free bodies along -g at the last step [N]
  double mean_support; // the same, mean over the last step [N]
  double win_imp;      // its impulse summed over the window's steps [N s]
  double win_t;        // time the window's steps covered [s]
  int contacts;        // contacts carrying force there
  int failed;
} mode_run;

static void usage(FILE *f) {
  fprintf(f, "usage: ccsim compare SCENE.json --duration T [--dt DT] [--window W] [--csv FILE]\n"
             "  plays the scene in the compliant and the rigid mode and prints both side by\n"
             "  side; the support force (contact force on the free bodies along -g) is the\n"
             "  mean over the last W seconds (default T/4) of each step's mean, beside the\n"
             "  sample at the end; --csv writes t, the support force at each step's end and\n"
             "  the contact count of each mode, then each mode's mean support over the step\n");
}

static int parse_pos(const char *s, const char *opt, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (!end || *end || !isfinite(v) || !(v > 0)) {
    fprintf(stderr, "ccsim compare: %s wants a positive number, got '%s'\n", opt, s);
    return -1;
  }
  *out = v;
  return 0;
}

// add the force f acting on body_b (and -f on body_a) to the free bodies' support
static double support_of(const sim_model *m, int a, int b, const double f[3],
                         const double up[3]) {
  double s = 0, fu = geo_v3_dot(f, up);
  if (m->type[b] == SIM_BODY_FREE) s += fu;
  if (m->type[a] == SIM_BODY_FREE) s -= fu;
  return s;
}

// the contacts and forces of the compliant mode at its current state
static int measure_compliant(mode_run *x, const double up[3]) {
  if (sim_eval_contacts(x->m, x->d) != CCSIM_OK) return -1;
  int n = 0;
  const sim_contact *c = sim_data_contacts(x->d, &n);
  x->support = 0, x->contacts = 0;
  for (int i = 0; i < n; i++) {
    sim_contact_params cp;
    sim_pair_params(x->m, c[i].body_a, c[i].body_b, &cp);
    double dist = cp.standoff - c[i].depth;
    if (dist < x->min_dist) x->min_dist = dist;
    if (c[i].depth > x->max_pen) x->max_pen = c[i].depth;
    if (!(c[i].force > 0)) continue;
    double f[3];
    geo_v3_scale(f, c[i].normal, c[i].force);
    x->support += support_of(x->m, c[i].body_a, c[i].body_b, f, up);
    x->contacts++;
  }
  return 0;
}

// the rigid mode's last step: its contacts (at the step's start) and impulses / h
static void measure_rigid(mode_run *x, const double up[3]) {
  int n = 0;
  const sim_contact *c = sim_data_contacts(x->d, &n);
  x->support = 0, x->contacts = 0;
  for (int i = 0; i < n; i++) {
    sim_contact_params cp;
    sim_pair_params(x->m, c[i].body_a, c[i].body_b, &cp);
    double dist = cp.standoff - c[i].depth, pen = SIM_RIGID_TARGET * cp.standoff - dist;
    if (dist < x->min_dist) x->min_dist = dist;
    if (pen > x->max_pen) x->max_pen = pen;
    if (!(c[i].force > 0) && geo_v3_norm(c[i].friction) == 0) continue;
    double f[3];
    geo_v3_scale(f, c[i].normal, c[i].force);
    geo_v3_add(f, f, c[i].friction);
    x->support += support_of(x->m, c[i].body_a, c[i].body_b, f, up);
    x->contacts += c[i].force > 0;
  }
}

static int open_mode(mode_run *x, const Ccsim__Scene *msg, Ccsim__Mode mode, char *err,
                     size_t err_sz) {
  Ccsim__Scene s = *msg;  // shallow copy: only the mode differs
  s.has_mode = 1;
  s.mode = mode;
  x->m = wire_scene_compile(&s, err, err_sz);
  x->d = x->m ? sim_data_new(x->m, err, err_sz) : NULL;
  x->rigid = mode == CCSIM__MODE__MODE_RIGID;
  x->min_dist = INFINITY;
  return x->d ? 0 : -1;
}

// the mean contact force on the free bodies along up over the last step [N] (pairs of free
// bodies cancel: their impulses are equal and opposite)
static double mean_support_of(const mode_run *x, const double up[3]) {
  double s = 0;
  for (int b = 0; b < x->m->nbody; b++) {
    if (x->m->type[b] != SIM_BODY_FREE) continue;
    double f[3], t[3];
    sim_data_body_mean_contact(x->m, x->d, b, f, t, NULL);
    s += geo_v3_dot(f, up);
  }
  return s;
}

static void close_mode(mode_run *x) {
  sim_data_destroy(&x->d);
  sim_model_destroy(&x->m);
}

int cli_compare_main(int argc, char **argv) {
  const char *path = NULL, *csv = NULL;
  double duration = -1, dt = 1e-3, window = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
      if (parse_pos(argv[++i], "--duration", &duration)) return 2;
    } else if (!strcmp(argv[i], "--dt") && i + 1 < argc) {
      if (parse_pos(argv[++i], "--dt", &dt)) return 2;
    } else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
      if (parse_pos(argv[++i], "--window", &window)) return 2;
    } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv = argv[++i];
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] != '-' && !path) {
      path = argv[i];
    } else {
      fprintf(stderr, "ccsim compare: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (!path || duration < 0) {
    usage(stderr);
    return 2;
  }
  if (window < 0) window = 0.25 * duration;
  if (window > duration) window = duration;
  long nstep = 0;
  if (cli_step_count("compare", duration, dt, &nstep) != 0) {
    return 2;
  }
  char err[1024] = "";
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) {
    fprintf(stderr, "ccsim compare: %s\n", err);
    return 1;
  }
  mode_run run[2];
  memset(run, 0, sizeof run);
  run[0].label = "compliant", run[1].label = "rigid";
  int rc = 0;
  FILE *out = NULL;
  if (open_mode(&run[0], ccsim_scene_message(sc), CCSIM__MODE__MODE_COMPLIANT, err,
                sizeof err) ||
      open_mode(&run[1], ccsim_scene_message(sc), CCSIM__MODE__MODE_RIGID, err, sizeof err)) {
    fprintf(stderr, "ccsim compare: %s\n", err);
    rc = 1;
    goto done;
  }
  const sim_model *m = run[0].m;
  double g = geo_v3_norm(m->gravity), up[3] = {0, 0, 1}, weight = 0;
  if (g > 0) geo_v3_scale(up, m->gravity, -1.0 / g);
  for (int b = 0; b < m->nbody; b++) {
    if (m->type[b] == SIM_BODY_FREE) weight += m->mass[b] * g;
  }
  if (csv && !(out = fopen(csv, "w"))) {
    fprintf(stderr, "ccsim compare: cannot write %s\n", csv);
    rc = 1;
    goto done;
  }
  if (out) {
    fprintf(out, "t,support_compliant,support_rigid,contacts_compliant,contacts_rigid,"
                 "mean_support_compliant,mean_support_rigid\n");
  }
  const double t_window = duration - window;  // steps ending after it make the window
  for (long k = 1; k <= nstep && !(run[0].failed && run[1].failed); k++) {
    double t = k * dt;
    for (int i = 0; i < 2; i++) {
      mode_run *x = &run[i];
      if (x->failed) continue;
      double s0 = cli_now_s(), t0 = sim_data_time(x->d);
      ccsim_status st = sim_step(x->m, x->d, t);
      x->wall += cli_now_s() - s0;
      if (st != CCSIM_OK) {
        fprintf(stderr, "ccsim compare: %s mode stopped at t = %.6g s: %s\n", x->label,
                sim_data_time(x->d), sim_data_errmsg(x->d));
        x->failed = 1;
        rc = 1;
        continue;
      }
      x->mean_support = mean_support_of(x, up);
      if (t > t_window + 1e-9 * dt) {
        double h = sim_data_time(x->d) - t0;
        x->win_imp += x->mean_support * h;
        x->win_t += h;
      }
      if (x->rigid) {
        measure_rigid(x, up);
      } else if (measure_compliant(x, up) != 0) {
        fprintf(stderr, "ccsim compare: compliant contacts at t = %.6g s: %s\n", t,
                sim_data_errmsg(x->d));
        x->failed = 1;
        rc = 1;
      }
    }
    if (out) {
      fprintf(out, "%.9g,%.9g,%.9g,%d,%d,%.9g,%.9g\n", t, run[0].support, run[1].support,
              run[0].contacts, run[1].contacts, run[0].mean_support, run[1].mean_support);
    }
  }
  // side by side
  printf("%-34s %22s %22s\n", path, run[0].label, run[1].label);
  printf("%-34s %22.9g %22.9g\n", "time reached [s]", sim_data_time(run[0].d),
         sim_data_time(run[1].d));
  printf("%-34s %22.6g %22.6g\n", "wall time [s]", run[0].wall, run[1].wall);
  double mean[2];
  for (int i = 0; i < 2; i++) mean[i] = run[i].win_t > 0 ? run[i].win_imp / run[i].win_t : NAN;
  char label[64];
  snprintf(label, sizeof label, "support, mean of the last %.3g s [N]", window);
  printf("%-34s %22.9g %22.9g\n", label, mean[0], mean[1]);
  printf("%-34s %22.3e %22.3e\n", "  relative to the weight - 1", mean[0] / weight - 1,
         mean[1] / weight - 1);
  printf("%-34s %22.3e\n", "  rigid / compliant - 1", mean[1] / mean[0] - 1);
  printf("%-34s %22.9g %22.9g\n", "support force at the end [N]", run[0].support,
         run[1].support);
  printf("%-34s %22.3e %22.3e\n", "  relative to the weight - 1", run[0].support / weight - 1,
         run[1].support / weight - 1);
  printf("%-34s %22d %22d\n", "contacts carrying force", run[0].contacts, run[1].contacts);
  printf("%-34s %22.6g %22.6g\n", "closest approach [m]", run[0].min_dist, run[1].min_dist);
  printf("%-34s %22.6g %22.6g\n", "largest penetration [m]", run[0].max_pen, run[1].max_pen);
  const sim_stats *s0 = sim_data_stats(run[0].d), *s1 = sim_data_stats(run[1].d);
  printf("%-34s %22llu %22llu\n", "steps (CVODE internal / LCP)",
         (unsigned long long)s0->steps, (unsigned long long)s1->steps);
  printf("%-34s %22s %22s\n", "LCP solver (last)", "-",
         s1->lcp_solver == SIM_LCP_SOLVER_DANTZIG ? "dantzig"
         : s1->lcp_solver == SIM_LCP_SOLVER_LEMKE ? "lemke"
                                                  : "none");
  printf("%-34s %22s %22llu\n", "LCP pivots", "-", (unsigned long long)s1->lcp_pivots);
  printf("%-34s %22s %22llu\n", "LCP failures", "-", (unsigned long long)s1->lcp_failures);
  printf("weight of the free bodies: %.9g N\n", weight);
  for (int b = 0; b < m->nbody; b++) {
    if (m->type[b] != SIM_BODY_FREE) continue;
    double p[2][3], q[2][4], v[2][3], w[2][3];
    for (int i = 0; i < 2; i++) sim_get_body(run[i].m, run[i].d, b, p[i], q[i], v[i], w[i]);
    printf("body \"%s\"\n", m->name[b]);
    for (int i = 0; i < 2; i++) {
      printf("  %-10s p (%.6f %.6f %.6f) q (%.5f %.5f %.5f %.5f) v (%.4g %.4g %.4g) "
             "w (%.4g %.4g %.4g)\n",
             run[i].label, p[i][0], p[i][1], p[i][2], q[i][0], q[i][1], q[i][2], q[i][3],
             v[i][0], v[i][1], v[i][2], w[i][0], w[i][1], w[i][2]);
    }
    double dq = fabs(q[0][0] * q[1][0] + q[0][1] * q[1][1] + q[0][2] * q[1][2] +
                     q[0][3] * q[1][3]);
    printf("  difference: position %.3g m, orientation %.3g rad\n", geo_v3_dist(p[0], p[1]),
           2 * acos(fmin(1.0, dq)));
  }
done:
  if (out && (ferror(out) | fclose(out)) != 0) {
    fprintf(stderr, "ccsim compare: error writing %s\n", csv);  // a full disk, say
    rc = 1;
  }
  close_mode(&run[0]);
  close_mode(&run[1]);
  ccsim_scene_destroy(&sc);
  return rc;
}
