// ctest-label: e2e
// ctest-timeout: 90
// The PUB state stream (every step, per-session sequence numbers, a closing message; a
// subscriber that never reads loses messages but never slows stepping) and real-time
// pacing (lockstep replies wait for the wall clock; free-running sessions advance at real
// time with the latest inputs).
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_scene.h"
#include "srv.h"

typedef struct fixture {
  srv *s;
  pthread_t thread;
  char endpoint[256], stream[256];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = "auto";
  cfg.workers = 2;
  f->s = test_server_start(&cfg, &f->thread);
  if (!f->s) {
    free(f);
    return -1;
  }
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  snprintf(f->stream, sizeof f->stream, "%s", srv_stream_endpoint(f->s));
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  test_server_stop(&f->s, f->thread);
  free(f);
  return 0;
}

static ccsim_scene *balls(int n) {
  size_t cap = 256 + 200 * (size_t)n;
  char *json = malloc(cap);
  size_t p = (size_t)snprintf(json, cap, "{\"gravity\": [0, 0, -9.81], \"bodies\": [");
  for (int i = 0; i < n; i++) {
    p += (size_t)snprintf(json + p, cap - p,
                          "%s{\"name\": \"b%d\", \"mass\": 1, \"inertia\": [0.1, 0.1, 0.1],"
                          " \"pose\": {\"p\": [%d, 0, 10]}}",
                          i ? ", " : "", i, i);
  }
  snprintf(json + p, cap - p, "]}");
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "balls", NULL, err, sizeof err);
  free(json);
  assert_non_null(sc);
  return sc;
}

// one ball, a client and a session paced as asked: what each pacing test starts from
typedef struct paced {
  ccsim_scene *sc;
  ccsim_client *c;
  ccsim_session *s;
} paced;

static void paced_open(const fixture *f, paced *p, ccsim_pacing pacing, double period) {
  char err[256];
  p->sc = balls(1);
  p->c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(p->c);
  p->s = ccsim_session_create_paced(p->c, p->sc, pacing, period);
  assert_non_null(p->s);
}

static void paced_close(paced *p) {
  ccsim_session_close(&p->s);
  ccsim_client_destroy(&p->c);
  ccsim_scene_destroy(&p->sc);
}

static void test_stream_sequence(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = balls(1);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  assert_string_equal(info.stream_endpoint, f->stream);
  ccsim_session *s = ccsim_session_create(c, sc), *other = ccsim_session_create(c, sc);
  assert_non_null(s);
  assert_non_null(other);
  ccsim_watch *w = ccsim_watch_new(info.stream_endpoint, ccsim_session_id(s), NULL, err,
                                   sizeof err);
  assert_non_null(w);
  // a subscription takes a moment to reach the publisher: step until the first arrives
  ccsim_stream_msg m;
  uint64_t first = 0;
  for (int k = 0; k < 500 && !first; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    assert_int_equal(ccsim_session_step(other, 1e-3, NULL, 0), CCSIM_OK);
    while (ccsim_watch_next(w, 5, &m) == CCSIM_OK) {
      assert_string_equal(m.session_id, ccsim_session_id(s));  // only the topic asked for
      first = m.seq;
    }
  }
  assert_true(first > 0);
  // from here on every step arrives, in order, with the reply's time and state
  enum { N = 200 };
  double times[N];
  ccsim_body_state states[N];
  uint64_t base = ccsim_session_seq(s);
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    assert_int_equal(ccsim_session_step(other, 1e-3, NULL, 0), CCSIM_OK);
    times[k] = ccsim_session_time(s);
    states[k] = ccsim_session_bodies(s)[0];
  }
  int got = 0;
  while (got < N && ccsim_watch_next(w, 2000, &m) == CCSIM_OK) {
    if (m.seq <= base) {
      continue;  // still the warm-up steps
    }
    assert_int_equal(m.seq, base + 1 + (uint64_t)got);
    assert_int_equal(m.nbody, 1);
    assert_true(m.time == times[got]);
    assert_states_equal(&m.bodies[0], &states[got], 1);
    got++;
  }
  assert_int_equal(got, N);
  // closing sends a last message marked closed
  assert_int_equal(ccsim_session_close(&s), CCSIM_OK);
  assert_int_equal(ccsim_watch_next(w, 2000, &m), CCSIM_OK);
  assert_true(m.closed);
  assert_int_equal(m.seq, base + N + 1);
  ccsim_watch_destroy(&w);
  ccsim_session_close(&other);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// Contacts when asked: a controller that wants them gets each step's contacts in its
