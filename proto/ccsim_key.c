#include "ccsim_key.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim_file.h"
#include "ccsim_status.h"

void *ccsim_monitor_open(void *zctx, void *sock, const char *ep, int events) {
  if (zmq_socket_monitor(sock, ep, events) != 0) {
    return NULL;
  }
  void *mon = zmq_socket(zctx, ZMQ_PAIR);
  int linger = 0;
  if (mon &&
      (zmq_setsockopt(mon, ZMQ_LINGER, &linger, sizeof linger) != 0 || zmq_connect(mon, ep) != 0)) {
    zmq_close(mon);
    mon = NULL;
  }
  if (!mon) {
    zmq_socket_monitor(sock, NULL, 0);  // nobody would read it
  }
  return mon;
}

static double monotonic_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// fd connected to host:port within the deadline (monotonic [s]), or -1
static int connect_by(const char *host, const char *port, double deadline) {
  struct addrinfo hints, *ai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &ai) != 0) {
    return -1;
  }
  int fd = -1;
  for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      int err = 0;
      socklen_t el = sizeof err;
      rc = poll(&p, 1, (int)fmax(0.0, 1e3 * (deadline - monotonic_s()))) == 1 &&
                   getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0
               ? 0
               : -1;
    }
    if (rc != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(ai);
  return fd;
}

int ccsim_zmtp_mechanism(const char *endpoint, int timeout_ms, char mech[21]) {
  mech[0] = 0;
  if (strncmp(endpoint, "tcp://", 6) != 0) {
    return 0;
  }
  char host[256], port[16];
  const char *h = endpoint + 6, *colon = strrchr(h, ':');
  if (!colon || (size_t)(colon - h) >= sizeof host || strlen(colon + 1) >= sizeof port) {
    return 0;
  }
  memcpy(host, h, (size_t)(colon - h));
  host[colon - h] = 0;
  snprintf(port, sizeof port, "%s", colon + 1);
  size_t hl = strlen(host);
  if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
    memmove(host, host + 1, hl - 2);  // [::1] -> ::1
    host[hl - 2] = 0;
  }
  double deadline = monotonic_s() + 1e-3 * timeout_ms;
  int fd = connect_by(host, port, deadline);
  if (fd < 0) {
    return 0;
  }
  // ZMTP 3 (RFC 23): the signature and the major version, which is what a ZMTP 3 peer
  // waits for to send the rest of its greeting. Ours goes no further: sent whole, a
  // mechanism the peer does not speak makes it hang up before its greeting leaves.
  static const uint8_t greet[11] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3};
  uint8_t got[64];
  size_t have = 0;
  int ok = send(fd, greet, sizeof greet, MSG_NOSIGNAL) == (ssize_t)sizeof greet;
  while (ok && have < sizeof got) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, (int)fmax(0.0, 1e3 * (deadline - monotonic_s()))) != 1) break;
    ssize_t n = recv(fd, got + have, sizeof got - have, 0);
    if (n <= 0) break;
    have += (size_t)n;
  }
  close(fd);
  // a ZMTP 3 peer: the signature's ends, version 3 or more, then its mechanism's name
  if (have < 32 || got[0] != 0xff || got[9] != 0x7f || got[10] < 3) {
    return 0;
  }
  memcpy(mech, got + 12, 20);
  mech[20] = 0;
  return mech[0] != 0;
}

int ccsim_monitor_next(void *mon, uint16_t *id, uint32_t *value) {
  zmq_msg_t ev, addr;
  zmq_msg_init(&ev);
  zmq_msg_init(&addr);
  // [id (2 bytes) value (4 bytes)][the endpoint]
  int got = mon && zmq_msg_recv(&ev, mon, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&ev) &&
            zmq_msg_recv(&addr, mon, ZMQ_DONTWAIT) >= 0 && zmq_msg_size(&ev) >= 6;
  if (got) {
    memcpy(id, zmq_msg_data(&ev), 2);
    memcpy(value, (const uint8_t *)zmq_msg_data(&ev) + 2, 4);
  }
  zmq_msg_close(&ev);
  zmq_msg_close(&addr);
  return got;
}

int ccsim_read_key(const char *path, char out[41], char *err, size_t err_sz) {
  const char *why = NULL;
  int fd = ccsim_open_regular(path, 0, NULL, &why);
  if (fd < 0) {
    ccsim_set_err(err, err_sz, fd == -2 ? "key file %s is %s" : "cannot read key file %s: %s", path,
                  why);
    return -1;
  }
  char buf[256];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (n < 0) {
    ccsim_set_err(err, err_sz, "cannot read key file %s: %s", path, strerror(e));
    return -1;
  }
  buf[n] = 0;
  // the first non-blank word of the file
  char *p = buf;
  while (*p && isspace((unsigned char)*p)) p++;
  size_t len = 0;
  while (p[len] && !isspace((unsigned char)p[len])) len++;
  uint8_t raw[32];
  if (len != 40) {
    ccsim_set_err(err, err_sz, "%s: a key is 40 Z85 characters, found %zu", path, len);
    return -1;
  }
  memcpy(out, p, 40);
  out[40] = 0;
  if (!zmq_z85_decode(raw, out)) {
    ccsim_set_err(err, err_sz, "%s: not a Z85 key", path);
    return -1;
  }
  return 0;
}

int ccsim_zmq_ipv6_for(void *sock, const char *ep) {
  if (!ep || strncmp(ep, "tcp://", 6) != 0 || !strchr(ep, '[')) {
    return 0;
  }
  int on = 1;
  return zmq_setsockopt(sock, ZMQ_IPV6, &on, sizeof on);
}
