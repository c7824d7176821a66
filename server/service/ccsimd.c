// ccsimd: the ccsim simulation server.
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "srv.h"

// the one server of this process, for the signal handler (srv_stop is async-signal-safe)
static srv *g_server;

static void on_signal(int sig) {
  (void)sig;
  if (g_server) {
    srv_stop(g_server);
  }
}

static void usage(FILE *f) {
  srv_config d;  // the defaults, from ccsim_limits.h
  srv_config_defaults(&d);
  fprintf(f,
          "usage: ccsimd [options]\n"
          "\n"
          "Serve ccsim sessions over ZeroMQ (protocol v1, see proto/ccsim.proto).\n"
          "  --bind ENDPOINT          where to listen (default %s; tcp://127.0.0.1:*\n"
          "                           picks a free port, printed at start)\n"
          "  --stream ENDPOINT        PUB socket for state streams (default: auto = the bind\n"
          "                           host on a free port; none: off)\n"
          "  --workers N              physics threads (default: twice the cores, at least 4)\n"
          "  --idle-timeout S         free sessions without a request from their controller\n"
          "                           for S seconds (default 600; 0: never); a client coming\n"
          "                           back gets EEXPIRED\n"
          "  --state-dir DIR          save every session there on SIGTERM/SIGINT (and every\n"
          "                           --checkpoint-interval S seconds), restore them at start;\n"
          "                           one server per DIR (locked)\n"
          "  --checkpoint-interval S  periodic saves with --state-dir (default 0: only on stop);\n"
          "                           each restarts the session's integrator, so the last\n"
          "                           bits of a trajectory depend on when saves fell\n"
          "  --admin-token FILE       write a new admin token to FILE (mode 600) at start:\n"
          "                           `ccsim close SESSION --token-file FILE` then ends any\n"
          "                           session, as its controller would (nothing else)\n"
          "  --curve-secret FILE      turn CURVE encryption on with this server secret key\n"
          "  --curve-allow DIR        admit only clients whose public key is a *.pub in DIR\n"
          "  --max-sessions N         open sessions at once (default %d)\n"
          "  --max-bodies N           bodies per session (default %d)\n"
          "  --max-triangles N        triangles per session, meshes and tessellated primitives\n"
          "                           (default %ld)\n"
          "  --max-substeps N         sub-steps per Step (default %d)\n"
          "  --max-contacts N         contacts in one reply (default %d)\n"
          "  --max-step-seconds S     wall time one request may spend in the physics; a step\n"
          "                           stopped there keeps the state it reached (default\n"
          "                           %g; 0: no limit)\n"
          "  --max-msg-bytes N        largest request (default %zu)\n"
          "  --model-cache-mb N       compiled scenes kept for later sessions of the same scene\n"
          "                           once no session uses them, least recently used evicted\n"
          "                           first (default %zu; 0: none kept); sessions of one scene\n"
          "                           always share one compiled model\n"
          "  --heartbeat-ms N         ZeroMQ heartbeat interval (default 1000; 0: off)\n"
          "  --realtime PRIO          SCHED_FIFO priority 1..99 for the server's threads (HIL;\n"
          "                           needs CAP_SYS_NICE)\n"
          "  --spin-us N              poll N us for work before sleeping (default 0): lower\n"
          "                           latency on machines with idle cores, wasted CPU otherwise\n"
          "  --inline-us N            the thread serving the socket runs a step itself when\n"
          "                           the session's recent steps took < N us (default 50; 0:\n"
          "                           always hand it to another thread)\n"
          "  --verbose                log every request to stderr\n"
          "  --help                   this text\n"
          "  --version                print ccsimd's version\n"
          "Keys: `ccsim keygen NAME` writes NAME.pub and NAME.secret.\n"
          "Stops cleanly on SIGINT or SIGTERM.\n",
          SRV_DEFAULT_BIND, d.max_sessions, d.max_bodies, d.max_triangles, d.max_substeps,
          d.max_contacts, d.max_step_seconds, d.max_msg_bytes, d.model_cache_mb);
}

