// ctest-label: unit
// ctest-timeout: 60
// The pacer's rule for free-running ticks (srv_pool.c), on a server without threads and a
// clock the test sets: a tick due while its session sets inputs (a Step queued or running)
// waits behind that Step, neither skipped nor counted as a miss; a tick due while the tick
// before is still queued or running is skipped and counted (the server fell behind).
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <stdlib.h>
#include <string.h>

#include "ccsim.pb-c.h"
#include "srv.h"
#include "srv_dispatch.h"
#include "srv_job.h"
#include "srv_pool.h"
#include "srv_store.h"

#define PERIOD 0x1p-10  // [s] a power of two: the test's times add up exactly

typedef struct fixture {
  srv *s;
  srv_session *ss;  // the free-running session
  char id[64], token[64];
  uint64_t rid;
} fixture;

// rq packed as request id ++rid
static uint8_t *pack(fixture *f, Ccsim__Request *rq, size_t *n) {
  rq->has_request_id = 1;
  rq->request_id = ++f->rid;
  *n = ccsim__request__get_packed_size(rq);
  uint8_t *buf = malloc(*n + 1);
  if (buf) ccsim__request__pack(rq, buf);
  return buf;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = NULL;
  cfg.max_sessions = 2;
  cfg.deterministic_ids = 1;
  char err[256];
  f->s = srv_new(&cfg, err, sizeof err);
  if (!f->s) {
    print_error("%s\n", err);
    free(f);
    return -1;
  }
  *state = f;
  // a free ball, free-running at PERIOD (created the way srv_handle's callers do)
  Ccsim__Scene sc;
  Ccsim__Body b, *bp = &b;
  Ccsim__Pose pose;
  Ccsim__Vec3 p;
  static double inertia[3] = {0.1, 0.1, 0.1};
  ccsim__scene__init(&sc);
  ccsim__body__init(&b);
  ccsim__pose__init(&pose);
  ccsim__vec3__init(&p);
  p.has_z = 1;
  p.z = 10;
  pose.p = &p;
  b.pose = &pose;
  b.has_mass = 1;
  b.mass = 1;
  b.n_inertia = 3;
  b.inertia = inertia;
  b.name = "ball";
  sc.n_bodies = 1;
  sc.bodies = &bp;
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  Ccsim__Pacing pc;
  test_create_request(&rq, &cs, &pc, &sc, NULL, 0, 0);
  pc.has_mode = pc.has_period = 1;
  pc.mode = CCSIM__PACING_MODE__PACING_FREE_RUNNING;
  pc.period = PERIOD;
  cs.pacing = &pc;
  size_t n, rlen = 0;
  uint8_t *buf = pack(f, &rq, &n);
  uint8_t *rep = buf ? srv_handle(f->s, buf, n, &rlen) : NULL;
  free(buf);
  Ccsim__Reply *r = rep ? ccsim__reply__unpack(NULL, rlen, rep) : NULL;
  free(rep);
  if (!r || !r->error || r->error->code != CCSIM__CODE__OK) {
    print_error("CreateSession failed: %s\n", r && r->error ? r->error->message : "no reply");
    ccsim__reply__free_unpacked(r, NULL);
    return -1;
  }
  snprintf(f->id, sizeof f->id, "%s", r->create_session->session_id);
  snprintf(f->token, sizeof f->token, "%s", r->create_session->controller_token);
  ccsim__reply__free_unpacked(r, NULL);
  f->ss = srv_find(f->s, f->id);
  // from here on srv_accept queues jobs as the pool's leader would, and the test runs
  // them as a pool thread would, one step at a time
  f->s->threaded = 1;
  return f->ss ? 0 : -1;
}

static int teardown(void **state) {
  fixture *f = *state;
  f->s->threaded = 0;
  srv_destroy(&f->s);  // frees the jobs still queued
  free(f);
  return 0;
}

// a Step of the controller setting the ball's force: queued by srv_accept (returns it, not
// run yet)
static srv_job *accept_step(fixture *f) {
  Ccsim__Request rq;
  Ccsim__Step st;
  Ccsim__BodyInput in, *inp = &in;
  Ccsim__Vec3 force;
  ccsim__request__init(&rq);
  ccsim__step__init(&st);
  ccsim__body_input__init(&in);
  ccsim__vec3__init(&force);
  force.has_z = 1;
  force.z = 9.81;
  in.has_body = 1;
  in.body = 0;
  in.force = &force;
  st.has_dt = 1;
  st.dt = PERIOD;
  st.n_inputs = 1;
  st.inputs = &inp;
  rq.session_id = f->id;
  rq.token = f->token;
  rq.body_case = CCSIM__REQUEST__BODY_STEP;
  rq.step = &st;
  size_t n;
  uint8_t *buf = pack(f, &rq, &n);
  assert_non_null(buf);
  srv_job *j = calloc(1, sizeof *j);
  assert_non_null(j);
  int answered = srv_accept(f->s, j, buf, n);
  free(buf);
  assert_int_equal(answered, 0);  // queued for the pool
  return j;
}

