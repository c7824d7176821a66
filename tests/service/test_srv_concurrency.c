// ctest-label: e2e
// ctest-timeout: 120
// Sessions step in parallel: a long step of one session delays no other client (also when
// the thread holding the I/O duty runs it, believing it short: the watchdog); a paced
// session keeps stepping while the only other pool thread is in a long unpaced step; 16
// clients x 1000 steps on their own sessions and one controller with 8 observers on one
// session, every reply checked against free fall, no cross-talk.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccsim_client.h"
#include "ccsim_scene.h"
#include "srv.h"

#ifdef __SANITIZE_ADDRESS__
#define NSTEPS 400
#else
#define NSTEPS 1000
#endif
#define NCLIENTS 16
#define NOBSERVERS 8

typedef struct fixture {
  srv *s;
  pthread_t thread;
  char endpoint[256];
} fixture;

// a server on a free loopback port with a pool of `workers` (0: the default) whose idle
// threads spin spin_us before they sleep and whose I/O duty holder runs requests of
// sessions faster than inline_us itself, into *state
static int start(void **state, int workers, int spin_us, int inline_us) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = workers;
  cfg.spin_us = spin_us;
  cfg.inline_us = inline_us;
  f->s = test_server_start(&cfg, &f->thread);
  if (!f->s) {
    free(f);
    return -1;
  }
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  *state = f;
  return 0;
}

// the default pool
static int setup(void **state) {
  return start(state, 0, 0, 50);
}

// the smallest pool: srv_run's thread and one worker
static int setup_two_threads(void **state) {
  return start(state, 1, 0, 50);
}

// idle pool threads and the leader spin before they sleep: tasks are handed over to a
// thread that is still spinning (no futex wake-up), a path the default pool never takes
static int setup_spinning(void **state) {
  return start(state, 0, 200, 50);
}

// every request goes to another thread than the one that received it (the strict rule)
static int setup_no_inline(void **state) {
  return start(state, 0, 0, 0);
}

// the duty holder runs requests of sessions whose steps took < 2 ms itself (even under
// the sanitizers, the short steps below are that short); the watchdog looks after 8 ms
static int setup_inline_2ms(void **state) {
  return start(state, 0, 0, 2000);
}

static int teardown(void **state) {
  fixture *f = *state;
  test_server_stop(&f->s, f->thread);
  free(f);
  return 0;
}

// a ball at height z0 moving at vx0, free fall; tight tolerances so the analytic answer holds
static ccsim_scene *ball_scene(double z0, double vx0, double max_step) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"gravity\": [0, 0, -9.81], \"integrator\": {\"rtol\": 1e-9, \"atol\": 1e-12%s},"
           " \"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"inertia\": [0.1, 0.1, 0.1],"
           "   \"pose\": {\"p\": [0, 0, %.17g]}, \"velocity\": {\"v\": [%.17g, 0, 0]}}]}",
           max_step > 0 ? ", \"max_step\": 1e-6" : "", z0, vx0);
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "ball", NULL, err, sizeof err);
  if (!sc) {
    print_error("scene: %s\n", err);
  }
  return sc;
}

// |state - free fall from (0, 0, z0) with vx0| within tol; returns 0 when it matches
static int off_free_fall(const ccsim_body_state *b, double t, double z0, double vx0, double tol) {
  double e = 0;
  e = fmax(e, fabs(b->p[0] - vx0 * t));
  e = fmax(e, fabs(b->p[1]));
  e = fmax(e, fabs(b->p[2] - (z0 - 0.5 * 9.81 * t * t)));
  e = fmax(e, fabs(b->v[0] - vx0));
  e = fmax(e, fabs(b->v[2] + 9.81 * t));
  return !(e <= tol);
}

// ---- a slow session delays nobody else ------------------------------------------------

typedef struct slow_arg {
  const char *endpoint;
  int warm;  // short steps before the long one: the session looks fast to the server
  int status;
  _Atomic double t_start, t_end;  // polled by the main thread while this one runs
} slow_arg;

