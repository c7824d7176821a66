#include "ccsim_key.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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
