// CURVE security: the server's key pair, and a ZAP handler (ZeroMQ RFC 27) on the I/O
// thread that admits only client public keys listed in the allow directory (*.pub files
// of 40 Z85 characters, as `ccsim keygen` writes them); and what failed handshakes say,
// with CURVE or without.
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <zmq.h>

#include "ccsim_key.h"
#include "srv_clock.h"
#include "srv_curve.h"

// -1 with the reason in err when every user of the machine may write path (the allow
// directory or a key in it): anyone could then admit a key of their own, so the list is
// not trusted, as sshd's StrictModes does not trust such an authorized_keys
static int check_not_open(const char *path, const char *what, char *err, size_t err_sz) {
  struct stat st;
  if (stat(path, &st) == 0 && (st.st_mode & S_IWOTH)) {
    ccsim_set_err(err, err_sz,
                  "%s %s is writable by every user (mode %04o), who could admit keys of "
                  "their own: chmod o-w it",
                  what, path, (unsigned)(st.st_mode & 07777));
    return -1;
  }
  return 0;
}

// every *.pub key in dir into a new array (*keys, *n; the caller frees it); 0, or -1
// with the reason in err. A file that is not a key fails the reading, unless it changed in
// the last 2 s (start: never): then it is being written (ccsim keygen, cp and scp create
// it first), and is left out until it is whole.
static int read_allowed(const char *dir, int start, unsigned char (**keys)[32], int *n,
                        int *pending, char *err, size_t err_sz) {
  *keys = NULL;
  *n = 0;
  *pending = 0;
  if (check_not_open(dir, "the allow directory", err, err_sz) != 0) {
    return -1;
  }
  DIR *d = opendir(dir);
  if (!d) {
    ccsim_set_err(err, err_sz, "cannot open the allow directory %s: %s", dir, strerror(errno));
    return -1;
  }
  struct dirent *e;
  int cap = 0, rc = 0;
  while (rc == 0 && (e = readdir(d))) {
    size_t nl = strlen(e->d_name);
    if (nl < 5 || strcmp(e->d_name + nl - 4, ".pub") != 0) {
      continue;
    }
    char path[4096], z85[41];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (check_not_open(path, "the key file", err, err_sz) != 0) {
      rc = -1;
      break;
    }
    if (ccsim_read_key(path, z85, err, err_sz) != 0) {
      struct stat fs;
      struct timespec now;
      clock_gettime(CLOCK_REALTIME, &now);
      // (a change dated in the future, after the clock stepped back, is not one of those)
      double age = start || stat(path, &fs) != 0
                       ? -1
                       : (double)(now.tv_sec - fs.st_ctim.tv_sec) +
                             1e-9 * (double)(now.tv_nsec - fs.st_ctim.tv_nsec);
      if (age >= 0 && age < 2.0) {
        err[0] = 0;
        (*pending)++;
        continue;  // being written
      }
      rc = -1;
      break;
    }
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      void *na = realloc(*keys, (size_t)cap * sizeof **keys);
      if (!na) {
        ccsim_set_err(err, err_sz, "out of memory");
        rc = -1;
        break;
      }
      *keys = na;
    }
    zmq_z85_decode((*keys)[(*n)++], z85);
  }
  closedir(d);
  if (rc != 0) {
    free(*keys);
    *keys = NULL;
    *n = 0;
  }
  return rc;
}

