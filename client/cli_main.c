// ccsim: the command-line client. `ccsim run` plays a scene (on an embedded server when
// no --server is given), `ccsim ping` checks a server.
#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "ccsim_status.h"
#include "cli.h"
#include "cli_compare.h"
#include "ccsim_version.h"
#include "cli_service.h"
#include "srv.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ccsim COMMAND [options]\n"
          "\n"
          "commands:\n"
          "  run SCENE.json [--duration T] [--dt DT] [--csv FILE] [--plot FILE.png]\n"
          "                 [--body NAME] [--mode compliant|rigid] [--server E] [--quiet]\n"
          "                 [--timeout S]\n"
          "      play a scene for T seconds (default 1) in steps of DT (default 0.001),\n"
          "      print the final state; without --server an embedded server is started\n"
          "      on loopback; --csv writes t and every body's state, contact force and\n"
          "      contact count at each step's end, then every body's mean contact force\n"
          "      over each step (NAME.mfx, .mfy, .mfz); --plot draws the height and the\n"
          "      vertical contact force, mean and at the step's end, of one body (--body,\n"
          "      default the last free one) with gnuplot;\n"
          "      --mode overrides the scene's mode; --timeout is each step's wait for its\n"
          "      reply (default 10 s; two retries; a long --dt may need more); on a\n"
          "      terminal a progress line (time, real-time factor, time left) shows about\n"
          "      once a second, not with --quiet\n"
          "  compare SCENE.json --duration T [--dt DT] [--window W] [--csv FILE]\n"
          "      play a scene in both modes and print them side by side; the support\n"
          "      force as the mean over the last W seconds (default T/4)\n"
          "  ping [--server E] [--timeout S]\n"
          "      ask a server (default %s) for its version and load (S: 3 s)\n"
          "  geom proximity A B [--pose-a \"x y z qw qx qy qz\"] [--pose-b ...]\n"
          "                 [--standoff D] [--json]\n"
          "      witness pairs between two meshes or primitives closer than D (default\n"
          "      0.001 m; ccsim geom --help)\n",
          SRV_DEFAULT_BIND);
  cli_service_usage(f);
  fprintf(f, "  help\n"
             "      this text\n"
             "  --version\n"
             "      print ccsim's version\n");
}

static int parse_double(const char *s, const char *opt, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  if (!end || *end || !isfinite(v)) {
    fprintf(stderr, "ccsim: %s wants a number, got '%s'\n", opt, s);
    return -1;
  }
  *out = v;
  return 0;
}

// ---- embedded server ---------------------------------------------------------------

typedef struct embedded {
  srv *s;
  pthread_t thread;
} embedded;

static void *embedded_main(void *arg) {
  srv_run(arg);
  return NULL;
}

static int embedded_start(embedded *e, char *err, size_t err_sz) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  e->s = srv_new(&cfg, err, err_sz);
  if (!e->s) {
    return -1;
  }
  if (pthread_create(&e->thread, NULL, embedded_main, e->s) != 0) {
    ccsim_set_err(err, err_sz, "cannot start the embedded server thread");
    srv_destroy(&e->s);
    return -1;
  }
  return 0;
}

static void embedded_stop(embedded *e) {
  if (!e->s) {
    return;
  }
  srv_stop(e->s);
  pthread_join(e->thread, NULL);
  srv_destroy(&e->s);
}

// ---- commands ----------------------------------------------------------------------

static void print_vec(FILE *f, const char *label, const double *v, int n) {
  fprintf(f, "  %s = [", label);
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s%.17g", i ? ", " : "", v[i]);
  }
  fprintf(f, "]\n");
}

static void csv_header(FILE *f, const ccsim_session *s) {
  fprintf(f, "t");
  cli_csv_bodies_header(f, s);
  fprintf(f, "\n");
}

static void csv_row(FILE *f, const ccsim_session *s) {
  fprintf(f, "%.17g", ccsim_session_time(s));
  cli_csv_bodies_row(f, ccsim_session_bodies(s), ccsim_session_nbody(s));
  fprintf(f, "\n");
}

// Write str as a gnuplot single-quoted string: no substitution happens inside one, a
// quote is doubled, and a control character (a newline would end the command and let the
// rest run as gnuplot, system() included) becomes '?'. Names come from scene files.
static void put_gp_string(FILE *gp, const char *str) {
  fputc('\'', gp);
  for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
    if (*p == '\'') {
      fputs("''", gp);
    } else {
      fputc(iscntrl(*p) ? '?' : *p, gp);
    }
  }
  fputc('\'', gp);
}

