// A ccsimd service on its own thread for end-to-end tests, and the clock helpers they
// share. Include after ccsim_test.h (for print_error) in test programs that link the
// service.
#ifndef CCSIM_TEST_SRV_H
#define CCSIM_TEST_SRV_H

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "srv.h"

static void *test_server_main(void *arg) {
  srv_run(arg);
  return NULL;
}

// A CreateSession request in rq, built of cs and pc (the caller's): scene (borrowed) under
// key[0, klen) (key NULL: none), lockstep-paced or unpaced.
static inline void test_create_request(Ccsim__Request *rq, Ccsim__CreateSession *cs,
                                       Ccsim__Pacing *pc, const Ccsim__Scene *scene,
                                       const uint8_t *key, size_t klen, int lockstep) {
  ccsim__request__init(rq);
  ccsim__create_session__init(cs);
  ccsim__pacing__init(pc);
  cs->scene = (Ccsim__Scene *)scene;
  cs->has_create_key = key != NULL;
  cs->create_key.data = (uint8_t *)key;
  cs->create_key.len = klen;
  if (lockstep) {
    pc->has_mode = 1;
    pc->mode = CCSIM__PACING_MODE__PACING_LOCKSTEP;
    cs->pacing = pc;
  }
  rq->body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq->create_session = cs;
}

// A DEALER of zctx connected to endpoint, for requests the library would not send (its
// receives give up after 20 s). Caller closes it.
static inline void *test_dealer(void *zctx, const char *endpoint) {
  void *sock = zmq_socket(zctx, ZMQ_DEALER);
  int linger = 0, tmo = 20000;
  zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sock, ZMQ_RCVTIMEO, &tmo, sizeof tmo);
  zmq_connect(sock, endpoint);
  return sock;
}

// Send rq as request id rid on sock (a DEALER), packed as the library would; 0 or -1.
// (Tests assert after closing their sockets: a failure leaving one open would hang the
// context's zmq_ctx_term.)
static inline int test_send_request(void *sock, Ccsim__Request *rq, uint64_t rid) {
  rq->has_request_id = 1;
  rq->request_id = rid;
  size_t n = ccsim__request__get_packed_size(rq);
  uint8_t *buf = malloc(n);
  if (!buf) return -1;
  ccsim__request__pack(rq, buf);
  int rc = zmq_send(sock, buf, n, 0) >= 0 ? 0 : -1;
  free(buf);
  return rc;
}

// The next reply on sock (caller frees with ccsim__reply__free_unpacked), or NULL when
// none came within the socket's receive timeout or it does not decode.
static inline Ccsim__Reply *test_recv_reply(void *sock) {
  zmq_msg_t m;
  zmq_msg_init(&m);
  Ccsim__Reply *r = zmq_msg_recv(&m, sock, 0) >= 0
                        ? ccsim__reply__unpack(NULL, zmq_msg_size(&m), zmq_msg_data(&m))
                        : NULL;
  zmq_msg_close(&m);
  return r;
}

// A Step of dt of the session (id, token) sent raw on sock (a DEALER) as its controller under
// seq and request id rid, holding the force *fz upwards on body 0 (fz NULL: no input): its
// reply (the caller frees it with ccsim__reply__free_unpacked), NULL when none came.
static inline Ccsim__Reply *test_raw_step_reply(void *sock, const char *id, const char *token,
                                                uint64_t rid, uint64_t seq, double dt,
                                                const double *fz) {
  Ccsim__Request rq;
  Ccsim__Step st;
  Ccsim__BodyInput in, *inp[1] = {&in};
  Ccsim__Vec3 force;
  ccsim__request__init(&rq);
  ccsim__step__init(&st);
  ccsim__body_input__init(&in);
  ccsim__vec3__init(&force);
  if (fz) {
    force.has_z = 1;
    force.z = *fz;
    in.has_body = 1;
    in.force = &force;
    st.n_inputs = 1;
    st.inputs = inp;
  }
  st.has_dt = 1;
  st.dt = dt;
  rq.session_id = (char *)id;
  rq.token = (char *)token;
  rq.has_seq = 1;
  rq.seq = seq;
  rq.body_case = CCSIM__REQUEST__BODY_STEP;
  rq.step = &st;
  return test_send_request(sock, &rq, rid) == 0 ? test_recv_reply(sock) : NULL;
}