// (Re)read the allow directory into s->curve.allow when it may have changed: its ctime moved
// (a file added, removed or renamed, or the directory's mode changed), it changed so
// recently that a second change could share that ctime (the kernel's file times are
// coarse), the last reading failed or left out a file being written, or a second has
// passed (a key file rewritten in place, or its mode changed, moves only its own times).
// A failed reading admits nobody (a key removed to revoke it must not stay in because
// another file is not a key) and is tried again at the next ask. start: at start, where a
// failure stops the server.
static int refresh_allowed(srv *s, int start, char *err, size_t err_sz) {
  const char *dir = s->cfg.curve_allow_dir;
  struct stat st;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int have = stat(dir, &st) == 0;
  if (!start && have && !s->curve.allow_failed &&
      st.st_ctim.tv_sec == s->curve.allow_ctime.tv_sec &&
      st.st_ctim.tv_nsec == s->curve.allow_ctime.tv_nsec && now.tv_sec - st.st_ctim.tv_sec >= 2 &&
      !s->curve.allow_pending && srv_now() - s->curve.allow_read_at < 1.0) {
    return 0;
  }
  s->curve.allow_read_at = srv_now();
  unsigned char(*keys)[32] = NULL;
  int n = 0;
  char why[512] = "";
  if (read_allowed(dir, start, &keys, &n, &s->curve.allow_pending, why, sizeof why) != 0) {
    ccsim_set_err(err, err_sz, "%s", why);
    free(s->curve.allow);
    s->curve.allow = NULL;
    s->curve.nallow = 0;
    s->curve.allow_failed = 1;
    if (!start && strcmp(why, s->curve.allow_said) != 0) {
      fprintf(stderr,
              "ccsimd: the allow list cannot be read, so no client is admitted until it "
              "can: %s\n",
              why);
      snprintf(s->curve.allow_said, sizeof s->curve.allow_said, "%s", why);
    }
    return -1;
  }
  int changed =
      n != s->curve.nallow || (n && memcmp(keys, s->curve.allow, (size_t)n * sizeof *keys) != 0);
  free(s->curve.allow);
  s->curve.allow = keys;
  s->curve.nallow = n;
  s->curve.allow_failed = 0;
  if (have) {
    s->curve.allow_ctime = st.st_ctim;
  }
  s->curve.allow_said[0] = 0;  // a next failure is reported again
  if (!start && changed) {
    fprintf(stderr, "ccsimd: the allow list changed: %d key%s in %s\n", n, n == 1 ? "" : "s", dir);
  }
  if (n == 0 && (start || changed)) {
    fprintf(stderr, "ccsimd: warning: no *.pub key in %s: every client will be refused\n", dir);
  }
  return 0;
}

int srv_curve_setup(srv *s, void *sock, char *err, size_t err_sz) {
  char secret[41];
  if (ccsim_read_key(s->cfg.curve_secret_file, secret, err, err_sz) != 0) {
    return -1;
  }
  if (!s->sock.zap) {
    struct stat st;
    if (stat(s->cfg.curve_secret_file, &st) == 0 && (st.st_mode & 077)) {
      // a warning, not a refusal: a shared group may be intended (a container's mount)
      fprintf(stderr,
              "ccsimd: warning: the secret key %s can be read by other users (mode %04o): "
              "whoever reads it can pose as this server; chmod 600 it\n",
              s->cfg.curve_secret_file, (unsigned)(st.st_mode & 07777));
    }
    if (refresh_allowed(s, 1, err, err_sz) != 0) {
      return -1;
    }
    // a .pub given as the secret reads as a key too, and every client would fail its
    // handshake: the public key printed here lets the operator compare
    char pub[41];
    if (zmq_curve_public(pub, secret) == 0) {
      fprintf(stderr,
              "ccsimd: CURVE on; this server's public key is %s (clients' "
              "CCSIM_SERVER_KEY file must hold it)\n",
              pub);
    }
    // the handler must be bound before any CURVE socket accepts a connection
    s->sock.zap = zmq_socket(s->sock.zctx, ZMQ_REP);
    int linger = 0;
    if (!s->sock.zap || zmq_setsockopt(s->sock.zap, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(s->sock.zap, SRV_ZAP_EP) != 0) {
      ccsim_set_err(err, err_sz, "cannot bind the ZAP handler: %s", zmq_strerror(zmq_errno()));
      return -1;
    }
  }
  int one = 1;
  if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
      zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, secret, 41) != 0 ||
      zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "ccsim", 5) != 0) {
    ccsim_set_err(err, err_sz, "cannot turn CURVE on (is libzmq built with CURVE?): %s",
                  zmq_strerror(zmq_errno()));
    return -1;
  }
  return 0;
}