static int has_control_chars(const char *str) {
  for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
    if (iscntrl(*p)) return 1;
  }
  return 0;
}

// The paper's Figure 5 from the CSV: body b's height and vertical contact force against
// time, one panel each. Returns 0, or 1 with a message when gnuplot is missing or fails.
static int plot_figure5(const char *csv, const char *png, const ccsim_session *s, int b) {
  if (has_control_chars(png) || has_control_chars(csv)) {
    fprintf(stderr,
            "ccsim: --plot: a file name with control characters cannot be plotted; "
            "the data are in %s\n",
            csv);
    return 1;
  }
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    fprintf(stderr, "ccsim: --plot needs gnuplot, which is not installed "
                    "(apt-get install gnuplot-nox); the data are in %s\n", csv);
    return 1;
  }
  // gnuplot's own warnings (an empty range, a font) go to a file shown only when it fails
  char gp_log[] = "/tmp/ccsim-gnuplot-XXXXXX";
  int log_fd = mkstemp(gp_log);
  if (log_fd < 0) {
    fprintf(stderr, "ccsim: --plot: cannot make a temporary file: %s\n", strerror(errno));
    return 1;
  }
  close(log_fd);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "gnuplot 2>%s", gp_log);
  FILE *gp = popen(cmd, "w");
  if (!gp) {
    fprintf(stderr, "ccsim: cannot start gnuplot\n");
    unlink(gp_log);
    return 1;
  }
  // columns: t, then CLI_CSV_BODY_COLS per body (p 3, q 4, v 3, w 3, f 3, contacts), then
  // 3 per body (mean f)
  int nbody = ccsim_session_nbody(s);
  int zcol = 2 + CLI_CSV_BODY_COLS * b + 2, fcol = 2 + CLI_CSV_BODY_COLS * b + 15;
  int mcol = 2 + CLI_CSV_BODY_COLS * nbody + 3 * b + 2;
  const char *name = ccsim_session_body_name(s, b);
  // names are text, not markup (no subscripts from underscores); the time axis ends where
  // the data end
  fputs("set terminal png noenhanced size 900,700\nset output ", gp);
  put_gp_string(gp, png);
  fputs("\nset datafile separator ','\nset key off\nset autoscale xfix\n", gp);
  // tick labels with as many digits as the panel's range needs to tell them apart (a body
  // resting at 0.02598 m moving by microns), four at least
  fputs("digits(lo, hi) = hi > lo ? int(ceil(log10((abs(hi) > abs(lo) ? abs(hi) : abs(lo)) / "
        "(hi - lo)))) + 2 : 4\n"
        "fmt(lo, hi) = sprintf('%%.%dg', digits(lo, hi) < 4 ? 4 : "
        "(digits(lo, hi) > 15 ? 15 : digits(lo, hi)))\n",
        gp);
  fputs("set multiplot layout 2,1 title ", gp);
  put_gp_string(gp, name);
  fputs(".': height and vertical contact force'\nset ylabel 'height z [m]'\nstats ", gp);
  put_gp_string(gp, csv);
  fprintf(gp, " using %d every ::1 nooutput name 'Z'\nset format y fmt(Z_min, Z_max)\nplot ",
          zcol);
  put_gp_string(gp, csv);
  fprintf(gp,
          " using 1:%d every ::1 with lines lw 2\nset xlabel 'time [s]'\n"
          "set ylabel 'vertical contact force [N]'\nstats ",
          zcol);
  put_gp_string(gp, csv);
  // the range of both curves: the mean reaches the impacts the end sample misses
  fprintf(gp, " using (column(%d) < column(%d) ? column(%d) : column(%d)):"
          "(column(%d) > column(%d) ? column(%d) : column(%d)) every ::1 nooutput name 'F'\n"
          "set format y fmt(F_min_x, F_max_y)\nset key top right\nplot ",
          fcol, mcol, fcol, mcol, fcol, mcol, fcol, mcol);
  put_gp_string(gp, csv);
  fprintf(gp, " using 1:%d every ::1 with lines lw 2 title 'mean over each step', ", mcol);
  put_gp_string(gp, csv);
  fprintf(gp, " using 1:%d every ::1 with lines lw 1 title 'at the step end'\n"
          "unset multiplot\n", fcol);
  int rc = pclose(gp);
  if (rc != 0) {
    fprintf(stderr, "ccsim: gnuplot failed (status %d):\n", rc);
    FILE *lf = fopen(gp_log, "r");
    char line[512];
    while (lf && fgets(line, sizeof line, lf)) fputs(line, stderr);
    if (lf) fclose(lf);
    unlink(gp_log);
    return 1;
  }
  unlink(gp_log);
  printf("plot: %s (%s's height and vertical contact force, mean over each step and at its "
         "end)\n", png, name);
  return 0;
}

