// ctest-label: e2e
// ctest-timeout: 60
// What a first user meets when the server is not there: nothing listening at a tcp or ipc
// endpoint is told within about a second ("nothing accepts connections at E"), not after
// every attempt's timeout; a server stopped under a running client likewise; and a request
// that did time out names the endpoint, the request and its seq.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim_client.h"
#include "ccsim_scene.h"
#include "ccsim_status.h"
#include "srv.h"

// each attempt's timeout [ms]: an old client would take this long per attempt to say
// anything, a refusal must be told well within it
#define ATTEMPT_MS 8000
#define TOLD_WITHIN_S 4.0

// A tcp endpoint on loopback where nothing listens: a port bound and let go again.
static void free_tcp_endpoint(char *out, size_t n) {
  void *zctx = zmq_ctx_new();
  void *sock = zmq_socket(zctx, ZMQ_ROUTER);
  assert_int_equal(zmq_bind(sock, "tcp://127.0.0.1:*"), 0);
  size_t len = n;
  assert_int_equal(zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, out, &len), 0);
  zmq_close(sock);
  zmq_ctx_term(zctx);
}

static ccsim_client_opts opts(int timeout_ms, int retries) {
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  o.timeout_ms = timeout_ms;
  o.retries = retries;
  return o;
}

// ccsim_client_new_opts at ep fails within TOLD_WITHIN_S saying nothing listens there
static void refused_at(const char *ep) {
  ccsim_client_opts o = opts(ATTEMPT_MS, 2);
  char err[512] = "", want[600];
  double t0 = now_s();
  ccsim_client *c = ccsim_client_new_opts(ep, &o, err, sizeof err);
  double took = now_s() - t0;
  ccsim_client_destroy(&c);
  snprintf(want, sizeof want, "nothing accepts connections at %s \u2014 is ccsimd running?", ep);
  if (!strstr(err, want) || took > TOLD_WITHIN_S) print_error("after %.1f s: '%s'\n", took, err);
  assert_non_null(strstr(err, want));
  assert_true(took < TOLD_WITHIN_S);
}

static void test_nothing_listening_tcp(void **state) {
  (void)state;
  char ep[256];
  free_tcp_endpoint(ep, sizeof ep);
  refused_at(ep);
}

static void test_nothing_listening_ipc(void **state) {
  (void)state;
  char dir[] = "ccsim-errors-XXXXXX", ep[300];
  assert_non_null(mkdtemp(dir));
  char cwd[200];
  assert_non_null(getcwd(cwd, sizeof cwd));
  snprintf(ep, sizeof ep, "ipc://%s/%s/none.ipc", cwd, dir);
  refused_at(ep);
  rmdir(dir);
}

static ccsim_scene *ball(void) {
  const char *json = "{\"gravity\": [0, 0, -9.81], \"bodies\": [{\"name\": \"ball\", \"mass\": 1,"
                     " \"shape\": {\"sphere\": {\"radius\": 0.1}}}]}";
  char err[256] = "";
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "ball", NULL, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  return sc;
}

static srv *serve(pthread_t *thread) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = NULL;
  cfg.workers = 2;
  srv *s = test_server_start(&cfg, thread);
  assert_non_null(s);
  return s;
}

// a server stopped while its client steps: the next step says so within seconds
static void test_server_gone_mid_run(void **state) {
  (void)state;
  pthread_t th;
  srv *s = serve(&th);
  char ep[256], err[512] = "";
  snprintf(ep, sizeof ep, "%s", srv_endpoint(s));
  ccsim_client_opts o = opts(ATTEMPT_MS, 2);
  ccsim_client *c = ccsim_client_new_opts(ep, &o, err, sizeof err);
  assert_non_null(c);
  ccsim_scene *sc = ball();
  ccsim_session *ss = ccsim_session_create(c, sc);
  assert_non_null(ss);
  assert_int_equal(ccsim_session_step(ss, 1e-3, NULL, 0), CCSIM_OK);
  test_server_stop(&s, th);
  double t0 = now_s();
  int st = ccsim_session_step(ss, 1e-3, NULL, 0);
  double took = now_s() - t0;
  snprintf(err, sizeof err, "%s", ccsim_client_errmsg(c));
  ccsim_session_release(&ss);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  if (st != CCSIM_EIO || took > TOLD_WITHIN_S) print_error("%d after %.1f s: '%s'\n", st, took, err);
  assert_int_equal(st, CCSIM_EIO);
  assert_non_null(strstr(err, "nothing accepts connections at"));
  assert_true(took < TOLD_WITHIN_S);
}

// a step whose reply does not come in time (a lockstep session holds it for the wall clock)
// is reported naming the endpoint, the request and its seq
static void test_timeout_names_the_request(void **state) {
  (void)state;
  pthread_t th;
  srv *s = serve(&th);
  char ep[256], err[512] = "", want[600];
  snprintf(ep, sizeof ep, "%s", srv_endpoint(s));
  ccsim_client_opts o = opts(200, 1);
  ccsim_client *c = ccsim_client_new_opts(ep, &o, err, sizeof err);
  assert_non_null(c);
  ccsim_scene *sc = ball();
  ccsim_session *ss = ccsim_session_create_paced(c, sc, CCSIM_PACING_LOCKSTEP, 0);
  assert_non_null(ss);
  int st = ccsim_session_step(ss, 2.0, NULL, 0);
  snprintf(err, sizeof err, "%s", ccsim_client_errmsg(c));
  ccsim_session_release(&ss);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  test_server_stop(&s, th);
  snprintf(want, sizeof want, "no reply from %s to step (seq 1) within 200 ms (2 attempts)", ep);
  if (!strstr(err, want)) print_error("got '%s'\n", err);
  assert_int_equal(st, CCSIM_ETIMEOUT);
  assert_non_null(strstr(err, want));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nothing_listening_tcp),
      cmocka_unit_test(test_nothing_listening_ipc),
      cmocka_unit_test(test_server_gone_mid_run),
      cmocka_unit_test(test_timeout_names_the_request),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
