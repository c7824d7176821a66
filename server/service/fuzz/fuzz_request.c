// libFuzzer target: the request decoder and dispatcher (srv_handle) of a socketless
// server holding one live session. The first input byte picks the mode: raw bytes as a
// Request, or a decodable Request re-addressed to the live session with its controller
// token, so the fuzzer reaches Step, SetState, checkpoints and Close and not only the
// "unknown session" path. Every input must give a decodable Reply.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccsim.pb-c.h"
#include "srv.h"

static srv *g_srv;
static char g_id[64], g_token[64];

// one small scene: a ball and a fixed box
static void create_session(void) {
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  Ccsim__Scene sc;
  Ccsim__Body b[2], *bp[2] = {&b[0], &b[1]};
  double inertia[3] = {0.1, 0.1, 0.1};
  ccsim__request__init(&rq);
  ccsim__create_session__init(&cs);
  ccsim__scene__init(&sc);
  for (int i = 0; i < 2; i++) {
    ccsim__body__init(&b[i]);
    b[i].has_mass = 1;
    b[i].mass = 1;
    b[i].n_inertia = 3;
    b[i].inertia = inertia;
  }
  b[0].name = "ball";
  b[1].name = "ground";
  b[1].has_type = 1;
  b[1].type = CCSIM__BODY_TYPE__BODY_FIXED;
  sc.n_bodies = 2;
  sc.bodies = bp;
  cs.scene = &sc;
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = &cs;
  uint8_t buf[1024];
  size_t n = ccsim__request__pack(&rq, buf), rlen = 0;
  uint8_t *rep = srv_handle(g_srv, buf, n, &rlen);
  Ccsim__Reply *r = rep ? ccsim__reply__unpack(NULL, rlen, rep) : NULL;
  free(rep);
  if (r && r->body_case == CCSIM__REPLY__BODY_CREATE_SESSION) {
    snprintf(g_id, sizeof g_id, "%s", r->create_session->session_id);
    snprintf(g_token, sizeof g_token, "%s", r->create_session->controller_token);
  }
  if (r) ccsim__reply__free_unpacked(r, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = NULL;
  cfg.max_sessions = 8;
  cfg.max_bodies = 8;
  cfg.max_triangles = 2500;  // the default primitives fit (a torus is 2 304)
  cfg.max_substeps = 16;
  cfg.max_msg_bytes = 1 << 16;
  cfg.deterministic_ids = 1;
  char err[256];
  g_srv = srv_new(&cfg, err, sizeof err);
  if (!g_srv) {
    fprintf(stderr, "fuzz_request: %s\n", err);
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_id[0] || srv_session_count(g_srv) == 0) {
    create_session();  // the fuzzer closed it: open another
  }
  if (size == 0) {
    return 0;
  }
  uint8_t *owned = NULL;
  const uint8_t *req = data + 1;
  size_t len = size - 1;
  if (data[0] & 1) {
    Ccsim__Request *rq = ccsim__request__unpack(NULL, len, req);
    if (rq) {
      char *own_id = rq->session_id, *own_token = rq->token;
      rq->session_id = g_id;  // borrowed for packing only
      if (data[0] & 2) {
        rq->token = g_token;
      }
      size_t n = ccsim__request__get_packed_size(rq);
      owned = malloc(n ? n : 1);
      len = ccsim__request__pack(rq, owned);
      req = owned;
      rq->session_id = own_id;
      rq->token = own_token;
      ccsim__request__free_unpacked(rq, NULL);
    }
  }
  size_t rlen = 0;
  uint8_t *rep = srv_handle(g_srv, req, len, &rlen);
  if (!rep) {
    abort();  // srv_handle returns NULL only without memory
  }
  Ccsim__Reply *r = ccsim__reply__unpack(NULL, rlen, rep);
  if (!r || !r->error) {
    abort();  // every request gets a decodable reply with a status
  }
  if (r->body_case == CCSIM__REPLY__BODY_CLOSE_SESSION) {
    g_id[0] = 0;
  }
  ccsim__reply__free_unpacked(r, NULL);
  free(rep);
  free(owned);
  return 0;
}