// reply and its subscribers in the stream message, the same ones; without asking, none.
// libccsim could not ask (the server could answer).
static void test_stream_contacts_when_asked(void **state) {
  fixture *f = *state;
  const char *json =
      "{\"gravity\": [0, 0, -9.81], \"contact\": {\"k\": 1e4, \"n\": 1, \"standoff\": 0.01},"
      " \"bodies\": [{\"name\": \"floor\", \"fixed\": true, \"shape\": {\"box\": "
      "{\"size\": [1, 1, 0.1]}}, \"pose\": {\"p\": [0, 0, -0.05]}},"
      " {\"name\": \"box\", \"mass\": 1, \"shape\": {\"box\": {\"size\": [0.1, 0.1, 0.1]}},"
      " \"pose\": {\"p\": [0.2, 0.1, 0.05975]}}]}";  // resting: 4 x 0.25 mm x 1e4 N/m
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "box", NULL, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  ccsim_watch *w = ccsim_watch_new(f->stream, ccsim_session_id(s), NULL, err, sizeof err);
  assert_non_null(w);
  ccsim_stream_msg m;
  size_t n = 1;
  int through = 0;
  for (int k = 0; k < 100 && !through; k++) {  // without asking, until subscribed
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    ccsim_session_contacts(s, &n);
    assert_int_equal(n, 0);
    while (ccsim_watch_next(w, 5, &m) == CCSIM_OK) {
      through = 1;
      assert_int_equal(m.ncontacts, 0);
    }
  }
  assert_true(through);
  ccsim_session_want_contacts(s, 1);
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  const ccsim_contact *rc = ccsim_session_contacts(s, &n);
  assert_int_equal(ccsim_watch_next(w, 2000, &m), CCSIM_OK);
  print_message("asked: %zu contacts in the reply, %zu in the stream message #%llu\n", n,
                m.ncontacts, (unsigned long long)m.seq);
  assert_true(n >= 4);  // the box's bottom corners at least
  assert_int_equal(m.ncontacts, n);
  double fz = 0;
  for (size_t i = 0; i < n; i++) {
    assert_true(m.contacts[i].force[2] == rc[i].force[2]);
    assert_true(m.contacts[i].point_b[0] == rc[i].point_b[0]);
    fz += rc[i].body_b == 1 ? rc[i].force[2] : -rc[i].force[2];
  }
  assert_true(fz > 0);  // the floor pushes the box up
  ccsim_session_want_contacts(s, 0);
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  ccsim_session_contacts(s, &n);
  assert_int_equal(ccsim_watch_next(w, 2000, &m), CCSIM_OK);
  assert_int_equal(n, 0);
  assert_int_equal(m.ncontacts, 0);
  ccsim_watch_destroy(&w);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// A session freed by the idle timeout ends its stream as a close does: the last message,
// marked closed, numbered after the last step and timed at its state. It went out with
// sequence number 0 and no time, which a subscriber counting gaps took for a jump back.
static void test_expired_close_numbered(void **state) {
  (void)state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = "auto";
  cfg.idle_timeout = 0.3;
  pthread_t th;
  srv *sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  char err[256];
  ccsim_scene *sc = balls(1);
  ccsim_client *c = ccsim_client_new(srv_endpoint(sv), err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  ccsim_watch *w =
      ccsim_watch_new(srv_stream_endpoint(sv), ccsim_session_id(s), NULL, err, sizeof err);
  assert_non_null(w);
  ccsim_stream_msg m;
  uint64_t last = 0;
  double t_last = 0;
  for (int k = 0; k < 100 && !last; k++) {  // until the subscription is through
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    while (ccsim_watch_next(w, 5, &m) == CCSIM_OK) {
      last = m.seq;
      t_last = m.time;
    }
  }
  assert_true(last > 0);
  assert_int_equal(ccsim_watch_next(w, 3000, &m), CCSIM_OK);  // the idle timeout's
  print_message("expired: closed %d, seq %llu after %llu, time %g after %g\n", m.closed,
                (unsigned long long)m.seq, (unsigned long long)last, m.time, t_last);
  assert_true(m.closed);
  assert_int_equal(m.seq, last + 1);
  assert_true(m.time == t_last);
  ccsim_watch_destroy(&w);
  ccsim_session_release(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  test_server_stop(&sv, th);
}

// the server's count of stream messages once the last reply's publication is done: a
// step's reply and its stream message leave under one hold of the socket lock, which the
// next request's receive takes too
static uint64_t published_after(ccsim_client *c, srv *s) {
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  return srv_stream_published(s);
}

static void step_both(ccsim_session *a, ccsim_session *b, int n) {
  for (int k = 0; k < n; k++) {
    if (a) assert_int_equal(ccsim_session_step(a, 1e-3, NULL, 0), CCSIM_OK);
    if (b) assert_int_equal(ccsim_session_step(b, 1e-3, NULL, 0), CCSIM_OK);
  }
}

// Stream messages are built and sent only for sessions someone subscribes to: none without
// a subscriber, the watched session's only with one, every session's with the empty topic,
// none again once the subscribers are gone. The sequence numbers count every step.
static void test_stream_only_when_watched(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = balls(1);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc), *other = ccsim_session_create(c, sc);
  assert_non_null(s);
  assert_non_null(other);
  uint64_t p0 = published_after(c, f->s);
  step_both(s, other, 20);
  assert_true(published_after(c, f->s) == p0);
  ccsim_watch *w = ccsim_watch_new(f->stream, ccsim_session_id(s), NULL, err, sizeof err);
  assert_non_null(w);
  ccsim_stream_msg m;
  uint64_t first = 0;
  for (int k = 0; k < 500 && !first; k++) {
    step_both(s, NULL, 1);
    if (ccsim_watch_next(w, 5, &m) == CCSIM_OK) {
      first = m.seq;
    }
  }
  assert_true(first > 20);  // the unwatched steps were counted
  uint64_t p1 = published_after(c, f->s);
  step_both(NULL, other, 20);
  assert_true(published_after(c, f->s) == p1);
  step_both(s, NULL, 20);
  assert_true(published_after(c, f->s) == p1 + 20);
  // a subscriber to every topic: the other session publishes too
  void *ctx = zmq_ctx_new();
  void *sub = zmq_socket(ctx, ZMQ_SUB);
  int linger = 0;
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_connect(sub, f->stream), 0);
  assert_int_equal(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0), 0);
  int all = 0;
  for (int k = 0; k < 500 && !all; k++) {
    uint64_t p = published_after(c, f->s);
    step_both(NULL, other, 1);
    all = published_after(c, f->s) == p + 1;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  assert_true(all);
  // both gone: the unsubscriptions reach the server a moment later, then nothing is sent
  zmq_close(sub);
  zmq_ctx_term(ctx);
  ccsim_watch_destroy(&w);
  int quiet = 0;
  for (int k = 0; k < 500 && quiet < 20; k++) {
    uint64_t p = published_after(c, f->s);
    step_both(s, other, 1);
    quiet = published_after(c, f->s) == p ? quiet + 1 : 0;
    if (!quiet) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  }
  assert_true(quiet >= 20);
  ccsim_session_close(&s);
  ccsim_session_close(&other);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// waits (bounded) until n steps of s are all published (want 1) or none is (want 0)
static int publishes(ccsim_client *c, srv *srv_, ccsim_session *s, int want) {
  for (int k = 0; k < 500; k++) {
    uint64_t p = published_after(c, srv_);
    step_both(s, NULL, 3);
    uint64_t d = published_after(c, srv_) - p;
    if (want ? d == 3 : d == 0) {
      return 1;
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

// topics that match no session do not make it publish; more distinct topics than the
// server tracks one by one make every session publish, until they are gone again
static void test_stream_many_topics(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = balls(1);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  void *ctx = zmq_ctx_new();
  void *sub = zmq_socket(ctx, ZMQ_SUB);
  int linger = 0;
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_connect(sub, f->stream), 0);
  char topic[16];
  for (int k = 0; k < 100; k++) {  // session ids are hex: a 'z' matches none
    snprintf(topic, sizeof topic, "z%03d", k);
    assert_int_equal(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, topic, strlen(topic)), 0);
  }
  // the session's own topic after them: once it publishes, the hundred have arrived too;
  // without it, they alone do not make it publish
  const char *id = ccsim_session_id(s);
  assert_int_equal(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, id, strlen(id)), 0);
  assert_true(publishes(c, f->s, s, 1));
  assert_int_equal(zmq_setsockopt(sub, ZMQ_UNSUBSCRIBE, id, strlen(id)), 0);
  assert_true(publishes(c, f->s, s, 0));
  for (int k = 100; k < 300; k++) {
    snprintf(topic, sizeof topic, "z%03d", k);
    assert_int_equal(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, topic, strlen(topic)), 0);
  }
  assert_true(publishes(c, f->s, s, 1));
  for (int k = 0; k < 300; k++) {
    snprintf(topic, sizeof topic, "z%03d", k);
    assert_int_equal(zmq_setsockopt(sub, ZMQ_UNSUBSCRIBE, topic, strlen(topic)), 0);
  }
  assert_true(publishes(c, f->s, s, 0));
  zmq_close(sub);
  zmq_ctx_term(ctx);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

static void test_stalled_subscriber_loses_not_blocks(void **state) {
  fixture *f = *state;
  char err[256];
  enum { NB = 32 };
#ifdef __SANITIZE_ADDRESS__
  enum { N = 3000 };
#else
  enum { N = 4000 };
#endif
  ccsim_scene *sc = balls(NB);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  // a subscriber that reads nothing while N states of ~8 kB are published
  void *ctx = zmq_ctx_new();
  void *sub = zmq_socket(ctx, ZMQ_SUB);
  int hwm = 10, rcvbuf = 4096, linger = 0;
  zmq_setsockopt(sub, ZMQ_RCVHWM, &hwm, sizeof hwm);
  zmq_setsockopt(sub, ZMQ_RCVBUF, &rcvbuf, sizeof rcvbuf);
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
  assert_int_equal(zmq_connect(sub, f->stream), 0);
  sleep_s(0.2);
  double t0 = now_s();
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  }
  double wall = now_s() - t0;
  // now read what reached it: fewer than N, with gaps the sequence numbers reveal
  int tmo = 500;
  zmq_setsockopt(sub, ZMQ_RCVTIMEO, &tmo, sizeof tmo);
  int got = 0, gaps = 0;
  uint64_t last = 0;
  for (;;) {
    zmq_msg_t topic, body;
    zmq_msg_init(&topic);
    zmq_msg_init(&body);
    int rc = zmq_msg_recv(&topic, sub, 0);
    if (rc >= 0) {
      rc = zmq_msg_recv(&body, sub, 0);
    }
    Ccsim__StreamState *m = rc >= 0 ? ccsim__stream_state__unpack(NULL, zmq_msg_size(&body),
                                                                  zmq_msg_data(&body)) : NULL;
    zmq_msg_close(&topic);
    zmq_msg_close(&body);
    if (!m) {
      break;  // quiet for 500 ms: everything that got through has arrived
    }
    assert_true(m->stream_seq > last);
    gaps += last && m->stream_seq != last + 1;
    last = m->stream_seq;
    got++;
    ccsim__stream_state__free_unpacked(m, NULL);
  }
  print_message("%d steps of %d bodies in %.2f s; the stalled subscriber got %d of them with %d "
                "gaps, the last %llu\n", N, NB, wall, got, gaps, (unsigned long long)last);
  // stepping went on; the subscriber lost messages, and the sequence numbers show where
  assert_true(got < N);
  assert_true(gaps > 0 || last < N);
  zmq_close(sub);
  zmq_ctx_term(ctx);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// A controller slower than real time: every request after the first arrives when its
// step's deadline (the wall-clock time of the step's end) has passed already. Those misses
// are counted as the client's (late_requests), with the lateness they had.
static void test_lockstep_late_client(void **state) {
  paced p;
  paced_open(*state, &p, CCSIM_PACING_LOCKSTEP, 0);
  ccsim_session *s = p.s;
  enum { N = 20 };
  const double dt = 1e-3;
  for (int k = 1; k <= N; k++) {
    assert_int_equal(ccsim_session_step(s, dt, NULL, 0), CCSIM_OK);
    sleep_s(3 * dt);  // the next request comes 3 steps' time later: 2 dt after its deadline
  }
  const ccsim_deadline_stats *d = ccsim_session_deadline(s);
  print_message(
      "late client: %llu of %llu steps late, %llu of them late requests, worst "
      "%.3f ms\n",
      (unsigned long long)d->misses, (unsigned long long)d->paced_steps,
      (unsigned long long)d->late_requests, 1e3 * d->worst_lateness);
  assert_int_equal(d->paced_steps, N);
  assert_true(d->late_requests >= N - 1);  // all but the first (it sets the origin)
  assert_true(d->misses >= d->late_requests);
  assert_true(d->worst_lateness >= 2 * dt);  // the lateness grows by 2 dt per step
  paced_close(&p);
}

static void test_lockstep_pacing(void **state) {
  paced p;
  paced_open(*state, &p, CCSIM_PACING_LOCKSTEP, 0);
  ccsim_client *c = p.c;
  ccsim_session *s = p.s;
  enum { N = 200 };
  const double dt = 2e-3;
  double t0 = now_s();
  for (int k = 1; k <= N; k++) {
    assert_int_equal(ccsim_session_step(s, dt, NULL, 0), CCSIM_OK);
    // the reply never comes before the wall clock reached the simulated time
    double wall = now_s() - t0;
    assert_true(wall >= k * dt - 1e-4);
  }
  double wall = now_s() - t0;
  const ccsim_deadline_stats *d = ccsim_session_deadline(s);
  print_message("lockstep: %d x %g s in %.3f s wall; %llu misses, worst %.3f ms\n", N, dt, wall,
                (unsigned long long)d->misses, 1e3 * d->worst_lateness);
  assert_int_equal(d->paced_steps, N);
  assert_true(d->misses <= d->paced_steps);
  assert_true(d->late_requests <= d->misses);
  assert_true(d->worst_lateness >= 0 && d->worst_lateness >= d->last_lateness);
  // every held reply goes out a little after its time: the latest of those delays is told
  // (replies before this one's; bounded by what the wall clock allows)
  assert_true(d->worst_release_delay > 0 && d->worst_release_delay < wall);
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  assert_int_equal(info.deadline.paced_steps, N);
  assert_int_equal(info.deadline.late_requests, d->late_requests);
  assert_true(info.deadline.worst_release_delay >= d->worst_release_delay);
  // an unpaced session on the same server is not held back
  ccsim_session *fast = ccsim_session_create(c, p.sc);
  t0 = now_s();
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(fast, dt, NULL, 0), CCSIM_OK);
  }
  assert_true(now_s() - t0 < N * dt);
  ccsim_session_close(&fast);
  paced_close(&p);
}

