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