// Count one event under l: 1 when its line is to be said now (the first, or 10 s after the
// last line, or always when verbose), then with the count that l->count holds
static int log_limit_due(srv *s, srv_log_limit *l) {
  l->count++;
  double now = srv_now();
  if (l->said_at > 0 && now - l->said_at < 10.0 && !s->cfg.verbose) {
    return 0;
  }
  l->said_at = now;
  return 1;
}

// end a line said under l with the count since the last, which starts again
static void log_limit_end(srv_log_limit *l) {
  if (l->count > 1) {
    fprintf(stderr, " (%llu since the last report)", (unsigned long long)l->count);
  }
  fprintf(stderr, "\n");
  l->count = 0;
}

// Say on stderr that a client was refused, which key from where
static void log_refusal(srv *s, int kept, zmq_msg_t *f) {
  if (!log_limit_due(s, &s->io.zap_log)) {
    return;
  }
  char key[41] = "(not CURVE)", addr[64] = "?";
  if (kept >= 7 && zmq_msg_size(&f[6]) == 32) {
    zmq_z85_encode(key, zmq_msg_data(&f[6]), 32);
  }
  if (kept >= 4) {
    size_t n = zmq_msg_size(&f[3]) < sizeof addr - 1 ? zmq_msg_size(&f[3]) : sizeof addr - 1;
    memcpy(addr, zmq_msg_data(&f[3]), n);
    addr[n] = 0;
    for (size_t i = 0; i < n; i++) {
      addr[i] = isprint((unsigned char)addr[i]) ? addr[i] : '?';
    }
  }
  fprintf(stderr, "ccsimd: refused a client from %s: key %s is not in --curve-allow", addr, key);
  log_limit_end(&s->io.zap_log);
}

