// ctest-label: e2e
// ctest-timeout: 60
// Exactly-once steps: a proxy between client and server drops Step replies; the client
// times out, reconnects and sends the same seq again; the plant advanced exactly once.
// Out-of-sequence seqs are refused and a repeated seq returns the stored reply. Creates
// likewise: a dropped CreateSession reply, retried, makes one session.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "ccsim_status.h"
#include "srv.h"

typedef struct fixture {
  srv *s;
  pthread_t thread, proxy_thread;
  char endpoint[256];        // the server
  char proxy_endpoint[256];  // the proxy clients talk to
  void *zctx;
  atomic_int drop_steps;     // Step replies the proxy still has to drop
  atomic_int drop_creates;   // CreateSession replies the proxy still has to drop
  atomic_int dropped;
  atomic_int stop_proxy;
  void *front, *back;
} fixture;

// ROUTER in front, DEALER behind: requests pass as they are, replies go back to the last
// client seen, except Step replies while drop_steps > 0 and CreateSession replies while
// drop_creates > 0
static void *proxy(void *arg) {
  fixture *f = arg;
  zmq_msg_t id;
  zmq_msg_init(&id);
  while (!atomic_load(&f->stop_proxy)) {
    zmq_pollitem_t it[2] = {{.socket = f->front, .events = ZMQ_POLLIN},
                            {.socket = f->back, .events = ZMQ_POLLIN}};
    if (zmq_poll(it, 2, 20) <= 0) {
      continue;
    }
    if (it[0].revents & ZMQ_POLLIN) {
      zmq_msg_t body;
      zmq_msg_init(&body);
      zmq_msg_close(&id);
      zmq_msg_init(&id);
      zmq_msg_recv(&id, f->front, 0);
      zmq_msg_recv(&body, f->front, 0);
      zmq_msg_send(&body, f->back, 0);
    }
    if (it[1].revents & ZMQ_POLLIN) {
      zmq_msg_t body;
      zmq_msg_init(&body);
      zmq_msg_recv(&body, f->back, 0);
      Ccsim__Reply *r = ccsim__reply__unpack(NULL, zmq_msg_size(&body), zmq_msg_data(&body));
      atomic_int *left = !r                                                  ? NULL
                         : r->body_case == CCSIM__REPLY__BODY_STEP           ? &f->drop_steps
                         : r->body_case == CCSIM__REPLY__BODY_CREATE_SESSION ? &f->drop_creates
                                                                             : NULL;
      int drop = left && atomic_load(left) > 0;
      if (r) ccsim__reply__free_unpacked(r, NULL);
      if (drop) {
        atomic_fetch_sub(left, 1);
        atomic_fetch_add(&f->dropped, 1);
        zmq_msg_close(&body);
        continue;
      }
      zmq_msg_t idc;
      zmq_msg_init(&idc);
      zmq_msg_copy(&idc, &id);
      zmq_msg_send(&idc, f->front, ZMQ_SNDMORE);
      zmq_msg_send(&body, f->front, 0);
    }
  }
  zmq_msg_close(&id);
  return NULL;
}

static int setup_limit(void **state, int max_sessions) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 2;
  cfg.max_sessions = max_sessions;
  cfg.spin_us = 20;  // the spinning hand-offs serve these tests too
  f->s = test_server_start(&cfg, &f->thread);
  if (!f->s) {
    free(f);
    return -1;
  }
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  f->zctx = zmq_ctx_new();
  f->front = zmq_socket(f->zctx, ZMQ_ROUTER);
  f->back = zmq_socket(f->zctx, ZMQ_DEALER);
  int linger = 0;
  zmq_setsockopt(f->front, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(f->back, ZMQ_LINGER, &linger, sizeof linger);
  zmq_bind(f->front, "tcp://127.0.0.1:*");
  zmq_connect(f->back, f->endpoint);
  size_t n = sizeof f->proxy_endpoint;
  zmq_getsockopt(f->front, ZMQ_LAST_ENDPOINT, f->proxy_endpoint, &n);
  pthread_create(&f->proxy_thread, NULL, proxy, f);
  *state = f;
  return 0;
}

static int setup(void **state) {
  return setup_limit(state, 64);
}

// a server that holds one session at most
static int setup_one(void **state) {
  return setup_limit(state, 1);
}

static int teardown(void **state) {
  fixture *f = *state;
  atomic_store(&f->stop_proxy, 1);
  pthread_join(f->proxy_thread, NULL);
  zmq_close(f->front);
  zmq_close(f->back);
  zmq_ctx_term(f->zctx);
  if (f->s) {  // a test may have stopped it
    test_server_stop(&f->s, f->thread);
  }
  free(f);
  return 0;
}

