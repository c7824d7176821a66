// ctest-label: e2e
// ctest-timeout: 90
// Batching and save/restore, to the last bit: N sub-steps in one request equal N single
// steps; a session resumed from a checkpoint and the session it came from (restarted at
// the checkpoint) step alike; ccsimd --state-dir gets SIGTERM, starts again, and the
// client continues on a trajectory equal to an uninterrupted run with the same checkpoint.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_scene.h"
#include "srv.h"

typedef struct fixture {
  srv *s;
  pthread_t thread;
  char endpoint[256];
  pid_t child;    // a ccsimd started by the test (0: none)
  char dir[64];   // its temporary directory ("" : none)
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 2;
  cfg.max_substeps = 1000;
  f->s = test_server_start(&cfg, &f->thread);
  if (!f->s) {
    free(f);
    return -1;
  }
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  *state = f;
  return 0;
}

// remove the test's directory: the socket, saved sessions and the directories
static void remove_dir(const char *dir) {
  char path[512];
  const char *sub[] = {"state", ""};
  for (int k = 0; k < 2; k++) {
    snprintf(path, sizeof path, "%s/%s", dir, sub[k]);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] != '.') {
        char p2[800];
        snprintf(p2, sizeof p2, "%s/%s", path, e->d_name);
        unlink(p2);
      }
    }
    if (d) closedir(d);
    rmdir(path);
  }
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f->child > 0) {
    kill(f->child, SIGKILL);  // a failed test must not leave a daemon behind
    waitpid(f->child, NULL, 0);
  }
  if (f->dir[0]) {
    remove_dir(f->dir);
  }
  test_server_stop(&f->s, f->thread);
  free(f);
  return 0;
}

// two tumbling bodies (intermediate-axis spin): the state is sensitive to every bit
static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81], \"integrator\": {\"rtol\": 1e-8, \"atol\": 1e-10},"
    " \"bodies\": [{\"name\": \"a\", \"mass\": 1, \"inertia\": [1, 2, 3],"
    "   \"pose\": {\"p\": [0, 0, 10]}, \"velocity\": {\"v\": [1, 0, 2], \"w\": [0.01, 3, 0.02]}},"
    "  {\"name\": \"b\", \"mass\": 2, \"inertia\": [0.5, 0.7, 0.2],"
    "   \"pose\": {\"p\": [1, 0, 0]}, \"velocity\": {\"w\": [1, -2, 0.5]}}]}";

static ccsim_scene *scene(void) {
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "tumble", NULL, err, sizeof err);
  assert_non_null(sc);
  return sc;
}

static void same_bits(const ccsim_session *a, const ccsim_session *b) {
  assert_true(ccsim_session_time(a) == ccsim_session_time(b));
  assert_states_equal(ccsim_session_bodies(a), ccsim_session_bodies(b), 2);
}

// Two sessions of scene sc on one client of f's server, to be stepped alike and compared
// (twins_close frees all, the scene included)
typedef struct twins {
  ccsim_scene *sc;
  ccsim_client *c;
  ccsim_session *a, *b;
} twins;

static twins twins_open(const fixture *f, ccsim_scene *sc) {
  char err[256];
  twins t = {.sc = sc, .c = ccsim_client_new(f->endpoint, err, sizeof err)};
  assert_non_null(t.c);
  t.a = ccsim_session_create(t.c, sc);
  t.b = ccsim_session_create(t.c, sc);
  assert_non_null(t.a);
  assert_non_null(t.b);
  return t;
}

static void twins_close(twins *t) {
  ccsim_session_close(&t->a);
  ccsim_session_close(&t->b);
  ccsim_client_destroy(&t->c);
  ccsim_scene_destroy(&t->sc);
}