int srv_zap_serve(srv *s) {
  // request: version, request id, domain, address, identity, mechanism, credentials...
  zmq_msg_t f[8];
  int n = 0, more = 1;
  while (more) {
    zmq_msg_t tmp;
    zmq_msg_t *m = n < 8 ? &f[n] : &tmp;
    zmq_msg_init(m);
    if (zmq_msg_recv(m, s->sock.zap, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(m);
      for (int i = 0; i < n && i < 8; i++) zmq_msg_close(&f[i]);
      return 0;
    }
    more = zmq_msg_more(m);
    if (n >= 8) zmq_msg_close(m);
    n++;
  }
  int kept = n < 8 ? n : 8;
  int ok = 0;
  char err[512];
  refresh_allowed(s, 0, err, sizeof err);  // a key removed is refused from now on
  if (kept >= 7 && zmq_msg_size(&f[5]) == 5 && memcmp(zmq_msg_data(&f[5]), "CURVE", 5) == 0 &&
      zmq_msg_size(&f[6]) == 32) {
    for (int k = 0; k < s->curve.nallow && !ok; k++) {
      ok = memcmp(s->curve.allow[k], zmq_msg_data(&f[6]), 32) == 0;
    }
  }
  // 500 (the server's own failure, ZAP's RFC 27) when the list cannot be read: the key
  // may well be listed, and the client says which it is from this code alone
  const char *status = ok ? "200" : s->curve.allow_failed ? "500" : "400";
  const char *text = ok                      ? "OK"
                     : s->curve.allow_failed ? "the allow list cannot be read"
                                             : "client key not in the allow list";
  zmq_send(s->sock.zap, "1.0", 3, ZMQ_SNDMORE);
  if (kept >= 2) {
    zmq_send(s->sock.zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
  } else {
    zmq_send(s->sock.zap, "", 0, ZMQ_SNDMORE);
  }
  zmq_send(s->sock.zap, status, 3, ZMQ_SNDMORE);
  zmq_send(s->sock.zap, text, strlen(text), ZMQ_SNDMORE);
  // the user id travels with every message of the connection: each request is checked
  // against the allow list again, so a key revoked while connected is not served on
  char user[41] = "";
  if (ok) {
    zmq_z85_encode(user, zmq_msg_data(&f[6]), 32);
  }
  zmq_send(s->sock.zap, user, strlen(user), ZMQ_SNDMORE);
  zmq_send(s->sock.zap, "", 0, 0);  // metadata
  if (s->cfg.verbose && ok) {
    fprintf(stderr, "ccsimd: ZAP: admitted a listed client key\n");
  }
  if (!ok) {
    log_refusal(s, kept, f);
  }
  for (int i = 0; i < kept; i++) {
    zmq_msg_close(&f[i]);
  }
  return 1;
}

const char *srv_curve_refusal(const srv *s, const char *user_id) {
  if (s->curve.allow_failed) {
    return "the server's --curve-allow directory cannot be read now (ccsimd says why): no "
           "client is served until it can";
  }
  unsigned char key[32];
  if (user_id && strlen(user_id) == 40 && zmq_z85_decode(key, user_id)) {
    for (int k = 0; k < s->curve.nallow; k++) {
      if (memcmp(s->curve.allow[k], key, 32) == 0) {
        return NULL;
      }
    }
  }
  return "this client's CURVE key is no longer in the server's --curve-allow directory";
}

void srv_curve_refresh(srv *s) {
  char err[512];
  refresh_allowed(s, 0, err, sizeof err);  // a failure is said on stderr, once
}

int srv_handshake_monitor(srv *s, void *sock, int which, char *err, size_t err_sz) {
  char ep[96];
  snprintf(ep, sizeof ep, "inproc://ccsim-handshakes-%p-%d", (void *)s, which);
  // a refusal by the allow list is said by the ZAP handler, with the key. Failures without
  // detail (a port probe, a peer gone) are said only when verbose, and only then watched:
  // libzmq blocks its I/O thread on a full monitor, and a burst of probes between two
  // housekeeping passes must not fill it
  int events = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
               (s->cfg.verbose ? ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL : 0);
  if (!(s->sock.hs_mon[which] = ccsim_monitor_open(s->sock.zctx, sock, ep, events))) {
    ccsim_set_err(err, err_sz, "cannot watch handshakes: %s", zmq_strerror(zmq_errno()));
    return -1;
  }
  return 0;
}

// what a failed handshake (a monitor event id and value) says about the client; NULL
// when it says nothing an operator can act on (a peer gone mid-handshake, as a port probe)
static const char *handshake_why(const srv *s, uint16_t id, uint32_t value) {
  if (id != ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    return s->cfg.verbose ? "it hung up or failed without detail" : NULL;
  }
  switch (value) {
    case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
      return s->sock.zap
                 ? "it does not use CURVE (clients set CCSIM_SERVER_KEY and CCSIM_CLIENT_KEY)"
                 : "it uses CURVE and this server does not (ccsimd --curve-secret)";
    case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
      return "its CURVE server key is not this server's public key (printed at start)";
    default:
      return "a ZeroMQ protocol error";
  }
}

void srv_handshake_drain(srv *s) {
  static const char *const what[2] = {"requests", "stream"};
  for (int w = 0; w < 2; w++) {
    uint16_t id;
    uint32_t value;
    while (ccsim_monitor_next(s->sock.hs_mon[w], &id, &value)) {
      const char *why = handshake_why(s, id, value);
      if (why && log_limit_due(s, &s->io.hs_log)) {
        fprintf(stderr, "ccsimd: a client's handshake on the %s socket failed: %s", what[w], why);
        log_limit_end(&s->io.hs_log);
      }
    }
  }
}
