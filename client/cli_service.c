// ccsim sessions / watch / close / keygen: the service side of the command-line tool.
#include "cli_service.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim_client.h"
#include "cli.h"

#define CLI_DEFAULT_SERVER "tcp://127.0.0.1:5555"
// one attempt of 5 s for the queries of sessions and watch: a person at a terminal reruns
// the command sooner than the library's default three attempts of 10 s would give up
#define CLI_QUERY_TIMEOUT_MS 5000
// watch asks for its session after this long without a stream message [ms]
#define CLI_WATCH_CHECK_MS 2000

void cli_service_usage(FILE *f) {
  fprintf(f,
          "  sessions [--server E]\n"
          "      list a server's open sessions (id, time, bodies, steps: Step requests,\n"
          "      SetStates and free-running ticks, as the stream numbers them; idle, pacing)\n"
          "  watch SESSION [--server E] [--csv] [--count N] [--timeout S]\n"
          "      print a session's state stream until it closes (or N messages, or S seconds\n"
          "      without one: exit 0 if any came, else 1); gaps in the stream's sequence\n"
          "      numbers are reported on stderr; while the stream is quiet the session is\n"
          "      asked for every 2 s, and a server that does not answer in 5 s ends the\n"
          "      watch (exit 1); --csv quotes a body name holding a comma, quote or line break\n"
          "  close SESSION [--server E] [--token-file FILE]\n"
          "      end a session, as its controller would: FILE holds its controller token or\n"
          "      the server's admin token (ccsimd --admin-token FILE writes one), which\n"
          "      closes any session, e.g. one whose client was killed\n"
          "  keygen NAME [--dir DIR]\n"
          "      write a CURVE key pair: NAME.pub (give it to the other side) and NAME.secret\n"
          "      (keep it); ccsimd --curve-secret / --curve-allow, clients CCSIM_SERVER_KEY /\n"
          "      CCSIM_CLIENT_KEY\n");
}

static const char *pacing_name(ccsim_pacing p) {
  switch (p) {
  case CCSIM_PACING_LOCKSTEP: return "lockstep";
  case CCSIM_PACING_FREE_RUNNING: return "free-running";
  default: return "none";
  }
}

int cli_sessions_main(int argc, char **argv) {
  const char *server = CLI_DEFAULT_SERVER;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--server") && i + 1 < argc) {
      server = argv[++i];
    } else {
      fprintf(stderr, "ccsim %s: unknown or incomplete option '%s'\n", argv[0], argv[i]);
      return 2;
    }
  }
  char err[512] = "";
  ccsim_client *c = ccsim_client_connect(server, CLI_QUERY_TIMEOUT_MS, 0, err, sizeof err);
  if (!c) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], err);
    return 1;
  }
  ccsim_session_info *info = NULL;
  size_t n = 0;
  if (ccsim_client_list_sessions(c, &info, &n) != CCSIM_OK) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], ccsim_client_errmsg(c));
    ccsim_client_destroy(&c);
    return 1;
  }
  printf("%-32s %12s %6s %10s %8s %-12s %s\n", "session", "time [s]", "bodies", "steps",
         "idle [s]", "pacing", "deadline misses (worst)");
  for (size_t i = 0; i < n; i++) {
    const ccsim_session_info *s = &info[i];
    printf("%-32s %12.6f %6u %10llu %8.1f %-12s", s->id, s->time, s->bodies,
           (unsigned long long)s->steps, s->idle, pacing_name(s->pacing));
    if (s->pacing != CCSIM_PACING_NONE) {
      printf(" %llu of %llu (%.3f ms; %llu late requests)", (unsigned long long)s->deadline.misses,
             (unsigned long long)s->deadline.paced_steps, 1e3 * s->deadline.worst_lateness,
             (unsigned long long)s->deadline.late_requests);
    }
    printf("\n");
  }
  printf("%zu session%s\n", n, n == 1 ? "" : "s");
  free(info);
  ccsim_client_destroy(&c);
  return 0;
}

// The token in the file at path (its first line, surrounding blanks dropped) into
// out[0, n): 0, or -1 with the reason on stderr.
static int read_token(const char *cmd, const char *path, char *out, size_t n) {
  FILE *in = fopen(path, "r");
  if (!in) {
    fprintf(stderr, "ccsim %s: cannot read %s: %s\n", cmd, path, strerror(errno));
    return -1;
  }
  char line[256] = "";
  int got = fgets(line, sizeof line, in) != NULL;
  fclose(in);
  char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  size_t len = strcspn(p, " \t\r\n");
  if (!got || len == 0 || len >= n) {
    fprintf(stderr, "ccsim %s: %s holds no token\n", cmd, path);
    return -1;
  }
  memcpy(out, p, len);
  out[len] = 0;
  return 0;
}