static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81], \"integrator\": {\"rtol\": 1e-9, \"atol\": 1e-12},"
    " \"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"inertia\": [0.1, 0.2, 0.3],"
    "   \"pose\": {\"p\": [0, 0, 10]}, \"velocity\": {\"v\": [1, 0, 0], \"w\": [0.1, 2, 0.3]}}]}";

// steps the server executed for session id, as it lists them
static uint64_t server_steps(ccsim_client *c, const char *id) {
  return test_session_info(c, id).steps;
}

// attempts of the proxy's clients [ms]: each dropped reply costs one; long enough that
// an answer not dropped comes within it on a loaded machine under ASan
#define PROXY_ATTEMPT_MS 800

// a client of the proxy with PROXY_ATTEMPT_MS attempts, and a session of k_scene on it
static ccsim_client *proxy_client(fixture *f, int retries, ccsim_scene **sc, ccsim_session **s) {
  char err[256];
  *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  assert_non_null(*sc);
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  o.timeout_ms = PROXY_ATTEMPT_MS;
  o.retries = retries;
  ccsim_client *c = ccsim_client_new_opts(f->proxy_endpoint, &o, err, sizeof err);
  assert_non_null(c);
  *s = ccsim_session_create(c, *sc);
  assert_non_null(*s);
  return c;
}

static void test_dropped_reply_steps_once(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc;
  ccsim_session *s;
  ccsim_client *c = proxy_client(f, 3, &sc, &s);
  // a reference session stepped directly, never retried
  ccsim_client *direct = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *ref = ccsim_session_create(direct, sc);
  assert_non_null(ref);
  for (int k = 1; k <= 30; k++) {
    // every tenth step loses its reply once, every fifteenth twice
    int drops = (k % 15 == 0) ? 2 : (k % 10 == 0) ? 1 : 0;
    atomic_store(&f->drop_steps, drops);
    int before = atomic_load(&f->dropped);
    assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
    assert_int_equal(atomic_load(&f->dropped) - before, drops);
    assert_int_equal(ccsim_session_step(ref, 1e-2, NULL, 0), CCSIM_OK);
    // the plant advanced exactly once: same time, same bits as the reference
    assert_int_equal(ccsim_session_seq(s), k);
    assert_int_equal(server_steps(direct, ccsim_session_id(s)), k);
    assert_true(ccsim_session_time(s) == ccsim_session_time(ref));
    assert_states_equal(ccsim_session_bodies(s), ccsim_session_bodies(ref), 1);
  }
  assert_int_equal(atomic_load(&f->dropped), 1 + 2 + 1 + 2);  // k = 10, 20 once; 15, 30 twice
  // the server's own view agrees
  ccsim_session *obs = ccsim_session_attach(direct, ccsim_session_id(s));
  assert_non_null(obs);
  assert_true(ccsim_session_time(obs) == ccsim_session_time(ref));
  assert_states_equal(ccsim_session_bodies(obs), ccsim_session_bodies(ref), 1);
  ccsim_session_release(&obs);
  // with no retries left, a lost reply is a timeout, and the step still ran once
  ccsim_client_set_retries(c, 0);
  atomic_store(&f->drop_steps, 1);
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_ETIMEOUT);
  assert_int_equal(server_steps(direct, ccsim_session_id(s)), 31);
  ccsim_session_close(&s);
  ccsim_session_close(&ref);
  ccsim_client_destroy(&c);
  ccsim_client_destroy(&direct);
  ccsim_scene_destroy(&sc);
}

// A step that timed out may have run: the next, different step sent under its seq (the
// library advances only on an answer) is refused as such, with the seq marked spent, and
// the one after it steps. It used to be answered the first step's stored reply, as if it
// were its own.
static void test_different_step_under_spent_seq(void **state) {
  fixture *f = *state;
  ccsim_scene *sc;
  ccsim_session *s;
  ccsim_client *c = proxy_client(f, 0, &sc, &s);
  atomic_store(&f->drop_steps, 1);
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_ETIMEOUT);
  assert_int_equal(ccsim_session_seq(s), 0);
  // the same step again is a retry: its stored reply
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
  assert_int_equal(ccsim_session_seq(s), 1);
  assert_double_near(ccsim_session_time(s), 0.01, 1e-15);
  atomic_store(&f->drop_steps, 1);
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_ETIMEOUT);
  // a different one under the spent seq 2
  assert_int_equal(ccsim_session_step(s, 5e-2, NULL, 0), CCSIM_ESEQ);
  assert_non_null(strstr(ccsim_client_errmsg(c), "different Step"));
  assert_int_equal(ccsim_session_seq(s), 2);
  assert_int_equal(ccsim_session_step(s, 5e-2, NULL, 0), CCSIM_OK);
  assert_int_equal(ccsim_session_seq(s), 3);
  assert_double_near(ccsim_session_time(s), 0.07, 1e-15);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// A create whose replies were lost, retried by the library, made one session, and the
