// ccsimd: the ccsim simulation server.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  fprintf(f,
          "usage: ccsimd [--bind ENDPOINT] [--max-sessions N] [--verbose]\n"
          "\n"
          "Serve ccsim sessions over ZeroMQ (protocol v1, see proto/ccsim.proto).\n"
          "  --bind ENDPOINT     where to listen (default %s; tcp://127.0.0.1:* picks a\n"
          "                      free port, printed at start)\n"
          "  --max-sessions N    open sessions at once (default 64)\n"
          "  --verbose           log every request to stderr\n"
          "  --help              this text\n"
          "Stops cleanly on SIGINT or SIGTERM.\n",
          SRV_DEFAULT_BIND);
}

int main(int argc, char **argv) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--bind") && i + 1 < argc) {
      cfg.bind = argv[++i];
    } else if (!strcmp(a, "--max-sessions") && i + 1 < argc) {
      char *end = NULL;
      long v = strtol(argv[++i], &end, 10);
      if (!end || *end || v <= 0 || v > 100000) {
        fprintf(stderr, "ccsimd: --max-sessions wants a number in [1, 100000], got '%s'\n",
                argv[i]);
        return 2;
      }
      cfg.max_sessions = (int)v;
    } else if (!strcmp(a, "--verbose")) {
      cfg.verbose = 1;
    } else {
      fprintf(stderr, "ccsimd: unknown or incomplete option '%s'\n\n", a);
      usage(stderr);
      return 2;
    }
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
  fflush(stdout);
  int rc = srv_run(s);
  g_server = NULL;
  printf("ccsimd: stopping (%d sessions open)\n", srv_session_count(s));
  srv_destroy(&s);
  return rc == 0 ? 0 : 1;
}