static void test_batching_equals_single_steps(void **state) {
  twins tw = twins_open(*state, scene());
  ccsim_client *c = tw.c;
  ccsim_session *one = tw.a, *batch = tw.b;
  enum { N = 50 };
  ccsim_input in = {.body = 1, .force = {0.5, 0, 3}, .torque = {0, 0.1, 0}};
  ccsim_body_state sub[N * 2];
  double sub_t[N];
  assert_int_equal(ccsim_session_step_n(batch, 2e-3, N, &in, 1, sub, sub_t), CCSIM_OK);
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(one, 2e-3, &in, 1), CCSIM_OK);
    assert_true(sub_t[k] == ccsim_session_time(one));
    assert_states_equal(&sub[2 * k], ccsim_session_bodies(one), 2);
  }
  same_bits(one, batch);
  assert_int_equal(ccsim_session_seq(batch), 1);
  // without sub-states only the end state comes back; same bits again
  assert_int_equal(ccsim_session_step_n(batch, 2e-3, N, NULL, 0, NULL, NULL), CCSIM_OK);
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(one, 2e-3, NULL, 0), CCSIM_OK);
  }
  same_bits(one, batch);
  // over the limit: refused, nothing changed
  double t = ccsim_session_time(batch);
  assert_int_equal(ccsim_session_step_n(batch, 1e-3, 1001, NULL, 0, NULL, NULL), CCSIM_ELIMIT);
  assert_non_null(strstr(ccsim_client_errmsg(c), "substeps"));
  assert_int_equal(ccsim_session_get_state(batch), CCSIM_OK);
  assert_true(ccsim_session_time(batch) == t);
  twins_close(&tw);
}

// examples/box_rest.json with friction: a 1 kg box on a floor, mu = 0.5 (mu m g = 4.9 N)
static const char *k_box_mu =
    "{\"gravity\": [0, 0, -9.81], \"integrator\": {\"rtol\": 1e-6, \"atol\": 1e-9},"
    " \"contact\": {\"k\": 1e5, \"alpha\": 0.5, \"n\": 1, \"standoff\": 0.001, \"mu\": 0.5},"
    " \"bodies\": [{\"name\": \"floor\", \"fixed\": true, \"shape\": {\"box\": {\"size\": [1, 1, "
    "0.1]}},"
    "   \"pose\": {\"p\": [0, 0, -0.05]}},"
    "  {\"name\": \"box\", \"mass\": 1, \"shape\": {\"box\": {\"size\": [0.1, 0.1, 0.05]}},"
    "   \"pose\": {\"p\": [0.1, 0.3, 0.026]}}]}";

// With friction a held load that jumps restarts the integrator. A batch and single Steps
// must restart at the same jumps and nowhere else: the same push held again keeps the
// history, a push dropped from the request is a jump to zero.
static void test_batching_equals_single_steps_friction(void **state) {
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_box_mu, strlen(k_box_mu), "box_mu", NULL, err, sizeof err);
  assert_non_null(sc);
  twins tw = twins_open(*state, sc);
  ccsim_session *one = tw.a, *batch = tw.b;
  enum { N = 20 };
  const double push[] = {3, 3, 6, 6, 0};  // [N] along x: stuck, held, sliding, held, none
  ccsim_body_state sub[N * 2];
  for (size_t phase = 0; phase < sizeof push / sizeof push[0]; phase++) {
    ccsim_input in = {.body = 1, .force = {push[phase], 0, 0}};
    size_t nin = push[phase] != 0 ? 1 : 0;
    assert_int_equal(ccsim_session_step_n(batch, 1e-3, N, &in, nin, sub, NULL), CCSIM_OK);
    for (int k = 0; k < N; k++) {
      assert_int_equal(ccsim_session_step(one, 1e-3, &in, nin), CCSIM_OK);
      assert_states_equal(&sub[2 * k], ccsim_session_bodies(one), 2);
    }
    same_bits(one, batch);
  }
  // the push moved the box, and friction held it back: both happened
  double x = ccsim_session_bodies(one)[1].p[0];
  assert_true(x > 0.1 + 1e-4);
  assert_true(ccsim_session_bodies(one)[1].contact_count > 0);
  twins_close(&tw);
}