static void test_free_running(void **state) {
  fixture *f = *state;
  char err[256];
  paced p;
  paced_open(f, &p, CCSIM_PACING_FREE_RUNNING, 2e-3);
  ccsim_session *s = p.s;
  ccsim_watch *w = ccsim_watch_new(f->stream, ccsim_session_id(s), NULL, err, sizeof err);
  assert_non_null(w);
  double t0 = now_s();
  sleep_s(0.5);
  // the server advanced the plant on its own, at about real time
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  double ts = ccsim_session_time(s), tw = now_s() - t0;
  print_message("free-running: simulated %.3f s in %.3f s wall\n", ts, tw);
  assert_true(ts > 0.3 && ts < tw + 0.05);
  assert_true(ccsim_session_bodies(s)[0].v[2] < -2);  // falling
  // a Step replaces the held input: m g upwards holds the velocity
  ccsim_input in = {.body = 0, .force = {0, 0, 9.81}};
  assert_int_equal(ccsim_session_step(s, 1e-3, &in, 1), CCSIM_OK);
  double t_set = ccsim_session_time(s);
  // Steps are sequenced as in every mode: a late copy of an older Step (its seq spent by
  // the one above, no force) and a Step out of sequence are refused and change no input
  uint64_t seq = ccsim_session_seq(s);
  void *zctx = zmq_ctx_new(), *sock = test_dealer(zctx, f->endpoint);
  double t_old, t_gap;
  int old_code = test_raw_step(sock, s, seq, 0, &t_old, NULL, 0);
  int gap_code = test_raw_step(sock, s, seq + 7, 0, &t_gap, NULL, 0);
  ccsim_stream_msg m;
  double vz = 0;
  int seen = 0;
  double tw0 = now_s();
  while (now_s() - tw0 < 2 && seen < 50) {
    if (ccsim_watch_next(w, 100, &m) != CCSIM_OK || m.time <= t_set + 0.01) {
      continue;  // states computed before the input took effect
    }
    if (seen++ == 0) {
      vz = m.bodies[0].v[2];
    }
    assert_double_near(m.bodies[0].v[2], vz, 1e-9);
  }
  assert_int_equal(seen, 50);
  assert_true(vz < -2);
  // sub-states a free-running Step cannot give are refused, not left unfilled
  ccsim_body_state sub[2];
  double sub_t[2] = {-1, -1};
  assert_int_equal(ccsim_session_step_n(s, 1e-3, 2, NULL, 0, sub, sub_t), CCSIM_EINVAL);
  assert_non_null(strstr(ccsim_client_errmsg(p.c), "free-running"));
  // the next seq sets the inputs; its retry is answered the stored reply, not run again
  double t_next, t_retry;
  int next_code = test_raw_step(sock, s, seq + 1, 9.81, &t_next, NULL, 0);
  sleep_s(0.01);
  int retry_code = test_raw_step(sock, s, seq + 1, 9.81, &t_retry, NULL, 0);
  zmq_close(sock);
  zmq_ctx_term(zctx);
  assert_int_equal(old_code, CCSIM__CODE__ESEQ);
  assert_int_equal(gap_code, CCSIM__CODE__ESEQ);
  assert_int_equal(next_code, CCSIM__CODE__OK);
  assert_int_equal(retry_code, CCSIM__CODE__OK);
  assert_true(t_retry == t_next);
  ccsim_watch_destroy(&w);
  paced_close(&p);
}