// A Step of dt = 1 ms of session s sent raw on sock (a DEALER) as its controller under
// seq, holding the force fz upwards on body 0: the reply's code (-1000: no reply), its
// time in *t (NAN when it has none) and its error message in msg[0, msg_sz).
static inline int test_raw_step(void *sock, const ccsim_session *s, uint64_t seq, double fz,
                                double *t, char *msg, size_t msg_sz) {
  static uint64_t rid = 1000;
  *t = NAN;
  if (msg_sz) msg[0] = 0;
  Ccsim__Reply *r =
      test_raw_step_reply(sock, ccsim_session_id(s), ccsim_session_token(s), rid++, seq, 1e-3, &fz);
  if (!r) return -1000;
  int code = r->error ? r->error->code : CCSIM__CODE__OK;
  if (r->step && r->step->has_time) *t = r->step->time;
  if (msg_sz && r->error && r->error->message) snprintf(msg, msg_sz, "%s", r->error->message);
  ccsim__reply__free_unpacked(r, NULL);
  return code;
}

// The ccsimd built beside the running test (build/tests/service/<test> ->
// build/server/service/ccsimd) into out[0, n): 0 when it is there and executable.
static inline int test_ccsimd_path(char *out, size_t n) {
  char exe[PATH_MAX];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (k <= 0) {
    return -1;
  }
  exe[k] = 0;
  for (int up = 0; up < 3; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash) {
      return -1;
    }
    *slash = 0;
  }
  snprintf(out, n, "%s/server/service/ccsimd", exe);
  return access(out, X_OK);
}

// What ListSessions says of session id on c's server (asserted listed).
static inline ccsim_session_info test_session_info(ccsim_client *c, const char *id) {
  ccsim_session_info *all = NULL, found;
  memset(&found, 0, sizeof found);
  size_t n = 0;
  assert_int_equal(ccsim_client_list_sessions(c, &all, &n), CCSIM_OK);
  int seen = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(all[i].id, id) == 0) {
      found = all[i];
      seen = 1;
    }
  }
  free(all);
  assert_true(seen);
  return found;
}

// Create the service from cfg and run it on *thread. Returns it (stop it with
// test_server_stop), or NULL with the reason printed.
static inline srv *test_server_start(const srv_config *cfg, pthread_t *thread) {
  char err[256] = "";
  srv *s = srv_new(cfg, err, sizeof err);
  if (!s) {
    print_error("srv_new: %s\n", err);
    return NULL;
  }
  pthread_create(thread, NULL, test_server_main, s);
  return s;
}

// Stop the service, join its thread and free it; *s becomes NULL.
static inline void test_server_stop(srv **s, pthread_t thread) {
  srv_stop(*s);
  pthread_join(thread, NULL);
  srv_destroy(s);
}

// Monotonic time [s].
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// Sleep for s seconds.
static inline void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

// Send what this process writes to fd (1 or 2) into the file at path (truncated) until
// test_capture_end; returns the descriptor that one takes back.
static inline int test_capture_begin(int fd, const char *path) {
  fflush(fd == 1 ? stdout : stderr);
  int saved = dup(fd);
  int to = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(to, fd);
  close(to);
  return saved;
}

// Give fd back its place from before test_capture_begin (saved: what that returned).
static inline void test_capture_end(int fd, int saved) {
  fflush(fd == 1 ? stdout : stderr);
  dup2(saved, fd);
  close(saved);
}

// The text of the file at path into out (NUL-terminated, at most out_sz - 1 bytes; "" when
// it cannot be read).
static inline void test_read_text(const char *path, char *out, size_t out_sz) {
  FILE *in = fopen(path, "r");
  size_t n = in ? fread(out, 1, out_sz - 1, in) : 0;
  out[n] = 0;
  if (in) fclose(in);
}

// Pose and twist of n bodies equal to the last bit (the struct's other fields and padding
// are not part of the trajectory).
static inline void assert_states_equal(const ccsim_body_state *a, const ccsim_body_state *b,
                                       int n) {
  for (int i = 0; i < n; i++) {
    assert_memory_equal(a[i].p, b[i].p, sizeof a[i].p);
    assert_memory_equal(a[i].q, b[i].q, sizeof a[i].q);
    assert_memory_equal(a[i].v, b[i].v, sizeof a[i].v);
    assert_memory_equal(a[i].w, b[i].w, sizeof a[i].w);
  }
}

#endif
