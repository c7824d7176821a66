#include "ccsim_key.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <zmq.h>

#include "ccsim_status.h"

int ccsim_read_key(const char *path, char out[41], char *err, size_t err_sz) {
  FILE *f = fopen(path, "r");
  if (!f) {
    ccsim_set_err(err, err_sz, "cannot read key file %s", path);
    return -1;
  }
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
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
