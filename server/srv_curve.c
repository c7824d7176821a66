// CURVE security: the server's key pair, and a ZAP handler (ZeroMQ RFC 27) on the I/O
// thread that admits only client public keys listed in the allow directory (*.pub files
// of 40 Z85 characters, as `ccsim keygen` writes them).
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "ccsim_key.h"
#include "srv_internal.h"

static int load_allowed(srv *s, char *err, size_t err_sz) {
  DIR *d = opendir(s->cfg.curve_allow_dir);
  if (!d) {
    ccsim_set_err(err, err_sz, "cannot open the allow directory %s: %s", s->cfg.curve_allow_dir,
                  strerror(errno));
    return -1;
  }
  struct dirent *e;
  int cap = 0;
  while ((e = readdir(d))) {
    size_t nl = strlen(e->d_name);
    if (nl < 5 || strcmp(e->d_name + nl - 4, ".pub") != 0) {
      continue;
    }
    char path[4096], z85[41];
    snprintf(path, sizeof path, "%s/%s", s->cfg.curve_allow_dir, e->d_name);
    if (ccsim_read_key(path, z85, err, err_sz) != 0) {
      closedir(d);
      return -1;
    }
    if (s->nallow == cap) {
      cap = cap ? 2 * cap : 16;
      void *na = realloc(s->allow, (size_t)cap * sizeof *s->allow);
      if (!na) {
        closedir(d);
        ccsim_set_err(err, err_sz, "out of memory");
        return -1;
      }
      s->allow = na;
    }
    zmq_z85_decode(s->allow[s->nallow++], z85);
  }
  closedir(d);
  if (s->nallow == 0) {
    fprintf(stderr, "ccsimd: warning: no *.pub key in %s: every client will be refused\n",
            s->cfg.curve_allow_dir);
  }
  return 0;
}

int srv_curve_setup(srv *s, void *sock, char *err, size_t err_sz) {
  char secret[41];
  if (ccsim_read_key(s->cfg.curve_secret_file, secret, err, err_sz) != 0) {
    return -1;
  }
  if (!s->zap) {
    if (load_allowed(s, err, err_sz) != 0) {
      return -1;
    }
    // the handler must be bound before any CURVE socket accepts a connection
    s->zap = zmq_socket(s->zctx, ZMQ_REP);
    int linger = 0;
    if (!s->zap || zmq_setsockopt(s->zap, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(s->zap, SRV_ZAP_EP) != 0) {
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

// Say on stderr that a client was refused, which key from where; a refused client
// reconnects every few hundred ms, so after the first line at most one per 10 s, with
// the count since the last.
static void log_refusal(srv *s, int kept, zmq_msg_t *f) {
  s->zap_refused++;
  double now = srv_now();
  if (s->zap_logged_at > 0 && now - s->zap_logged_at < 10.0 && !s->cfg.verbose) {
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
  if (s->zap_refused > 1) {
    fprintf(stderr, " (%llu refusals since the last report)", (unsigned long long)s->zap_refused);
  }
  fprintf(stderr, "\n");
  s->zap_refused = 0;
  s->zap_logged_at = now;
}

int srv_zap_serve(srv *s) {
  // request: version, request id, domain, address, identity, mechanism, credentials...
  zmq_msg_t f[8];
  int n = 0, more = 1;
  while (more) {
    zmq_msg_t tmp;
    zmq_msg_t *m = n < 8 ? &f[n] : &tmp;
    zmq_msg_init(m);
    if (zmq_msg_recv(m, s->zap, ZMQ_DONTWAIT) < 0) {
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
  if (kept >= 7 && zmq_msg_size(&f[5]) == 5 && memcmp(zmq_msg_data(&f[5]), "CURVE", 5) == 0 &&
      zmq_msg_size(&f[6]) == 32) {
    for (int k = 0; k < s->nallow && !ok; k++) {
      ok = memcmp(s->allow[k], zmq_msg_data(&f[6]), 32) == 0;
    }
  }
  const char *status = ok ? "200" : "400";
  const char *text = ok ? "OK" : "client key not in the allow list";
  zmq_send(s->zap, "1.0", 3, ZMQ_SNDMORE);
  if (kept >= 2) {
    zmq_send(s->zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
  } else {
    zmq_send(s->zap, "", 0, ZMQ_SNDMORE);
  }
  zmq_send(s->zap, status, 3, ZMQ_SNDMORE);
  zmq_send(s->zap, text, strlen(text), ZMQ_SNDMORE);
  zmq_send(s->zap, "", 0, ZMQ_SNDMORE);  // user id
  zmq_send(s->zap, "", 0, 0);            // metadata
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
