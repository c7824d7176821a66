// libFuzzer target: scene files, from the text a user writes to the model the server steps.
// Any input must be refused with a message or give a Scene message; a Scene message goes
// through protobuf as a client sends it, and the server's compile must refuse it with a
// message or give a model whose state can be created and stepped 1 ms. A step that
// succeeds leaves every body's state finite. Meshes named by a scene are read relative to
// the working directory.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ccsim.pb-c.h"
#include "ccsim_scene.h"
#include "ccsim_status.h"
#include "sim_data.h"
#include "wire.h"

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
    if (sim_step(m, d, 1e-3) == CCSIM_OK) {
      check_finite(m, d);
    } else if (!sim_data_errmsg(d)[0]) {
      abort();
    }
    sim_data_destroy(&d);
  }
  sim_model_destroy(&m);
  return 0;
}