int cli_close_main(int argc, char **argv) {
  const char *server = CLI_DEFAULT_SERVER, *id = NULL, *token_file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--server") && i + 1 < argc) {
      server = argv[++i];
    } else if (!strcmp(argv[i], "--token-file") && i + 1 < argc) {
      token_file = argv[++i];
    } else if (argv[i][0] != '-' && !id) {
      id = argv[i];
    } else {
      fprintf(stderr, "ccsim %s: unknown or incomplete option '%s'\n", argv[0], argv[i]);
      return 2;
    }
  }
  if (!id) {
    fprintf(stderr, "ccsim %s: which session? (ccsim sessions lists them)\n", argv[0]);
    return 2;
  }
  char token[128] = "";
  if (token_file && read_token(argv[0], token_file, token, sizeof token) != 0) {
    return 1;
  }
  char err[512] = "";
  ccsim_client *c = ccsim_client_connect(server, CLI_QUERY_TIMEOUT_MS, 0, err, sizeof err);
  if (!c) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], err);
    return 1;
  }
  int st = ccsim_client_close_session(c, id, token[0] ? token : NULL);
  if (st != CCSIM_OK) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], ccsim_client_errmsg(c));
  } else {
    printf("closed %s\n", id);
  }
  ccsim_client_destroy(&c);
  return st == CCSIM_OK ? 0 : 1;
}

static void csv_header(FILE *f, const ccsim_session *s) {
  fprintf(f, "seq,t");
  cli_csv_bodies_header(f, s);
  fprintf(f, "\n");
}

static void print_msg(FILE *f, const ccsim_stream_msg *m, const ccsim_session *s, int csv) {
  if (csv) {
    fprintf(f, "%llu,%.17g", (unsigned long long)m->seq, m->time);
    cli_csv_bodies_row(f, m->bodies, m->nbody);
    fprintf(f, "\n");
    return;
  }
  fprintf(f, "#%llu t = %.9f s", (unsigned long long)m->seq, m->time);
  for (int b = 0; b < m->nbody; b++) {
    const ccsim_body_state *x = &m->bodies[b];
    fputs("  ", f);
    cli_put_name(f, s && b < ccsim_session_nbody(s) ? ccsim_session_body_name(s, b) : "?");
    fprintf(f, " p = [%.6g, %.6g, %.6g] v = [%.6g, %.6g, %.6g]", x->p[0], x->p[1], x->p[2], x->v[0],
            x->v[1], x->v[2]);
    if (x->contact_count > 0) {
      fprintf(f, " contact force [%.6g, %.6g, %.6g] (%d pairs)", x->contact_force[0],
              x->contact_force[1], x->contact_force[2], x->contact_count);
    }
  }
  if (m->ncontacts > 0) {
    fprintf(f, "  %zu contacts", m->ncontacts);
  }
  if (m->deadline.paced_steps) {
    fprintf(f, "  misses %llu (late requests %llu)", (unsigned long long)m->deadline.misses,
            (unsigned long long)m->deadline.late_requests);
  }
  fprintf(f, "\n");
}

// The state stream's endpoint of c's server (reached at `server`) into ep[0, n): 0, or -1
// with the reason on stderr. A wildcard host (tcp://0.0.0.0:P, tcp://*:P or tcp://[::]:P) is
// reached at the server's own host.
static int stream_ep(const char *cmd, ccsim_client *c, const char *server, char *ep, size_t n) {
  ccsim_server_info info;
  if (ccsim_client_server_info(c, &info, NULL) != CCSIM_OK) {
    fprintf(stderr, "ccsim %s: %s\n", cmd, ccsim_client_errmsg(c));
    return -1;
  }
  if (!info.stream_endpoint[0]) {
    fprintf(stderr, "ccsim %s: %s has no state stream (ccsimd --stream)\n", cmd, server);
    return -1;
  }
  snprintf(ep, n, "%s", info.stream_endpoint);
  const char *port = strrchr(info.stream_endpoint, ':');
  if ((strstr(ep, "://0.0.0.0:") || strstr(ep, "://*:") || strstr(ep, "://[::]:")) && port &&
      !strncmp(server, "tcp://", 6)) {
    const char *sport = strrchr(server, ':');
    snprintf(ep, n, "%.*s%s", (int)(sport ? sport - server : 0), server, port);
  }
  return 0;
}