// handle it returns controls it. Creates used to go once: the caller got a timeout, and
// the session made stayed behind (nobody held its token).
static void test_dropped_create_makes_one_session(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  assert_non_null(sc);
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  o.timeout_ms = PROXY_ATTEMPT_MS;
  o.retries = 3;
  ccsim_client *c = ccsim_client_new_opts(f->proxy_endpoint, &o, err, sizeof err);
  assert_non_null(c);
  ccsim_client *direct = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(direct);
  atomic_store(&f->drop_creates, 2);
  ccsim_session *s = ccsim_session_create(c, sc);
  if (!s) {
    print_error("create: %s\n", ccsim_client_errmsg(c));
  }
  assert_non_null(s);
  assert_int_equal(atomic_load(&f->dropped), 2);
  ccsim_session_info *info = NULL;
  size_t n = 0;
  assert_int_equal(ccsim_client_list_sessions(direct, &info, &n), CCSIM_OK);
  print_message("sessions after a create answered on its 3rd attempt: %zu\n", n);
  assert_int_equal(n, 1);
  assert_string_equal(info[0].id, ccsim_session_id(s));
  free(info);
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);  // the token is right
  assert_double_near(ccsim_session_time(s), 0.01, 1e-15);
  assert_int_equal(ccsim_session_close(&s), CCSIM_OK);
  assert_int_equal(srv_session_count(f->s), 0);
  ccsim_client_destroy(&direct);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// A fine torus: its create takes a while to build (about 0.3 s here)
static const char *k_fine =
    "{\"bodies\": [{\"name\": \"torus\", \"mass\": 1, \"inertia\": [1, 1, 1],"
    " \"shape\": {\"torus\": {\"major_radius\": 0.05, \"minor_radius\": 0.015,"
    " \"major_segments\": 512, \"minor_segments\": 128}}}]}";

// send a create of sc as request rid on sock under a key of 16 bytes `key` (0: none;
// lockstep: paced, so other bytes)
static void send_create(void *sock, const ccsim_scene *sc, uint64_t rid, int key, int lockstep) {
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  Ccsim__Pacing pc;
  uint8_t k[16];
  memset(k, key, sizeof k);
  test_create_request(&rq, &cs, &pc, ccsim_scene_message(sc), key ? k : NULL, sizeof k, lockstep);
  test_send_request(sock, &rq, rid);
}

// Copies of one keyed create sent at once, to a server with room for one session: the
// first builds, the copies that came meanwhile wait for it and are answered its session
// (not refused the place it holds, not built again); one with other bytes under the key
// is refused.
static void test_concurrent_keyed_creates(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_fine, strlen(k_fine), "fine", NULL, err, sizeof err);
  assert_non_null(sc);
  void *sock = test_dealer(f->zctx, f->endpoint);
  double t0 = now_s();
  send_create(sock, sc, 1, 0x5a, 0);
  send_create(sock, sc, 2, 0x5a, 0);
  send_create(sock, sc, 3, 0x5a, 1);
  // the socket is closed before anything is asserted: a failure must not leave it open
  // to the fixture's zmq_ctx_term, which would wait for it forever
  char ids[3][64] = {"", "", ""}, tokens[3][64] = {"", "", ""}, msg[3][256] = {"", "", ""};
  int code[3] = {-100, -100, -100};
  for (int k = 0; k < 3; k++) {
    Ccsim__Reply *r = test_recv_reply(sock);
    int i = r && r->request_id >= 1 && r->request_id <= 3 ? (int)r->request_id - 1 : -1;
    if (i >= 0 && r->error) {
      code[i] = (int)r->error->code;
      snprintf(msg[i], sizeof msg[i], "%s", r->error->message ? r->error->message : "");
    }
    if (i >= 0 && r->create_session) {
      snprintf(ids[i], sizeof ids[i], "%s", r->create_session->session_id);
      snprintf(tokens[i], sizeof tokens[i], "%s", r->create_session->controller_token);
    }
    if (r) ccsim__reply__free_unpacked(r, NULL);
  }
  zmq_close(sock);
  print_message(
      "three keyed creates of a 131072-triangle torus answered in %.0f ms: %s, %s, "
      "%s (%s)\n",
      1e3 * (now_s() - t0), ccsim_status_name(code[0]), ccsim_status_name(code[1]),
      ccsim_status_name(code[2]), msg[2]);
  assert_int_equal(code[0], CCSIM_OK);
  assert_int_equal(code[1], CCSIM_OK);
  assert_string_equal(ids[0], ids[1]);
  assert_string_equal(tokens[0], tokens[1]);
  assert_int_equal(code[2], CCSIM_EINVAL);
  assert_non_null(strstr(msg[2], "from a different request"));
  assert_int_equal(srv_session_count(f->s), 1);
  ccsim_scene_destroy(&sc);
}

