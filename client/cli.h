// Entry points of the ccsim CLI's commands that live in their own files. Each takes
// argv[0] = the command name and returns the process exit status (0 success, 1 failure,
// 2 usage error). The service commands are in cli_service.h. Also the small helpers the
// commands share.
#ifndef CLI_H
#define CLI_H

#include <math.h>
#include <stdio.h>
#include <time.h>

// Monotonic clock [s], for the commands' wall-time figures and waits.
static inline double cli_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// The number of steps of dt in duration (both > 0) into *n: 0, or -1 with a message on
// stderr for `ccsim CMD` when it is not between 1 and 1e9 (a huge ratio would not convert
// to a long, and a billion steps is no run anyone waits for).
static inline int cli_step_count(const char *cmd, double duration, double dt, long *n) {
  double nd = floor(duration / dt + 0.5);
  if (!(nd >= 1 && nd <= 1e9)) {
    fprintf(stderr, "ccsim %s: --duration / --dt must give between 1 and 1e9 steps\n", cmd);
    return -1;
  }
  *n = (long)nd;
  return 0;
}

// ccsim geom proximity A B [--pose-a ...] [--pose-b ...] --standoff D [--json]
int cli_geom_main(int argc, char **argv);

#endif