int cli_watch_main(int argc, char **argv) {
  const char *server = CLI_DEFAULT_SERVER, *id = NULL;
  int csv = 0;
  double count = 0, timeout = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char *end = NULL;
    if (!strcmp(a, "--server") && i + 1 < argc) {
      server = argv[++i];
    } else if (!strcmp(a, "--csv")) {
      csv = 1;
    } else if ((!strcmp(a, "--count") || !strcmp(a, "--timeout")) && i + 1 < argc) {
      double v = strtod(argv[++i], &end);
      if (!end || *end || !isfinite(v) || v <= 0 || v > 1e12) {
        fprintf(stderr, "ccsim %s: %s wants a positive number, got '%s'\n", argv[0], a, argv[i]);
        return 2;
      }
      if (!strcmp(a, "--count") && v != floor(v)) {
        fprintf(stderr, "ccsim %s: --count wants a whole number, got '%s'\n", argv[0], argv[i]);
        return 2;
      }
      *(!strcmp(a, "--count") ? &count : &timeout) = v;
    } else if (a[0] != '-' && !id) {
      id = a;
    } else {
      fprintf(stderr, "ccsim %s: unknown or incomplete option '%s'\n", argv[0], a);
      return 2;
    }
  }
  if (!id) {
    fprintf(stderr, "ccsim %s: which session? (ccsim sessions lists them)\n", argv[0]);
    return 2;
  }
  char err[512] = "";
  ccsim_client *c = ccsim_client_connect(server, CLI_QUERY_TIMEOUT_MS, 0, err, sizeof err);
  if (!c) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], err);
    return 1;
  }
  int rc = 1;
  ccsim_watch *w = NULL;
  // attach first: it checks the id and gives the body names
  ccsim_session *s = ccsim_session_attach(c, id);
  if (!s) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], ccsim_client_errmsg(c));
    goto done;
  }
  char ep[512];
  if (stream_ep(argv[0], c, server, ep, sizeof ep) != 0) {
    goto done;
  }
  ccsim_client_opts o;
  ccsim_curve_keys keys;
  ccsim_client_opts_defaults(&o);
  if (ccsim_client_opts_from_env(&o, &keys, err, sizeof err) != 0) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], err);
    goto done;
  }
  w = ccsim_watch_new(ep, id, &o, err, sizeof err);
  if (!w) {
    fprintf(stderr, "ccsim %s: %s\n", argv[0], err);
    goto done;
  }
  if (csv) {
    csv_header(stdout, s);
  }
  uint64_t last = 0, seen = 0;
  int hinted = 0;  // said once why the stream's handshakes fail (its quiet may be that)
  double quiet_from = cli_now_s();  // the last message, or the start
  for (;;) {
    ccsim_stream_msg m;
    // a stream says nothing when the server is gone: after every quiet slice the session
    // is asked for directly, so a dead server or a lost close ends the watch
    double left = timeout > 0 ? timeout - (cli_now_s() - quiet_from) : 1e9;
    int slice_ms = (int)fmax(1.0, fmin(CLI_WATCH_CHECK_MS, left * 1e3));
    int st = ccsim_watch_next(w, slice_ms, &m);
    if (st == CCSIM_ETIMEOUT && timeout > 0 && cli_now_s() - quiet_from >= timeout) {
      fprintf(stderr, "ccsim %s: nothing for %g s\n", argv[0], timeout);
      rc = seen ? 0 : 1;
      break;
    }
    if (st == CCSIM_ETIMEOUT && !hinted && strstr(ccsim_watch_errmsg(w), "handshake failed")) {
      fprintf(stderr, "ccsim %s: the stream at %s: %s\n", argv[0], ep, ccsim_watch_errmsg(w));
      hinted = 1;
    }
    if (st == CCSIM_ETIMEOUT) {
      int gs = ccsim_session_get_state(s);
      char now_ep[512];
      if (gs == CCSIM_OK && stream_ep(argv[0], c, server, now_ep, sizeof now_ep) == 0 &&
          strcmp(now_ep, ep) != 0) {
        // the server restarted (its sessions restored from --state-dir) with its stream
        // elsewhere (--stream auto takes a free port): follow it; what was published
        // meanwhile shows as a gap
        fprintf(stderr, "ccsim %s: the state stream moved to %s (the server restarted?)\n", argv[0],
                now_ep);
        ccsim_watch_destroy(&w);
        snprintf(ep, sizeof ep, "%s", now_ep);
        w = ccsim_watch_new(ep, id, &o, err, sizeof err);
        if (!w) {
          fprintf(stderr, "ccsim %s: %s\n", argv[0], err);
          break;
        }
      }
      if (gs == CCSIM_OK) {
        continue;
      }
      int ended = gs == CCSIM_ENOTFOUND || gs == CCSIM_EEXPIRED;
      fprintf(stderr, "ccsim %s: %s%s\n", argv[0], ended ? "session ended: " : "",
              ccsim_client_errmsg(c));
      rc = ended ? 0 : 1;
      break;
    }
    quiet_from = cli_now_s();
    if (st != CCSIM_OK) {
      fprintf(stderr, "ccsim %s: %s: %s\n", argv[0], ccsim_status_str(st), ccsim_watch_errmsg(w));
      break;
    }
    if (last && m.seq > last + 1) {
      fprintf(stderr, "ccsim %s: gap: %llu messages lost before #%llu\n", argv[0],
              (unsigned long long)(m.seq - last - 1), (unsigned long long)m.seq);
    }
    last = m.seq;
    if (m.closed) {
      fprintf(stderr, "ccsim %s: session %s ended\n", argv[0], id);
      rc = 0;
      break;
    }
    print_msg(stdout, &m, s, csv);
    fflush(stdout);
    seen++;
    if (count > 0 && (double)seen >= count) {
      rc = 0;
      break;
    }
  }
