// The service's clock: the one time base of deadlines, pacing, idle expiry and watches.
#include <time.h>

#include "srv_clock.h"

double srv_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