// SetState's time moves a paced session's clock pairing along: a lockstep reply after a
// jump forward is not held for the jump (nor is every step late after a jump back), and a
// free-running plant goes on at real time from the new time (it froze after a jump forward
// and caught up at once after one back).
static void test_set_time_repairs_pacing(void **state) {
  paced p;
  paced_open(*state, &p, CCSIM_PACING_LOCKSTEP, 0);
  for (int k = 0; k < 3; k++) {
    assert_int_equal(ccsim_session_step(p.s, 1e-3, NULL, 0), CCSIM_OK);
  }
  double t = 5.0;
  assert_int_equal(ccsim_session_set_state(p.s, &t, NULL, 0), CCSIM_OK);
  double t0 = now_s();
  assert_int_equal(ccsim_session_step(p.s, 1e-3, NULL, 0), CCSIM_OK);
  assert_int_equal(ccsim_session_step(p.s, 1e-3, NULL, 0), CCSIM_OK);
  assert_true(now_s() - t0 < 1.0);
  t = 0.0;
  assert_int_equal(ccsim_session_set_state(p.s, &t, NULL, 0), CCSIM_OK);
  assert_int_equal(ccsim_session_step(p.s, 1e-3, NULL, 0), CCSIM_OK);
  assert_true(ccsim_session_deadline(p.s)->last_lateness < 1.0);  // not the 5 s jump
  paced_close(&p);

  paced_open(*state, &p, CCSIM_PACING_FREE_RUNNING, 1e-3);
  sleep_s(0.5);
  t = 100.0;
  assert_int_equal(ccsim_session_set_state(p.s, &t, NULL, 0), CCSIM_OK);
  sleep_s(0.3);
  assert_int_equal(ccsim_session_get_state(p.s), CCSIM_OK);
  double ts = ccsim_session_time(p.s);
  print_message("free-running 0.3 s after SetState(time 100): time %.3f\n", ts);
  assert_true(ts > 100.1 && ts < 100.6);
  t = 0.0;
  assert_int_equal(ccsim_session_set_state(p.s, &t, NULL, 0), CCSIM_OK);
  sleep_s(0.2);
  assert_int_equal(ccsim_session_get_state(p.s), CCSIM_OK);
  ts = ccsim_session_time(p.s);
  print_message("free-running 0.2 s after SetState(time 0): time %.3f\n", ts);
  assert_true(ts > 0.05 && ts < 0.5);
  paced_close(&p);
}