// run j as a pool thread does (its reply is not sent: there is no socket) and let its
// session go on; a Step's reply must be OK
static void run(fixture *f, srv_job *j) {
  ccsim_arena_reset(&f->s->io.arena);
  j->run(f->s, j, &f->s->io.arena);
  if (j->kind == SRV_JOB_REQUEST) {
    Ccsim__Reply *r = ccsim__reply__unpack(NULL, j->reply_len, j->reply);
    assert_non_null(r);
    assert_int_equal(r->error->code, CCSIM__CODE__OK);
    ccsim__reply__free_unpacked(r, NULL);
  }
  srv_session *ss = j->ss;
  srv_job_free(j);
  srv_session_done(f->s, ss, -1, 0);
}

// the session's and the server's paced steps and misses: a tick that runs counts itself
// (late or not by the real clock), a skipped one is counted by srv_pool_fire_ticks, so
// the deltas around that call count exactly the ticks it skipped
typedef struct counts {
  uint64_t paced, misses, all_paced, all_misses;
} counts;

static counts counts_of(const fixture *f) {
  counts c = {f->ss->view.dl.paced, f->ss->view.dl.misses, f->s->store.dl.paced,
              f->s->store.dl.misses};
  return c;
}

static void assert_skipped(const fixture *f, counts before, uint64_t n) {
  counts c = counts_of(f);
  assert_int_equal(c.paced - before.paced, n);
  assert_int_equal(c.misses - before.misses, n);
  assert_int_equal(c.all_paced - before.all_paced, n);
  assert_int_equal(c.all_misses - before.all_misses, n);
}

// A tick due while the session's Step is queued, then while it runs, waits behind it
// (the server skipped such ticks: 16 a second under a controller's stream of inputs)
static void test_tick_waits_behind_step(void **state) {
  fixture *f = *state;
  const double t0 = 1000.0;  // the test's clock [s]
  // the first round starts the session's clock and queues its first tick; it runs
  counts c = counts_of(f);
  assert_true(srv_pool_fire_ticks(f->s, t0) == t0 + PERIOD);
  srv_job *j = srv_pool_take_ready(f->s);
  assert_non_null(j);
  assert_int_equal(j->kind, SRV_JOB_TICK);
  assert_null(srv_pool_take_ready(f->s));
  assert_skipped(f, c, 0);
  run(f, j);

  // a Step queued (in the ready queue, not yet taken): the tick due goes behind it
  srv_job *step = accept_step(f);
  c = counts_of(f);
  assert_true(srv_pool_fire_ticks(f->s, t0 + PERIOD) == t0 + 2 * PERIOD);
  assert_skipped(f, c, 0);
  j = srv_pool_take_ready(f->s);
  assert_ptr_equal(j, step);  // the Step first, the tick not beside it
  assert_null(srv_pool_take_ready(f->s));
  run(f, j);
  j = srv_pool_take_ready(f->s);  // the Step done, its tick is ready
  assert_non_null(j);
  assert_int_equal(j->kind, SRV_JOB_TICK);
  assert_true(j->arrived == t0 + PERIOD);  // due then
  run(f, j);

  // a Step running (taken by a pool thread): the same
  step = accept_step(f);
  assert_ptr_equal(srv_pool_take_ready(f->s), step);
  c = counts_of(f);
  srv_pool_fire_ticks(f->s, t0 + 2 * PERIOD);
  assert_skipped(f, c, 0);
  assert_null(srv_pool_take_ready(f->s));  // waiting behind the Step
  run(f, step);
  j = srv_pool_take_ready(f->s);
  assert_non_null(j);
  assert_int_equal(j->kind, SRV_JOB_TICK);
  assert_true(j->arrived == t0 + 2 * PERIOD);
  run(f, j);
}

// A tick due while the tick before is still queued (behind a Step that runs long) or
// running is skipped and counted as a miss: the next one covers its time
static void test_tick_skipped_behind_tick(void **state) {
  fixture *f = *state;
  const double t0 = 1000.0;
  srv_pool_fire_ticks(f->s, t0);
  run(f, srv_pool_take_ready(f->s));

  // the tick before queued behind a running Step: two periods pass, two ticks skipped
  srv_job *step = accept_step(f);
  assert_ptr_equal(srv_pool_take_ready(f->s), step);
  counts c = counts_of(f);
  srv_pool_fire_ticks(f->s, t0 + PERIOD);  // queued behind the Step
  assert_skipped(f, c, 0);
  srv_pool_fire_ticks(f->s, t0 + 2 * PERIOD);
  assert_skipped(f, c, 1);
  srv_pool_fire_ticks(f->s, t0 + 3 * PERIOD);
  assert_skipped(f, c, 2);
  run(f, step);
  srv_job *tick = srv_pool_take_ready(f->s);
  assert_non_null(tick);
  assert_int_equal(tick->kind, SRV_JOB_TICK);
  assert_true(tick->arrived == t0 + PERIOD);  // the one queued, not a burst
  assert_null(srv_pool_take_ready(f->s));

  // the tick before running: the one due meanwhile is skipped
  c = counts_of(f);
  srv_pool_fire_ticks(f->s, t0 + 4 * PERIOD);
  assert_skipped(f, c, 1);
  run(f, tick);
  c = counts_of(f);
  srv_pool_fire_ticks(f->s, t0 + 5 * PERIOD);  // and the next one is queued again
  assert_skipped(f, c, 0);
  tick = srv_pool_take_ready(f->s);
  assert_non_null(tick);
  assert_true(tick->arrived == t0 + 5 * PERIOD);
  run(f, tick);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_tick_waits_behind_step, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tick_skipped_behind_tick, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