static int num(const char *opt, const char *s, double lo, double hi, double *out) {
  char *end = NULL;
  double v = strtod(s, &end);
  // an empty value (an unset variable in a script) is no number: strtod reads nothing
  if (!end || end == s || *end || !isfinite(v) || v < lo || v > hi) {
    fprintf(stderr, "ccsimd: %s wants a number in [%g, %g], got '%s'\n", opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

// num, for a count: a fraction is refused, not cut off
static int whole(const char *opt, const char *s, double lo, double hi, double *out) {
  if (num(opt, s, lo, hi, out) != 0) return -1;
  if (*out != floor(*out)) {
    fprintf(stderr, "ccsimd: %s wants a whole number, got '%s'\n", opt, s);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.stream_bind = "auto";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    double x = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("ccsimd %s\n", SRV_VERSION);
      return 0;
    } else if (!strcmp(a, "--verbose")) {
      cfg.verbose = 1;
      continue;
    } else if (!v) {
      fprintf(stderr, "ccsimd: unknown or incomplete option '%s'\n\n", a);
      usage(stderr);
      return 2;
    }
    i++;
    if (!strcmp(a, "--bind")) {
      cfg.bind = v;
    } else if (!strcmp(a, "--stream")) {
      cfg.stream_bind = strcmp(v, "none") ? v : NULL;
    } else if (!strcmp(a, "--state-dir")) {
      cfg.state_dir = v;
    } else if (!strcmp(a, "--admin-token")) {
      cfg.admin_token_file = v;
    } else if (!strcmp(a, "--curve-secret")) {
      cfg.curve_secret_file = v;
    } else if (!strcmp(a, "--curve-allow")) {
      cfg.curve_allow_dir = v;
    } else if (!strcmp(a, "--workers")) {
      if (whole(a, v, 1, 1024, &x)) return 2;
      cfg.workers = (int)x;
    } else if (!strcmp(a, "--idle-timeout")) {
      if (num(a, v, 0, 1e9, &x)) return 2;
      cfg.idle_timeout = x;
    } else if (!strcmp(a, "--checkpoint-interval")) {
      if (num(a, v, 0, 1e9, &x)) return 2;
      cfg.checkpoint_interval = x;
    } else if (!strcmp(a, "--max-sessions")) {
      if (whole(a, v, 1, 100000, &x)) return 2;
      cfg.max_sessions = (int)x;
    } else if (!strcmp(a, "--max-bodies")) {
      if (whole(a, v, 1, 4096, &x)) return 2;
      cfg.max_bodies = (int)x;
    } else if (!strcmp(a, "--max-triangles")) {
      if (whole(a, v, 0, 1e9, &x)) return 2;
      cfg.max_triangles = (long)x;
    } else if (!strcmp(a, "--model-cache-mb")) {
      if (whole(a, v, 0, 1e9, &x)) return 2;
      cfg.model_cache_mb = (size_t)x;
    } else if (!strcmp(a, "--max-substeps")) {
      if (whole(a, v, 1, 1e7, &x)) return 2;
      cfg.max_substeps = (int)x;
    } else if (!strcmp(a, "--max-contacts")) {
      if (whole(a, v, 0, 1e9, &x)) return 2;
      cfg.max_contacts = (int)x;
    } else if (!strcmp(a, "--max-step-seconds")) {
      if (num(a, v, 0, 1e9, &x)) return 2;
      cfg.max_step_seconds = x;
    } else if (!strcmp(a, "--max-msg-bytes")) {
      if (whole(a, v, 64, 2147483648.0, &x)) return 2;
      cfg.max_msg_bytes = (size_t)x;
    } else if (!strcmp(a, "--realtime")) {
      if (whole(a, v, 1, 99, &x)) return 2;
      cfg.rt_priority = (int)x;
    } else if (!strcmp(a, "--spin-us")) {
      if (whole(a, v, 0, 1000000, &x)) return 2;
      cfg.spin_us = (int)x;
    } else if (!strcmp(a, "--inline-us")) {
      if (whole(a, v, 0, 1000000, &x)) return 2;
      cfg.inline_us = (int)x;
    } else if (!strcmp(a, "--heartbeat-ms")) {
      if (whole(a, v, 0, 3600000, &x)) return 2;
      cfg.heartbeat_ms = (int)x;
    } else {
      fprintf(stderr, "ccsimd: unknown option '%s'\n\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!cfg.curve_secret_file != !cfg.curve_allow_dir) {
    fprintf(stderr, "ccsimd: --curve-secret and --curve-allow go together\n");
    return 2;
  }
  char err[512] = "";
  srv *s = srv_new(&cfg, err, sizeof err);
  if (!s) {
    fprintf(stderr, "ccsimd: %s\n", err);
    return 1;
  }
  g_server = s;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  printf("ccsimd %s listening on %s\n", SRV_VERSION, srv_endpoint(s));
  if (srv_stream_endpoint(s)[0]) {
    printf("ccsimd: state stream on %s\n", srv_stream_endpoint(s));
  }
  if (cfg.curve_secret_file) {
    printf("ccsimd: CURVE on; clients need this server's public key (NAME.pub of keygen)\n");
  }
  fflush(stdout);
  int rc = srv_run(s);
  g_server = NULL;
  printf("ccsimd: stopping (%d sessions open%s)\n", srv_session_count(s),
         !cfg.state_dir       ? ""
         : srv_save_failed(s) ? ", NOT all saved: see above"
                              : ", saved");
  srv_destroy(&s);
  return rc == 0 ? 0 : 1;
}