static volatile sig_atomic_t g_interrupted;  // the signal that asked cmd_run to stop (0: none)

static void on_interrupt(int sig) {
  g_interrupted = sig;
}

// A timeout in seconds as the library's milliseconds: at least 1 (0 means its default)
static int wait_ms(double seconds) {
  return (int)fmax(1.0, fmin(1000 * seconds, INT_MAX));
}

static int cmd_run(int argc, char **argv) {
  const char *scene_path = NULL, *server = NULL, *csv = NULL, *plot = NULL, *body = NULL;
  const char *mode = NULL;
  double duration = 1.0, dt = 0.001, timeout = 10.0;
  int quiet = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--duration") && i + 1 < argc) {
      if (parse_double(argv[++i], a, &duration)) return 2;
    } else if (!strcmp(a, "--dt") && i + 1 < argc) {
      if (parse_double(argv[++i], a, &dt)) return 2;
    } else if (!strcmp(a, "--csv") && i + 1 < argc) {
      csv = argv[++i];
    } else if (!strcmp(a, "--server") && i + 1 < argc) {
      server = argv[++i];
    } else if (!strcmp(a, "--plot") && i + 1 < argc) {
      plot = argv[++i];
    } else if (!strcmp(a, "--body") && i + 1 < argc) {
      body = argv[++i];
    } else if (!strcmp(a, "--mode") && i + 1 < argc) {
      mode = argv[++i];
    } else if (!strcmp(a, "--quiet")) {
      quiet = 1;
    } else if (!strcmp(a, "--timeout") && i + 1 < argc) {
      if (parse_double(argv[++i], a, &timeout) || !(timeout > 0) || timeout > 86400) {
        fprintf(stderr, "ccsim run: --timeout wants seconds in (0, 86400]\n");
        return 2;
      }
    } else if (a[0] != '-' && !scene_path) {
      scene_path = a;
    } else {
      fprintf(stderr, "ccsim run: unknown or incomplete option '%s'\n\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!scene_path) {
    fprintf(stderr, "ccsim run: which scene? (e.g. ccsim run examples/rock_n_stack.json)\n");
    return 2;
  }
  if (!(dt > 0) || !(duration > 0)) {
    fprintf(stderr, "ccsim run: --dt and --duration must be > 0\n");
    return 2;
  }
  long nsteps = 0;
  if (cli_step_count("run", duration, dt, &nsteps) != 0) {
    return 2;
  }
  // --plot reads the CSV: without --csv it goes next to the picture
  char plot_csv[1100] = "";
  if (plot && !csv) {
    snprintf(plot_csv, sizeof plot_csv, "%s.csv", plot);
    csv = plot_csv;
  }

  char err[1024] = "";
  ccsim_scene *scene = ccsim_scene_load(scene_path, err, sizeof err);
  if (!scene) {
    fprintf(stderr, "ccsim: %s\n", err);
    return 1;
  }
  if (mode && ccsim_scene_set_mode(scene, mode) != 0) {
    fprintf(stderr, "ccsim run: --mode is compliant or rigid, not '%s'\n", mode);
    ccsim_scene_destroy(&scene);
    return 2;
  }
  embedded emb = {0};
  if (!server) {
    if (embedded_start(&emb, err, sizeof err) != 0) {
      fprintf(stderr, "ccsim: embedded server: %s\n", err);
      ccsim_scene_destroy(&scene);
      return 1;
    }
    server = srv_endpoint(emb.s);
  }
  int rc = 1;
  FILE *out = NULL;
  ccsim_session *s = NULL;
  ccsim_client *c = NULL;
  ccsim_client_opts o;
  ccsim_curve_keys keys;
  ccsim_client_opts_defaults(&o);
  o.timeout_ms = wait_ms(timeout);
  o.retries = 2;
  // the embedded server has no CURVE: the environment's keys are for remote servers
  if (!emb.s && ccsim_client_opts_from_env(&o, &keys, err, sizeof err) != 0) {
    fprintf(stderr, "ccsim: %s\n", err);
    goto done;
  }
  c = ccsim_client_new_opts(server, &o, err, sizeof err);
  if (!c) {
    fprintf(stderr, "ccsim: %s\n", err);
    goto done;
  }
  s = ccsim_session_create(c, scene);
  if (!s) {
    fprintf(stderr, "ccsim: %s\n", ccsim_client_errmsg(c));
    goto done;
  }
  int plot_body = -1;
  if (plot && body) {
    plot_body = ccsim_session_body_index(s, body);
    if (plot_body < 0) {
      fprintf(stderr, "ccsim: --body: the scene has no body \"%s\"\n", body);
      goto done;
    }
  } else if (plot) {
    // the last free body: a fixed or kinematic one has no motion of its own to plot
    const Ccsim__Scene *sm = ccsim_scene_message(scene);
    for (size_t b = 0; b < sm->n_bodies; b++) {
      const Ccsim__Body *bd = sm->bodies[b];
      if ((!bd->has_type || bd->type == CCSIM__BODY_TYPE__BODY_FREE) && bd->name) {
        plot_body = ccsim_session_body_index(s, bd->name);
      }
    }
    if (plot_body < 0) {
      fprintf(stderr, "ccsim: --plot: the scene has no free body (give one with --body)\n");
      goto done;
    }
  }
  if (csv) {
    out = fopen(csv, "w");
    if (!out) {
      fprintf(stderr, "ccsim: cannot write %s\n", csv);
      goto done;
    }
    csv_header(out, s);
    csv_row(out, s);
  }
  if (!quiet) {
    printf("ccsim: %s on %s%s: %d bodies, %ld steps of %g s\n", scene_path, server,
           emb.s ? " (embedded)" : "", ccsim_session_nbody(s), nsteps, dt);
  }
  ccsim_step_stats total = {0};
  double t0 = cli_now_s();
  // Ctrl-C ends the run between steps and closes the session: a killed client's session
  // would stay on the server (for ever with --idle-timeout 0). Once only: a second one
  // kills as usual.
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  g_interrupted = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  if (old_int.sa_handler == SIG_IGN) {
    sigaction(SIGINT, &old_int, NULL);  // ignored by whoever started us (nohup, a script's &)
  }
  int stop_rc = 0;
  // on a terminal, a line about once a second: where the run is, how fast, how long to go
  int progress = !quiet && isatty(STDERR_FILENO), shown = 0;
  double sim0 = ccsim_session_time(s), sim_end = sim0 + (double)nsteps * dt, due = t0 + 1.0;
  for (long k = 0; k < nsteps; k++) {
    if (progress && cli_now_s() >= due) {
      double now = cli_now_s(), ts = ccsim_session_time(s);
      double rtf = (ts - sim0) / (now - t0);
      fprintf(stderr, "\rccsim: t = %.4g of %.4g s, real-time factor %.3g, about %.0f s left  ",
              ts, sim_end, rtf, rtf > 0 ? (sim_end - ts) / rtf : 0.0);
      shown = 1;
      due = now + 1.0;
    }
    if (g_interrupted) {
      fprintf(stderr, "ccsim: interrupted after %ld steps (t = %g); closing the session\n", k,
              ccsim_session_time(s));
      stop_rc = 128 + (int)g_interrupted;
      break;
    }
    if (ccsim_session_step(s, dt, NULL, 0) != CCSIM_OK) {
      fprintf(stderr, "ccsim: step %ld at t = %g: %s\n", k + 1, ccsim_session_time(s),
              ccsim_client_errmsg(c));
      stop_rc = 1;
      break;
    }
    const ccsim_step_stats *st = ccsim_session_stats(s);
    total.steps += st->steps;
    total.rhs_evals += st->rhs_evals;
    total.jac_evals += st->jac_evals;
    total.newton_fails += st->newton_fails;
    total.error_fails += st->error_fails;
    total.physics_us += st->physics_us;
    if (out) {
      csv_row(out, s);
    }
  }
  if (shown) fputs("\r\033[K", stderr);  // the progress line makes way for the results
  double wall = cli_now_s() - t0;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (stop_rc) {
    rc = stop_rc;
    goto done;
  }
  printf("final state at t = %.17g s\n", ccsim_session_time(s));
  const ccsim_body_state *bs = ccsim_session_bodies(s);
  for (int b = 0; b < ccsim_session_nbody(s); b++) {
    cli_put_name(stdout, ccsim_session_body_name(s, b));
    putchar('\n');
    print_vec(stdout, "p", bs[b].p, 3);
    print_vec(stdout, "q", bs[b].q, 4);
    print_vec(stdout, "v", bs[b].v, 3);
    print_vec(stdout, "w", bs[b].w, 3);
  }
  if (!quiet && !strcmp(ccsim_scene_mode(scene), "rigid")) {
    // the rigid mode's steps are its fixed LCP steps; CVODE does not run
    printf("rigid: %llu LCP steps\n", (unsigned long long)total.steps);
  } else if (!quiet) {
    printf("cvode: %llu steps, %llu rhs evals, %llu jacobians, %llu newton fails, %llu error "
           "test fails\n",
           (unsigned long long)total.steps, (unsigned long long)total.rhs_evals,
           (unsigned long long)total.jac_evals, (unsigned long long)total.newton_fails,
           (unsigned long long)total.error_fails);
  }
  if (!quiet) {
    printf(
        "time: %.3f s wall for %.3f s simulated (real-time factor %.2f), physics %.3f s, "
        "mean round trip %.1f us\n",
        wall, ccsim_session_time(s), ccsim_session_time(s) / wall, 1e-6 * (double)total.physics_us,
        1e6 * wall / (double)nsteps);
  }
  rc = 0;
done:
  if (out && (ferror(out) | fclose(out)) != 0) {
    fprintf(stderr, "ccsim: error writing %s\n", csv);
    rc = 1;
  }
  if (rc == 0 && plot && plot_figure5(csv, plot, s, plot_body) != 0) {
    rc = 1;
  }
  if (s) ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  embedded_stop(&emb);
  ccsim_scene_destroy(&scene);
  return rc;
}