done:
  ccsim_watch_destroy(&w);
  ccsim_session_release(&s);
  ccsim_client_destroy(&c);
  return rc;
}

// write text to path, created with mode (fails if it exists), flushed to disk; 0, or -1
// with errno and no file left behind (a part of a key is no key, and a second try would
// be refused as "it exists")
static int write_new(const char *path, const char *text, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return -1;
  }
  size_t n = strlen(text), off = 0;
  int e = 0;
  while (off < n && !e) {
    ssize_t k = write(fd, text + off, n - off);
    if (k > 0) {
      off += (size_t)k;
    } else if (k == 0 || errno != EINTR) {
      e = k == 0 ? EIO : errno;
    }
  }
  if (!e && fsync(fd) != 0) {
    e = errno;
  }
  if (close(fd) != 0 && !e) {
    e = errno;
  }
  if (e) {
    unlink(path);
    errno = e;
    return -1;
  }
  return 0;
}

int cli_keygen_main(int argc, char **argv) {
  const char *name = NULL, *dir = ".";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
      dir = argv[++i];
    } else if (argv[i][0] != '-' && !name) {
      name = argv[i];
    } else {
      fprintf(stderr, "ccsim %s: unknown or incomplete option '%s'\n", argv[0], argv[i]);
      return 2;
    }
  }
  if (!name || !name[0]) {
    fprintf(stderr, "ccsim %s: give a NAME for the key pair (e.g. ccsim keygen server)\n",
            argv[0]);
    return 2;
  }
  if (!dir[0]) {
    fprintf(stderr, "ccsim %s: --dir is empty (use --dir . for the current directory)\n", argv[0]);
    return 2;
  }
  if (strchr(name, '/')) {
    fprintf(stderr, "ccsim %s: '%s': NAME is a file name without '/'; --dir DIR says where\n",
            argv[0], name);
    return 2;
  }
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) {
    fprintf(stderr, "ccsim %s: this libzmq cannot make CURVE keys: %s\n", argv[0],
            zmq_strerror(zmq_errno()));
    return 1;
  }
  char ppath[4096], spath[4096], line[64];
  snprintf(ppath, sizeof ppath, "%s/%s.pub", dir, name);
  snprintf(spath, sizeof spath, "%s/%s.secret", dir, name);
  snprintf(line, sizeof line, "%s\n", sec);
  if (write_new(spath, line, 0600) != 0) {
    fprintf(stderr, "ccsim %s: cannot create %s: %s\n", argv[0], spath,
            errno == EEXIST ? "it exists; keys are never overwritten" : strerror(errno));
    return 1;
  }
  snprintf(line, sizeof line, "%s\n", pub);
  if (write_new(ppath, line, 0644) != 0) {
    fprintf(stderr, "ccsim %s: cannot create %s: %s\n", argv[0], ppath,
            errno == EEXIST ? "it exists; keys are never overwritten" : strerror(errno));
    unlink(spath);
    return 1;
  }
  printf("wrote %s (public: give it to the other side) and %s (secret: keep it)\n", ppath,
         spath);
  return 0;
}