// A refused request changes nothing, not even the integrator's history: a session that
// was refused SetStates (a bad body after a good one, a body given twice, a bad time) and
// Steps steps on to the same bits as one that never was.
static void test_refused_requests_keep_trajectory(void **state) {
  twins tw = twins_open(*state, scene());
  ccsim_client *c = tw.c;
  ccsim_session *plain = tw.a, *refused = tw.b;
  for (int k = 0; k < 20; k++) {
    assert_int_equal(ccsim_session_step(plain, 1e-2, NULL, 0), CCSIM_OK);
    assert_int_equal(ccsim_session_step(refused, 1e-2, NULL, 0), CCSIM_OK);
  }
  ccsim_body_set set[2] = {{.body = 1, .has_pose = 1, .p = {0, 0, 1}, .q = {1, 0, 0, 0}},
                           {.body = 0, .has_pose = 1, .p = {NAN, 0, 0}, .q = {1, 0, 0, 0}}};
  assert_int_equal(ccsim_session_set_state(refused, NULL, set, 2), CCSIM_EINVAL);
  assert_non_null(strstr(ccsim_client_errmsg(c), "bodies[1]"));
  set[1].p[0] = 2e6;  // out of range
  assert_int_equal(ccsim_session_set_state(refused, NULL, set, 2), CCSIM_EINVAL);
  assert_non_null(strstr(ccsim_client_errmsg(c), "1e6 m"));
  set[1].body = 1;
  set[1].p[0] = 0.5;
  assert_int_equal(ccsim_session_set_state(refused, NULL, set, 2), CCSIM_EINVAL);
  assert_non_null(strstr(ccsim_client_errmsg(c), "given twice"));
  double t = -1;
  assert_int_equal(ccsim_session_set_state(refused, &t, set, 1), CCSIM_EINVAL);
  ccsim_input nan_push = {.body = 0, .force = {NAN, 0, 0}};
  assert_int_equal(ccsim_session_step(refused, 1e-2, &nan_push, 1), CCSIM_EINVAL);
  for (int k = 0; k < 200; k++) {
    assert_int_equal(ccsim_session_step(plain, 1e-2, NULL, 0), CCSIM_OK);
    assert_int_equal(ccsim_session_step(refused, 1e-2, NULL, 0), CCSIM_OK);
  }
  same_bits(plain, refused);
  twins_close(&tw);
}

static void test_checkpoint_resume_bit_exact(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = scene();
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *orig = ccsim_session_create(c, sc);
  assert_non_null(orig);
  for (int k = 0; k < 100; k++) {
    assert_int_equal(ccsim_session_step(orig, 1e-2, NULL, 0), CCSIM_OK);
  }
  uint8_t *blob = NULL;
  size_t len = 0;
  assert_int_equal(ccsim_session_checkpoint(orig, &blob, &len), CCSIM_OK);
  assert_true(len > 100);
  ccsim_session *copy = ccsim_session_resume(c, blob, len);
  assert_non_null(copy);
  assert_string_not_equal(ccsim_session_id(copy), ccsim_session_id(orig));
  same_bits(orig, copy);
  assert_int_equal(ccsim_session_seq(copy), 100);  // the resumed session continues the count
  {
    // a retry of the last seq: its reply is not in the checkpoint, and the refusal says so
    // (and not that the server ran out of memory)
    void *zctx = zmq_ctx_new(), *sock = test_dealer(zctx, f->endpoint);
    double t;
    char msg[512];
    int code = test_raw_step(sock, copy, 100, 0, &t, msg, sizeof msg);
    zmq_close(sock);
    zmq_ctx_term(zctx);
    assert_int_equal(code, CCSIM__CODE__ESEQ);
    assert_non_null(strstr(msg, "not in the checkpoint this session was resumed from"));
  }
  for (int k = 0; k < 300; k++) {
    ccsim_input in = {.body = 0, .force = {0, 0, 9.81 * (k % 7 == 0)}, .torque = {0, 0, 0.1}};
    assert_int_equal(ccsim_session_step(orig, 1e-2, &in, 1), CCSIM_OK);
    assert_int_equal(ccsim_session_step(copy, 1e-2, &in, 1), CCSIM_OK);
    same_bits(orig, copy);
  }
  // a corrupt blob is refused with a reason
  blob[len / 2] ^= 0xff;
  blob[len / 3] ^= 0x5a;
  ccsim_session *bad = ccsim_session_resume(c, blob, len / 2);
  assert_null(bad);
  assert_non_null(strstr(ccsim_client_errmsg(c), "CCSIM_E"));
  free(blob);
  ccsim_session_close(&orig);
  ccsim_session_close(&copy);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  assert_int_equal(srv_session_count(f->s), 0);
}

// ---- ccsimd --state-dir across SIGTERM ---------------------------------------------------