static void *slow_client(void *p) {
  slow_arg *a = p;
  char err[256];
  ccsim_scene *sc = ball_scene(10, 0, 1e-6);
  ccsim_client *c = ccsim_client_new(a->endpoint, err, sizeof err);
  ccsim_session *s = c && sc ? ccsim_session_create(c, sc) : NULL;
  a->status = -100;
  for (int k = 0; k < 10 * a->warm && s; k++) {
    a->status = ccsim_session_step(s, 1e-6, NULL, 0);  // one internal step each
  }
  if (s) {
    a->t_start = now_s();
    // 0.5 s of simulated time at an internal step of at most 1 us: a long computation
    a->status = ccsim_session_step_n(s, 0.025, 20, NULL, 0, NULL, NULL);
    a->t_end = now_s();
    ccsim_session_close(&s);
  }
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  return NULL;
}

// Start n slow clients on their own threads; return once every one is inside its long step
// and 20 ms more have passed, so the steps are under way.
static void start_slow(slow_arg *a, pthread_t *th, int n) {
  for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, slow_client, &a[i]);
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    while (a[i].t_start == 0 && now_s() - t0 < 10) sleep_s(1e-3);
    assert_true(a[i].t_start > 0);
  }
  sleep_s(0.02);
}

// Another client gets its session's state and steps it 20 times while the n slow clients
// in a are in their long steps: every request finishes while those run, each well within a
// quarter of the slow step. what names the situation in the printed figures.
static void serve_beside_slow(fixture *f, slow_arg *a, int n, const char *what) {
  char err[256];
  ccsim_scene *sc = ball_scene(5, 1, 0);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  pthread_t th[4];
  assert_true(n <= 4);
  start_slow(a, th, n);
  double worst = 0;
  int done_before = 0;
  for (int k = 0; k < 20; k++) {
    double t = now_s();
    assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    worst = fmax(worst, now_s() - t);
    int running = 1;
    for (int i = 0; i < n; i++) running &= a[i].t_end == 0;
    done_before += running;  // every slow step was still running
  }
  double slow = 1e9;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(a[i].status, CCSIM_OK);
    slow = fmin(slow, a[i].t_end - a[i].t_start);
  }
  print_message("%s: slow step %.3f s; other client's get_state + step: worst %.2f ms\n", what,
                slow, 1e3 * worst);
  // the slow step really was slow, and every other request finished while it ran
  assert_true(slow > 0.2);
  assert_int_equal(done_before, 20);
  assert_true(worst < slow / 4);
  assert_double_near(ccsim_session_time(s), 0.02, 1e-12);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

static void test_slow_session_delays_nobody(void **state) {
  slow_arg a[2] = {{.endpoint = ((fixture *)*state)->endpoint},
                   {.endpoint = ((fixture *)*state)->endpoint}};
  serve_beside_slow(*state, a, 2, "two sessions in long steps at once");
}

// A session whose steps were fast has its next request run by the thread holding the I/O
// duty itself; when that request is a long step, the step's own watch passes the duty on
// (within a right-hand side of the watch, long before the pacer's tenfold one would) and
// the other client is served throughout.
static void test_fast_session_turning_slow(void **state) {
  fixture *f = *state;
  uint64_t inline0, passes0, self0, inline1, passes1, self1;
  srv_inline_stats(f->s, &inline0, &passes0, &self0);
  slow_arg a = {.endpoint = f->endpoint, .warm = 1};
  serve_beside_slow(f, &a, 1, "a long step after short ones");
  srv_inline_stats(f->s, &inline1, &passes1, &self1);
  print_message(
      "requests run by the duty holder %llu, duty passed on %llu times (%llu by the "
      "step's own watch)\n",
      (unsigned long long)(inline1 - inline0), (unsigned long long)(passes1 - passes0),
      (unsigned long long)(self1 - self0));
  // the fast steps were run by the duty holder, so was the long one, and its watch had
  // to pass the duty on for the other client to be served meanwhile
  assert_true(inline1 - inline0 >= 9);
  assert_true(self1 - self0 >= 1);
  assert_true(passes1 - passes0 >= self1 - self0);
}

