#include "ccsim_random.h"

#include <errno.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>

int ccsim_random(void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom((uint8_t *)buf + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -1;
    }
    got += (size_t)r;
  }
  return 0;
}