// a fresh directory for the test in the working directory (the build tree, short enough
// for an ipc:// path): f->dir, removed by teardown; its state dir's path in state_dir
static void make_test_dir(fixture *f, char state_dir[128]) {
  snprintf(f->dir, sizeof f->dir, "ccsim-state-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  snprintf(state_dir, 128, "%s/state", f->dir);
}

// a loopback server of two workers saving into state_dir
static void state_dir_config(srv_config *cfg, const char *state_dir) {
  srv_config_defaults(cfg);
  cfg->bind = "tcp://127.0.0.1:*";
  cfg->workers = 2;
  cfg->state_dir = state_dir;
}

static pid_t start_ccsimd(const char *bin, const char *endpoint, const char *state_dir) {
  pid_t pid = fork();
  if (pid == 0) {
    execl(bin, bin, "--bind", endpoint, "--state-dir", state_dir, "--stream", "none",
          "--workers", "2", (char *)NULL);
    _exit(127);
  }
  return pid;
}

static void test_state_dir_survives_sigterm(void **state) {
  fixture *f = *state;
  char bin[PATH_MAX + 32];
  if (test_ccsimd_path(bin, sizeof bin) != 0) {
    print_error("ccsimd not found next to the tests (%s)\n", bin);
    fail();
  }
  char endpoint[128], state_dir[128];
  make_test_dir(f, state_dir);
  const char *dir = f->dir;
  snprintf(endpoint, sizeof endpoint, "ipc://%s/sock", dir);
  pid_t pid = f->child = start_ccsimd(bin, endpoint, state_dir);
  assert_true(pid > 0);

  char err[512];
  ccsim_scene *sc = scene();
  ccsim_client *c = ccsim_client_connect(endpoint, 2000, 5, err, sizeof err);
  assert_non_null(c);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  // the reference: the in-process server, the same steps, a checkpoint at the same point
  ccsim_client *rc = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *ref = ccsim_session_create(rc, sc);
  assert_non_null(ref);
  enum { K = 120, N = 300 };
  for (int k = 0; k < K; k++) {
    ccsim_input in = {.body = 1, .force = {0, 1, 0}};
    assert_int_equal(ccsim_session_step(s, 1e-2, &in, 1), CCSIM_OK);
    assert_int_equal(ccsim_session_step(ref, 1e-2, &in, 1), CCSIM_OK);
  }
  same_bits(s, ref);
  uint8_t *blob = NULL;
  size_t len = 0;
  assert_int_equal(ccsim_session_checkpoint(ref, &blob, &len), CCSIM_OK);
  free(blob);

  // SIGTERM: ccsimd saves the session and exits cleanly
  kill(pid, SIGTERM);
  int wst = 0;
  waitpid(pid, &wst, 0);
  f->child = 0;
  assert_true(WIFEXITED(wst));
  assert_int_equal(WEXITSTATUS(wst), 0);
  char saved[256];
  snprintf(saved, sizeof saved, "%s/%s.session", state_dir, ccsim_session_id(s));
  struct stat st;
  assert_int_equal(stat(saved, &st), 0);

  // a new ccsimd restores it; the same client handle carries on with its seq
  pid = f->child = start_ccsimd(bin, endpoint, state_dir);
  assert_true(pid > 0);
  // and its step count: the stream's sequence goes on without a jump back to 1
  ccsim_session_info *list = NULL;
  size_t nlist = 0;
  assert_int_equal(ccsim_client_list_sessions(c, &list, &nlist), CCSIM_OK);
  assert_int_equal(nlist, 1);
  assert_int_equal(list[0].steps, K);
  free(list);
  for (int k = K; k < N; k++) {
    ccsim_input in = {.body = 1, .force = {0, 1, 0}};
    int rcode = ccsim_session_step(s, 1e-2, &in, 1);
    if (rcode != CCSIM_OK) {
      print_error("step %d after restart: %s\n", k, ccsim_client_errmsg(c));
    }
    assert_int_equal(rcode, CCSIM_OK);
    assert_int_equal(ccsim_session_step(ref, 1e-2, &in, 1), CCSIM_OK);
    same_bits(s, ref);
  }
  assert_int_equal(ccsim_session_seq(s), N);
  assert_int_equal(ccsim_session_close(&s), CCSIM_OK);
  // closing removed the file; a clean stop leaves nothing to restore
  assert_int_equal(stat(saved, &st), -1);
  kill(pid, SIGTERM);
  waitpid(pid, &wst, 0);
  f->child = 0;
  assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
  ccsim_session_close(&ref);
  ccsim_client_destroy(&c);
  ccsim_client_destroy(&rc);
  ccsim_scene_destroy(&sc);
}


// periodic saves: a session that stepped is saved every interval, an idle one is not
// rewritten; a new server on the same directory restores it
static void test_periodic_checkpoints(void **state) {
  fixture *f = *state;
  char state_dir[128];
  make_test_dir(f, state_dir);
  srv_config cfg;
  state_dir_config(&cfg, state_dir);
  cfg.checkpoint_interval = 0.1;
  char err[512];
  pthread_t th;
  srv *s2 = test_server_start(&cfg, &th);
  assert_non_null(s2);
  ccsim_scene *sc = scene();
  ccsim_client *c = ccsim_client_new(srv_endpoint(s2), err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  for (int k = 0; k < 50; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/%s.session", state_dir, ccsim_session_id(s));
  struct stat st, st2;
  int found = 0;
  for (int k = 0; k < 300 && !found; k++) {
    found = stat(path, &st) == 0;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  assert_true(found);
  // idle: not rewritten
  struct timespec wait = {0, 400000000};
  nanosleep(&wait, NULL);
  assert_int_equal(stat(path, &st2), 0);
  assert_true(st2.st_mtim.tv_sec == st.st_mtim.tv_sec && st2.st_mtim.tv_nsec == st.st_mtim.tv_nsec);
  // stepped again: rewritten
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
  int rewritten = 0;
  for (int k = 0; k < 300 && !rewritten; k++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    rewritten = stat(path, &st2) == 0 && (st2.st_mtim.tv_sec != st.st_mtim.tv_sec ||
                                          st2.st_mtim.tv_nsec != st.st_mtim.tv_nsec);
  }
  assert_true(rewritten);
  double t = ccsim_session_time(s);
  char id[64], token[64];
  snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  snprintf(token, sizeof token, "%s", ccsim_session_token(s));
  ccsim_session_release(&s);
  ccsim_client_destroy(&c);
  test_server_stop(&s2, th);
  // a new server restores it with its time, and it is still closable by its controller
  s2 = test_server_start(&cfg, &th);
  assert_non_null(s2);
  assert_int_equal(srv_session_count(s2), 1);
  c = ccsim_client_new(srv_endpoint(s2), err, sizeof err);
  ccsim_session *obs = ccsim_session_attach(c, id);
  assert_non_null(obs);
  assert_true(ccsim_session_time(obs) == t);
  ccsim_session_release(&obs);
  assert_int_equal(srv_session_count(s2), 1);
  test_server_stop(&s2, th);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  (void)token;
}

// A session whose stored Step reply (sub-states) is far larger than --max-msg-bytes is
// saved and restored with it, as is one saved under a larger limit than the restarted
// server's: restore used to refuse files over twice the limit, losing such sessions.
static void test_big_saved_session_restores(void **state) {
  fixture *f = *state;
  char state_dir[128];
  make_test_dir(f, state_dir);
  srv_config cfg;
  state_dir_config(&cfg, state_dir);
  cfg.max_substeps = 10000;
  cfg.max_msg_bytes = 64 * 1024;
  char err[512];
  pthread_t th;
  srv *s2 = test_server_start(&cfg, &th);
  assert_non_null(s2);
  ccsim_scene *sc = scene();
  ccsim_client *c = ccsim_client_new(srv_endpoint(s2), err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  enum { N = 3000 };
  int nb = ccsim_session_nbody(s);
  ccsim_body_state *sub = calloc((size_t)N * (size_t)nb, sizeof *sub);
  assert_int_equal(ccsim_session_step_n(s, 1e-3, N, NULL, 0, sub, NULL), CCSIM_OK);
  free(sub);
  double t = ccsim_session_time(s);
  char id[64];
  snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  ccsim_session_release(&s);
  ccsim_client_destroy(&c);
  test_server_stop(&s2, th);  // saves it
  char path[256];
  snprintf(path, sizeof path, "%s/%s.session", state_dir, id);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  print_message("saved session with its stored reply: %lld bytes (limit %zu)\n",
                (long long)st.st_size, cfg.max_msg_bytes);
  assert_true((size_t)st.st_size > 2 * cfg.max_msg_bytes);
  for (int k = 0; k < 2; k++) {
    cfg.max_msg_bytes = k == 0 ? 64 * 1024 : 1024;  // the same limit, then a smaller one
    s2 = test_server_start(&cfg, &th);
    assert_non_null(s2);
    assert_int_equal(srv_session_count(s2), 1);
    c = ccsim_client_new(srv_endpoint(s2), err, sizeof err);
    ccsim_session *obs = ccsim_session_attach(c, id);
    assert_non_null(obs);
    assert_true(ccsim_session_time(obs) == t);
    ccsim_session_release(&obs);
    ccsim_client_destroy(&c);
    test_server_stop(&s2, th);
  }
  ccsim_scene_destroy(&sc);
}

// the whole of file path into *len bytes (caller frees)
static uint8_t *slurp(const char *path, size_t *len) {
  FILE *in = fopen(path, "rb");
  assert_non_null(in);
  uint8_t *buf = malloc(1 << 20);
  assert_non_null(buf);
  *len = fread(buf, 1, 1 << 20, in);
  fclose(in);
  return buf;
}

// A server saving into a fresh state dir of f's, and a client of it holding one session of
// scene() (the caller stops and frees them, each test its own way)
typedef struct saving {
  char dir[128];
  srv_config cfg;  // points at dir
  pthread_t th;
  srv *srv;
  ccsim_scene *sc;
  ccsim_client *c;
  ccsim_session *s;
} saving;

static void saving_open(fixture *f, saving *v) {
  char err[512];
  make_test_dir(f, v->dir);
  state_dir_config(&v->cfg, v->dir);
  v->srv = test_server_start(&v->cfg, &v->th);
  assert_non_null(v->srv);
  v->sc = scene();
  v->c = ccsim_client_new(srv_endpoint(v->srv), err, sizeof err);
  assert_non_null(v->c);
  v->s = ccsim_session_create(v->c, v->sc);
  assert_non_null(v->s);
}

// A checkpoint of another format is refused, whether a client gives it or a state dir
// holds it; a saved one is left as it was (it was restored, and saved back as format 1)
static void test_checkpoint_of_another_format(void **state) {
  saving v;
  saving_open(*state, &v);
  assert_int_equal(ccsim_session_step(v.s, 1e-2, NULL, 0), CCSIM_OK);
  uint8_t *blob = NULL;
  size_t len = 0;
  assert_int_equal(ccsim_session_checkpoint(v.s, &blob, &len), CCSIM_OK);
  Ccsim__Checkpoint *cp = ccsim__checkpoint__unpack(NULL, len, blob);
  assert_non_null(cp);
  cp->format = 2;
  size_t n2 = ccsim__checkpoint__get_packed_size(cp);
  uint8_t *blob2 = malloc(n2);
  ccsim__checkpoint__pack(cp, blob2);
  ccsim__checkpoint__free_unpacked(cp, NULL);
  assert_null(ccsim_session_resume(v.c, blob2, n2));
  assert_non_null(strstr(ccsim_client_errmsg(v.c), "checkpoint.format = 2"));
  free(blob);
  free(blob2);
  char path[256];
  snprintf(path, sizeof path, "%s/%s.session", v.dir, ccsim_session_id(v.s));
  ccsim_session_release(&v.s);
  ccsim_client_destroy(&v.c);
  test_server_stop(&v.srv, v.th);  // saves it
  // the saved session made format 2
  size_t saved_len = 0;
  uint8_t *saved = slurp(path, &saved_len);
  Ccsim__SavedSession *sv = ccsim__saved_session__unpack(NULL, saved_len, saved);
  free(saved);
  assert_non_null(sv);
  assert_non_null(sv->checkpoint);
  sv->checkpoint->format = 2;
  size_t n = ccsim__saved_session__get_packed_size(sv);
  uint8_t *other = malloc(n);
  ccsim__saved_session__pack(sv, other);
  ccsim__saved_session__free_unpacked(sv, NULL);
  FILE *out = fopen(path, "wb");
  assert_non_null(out);
  assert_int_equal(fwrite(other, 1, n, out), n);
  fclose(out);
  v.srv = test_server_start(&v.cfg, &v.th);
  assert_non_null(v.srv);
  int restored = srv_session_count(v.srv);
  test_server_stop(&v.srv, v.th);
  size_t after_len = 0;
  uint8_t *after = slurp(path, &after_len);
  int same = after_len == n && memcmp(after, other, n) == 0;
  free(after);
  free(other);
  ccsim_scene_destroy(&v.sc);
  assert_int_equal(restored, 0);
  assert_true(same);
}

// A server that crashed and restored a session from an older save has rolled it back
// behind its controller's handle: every Step is refused ESEQ (last executed 3, the handle
// at 5), which said so but left the controller no way on. ccsim_session_resync takes the
// server's word (seq and state), and stepping goes on from there.
static void test_resync_after_rollback(void **state) {
  fixture *f = *state;
  char dir[128], ep[200], path[256], err[512];
  make_test_dir(f, dir);
  srv_config cfg;
  state_dir_config(&cfg, dir);
  snprintf(ep, sizeof ep, "ipc://%s/sock", f->dir);  // the same endpoint across restarts
  cfg.bind = ep;
  pthread_t th;
  srv *sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  ccsim_scene *sc = scene();
  ccsim_client *c = ccsim_client_connect(ep, 2000, 3, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  for (int k = 0; k < 3; k++) assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
  test_server_stop(&sv, th);  // saved at seq 3
  snprintf(path, sizeof path, "%s/%s.session", dir, ccsim_session_id(s));
  size_t old_len = 0;
  uint8_t *old = slurp(path, &old_len);
  sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  for (int k = 0; k < 2; k++) assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
  test_server_stop(&sv, th);  // saved at seq 5; then "the crash": the older save is what is left
  FILE *out = fopen(path, "wb");
  assert_non_null(out);
  assert_int_equal(fwrite(old, 1, old_len, out), old_len);
  fclose(out);
  free(old);
  sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  int refused = ccsim_session_step(s, 1e-2, NULL, 0);
  print_message("a step after the rollback: %s\n", ccsim_client_errmsg(c));
  assert_int_equal(refused, CCSIM_ESEQ);
  assert_non_null(strstr(ccsim_client_errmsg(c), "ccsim_session_resync"));
  assert_int_equal(ccsim_session_resync(s), CCSIM_OK);
  assert_int_equal(ccsim_session_seq(s), 3);
  assert_double_near(ccsim_session_time(s), 0.03, 1e-12);
  assert_int_equal(ccsim_session_step(s, 1e-2, NULL, 0), CCSIM_OK);
  assert_double_near(ccsim_session_time(s), 0.04, 1e-12);
  assert_int_equal(ccsim_session_close(&s), CCSIM_OK);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  test_server_stop(&sv, th);
}

// A closed session leaves nothing in the state dir: its saved file goes, and so does the
// temporary file of a save that failed part-way (no later save would replace it)
static void test_close_removes_saved_files(void **state) {
  saving v;
  saving_open(*state, &v);
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s/%s.session.tmp", v.dir, ccsim_session_id(v.s));
  FILE *out = fopen(tmp, "w");
  assert_non_null(out);
  fputs("half a save", out);
  fclose(out);
  assert_int_equal(ccsim_session_close(&v.s), CCSIM_OK);
  struct stat st;
  int left = stat(tmp, &st) == 0;
  ccsim_client_destroy(&v.c);
  test_server_stop(&v.srv, v.th);
  ccsim_scene_destroy(&v.sc);
  unlink(tmp);
  assert_false(left);
}

// a state dir the server could not save into is refused at start, not at the stop that
// would lose the sessions; a missing one is created
static void test_state_dir_unusable(void **state) {
  fixture *f = *state;
  char file[128], below[160];
  make_test_dir(f, file);  // the state dir's path, a file first
  FILE *out = fopen(file, "w");
  assert_non_null(out);
  fclose(out);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = NULL;
  char err[512] = "";
  cfg.state_dir = file;
  assert_null(srv_new(&cfg, err, sizeof err));
  assert_non_null(strstr(err, "not a directory"));
  snprintf(below, sizeof below, "%s/sub", file);
  cfg.state_dir = below;
  err[0] = 0;
  assert_null(srv_new(&cfg, err, sizeof err));
  assert_non_null(strstr(err, "cannot create the state dir"));
  // a link to itself exists (mkdir says so) but leads nowhere: the reason is given
  char loop[160];
  snprintf(loop, sizeof loop, "%s/loop", f->dir);
  assert_int_equal(symlink("loop", loop), 0);
  cfg.state_dir = loop;
  err[0] = 0;
  assert_null(srv_new(&cfg, err, sizeof err));
  assert_non_null(strstr(err, "cannot use the state dir"));
  assert_int_equal(unlink(loop), 0);
  assert_int_equal(unlink(file), 0);
  cfg.state_dir = file;  // gone: made afresh
  srv *s = srv_new(&cfg, err, sizeof err);
  assert_non_null(s);
  struct stat st;
  assert_int_equal(stat(file, &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  // a second server on the same dir is refused while the first lives, naming it
  err[0] = 0;
  assert_null(srv_new(&cfg, err, sizeof err));
  char want[96];
  snprintf(want, sizeof want, "in use by another server (pid %ld)", (long)getpid());
  if (!strstr(err, want)) {
    print_error("got '%s'\n", err);
  }
  assert_non_null(strstr(err, want));
  srv_destroy(&s);
  // a FIFO named like a saved session does not hold up the start; it is skipped
  char fifo[200];
  snprintf(fifo, sizeof fifo, "%s/0123456789abcdef0123456789abcdef.session", file);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(20);  // a hang fails the test here instead of at ctest's timeout
  s = srv_new(&cfg, err, sizeof err);
  alarm(0);
  assert_non_null(s);
  assert_int_equal(srv_session_count(s), 0);
  srv_destroy(&s);
  assert_int_equal(unlink(fifo), 0);
  // an empty file and a link are skipped, each with a reason that says what it is; so is
  // a file of 100 000 empty bodies (200 kB): decoded, each is a struct 87 times its two
  // bytes, past the bound requests are decoded under (protobuf-c alone would build them)
  char empty[200], link[200], bloat[200], log[200], text[2048];
  snprintf(empty, sizeof empty, "%s/00000000000000000000000000000000.session", file);
  snprintf(link, sizeof link, "%s/11111111111111111111111111111111.session", file);
  snprintf(bloat, sizeof bloat, "%s/22222222222222222222222222222222.session", file);
  snprintf(log, sizeof log, "%s/log.txt", f->dir);
  out = fopen(empty, "w");
  assert_non_null(out);
  fclose(out);
  assert_int_equal(symlink("00000000000000000000000000000000.session", link), 0);
  enum { NBODY = 100000 };
  size_t nb = 2 * NBODY;  // Scene.bodies (field 4), each empty: 0x22 0x00
  uint8_t head[16];       // SavedSession.checkpoint (3) { Checkpoint.scene (2) { bodies } }
  size_t nh = 0, scene_len = nb, cp_len = 1 + 3 + scene_len;  // both lengths take 3 bytes
  head[nh++] = 0x1a;
  for (size_t v = cp_len, k = 0; k < 3; k++, v >>= 7)
    head[nh++] = (uint8_t)((v & 0x7f) | (k < 2 ? 0x80 : 0));
  head[nh++] = 0x12;
  for (size_t v = scene_len, k = 0; k < 3; k++, v >>= 7)
    head[nh++] = (uint8_t)((v & 0x7f) | (k < 2 ? 0x80 : 0));
  out = fopen(bloat, "w");
  assert_non_null(out);
  assert_int_equal(fwrite(head, 1, nh, out), nh);
  for (int i = 0; i < NBODY; i++) {
    fputc(0x22, out);
    fputc(0x00, out);
  }
  assert_int_equal(fclose(out), 0);
  int saved = test_capture_begin(2, log);
  s = srv_new(&cfg, err, sizeof err);
  test_capture_end(2, saved);
  test_read_text(log, text, sizeof text);
  int count = s ? srv_session_count(s) : -1;
  srv_destroy(&s);
  unlink(empty);
  unlink(link);
  unlink(bloat);
  unlink(log);
  assert_int_equal(count, 0);
  assert_non_null(strstr(text, "00000000000000000000000000000000.session: not restored: empty"));
  assert_non_null(strstr(text,
                         "11111111111111111111111111111111.session: not restored: a "
                         "symbolic link"));
  if (!strstr(text, "22222222222222222222222222222222.session: not restored: takes more memory")) {
    print_error("got '%s'\n", text);
  }
  assert_non_null(
      strstr(text, "22222222222222222222222222222222.session: not restored: takes more memory"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_batching_equals_single_steps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batching_equals_single_steps_friction, setup, teardown),
      cmocka_unit_test_setup_teardown(test_refused_requests_keep_trajectory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_checkpoint_resume_bit_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(test_state_dir_survives_sigterm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_big_saved_session_restores, setup, teardown),
      cmocka_unit_test_setup_teardown(test_checkpoint_of_another_format, setup, teardown),
      cmocka_unit_test_setup_teardown(test_close_removes_saved_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resync_after_rollback, setup, teardown),
      cmocka_unit_test_setup_teardown(test_state_dir_unusable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_periodic_checkpoints, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
