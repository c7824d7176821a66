// ctest-label: e2e
// ctest-timeout: 60
// A server that is not what it claims: the library must not let its replies take the
// client's memory. A reply of empty repeated entries (2 bytes each on the wire, a hundred
// and more decoded) is refused with EPROTO inside the bound the server applies to its own
// requests (16 bytes per byte + 64 KiB), instead of being decoded whole.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_pb.h"
#include "ccsim_status.h"

#define FAKE_ENTRIES 1000000  // empty SessionSummary entries in the hostile reply

typedef struct fake {
  void *zctx, *router;  // owned
  char endpoint[256];
  pthread_t thread;
  int answered;  // requests answered (read after join)
} fake;

// answer rq (from peer ident) on f->router: a HelloReply to Hello, a SessionList of
// FAKE_ENTRIES empty entries to anything else
static void answer(fake *f, zmq_msg_t *ident, const Ccsim__Request *rq) {
  Ccsim__Reply r;
  Ccsim__HelloReply h;
  Ccsim__SessionList sl;
  Ccsim__SessionSummary empty;
  ccsim__reply__init(&r);
  r.has_request_id = 1;
  r.request_id = rq->request_id;
  Ccsim__SessionSummary **entries = NULL;
  if (rq->body_case == CCSIM__REQUEST__BODY_HELLO) {
    ccsim__hello_reply__init(&h);
    h.has_protocol_version = 1;
    h.protocol_version = CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
    h.server_version = "fake";
    r.body_case = CCSIM__REPLY__BODY_HELLO;
    r.hello = &h;
  } else {
    ccsim__session_list__init(&sl);
    ccsim__session_summary__init(&empty);
    entries = malloc(FAKE_ENTRIES * sizeof *entries);
    assert_non_null(entries);
    for (size_t k = 0; k < FAKE_ENTRIES; k++) entries[k] = &empty;
    sl.n_sessions = FAKE_ENTRIES;
    sl.sessions = entries;
    r.body_case = CCSIM__REPLY__BODY_SESSIONS;
    r.sessions = &sl;
  }
  size_t n = ccsim__reply__get_packed_size(&r);
  uint8_t *buf = malloc(n);
  assert_non_null(buf);
  ccsim__reply__pack(&r, buf);
  zmq_msg_send(ident, f->router, ZMQ_SNDMORE);
  zmq_send(f->router, buf, n, 0);
  free(buf);
  free(entries);
  f->answered++;
}

// serve two requests (Hello, then the one that gets the hostile reply), then return
static void *fake_main(void *arg) {
  fake *f = arg;
  int timeout = 20000;
  zmq_setsockopt(f->router, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  while (f->answered < 2) {
    zmq_msg_t ident, body;
    zmq_msg_init(&ident);
    zmq_msg_init(&body);
    if (zmq_msg_recv(&ident, f->router, 0) < 0 || zmq_msg_recv(&body, f->router, 0) < 0) {
      zmq_msg_close(&ident);
      zmq_msg_close(&body);
      break;
    }
    Ccsim__Request *rq = ccsim__request__unpack(NULL, zmq_msg_size(&body), zmq_msg_data(&body));
    if (rq) {
      answer(f, &ident, rq);
      ccsim__request__free_unpacked(rq, NULL);
    }
    zmq_msg_close(&ident);
    zmq_msg_close(&body);
  }
  return NULL;
}

static int setup(void **state) {
  fake *f = calloc(1, sizeof *f);
  f->zctx = zmq_ctx_new();
  f->router = zmq_socket(f->zctx, ZMQ_ROUTER);
  int linger = 0;
  zmq_setsockopt(f->router, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_bind(f->router, "tcp://127.0.0.1:*") != 0) {
    return -1;
  }
  size_t n = sizeof f->endpoint;
  zmq_getsockopt(f->router, ZMQ_LAST_ENDPOINT, f->endpoint, &n);
  pthread_create(&f->thread, NULL, fake_main, f);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fake *f = *state;
  pthread_join(f->thread, NULL);  // it answers two requests, or gives up after 20 s
  zmq_close(f->router);
  zmq_ctx_term(f->zctx);
  free(f);
  return 0;
}

static void test_huge_decoded_reply_refused(void **state) {
  fake *f = *state;
  char err[512] = "";
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  o.timeout_ms = 15000;
  o.retries = 0;
  ccsim_client *c = ccsim_client_new_opts(f->endpoint, &o, err, sizeof err);
  if (!c) print_error("%s\n", err);
  assert_non_null(c);
  ccsim_session_info *list = NULL;
  size_t n = 0;
  int st = ccsim_client_list_sessions(c, &list, &n);
  const char *why = ccsim_client_errmsg(c);
  print_message("%s: %s\n", ccsim_status_name(st), why);
  assert_int_equal(st, CCSIM_EPROTO);
  assert_null(list);
  assert_non_null(strstr(why, "takes more than"));
  ccsim_client_destroy(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_huge_decoded_reply_refused, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