// A server stopping while a keyed create is queued behind busy threads and a copy of it
// waits for it: both go, nothing stays behind (ASan counts the waiting job, which no
// queue holds), and the stop ends once the builds running finish (a build cannot be cut).
static void test_stop_while_copy_waits(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_fine, strlen(k_fine), "fine", NULL, err, sizeof err);
  assert_non_null(sc);
  // one build's time on this machine as it is now (ASan, other jobs): the stop's bound
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  double tb = now_s();
  ccsim_session *one = ccsim_session_create(c, sc);
  tb = now_s() - tb;
  assert_non_null(one);
  assert_int_equal(ccsim_session_close(&one), CCSIM_OK);
  ccsim_client_destroy(&c);
  void *sock = test_dealer(f->zctx, f->endpoint);
  for (int k = 1; k <= 4; k++) {
    send_create(sock, sc, (uint64_t)k, 0, 0);  // the threads' work
  }
  send_create(sock, sc, 5, 0x5a, 0);
  send_create(sock, sc, 6, 0x5a, 0);
  sleep_s(0.05);  // all received: the keyed one queued, its copy waiting
  zmq_close(sock);
  double t0 = now_s();
  test_server_stop(&f->s, f->thread);
  double took = now_s() - t0;
  print_message("stopped in %.0f ms (one build: %.0f ms)\n", 1e3 * took, 1e3 * tb);
  assert_null(f->s);
  // the builds running at the stop (one per pool thread, sharing the cores), not the
  // queue behind them, nor forever for the waiting copy
  assert_true(took < 2 + 6 * tb);
  ccsim_scene_destroy(&sc);
}

// a Step of 10 ms under a chosen seq, answered under its request id
static Ccsim__Reply *send_step(void *sock, const char *id, const char *token, uint64_t rid,
                               uint64_t seq) {
  Ccsim__Reply *r = test_raw_step_reply(sock, id, token, rid, seq, 1e-2, NULL);
  assert_non_null(r);
  assert_int_equal(r->request_id, rid);
  return r;
}

static void test_seq_rules(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  void *sock = zmq_socket(f->zctx, ZMQ_DEALER);
  int linger = 0, tmo = 10000;
  zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sock, ZMQ_RCVTIMEO, &tmo, sizeof tmo);
  zmq_connect(sock, f->endpoint);
  const char *id = ccsim_session_id(s), *tok = ccsim_session_token(s);
  Ccsim__Reply *r1 = send_step(sock, id, tok, 100, 1);
  assert_int_equal(r1->error->code, CCSIM__CODE__OK);
  assert_int_equal(r1->body_case, CCSIM__REPLY__BODY_STEP);
  // seq = last: the stored reply, same time and state, nothing stepped
  Ccsim__Reply *r1b = send_step(sock, id, tok, 101, 1);
  assert_int_equal(r1b->error->code, CCSIM__CODE__OK);
  assert_true(r1b->step->time == r1->step->time);
  assert_true(r1b->step->bodies[0]->pose->p->z == r1->step->bodies[0]->pose->p->z);
  assert_int_equal(r1b->step->stats->rhs_evals, r1->step->stats->rhs_evals);
  // seq = last + 2 and seq = last - 1 (0 is unsequenced): out of sequence
  const uint64_t bad[] = {3, 7, UINT64_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    Ccsim__Reply *r = send_step(sock, id, tok, 200 + i, bad[i]);
    assert_int_equal(r->error->code, CCSIM__CODE__ESEQ);
    assert_non_null(strstr(r->error->message, "send 2"));
    ccsim__reply__free_unpacked(r, NULL);
  }
  Ccsim__Reply *r2 = send_step(sock, id, tok, 300, 2);
  assert_int_equal(r2->error->code, CCSIM__CODE__OK);
  assert_double_near(r2->step->time, 0.02, 1e-15);
  // now seq 1 is too old
  Ccsim__Reply *r1c = send_step(sock, id, tok, 301, 1);
  assert_int_equal(r1c->error->code, CCSIM__CODE__ESEQ);
  ccsim__reply__free_unpacked(r1, NULL);
  ccsim__reply__free_unpacked(r1b, NULL);
  ccsim__reply__free_unpacked(r1c, NULL);
  ccsim__reply__free_unpacked(r2, NULL);
  zmq_close(sock);
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  assert_double_near(ccsim_session_time(s), 0.02, 1e-15);
  ccsim_session_release(&s);  // its seq counter is stale; the server frees it below
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dropped_reply_steps_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_seq_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_different_step_under_spent_seq, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dropped_create_makes_one_session, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_keyed_creates, setup_one, teardown),
      cmocka_unit_test_setup_teardown(test_stop_while_copy_waits, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
