// Entry points of the ccsim CLI's commands that live in their own files. Each takes
// argv[0] = the command name and returns the process exit status (0 success, 1 failure,
// 2 usage error). The service commands are in cli_service.h. Also the small helpers the
// commands share.
#ifndef CLI_H
#define CLI_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ccsim_client.h"

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

// A body name for a terminal: control characters, which a scene (another user's, for a
// watch) could use to send escape sequences to it, come out as '?'.
static inline void cli_put_name(FILE *f, const char *name) {
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    fputc(iscntrl(*p) ? '?' : *p, f);
  }
}

// ",NAME.COL": one more CSV header field (RFC 4180): quoted, its quotes doubled, when the
// body name holds a comma, a quote or a line break (a scene may name a body anything).
static inline void cli_csv_column(FILE *f, const char *name, const char *col) {
  if (!strpbrk(name, ",\"\r\n")) {
    fprintf(f, ",%s.%s", name, col);
    return;
  }
  fputs(",\"", f);
  for (const char *p = name; *p; p++) {
    if (*p == '"') {
      fputc('"', f);
    }
    fputc(*p, f);
  }
  fprintf(f, ".%s\"", col);
}

// The CSV header fields of every body of s, after the caller's first ones: position,
// orientation, velocity, angular velocity, total contact force at the step's end and
// witness pairs carrying it (NAME.px ... NAME.wz, NAME.fx, NAME.fy, NAME.fz,
// NAME.contacts), CLI_CSV_BODY_COLS per body; then, after every body's, each body's mean
// contact force over the step (NAME.mfx, NAME.mfy, NAME.mfz), so that the columns before
// them keep their places. run and watch write the same columns.
#define CLI_CSV_BODY_COLS 17
static inline void cli_csv_bodies_header(FILE *f, const ccsim_session *s) {
  static const char *const cols[CLI_CSV_BODY_COLS] = {
      "px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy",
      "vz", "wx", "wy", "wz", "fx", "fy", "fz", "contacts"};
  static const char *const mean[] = {"mfx", "mfy", "mfz"};
  for (int b = 0; b < ccsim_session_nbody(s); b++) {
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
      cli_csv_column(f, ccsim_session_body_name(s, b), cols[k]);
    }
  }
  for (int b = 0; b < ccsim_session_nbody(s); b++) {
    for (size_t k = 0; k < sizeof mean / sizeof mean[0]; k++) {
      cli_csv_column(f, ccsim_session_body_name(s, b), mean[k]);
    }
  }
}

// The fields of those columns for the n body states bs, after the caller's first ones.
static inline void cli_csv_bodies_row(FILE *f, const ccsim_body_state *bs, int n) {
  for (int b = 0; b < n; b++) {
    const double *parts[] = {bs[b].p, bs[b].q, bs[b].v, bs[b].w, bs[b].contact_force};
    const int len[] = {3, 4, 3, 3, 3};
    for (int k = 0; k < 5; k++) {
      for (int i = 0; i < len[k]; i++) {
        fprintf(f, ",%.17g", parts[k][i]);
      }
    }
    fprintf(f, ",%d", bs[b].contact_count);
  }
  for (int b = 0; b < n; b++) {
    for (int i = 0; i < 3; i++) {
      fprintf(f, ",%.17g", bs[b].mean_contact_force[i]);
    }
  }
}

// ccsim geom proximity A B [--pose-a ...] [--pose-b ...] --standoff D [--json]
int cli_geom_main(int argc, char **argv);

#endif