typedef struct long_step {
  ccsim_client *c;
  ccsim_session *s;
  int rc;
} long_step;

static void *long_step_main(void *arg) {
  long_step *ls = arg;
  ls->rc = ccsim_session_step_n(ls->s, 1e-3, 3000000, NULL, 0, NULL, NULL);
  return NULL;
}

// steps a free-running session took so far (ListSessions, answered by the I/O duty)
static uint64_t steps_of(ccsim_client *c, const char *id) {
  return test_session_info(c, id).steps;
}

// A free-running plant whose ticks take longer than its period (300 bodies, 0.1 ms): a
// tick that cannot run, its session still busy with the one before, is a paced step that
// missed (its state is never published; the next tick covers its time). paced_steps
// follows the wall clock, and misses counts every state that came late or never.
static void test_free_running_skipped_ticks(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = balls(300);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  const double period = 1e-4;
  double t0 = now_s();
  ccsim_session *s = ccsim_session_create_paced(c, sc, CCSIM_PACING_FREE_RUNNING, period);
  assert_non_null(s);
  sleep_s(0.5);
  ccsim_session_info a = test_session_info(c, ccsim_session_id(s));
  double wall = now_s() - t0;
  print_message(
      "free-running at %g s: %llu steps ran, %llu paced, %llu missed in %.3f s wall "
      "(simulated %.3f s)\n",
      period, (unsigned long long)a.steps, (unsigned long long)a.deadline.paced_steps,
      (unsigned long long)a.deadline.misses, wall, a.time);
  assert_true(a.steps < 0.5 * wall / period);  // the ticks did not all run: some were skipped
  assert_true(a.deadline.paced_steps >= 0.8 * 0.5 / period);
  assert_true(a.deadline.paced_steps <= wall / period + 2);
  assert_true(a.deadline.misses + a.steps + 1 >= a.deadline.paced_steps);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// A controller streaming inputs to a free-running plant (a Step every 0.2 ms, 1 ms ticks):
// every Step is answered, the plant goes on ticking, and every tick paced either ran or was
// counted as a miss. That a tick due while the session sets inputs waits behind the Step
// instead of being skipped is the pacer's rule, tested on its own clock in test_srv_pool.c:
// how many ticks a loaded machine lets run here is not something the server guarantees.
static void test_free_running_under_inputs(void **state) {
  fixture *f = *state;
  paced p;
  paced_open(f, &p, CCSIM_PACING_FREE_RUNNING, 1e-3);
  ccsim_input in = {.body = 0, .force = {0, 0, 9.81}};
  ccsim_session_info a = test_session_info(p.c, ccsim_session_id(p.s));
  double t0 = now_s();
  int sent = 0;
  while (now_s() - t0 < 1.0) {
    assert_int_equal(ccsim_session_step(p.s, 1e-3, &in, 1), CCSIM_OK);
    sent++;
    sleep_s(2e-4);
  }
  ccsim_session_info b = test_session_info(p.c, ccsim_session_id(p.s));
  uint64_t ticks = b.deadline.paced_steps - a.deadline.paced_steps, ran = b.steps - a.steps,
           missed = b.deadline.misses - a.deadline.misses;
  print_message("free-running under %d input Steps: %llu ticks paced, %llu ran, %llu missed\n",
                sent, (unsigned long long)ticks, (unsigned long long)ran,
                (unsigned long long)missed);
  assert_true(ran > 0);
  // a tick in flight at the second reading is paced but not yet counted as run
  assert_true(ticks <= ran + missed + 1);
  paced_close(&p);
}

// With every pool thread busy on a long step, a free-running session still ticks at its
// rate: the thread holding the I/O duty runs its ticks, woken for each (it used to see
// them only at its poll's 50 ms timeout: 20 ticks a second).
static void test_free_running_beside_busy_pool(void **state) {
  (void)state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 1;
  cfg.max_substeps = 10000000;
  cfg.max_step_seconds = 2.5;  // ends the long step
  pthread_t th;
  srv *sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  char err[256];
  ccsim_scene *sc = balls(1);
  ccsim_client *c = ccsim_client_connect(srv_endpoint(sv), 10000, 0, err, sizeof err);
  assert_non_null(c);
  ccsim_session *fr = ccsim_session_create_paced(c, sc, CCSIM_PACING_FREE_RUNNING, 1e-3);
  assert_non_null(fr);
  long_step ls = {.c = ccsim_client_connect(srv_endpoint(sv), 10000, 0, err, sizeof err)};
  assert_non_null(ls.c);
  ls.s = ccsim_session_create(ls.c, sc);
  assert_non_null(ls.s);
  pthread_t lt;
  assert_int_equal(pthread_create(&lt, NULL, long_step_main, &ls), 0);
  sleep_s(0.4);
  uint64_t a = steps_of(c, ccsim_session_id(fr));
  double t0 = now_s();
  sleep_s(1.0);
  uint64_t b = steps_of(c, ccsim_session_id(fr));
  double wall = now_s() - t0;
  pthread_join(lt, NULL);
  print_message("free-running beside a busy pool: %llu ticks in %.2f s (long step: %s)\n",
                (unsigned long long)(b - a), wall, ccsim_status_name(ls.rc));
  assert_int_equal(ls.rc, CCSIM_ELIMIT);  // the pool was busy throughout
  // woken for each tick, not at the poll's 50 ms timeout (20 a second at most): five times
  // that rate is far above the old behaviour and far below what a loaded machine still
  // gives (over 450 a second with two busy loops beside it)
  assert_true((double)(b - a) > 0.1 * wall / 1e-3);
  ccsim_session_close(&ls.s);
  ccsim_client_destroy(&ls.c);
  ccsim_session_close(&fr);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  test_server_stop(&sv, th);
}

static void *long_lockstep_main(void *arg) {
  long_step *ls = arg;
  ls->rc = ccsim_session_step(ls->s, 0.8, NULL, 0);
  return NULL;
}

// While a lockstep reply is held, its controller is waiting, not idle: another request
// of its (a GetState) does not move the idle clock back to its arrival. It did, and an
// idle timeout shorter than the hold freed the session under the held reply.
static void test_held_reply_is_not_idleness(void **state) {
  fixture *f = *state;
  paced p;
  paced_open(f, &p, CCSIM_PACING_LOCKSTEP, 0);
  assert_int_equal(ccsim_session_step(p.s, 1e-3, NULL, 0), CCSIM_OK);
  long_step ls = {.c = p.c, .s = p.s};
  pthread_t lt;
  assert_int_equal(pthread_create(&lt, NULL, long_lockstep_main, &ls), 0);
  sleep_s(0.1);  // the step has run; its reply waits 0.8 s for the wall clock
  void *zctx = zmq_ctx_new();
  void *sock = test_dealer(zctx, f->endpoint);
  Ccsim__Request rq;
  Ccsim__GetState gs;
  ccsim__request__init(&rq);
  ccsim__get_state__init(&gs);
  rq.session_id = (char *)ccsim_session_id(p.s);
  rq.token = (char *)ccsim_session_token(p.s);
  rq.body_case = CCSIM__REQUEST__BODY_GET_STATE;
  rq.get_state = &gs;
  int sent = test_send_request(sock, &rq, 7);
  Ccsim__Reply *r = test_recv_reply(sock);
  int code = r && r->error ? (int)r->error->code : -100;
  if (r) ccsim__reply__free_unpacked(r, NULL);
  zmq_close(sock);
  zmq_ctx_term(zctx);
  sleep_s(0.25);
  char err[256];
  ccsim_client *other = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(other);
  ccsim_session_info info = test_session_info(other, ccsim_session_id(p.s));
  ccsim_client_destroy(&other);
  pthread_join(lt, NULL);
  print_message("idle during the hold, after a GetState 0.25 s before: %g s\n", info.idle);
  assert_int_equal(sent, 0);
  assert_int_equal(code, CCSIM_OK);
  assert_true(info.idle == 0);
  assert_int_equal(ls.rc, CCSIM_OK);
  paced_close(&p);
}

// A controller that sends without waiting (a held lockstep Step, then a SetState, then a
// CloseSession) gets its replies, and the stream its messages, in that order. The held
// reply used to leave last, its state published after the session's close.
static void test_held_reply_keeps_order(void **state) {
  fixture *f = *state;
  paced p;
  paced_open(f, &p, CCSIM_PACING_LOCKSTEP, 0);
  char err[256];
  ccsim_watch *w = ccsim_watch_new(f->stream, ccsim_session_id(p.s), NULL, err, sizeof err);
  assert_non_null(w);
  ccsim_stream_msg m;
  int heard = 0;
  for (int k = 0; k < 300 && !heard; k++) {  // until the subscription has reached the server
    assert_int_equal(ccsim_session_step(p.s, 1e-3, NULL, 0), CCSIM_OK);
    heard = ccsim_watch_next(w, 10, &m) == CCSIM_OK;
  }
  assert_true(heard);
  while (ccsim_watch_next(w, 50, &m) == CCSIM_OK) {
  }
  void *zctx = zmq_ctx_new();
  void *sock = test_dealer(zctx, f->endpoint);
  Ccsim__Request rq;
  Ccsim__Step st;
  Ccsim__SetState set;
  Ccsim__CloseSession cl;
  ccsim__step__init(&st);
  ccsim__set_state__init(&set);
  ccsim__close_session__init(&cl);
  st.has_dt = 1;
  st.dt = 0.4;  // held 0.4 s
  set.has_time = 1;
  set.time = 0;
  int sent = 0;
  for (int k = 0; k < 3; k++) {
    ccsim__request__init(&rq);
    rq.session_id = (char *)ccsim_session_id(p.s);
    rq.token = (char *)ccsim_session_token(p.s);
    if (k == 0) {
      rq.has_seq = 1;
      rq.seq = ccsim_session_seq(p.s) + 1;
      rq.body_case = CCSIM__REQUEST__BODY_STEP;
      rq.step = &st;
    } else if (k == 1) {
      rq.body_case = CCSIM__REQUEST__BODY_SET_STATE;
      rq.set_state = &set;
    } else {
      rq.body_case = CCSIM__REQUEST__BODY_CLOSE_SESSION;
      rq.close_session = &cl;
    }
    sent += test_send_request(sock, &rq, 10 + (uint64_t)k) == 0;
  }
  uint64_t order[3] = {0};
  int codes[3] = {-100, -100, -100};
  for (int k = 0; k < 3; k++) {
    Ccsim__Reply *r = test_recv_reply(sock);
    if (r) {
      order[k] = r->request_id;
      codes[k] = r->error ? (int)r->error->code : -100;
      ccsim__reply__free_unpacked(r, NULL);
    }
  }
  zmq_close(sock);
  zmq_ctx_term(zctx);
  uint64_t seqs[3] = {0};
  int closed[3] = {0}, n = 0;
  while (n < 3 && ccsim_watch_next(w, 2000, &m) == CCSIM_OK) {
    seqs[n] = m.seq;
    closed[n++] = m.closed;
  }
  ccsim_watch_destroy(&w);
  print_message("replies to %llu %llu %llu; stream seqs %llu %llu %llu (closed: %d %d %d)\n",
                (unsigned long long)order[0], (unsigned long long)order[1],
                (unsigned long long)order[2], (unsigned long long)seqs[0],
                (unsigned long long)seqs[1], (unsigned long long)seqs[2], closed[0], closed[1],
                closed[2]);
  assert_int_equal(sent, 3);
  for (int k = 0; k < 3; k++) {
    assert_int_equal(order[k], 10 + k);
    assert_int_equal(codes[k], CCSIM_OK);
  }
  assert_int_equal(n, 3);
  assert_true(seqs[0] < seqs[1] && seqs[1] < seqs[2]);
  assert_true(!closed[0] && !closed[1] && closed[2]);
  ccsim_session_release(&p.s);  // closed by the raw request
  ccsim_client_destroy(&p.c);
  ccsim_scene_destroy(&p.sc);
}

// A lockstep reply still held for the wall clock when the server stops goes out at the
// stop, early: the step ran (it used to be dropped, the client waiting out its timeout).
static void test_stop_sends_held_replies(void **state) {
  (void)state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  pthread_t th;
  srv *sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  char err[256];
  ccsim_scene *sc = balls(1);
  long_step ls = {.c = ccsim_client_connect(srv_endpoint(sv), 5000, 0, err, sizeof err)};
  assert_non_null(ls.c);
  ls.s = ccsim_session_create_paced(ls.c, sc, CCSIM_PACING_LOCKSTEP, 0);
  assert_non_null(ls.s);
  assert_int_equal(ccsim_session_step(ls.s, 1e-3, NULL, 0), CCSIM_OK);
  double t1 = ccsim_session_time(ls.s);
  pthread_t lt;
  assert_int_equal(pthread_create(&lt, NULL, long_lockstep_main, &ls), 0);
  sleep_s(0.2);  // the step has run; its reply waits for the wall clock
  double t0 = now_s();
  srv_stop(sv);
  pthread_join(th, NULL);
  pthread_join(lt, NULL);
  double took = now_s() - t0;
  print_message("held reply at the stop: %s after %.2f s\n", ccsim_status_name(ls.rc), took);
  assert_int_equal(ls.rc, CCSIM_OK);
  assert_double_near(ccsim_session_time(ls.s), t1 + 0.8, 1e-12);
  assert_true(took < 0.5);  // not held to its time, 0.6 s on
  ccsim_session_release(&ls.s);
  ccsim_client_destroy(&ls.c);
  srv_destroy(&sv);
  ccsim_scene_destroy(&sc);
}

// send [topic][bytes] from a raw publisher until the watch's subscription has reached it:
// the status of the first message the watch returns, its reason into why
static int publish_until_heard(void *pub, ccsim_watch *w, const void *bytes, size_t len,
                               char why[256]) {
  ccsim_stream_msg m;
  for (int k = 0; k < 500; k++) {
    zmq_send(pub, "s1", 2, ZMQ_SNDMORE);
    zmq_send(pub, bytes, len, 0);
    int st = ccsim_watch_next(w, 10, &m);
    if (st != CCSIM_ETIMEOUT) {
      snprintf(why, 256, "%s", ccsim_watch_errmsg(w));
      // one sent before the subscription settled may still be on its way: same bytes
      while (ccsim_watch_next(w, 100, &m) != CCSIM_ETIMEOUT) {
      }
      return st;
    }
  }
  return CCSIM_ETIMEOUT;
}

// A stream message the watch cannot use is refused with a reason (what it was not), and
// the watch goes on with the next good one.
static void test_watch_bad_messages(void **state) {
  (void)state;
  void *ctx = zmq_ctx_new(), *pub = zmq_socket(ctx, ZMQ_PUB);
  int linger = 0;
  zmq_setsockopt(pub, ZMQ_LINGER, &linger, sizeof linger);
  assert_int_equal(zmq_bind(pub, "tcp://127.0.0.1:*"), 0);
  char ep[256], err[256];
  size_t el = sizeof ep;
  zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, ep, &el);
  ccsim_watch *w = ccsim_watch_new(ep, "s1", NULL, err, sizeof err);
  assert_non_null(w);
  const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x22};
  char why[256];
  assert_int_equal(publish_until_heard(pub, w, junk, sizeof junk, why), CCSIM_EPROTO);
  assert_non_null(strstr(why, "not a ccsim.StreamState"));
  // a body state naming a body the message does not carry
  Ccsim__Vec3 p = CCSIM__VEC3__INIT, v = CCSIM__VEC3__INIT, om = CCSIM__VEC3__INIT;
  Ccsim__Quat q = CCSIM__QUAT__INIT;
  Ccsim__Pose pose = CCSIM__POSE__INIT;
  Ccsim__Twist tw = CCSIM__TWIST__INIT;
  p.has_z = 1, p.z = 2.5, q.has_w = 1, q.w = 1, v.has_x = 1, v.x = -0.5;
  pose.p = &p, pose.q = &q, tw.v = &v, tw.w = &om;
  Ccsim__BodyState b = CCSIM__BODY_STATE__INIT, *bp = &b;
  b.has_body = 1, b.body = 5, b.pose = &pose, b.twist = &tw;
  Ccsim__StreamState ss = CCSIM__STREAM_STATE__INIT;
  ss.session_id = "s1", ss.has_stream_seq = 1, ss.stream_seq = 7, ss.has_time = 1;
  ss.time = 0.25, ss.n_bodies = 1, ss.bodies = &bp;
  uint8_t buf[512];
  size_t n = ccsim__stream_state__pack(&ss, buf);
  zmq_send(pub, "s1", 2, ZMQ_SNDMORE);
  zmq_send(pub, buf, n, 0);
  ccsim_stream_msg m;
  assert_int_equal(ccsim_watch_next(w, 2000, &m), CCSIM_EPROTO);
  assert_non_null(strstr(ccsim_watch_errmsg(w), "out of range"));
  // a topic alone
  zmq_send(pub, "s1", 2, 0);
  assert_int_equal(ccsim_watch_next(w, 2000, &m), CCSIM_EPROTO);
  assert_non_null(strstr(ccsim_watch_errmsg(w), "one part"));
  // and a good one is read as sent
  b.body = 0;
  n = ccsim__stream_state__pack(&ss, buf);
  zmq_send(pub, "s1", 2, ZMQ_SNDMORE);
  zmq_send(pub, buf, n, 0);
  assert_int_equal(ccsim_watch_next(w, 2000, &m), CCSIM_OK);
  assert_string_equal(ccsim_watch_errmsg(w), "");
  assert_string_equal(m.session_id, "s1");
  assert_int_equal(m.seq, 7);
  assert_true(m.time == 0.25 && m.nbody == 1);
  assert_true(m.bodies[0].p[2] == 2.5 && m.bodies[0].q[0] == 1 && m.bodies[0].v[0] == -0.5);
  assert_int_equal(ccsim_watch_next(w, 50, &m), CCSIM_ETIMEOUT);
  ccsim_watch_destroy(&w);
  zmq_close(pub);
  zmq_ctx_term(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stream_sequence, setup, teardown),
      cmocka_unit_test(test_expired_close_numbered),
      cmocka_unit_test_setup_teardown(test_stream_contacts_when_asked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_only_when_watched, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_many_topics, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stalled_subscriber_loses_not_blocks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lockstep_pacing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lockstep_late_client, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_running, setup, teardown),
      cmocka_unit_test_setup_teardown(test_set_time_repairs_pacing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_running_skipped_ticks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_running_under_inputs, setup, teardown),
      cmocka_unit_test(test_free_running_beside_busy_pool),
      cmocka_unit_test(test_stop_sends_held_replies),
      cmocka_unit_test_setup_teardown(test_held_reply_is_not_idleness, setup, teardown),
      cmocka_unit_test_setup_teardown(test_held_reply_keeps_order, setup, teardown),
      cmocka_unit_test(test_watch_bad_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