// ---- a paced session does not wait behind an unpaced one -----------------------------

static void test_paced_not_behind_slow_session(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = ball_scene(5, 1, 0);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  ccsim_session *s = ccsim_session_create_paced(c, sc, CCSIM_PACING_LOCKSTEP, 0);
  assert_non_null(s);
  // one of the two pool threads goes into a long step; the other holds the I/O duty
  slow_arg a = {.endpoint = f->endpoint};
  pthread_t th;
  start_slow(&a, &th, 1);
  double t1 = now_s();
  int done_before = 0;
  for (int k = 0; k < 20; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    done_before += a.t_end == 0;
  }
  double paced_wall = now_s() - t1;
  pthread_join(th, NULL);
  assert_int_equal(a.status, CCSIM_OK);
  double slow = a.t_end - a.t_start;
  print_message("slow step %.3f s; 20 paced steps of 1 ms took %.1f ms beside it\n", slow,
                1e3 * paced_wall);
  // the paced steps ran while the slow one did, not after it
  assert_true(slow > 0.2);
  assert_int_equal(done_before, 20);
  assert_true(paced_wall < slow / 4);
  assert_double_near(ccsim_session_time(s), 0.02, 1e-12);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// ---- 16 clients, each on its own session ----------------------------------------------

typedef struct client_arg {
  const char *endpoint;
  int index;
  int failures;        // replies that did not match this client's own trajectory
  int status;
  char session_id[64];
} client_arg;

static void *own_session_client(void *p) {
  client_arg *a = p;
  char err[256];
  double z0 = 100 + a->index, vx0 = 0.5 * a->index;
  ccsim_scene *sc = ball_scene(z0, vx0, 0);
  ccsim_client *c = ccsim_client_new(a->endpoint, err, sizeof err);
  ccsim_session *s = c && sc ? ccsim_session_create(c, sc) : NULL;
  a->status = s ? CCSIM_OK : -100;
  if (s) {
    snprintf(a->session_id, sizeof a->session_id, "%s", ccsim_session_id(s));
    double t = 0;
    for (int k = 0; k < NSTEPS && a->status == CCSIM_OK; k++) {
      a->status = ccsim_session_step(s, 1e-3, NULL, 0);
      t += 1e-3;
      if (ccsim_session_time(s) != t ||
          off_free_fall(&ccsim_session_bodies(s)[0], t, z0, vx0, 1e-6)) {
        a->failures++;
      }
    }
    if (ccsim_session_close(&s) != CCSIM_OK) {
      a->status = -101;
    }
  }
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  return NULL;
}

static void test_sixteen_clients(void **state) {
  fixture *f = *state;
  client_arg a[NCLIENTS];
  pthread_t th[NCLIENTS];
  double t0 = now_s();
  for (int i = 0; i < NCLIENTS; i++) {
    a[i] = (client_arg){.endpoint = f->endpoint, .index = i};
    pthread_create(&th[i], NULL, own_session_client, &a[i]);
  }
  for (int i = 0; i < NCLIENTS; i++) {
    pthread_join(th[i], NULL);
  }
  double wall = now_s() - t0;
  print_message("%d clients x %d steps in %.2f s (%.0f steps/s)\n", NCLIENTS, NSTEPS, wall,
                NCLIENTS * NSTEPS / wall);
  for (int i = 0; i < NCLIENTS; i++) {
    assert_int_equal(a[i].status, CCSIM_OK);
    assert_int_equal(a[i].failures, 0);
    for (int k = 0; k < i; k++) {
      assert_string_not_equal(a[i].session_id, a[k].session_id);
    }
  }
  assert_int_equal(srv_session_count(f->s), 0);
}

// ---- one controller, eight observers ---------------------------------------------------

typedef struct observer_arg {
  const char *endpoint;
  const char *session_id;
  double z0, vx0;
  double t_end;        // stop once this time is seen
  int reads, failures, status;
  int eperm_step, eperm_checkpoint;
} observer_arg;

static void *observer(void *p) {
  observer_arg *a = p;
  char err[256];
  ccsim_client *c = ccsim_client_new(a->endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_attach(c, a->session_id) : NULL;
  a->status = s ? CCSIM_OK : -100;
  if (!s) {
    ccsim_client_destroy(&c);
    return NULL;
  }
  // an observer may not step, take checkpoints or close
  a->eperm_step = ccsim_session_step(s, 1e-3, NULL, 0) == CCSIM_EPERM;
  uint8_t *blob = NULL;
  size_t len = 0;
  a->eperm_checkpoint = ccsim_session_checkpoint(s, &blob, &len) == CCSIM_EPERM;
  free(blob);
  double last = -1, t0 = now_s();
  while (a->status == CCSIM_OK && now_s() - t0 < 60) {
    a->status = ccsim_session_get_state(s);
    double t = ccsim_session_time(s);
    a->reads++;
    if (t < last || off_free_fall(&ccsim_session_bodies(s)[0], t, a->z0, a->vx0, 1e-6)) {
      a->failures++;
    }
    last = t;
    if (t >= a->t_end - 1e-9) {
      break;
    }
  }
  // the handle is not the controller's: closing it only frees it locally
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  return NULL;
}

static void test_controller_and_observers(void **state) {
  fixture *f = *state;
  char err[256];
  const double z0 = 50, vx0 = 2;
  ccsim_scene *sc = ball_scene(z0, vx0, 0);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  assert_true(strlen(ccsim_session_token(s)) > 0);
  observer_arg o[NOBSERVERS];
  pthread_t th[NOBSERVERS];
  for (int i = 0; i < NOBSERVERS; i++) {
    o[i] = (observer_arg){.endpoint = f->endpoint, .session_id = ccsim_session_id(s), .z0 = z0,
                          .vx0 = vx0, .t_end = NSTEPS * 1e-3};
    pthread_create(&th[i], NULL, observer, &o[i]);
  }
  double t = 0;
  for (int k = 0; k < NSTEPS; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    t += 1e-3;
    assert_true(ccsim_session_time(s) == t);
    assert_int_equal(off_free_fall(&ccsim_session_bodies(s)[0], t, z0, vx0, 1e-6), 0);
  }
  for (int i = 0; i < NOBSERVERS; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(o[i].status, CCSIM_OK);
    assert_int_equal(o[i].failures, 0);
    assert_true(o[i].reads > 0);
    assert_true(o[i].eperm_step);
    assert_true(o[i].eperm_checkpoint);
  }
  // the observers' attempts changed nothing: the controller's seq and time are intact
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  assert_true(ccsim_session_time(s) == t);
  assert_int_equal(ccsim_session_seq(s), NSTEPS);
  // after the controller closes, an observer coming back learns why
  ccsim_client *oc = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *obs = ccsim_session_attach(oc, ccsim_session_id(s));
  assert_non_null(obs);
  assert_int_equal(ccsim_session_close(&s), CCSIM_OK);
  assert_int_equal(ccsim_session_get_state(obs), CCSIM_EEXPIRED);
  assert_non_null(strstr(ccsim_client_errmsg(oc), "closed by its controller"));
  ccsim_session_release(&obs);
  ccsim_client_destroy(&oc);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  assert_int_equal(srv_session_count(f->s), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_slow_session_delays_nobody, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slow_session_delays_nobody, setup_no_inline, teardown),
      cmocka_unit_test_setup_teardown(test_fast_session_turning_slow, setup_inline_2ms, teardown),
      cmocka_unit_test_setup_teardown(test_paced_not_behind_slow_session, setup_two_threads,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_sixteen_clients, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sixteen_clients, setup_spinning, teardown),
      cmocka_unit_test_setup_teardown(test_controller_and_observers, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
