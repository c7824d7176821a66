// libFuzzer target: scene files, from the text a user writes to the model the server steps.
// Any input must be refused with a message or give a Scene message; a Scene message goes
// through protobuf as a client sends it, and the server's compile must refuse it with a
// message or give a model whose state can be created and stepped 1 ms. A step that
// succeeds leaves every body's state finite. The work is bounded: a triangle limit per
// scene (FUZZ_MAX_TRIANGLES, as ccsimd --max-triangles would refuse more) and a wall-time
// budget for the step through sim_set_progress, past which the step must stop with
// CCSIM_ELIMIT. Bodies that start within a large standoff of each other make every
// triangle pair a contact candidate, and 1 ms can take minutes; such a step is slow, not
// wrong, and the budget keeps the fuzzer exploring. Meshes named by a scene are read
// relative to the working directory (examples/ for the example scenes).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "ccsim.pb-c.h"
#include "ccsim_scene_msg.h"
#include "ccsim_status.h"
#include "sim_data.h"
#include "wire.h"

#define FUZZ_MAX_TRIANGLES 5000  // per scene: larger ones only fill the memory and the time
#define FUZZ_STEP_SECONDS 1.0    // wall time for the step before it is told to stop

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct budget {
  double until;  // monotonic [s]
  int spent;     // the step was told to stop
} budget;

static int out_of_time(void *arg) {
  budget *b = arg;
  b->spent = now_s() > b->until;
  return b->spent;
}

// a refusal must say why
static void need_message(const char *err) {
  if (!err[0]) abort();
}

static void check_finite(const sim_model *m, const sim_data *d) {
  for (int b = 0; b < m->nbody; b++) {
    double p[3], q[4], v[3], w[3];
    sim_get_body(m, d, b, p, q, v, w);
    for (int k = 0; k < 3; k++) {
      if (!isfinite(p[k]) || !isfinite(v[k]) || !isfinite(w[k])) abort();
    }
    for (int k = 0; k < 4; k++) {
      if (!isfinite(q[k])) abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[512] = "";
  ccsim_scene *sc = ccsim_scene_parse((const char *)data, size, "fuzz.json", NULL, err, sizeof err);
  if (!sc) {
    need_message(err);
    return 0;
  }
  // what the server receives: the message as packed by the client
  const Ccsim__Scene *msg = ccsim_scene_message(sc);
  size_t n = ccsim__scene__get_packed_size(msg);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) abort();
  ccsim__scene__pack(msg, buf);
  ccsim_scene_destroy(&sc);
  Ccsim__Scene *rx = ccsim__scene__unpack(NULL, n, buf);
  free(buf);
  if (!rx) abort();  // a parsed scene always packs into a decodable message
  if (wire_scene_triangles(rx) > FUZZ_MAX_TRIANGLES) {
    ccsim__scene__free_unpacked(rx, NULL);
    return 0;  // a server with this limit refuses it before building anything
  }
  err[0] = 0;
  sim_model *m = wire_scene_compile(rx, err, sizeof err);
  ccsim__scene__free_unpacked(rx, NULL);
  if (!m) {
    need_message(err);
    return 0;
  }
  err[0] = 0;
  sim_data *d = sim_data_new(m, err, sizeof err);
  if (!d) {
    need_message(err);
  } else {
    check_finite(m, d);
    budget b = {now_s() + FUZZ_STEP_SECONDS, 0};
    sim_set_progress(d, out_of_time, &b);
    ccsim_status st = sim_step(m, d, 1e-3);
    if (st == CCSIM_OK) {
      check_finite(m, d);
    } else if (!sim_data_errmsg(d)[0] || (b.spent && st != CCSIM_ELIMIT)) {
      abort();  // a failure says why; a step stopped by the budget says CCSIM_ELIMIT
    }
    sim_data_destroy(&d);
  }
  sim_model_destroy(&m);
  return 0;
}