static int cmd_ping(int argc, char **argv) {
  const char *server = SRV_DEFAULT_BIND;
  double timeout = 3.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--server") && i + 1 < argc) {
      server = argv[++i];
    } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
      if (parse_double(argv[++i], "--timeout", &timeout) || !(timeout > 0) || timeout > 3600) {
        fprintf(stderr, "ccsim ping: --timeout wants seconds in (0, 3600]\n");
        return 2;
      }
    } else {
      fprintf(stderr, "ccsim ping: unknown or incomplete option '%s'\n", argv[i]);
      return 2;
    }
  }
  char err[512] = "";
  // a ping should answer quickly: one attempt (a dead server is not retried)
  ccsim_client *c = ccsim_client_connect(server, wait_ms(timeout), 0, err, sizeof err);
  if (!c) {
    fprintf(stderr, "ccsim ping: %s\n", err);
    return 1;
  }
  ccsim_server_info info;
  double rtt = 0;
  int st = ccsim_client_server_info(c, &info, &rtt);
  if (st != CCSIM_OK) {
    fprintf(stderr, "ccsim ping: %s\n", ccsim_client_errmsg(c));
    ccsim_client_destroy(&c);
    return 1;
  }
  printf("%s: ccsimd %s, protocol %u, %u sessions, up %.1f s, %llu requests, round trip %.0f us\n",
         server, info.version, info.protocol_version, info.sessions, info.uptime,
         (unsigned long long)info.requests, rtt);
  ccsim_client_destroy(&c);
  return 0;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv) {
  int rc = dispatch(argc, argv);
  // the output is the command's result: one that did not reach its file (a full disk, a
  // closed pipe) is a failure, not a success
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "ccsim: error writing the standard output%s%s\n", errno ? ": " : "",
            errno ? strerror(errno) : "");
    if (rc == 0) rc = 1;
  }
  return rc;
}

static int dispatch(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
      !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    printf("ccsim %s\n", CCSIM_VERSION);
    return 0;
  }
  if (!strcmp(argv[1], "run")) {
    return cmd_run(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "ping")) {
    return cmd_ping(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "compare")) {
    return cli_compare_main(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "geom")) {
    return cli_geom_main(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "close")) {
    return cli_close_main(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "sessions")) {
    return cli_sessions_main(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "watch")) {
    return cli_watch_main(argc - 1, argv + 1);
  }
  if (!strcmp(argv[1], "keygen")) {
    return cli_keygen_main(argc - 1, argv + 1);
  }
  fprintf(stderr, "ccsim: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
