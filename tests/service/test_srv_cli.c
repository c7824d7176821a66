// ctest-label: e2e
// ctest-timeout: 60
// The service commands of the CLI, called as `ccsim` calls them: keygen writes a valid
// key pair and never overwrites one; sessions lists a running session; watch --csv prints
// the stream of a session being stepped.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim_client.h"
#include "ccsim_scene.h"
#include "srv.h"

// the commands are part of the ccsim executable; compile them into this test
#include "cli_service.c"

typedef struct fixture {
  srv *s;
  pthread_t thread;
  char endpoint[256];
  char dir[64];
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
    return -1;
  }
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  snprintf(f->dir, sizeof f->dir, "ccsim-cli-XXXXXX");
  if (!mkdtemp(f->dir)) {
    return -1;
  }
  *state = f;
  return 0;
}

static void rm(const char *dir, const char *name) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  unlink(p);
}

static int teardown(void **state) {
  fixture *f = *state;
  test_server_stop(&f->s, f->thread);
  const char *files[] = {"k.pub", "k.secret", "out.txt"};
  for (size_t i = 0; i < 3; i++) rm(f->dir, files[i]);
  rmdir(f->dir);
  free(f);
  return 0;
}

// run a command with stdout going to DIR/out.txt; returns its exit status, text in out
static int run(fixture *f, int (*cmd)(int, char **), char **argv, char *out, size_t out_sz) {
  char path[128];
  snprintf(path, sizeof path, "%s/out.txt", f->dir);
  int saved = test_capture_begin(1, path);
  int argc = 0;
  while (argv[argc]) argc++;
  int rc = cmd(argc, argv);
  test_capture_end(1, saved);
  test_read_text(path, out, out_sz);
  return rc;
}

static void read_key(const char *dir, const char *name, char key[41]) {
  char p[128], buf[128] = "";
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *in = fopen(p, "r");
  assert_non_null(in);
  assert_non_null(fgets(buf, sizeof buf, in));
  fclose(in);
  assert_int_equal(strlen(buf), 41);  // 40 characters and a newline
  memcpy(key, buf, 40);
  key[40] = 0;
}

static void test_keygen(void **state) {
  fixture *f = *state;
  char out[4096];
  char *argv[] = {"keygen", "k", "--dir", f->dir, NULL};
  assert_int_equal(run(f, cli_keygen_main, argv, out, sizeof out), 0);
  assert_non_null(strstr(out, "k.pub"));
  char pub[41], sec[41], derived[41];
  read_key(f->dir, "k.pub", pub);
  read_key(f->dir, "k.secret", sec);
  assert_int_equal(zmq_curve_public(derived, sec), 0);
  assert_string_equal(derived, pub);
  char p[128];
  snprintf(p, sizeof p, "%s/k.secret", f->dir);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  // never overwrites a key
  assert_int_equal(run(f, cli_keygen_main, argv, out, sizeof out), 1);
  read_key(f->dir, "k.secret", derived);
  assert_string_equal(derived, sec);
  char *bad[] = {"keygen", NULL};
  assert_int_equal(run(f, cli_keygen_main, bad, out, sizeof out), 2);
  // a path for NAME is refused (--dir says where), a missing directory fails: no files
  char *slash[] = {"keygen", "sub/k2", "--dir", f->dir, NULL};
  assert_int_equal(run(f, cli_keygen_main, slash, out, sizeof out), 2);
  char missing[128];
  snprintf(missing, sizeof missing, "%s/no-such-dir", f->dir);
  char *nodir[] = {"keygen", "k3", "--dir", missing, NULL};
  assert_int_equal(run(f, cli_keygen_main, nodir, out, sizeof out), 1);
  snprintf(p, sizeof p, "%s/no-such-dir", f->dir);
  assert_int_not_equal(stat(p, &st), 0);
}

typedef struct stepper {
  const char *endpoint;
  ccsim_session *s;
  atomic_int stop;
  int status;
} stepper;

static void *step_until_stopped(void *p) {
  stepper *a = p;
  while (!atomic_load(&a->stop) && a->status == CCSIM_OK) {
    a->status = ccsim_session_step(a->s, 1e-3, NULL, 0);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void test_sessions_and_watch(void **state) {
  fixture *f = *state;
  char err[256], out[65536];
  const char *json = "{\"gravity\": [0, 0, -9.81], \"bodies\": [{\"name\": \"ball\", \"mass\": 1,"
                     " \"inertia\": [1, 1, 1], \"pose\": {\"p\": [0, 0, 3]}}]}";
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  char *list[] = {"sessions", "--server", f->endpoint, NULL};
  assert_int_equal(run(f, cli_sessions_main, list, out, sizeof out), 0);
  assert_non_null(strstr(out, ccsim_session_id(s)));
  assert_non_null(strstr(out, "1 session\n"));
  // watch while another thread steps
  stepper a = {.endpoint = f->endpoint, .s = s};
  pthread_t th;
  pthread_create(&th, NULL, step_until_stopped, &a);
  char id[64];
  snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  char *watch[] = {"watch", id, "--server", f->endpoint, "--csv", "--count", "5", "--timeout",
                   "10", NULL};
  int rc = run(f, cli_watch_main, watch, out, sizeof out);
  atomic_store(&a.stop, 1);
  pthread_join(th, NULL);
  assert_int_equal(a.status, CCSIM_OK);
  assert_int_equal(rc, 0);
  // a header and five rows of seq, t and 17 + 3 numbers, in stream order: the columns of
  // ccsim run --csv (state, contact force and pairs; then the mean contact force over the
  // step, after every body's other columns)
  char *line = out, *nl = strchr(line, '\n');
  assert_non_null(nl);
  *nl = 0;
  assert_true(strncmp(line, "seq,t,ball.px,ball.py,ball.pz,ball.qw", 37) == 0);
  assert_non_null(strstr(line, ",ball.wz,ball.fx,ball.fy,ball.fz,ball.contacts,"
                               "ball.mfx,ball.mfy,ball.mfz"));
  long prev = 0;
  int rows = 0;
  for (line = nl + 1; *line; line = nl + 1) {
    nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = 0;
    int commas = 0;
    for (const char *q = line; *q; q++) commas += *q == ',';
    assert_int_equal(commas, 21);
    long seq = strtol(line, NULL, 10);
    double t = strtod(strchr(line, ',') + 1, NULL);
    assert_true(seq > prev);
    assert_double_near(t, seq * 1e-3, 1e-12);  // one step of 1 ms per message
    prev = seq;
    rows++;
  }
  assert_int_equal(rows, 5);
  // an unknown session: an error, not a hang
  char *unknown[] = {"watch", "ffffffffffffffffffffffffffffffff", "--server", f->endpoint, NULL};
  assert_int_equal(run(f, cli_watch_main, unknown, out, sizeof out), 1);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

typedef struct watcher {
  fixture *f;
  char **argv;
  char out[4096];
  int rc;
  atomic_int done;
} watcher;

static void *watch_main(void *p) {
  watcher *w = p;
  w->rc = run(w->f, cli_watch_main, w->argv, w->out, sizeof w->out);
  atomic_store(&w->done, 1);
  return NULL;
}

// watch without --timeout on a quiet session ends when its server goes away (it used to
// wait for ever) and when the session is closed behind it, not before
static void test_watch_ends_with_server(void **state) {
  fixture *f = *state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = "auto";
  pthread_t sth;
  srv *s2 = test_server_start(&cfg, &sth);
  assert_non_null(s2);
  char ep[256], err[256], id[64];
  snprintf(ep, sizeof ep, "%s", srv_endpoint(s2));
  const char *json =
      "{\"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"inertia\": [1, 1, 1],"
      " \"pose\": {\"p\": [0, 0, 3]}}]}";
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "ball", NULL, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  ccsim_client *c = ccsim_client_new(ep, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  char *argv[] = {"watch", id, "--server", ep, NULL};
  watcher w = {.f = f, .argv = argv};
  pthread_t wth;
  assert_int_equal(pthread_create(&wth, NULL, watch_main, &w), 0);
  sleep_s(4.5);  // two quiet checks answered: still watching
  assert_int_equal(atomic_load(&w.done), 0);
  ccsim_session_release(&s);
  ccsim_client_destroy(&c);
  double t0 = now_s();
  test_server_stop(&s2, sth);
  while (!atomic_load(&w.done) && now_s() - t0 < 20) {
    sleep_s(0.05);
  }
  double took = now_s() - t0;
  assert_int_equal(atomic_load(&w.done), 1);  // (a hanging watch is left to the exit)
  pthread_join(wth, NULL);
  print_message("  the watch ended %.1f s after the server, status %d\n", took, w.rc);
  assert_int_equal(w.rc, 1);
  assert_true(took < 2.0 + 5.0 + 2.0);
  ccsim_scene_destroy(&sc);
}

// watch follows its session across a restart of the server from its --state-dir: the
// restored server's stream (--stream auto) has another port, and the watch sat on the old
// one, silent for good while the session went on stepping
static void test_watch_follows_restart(void **state) {
  fixture *f = *state;
  char sd[128], ep[256], err[256], id[64];
  snprintf(sd, sizeof sd, "%s/state", f->dir);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = "auto";
  cfg.state_dir = sd;
  pthread_t sth;
  srv *sv = test_server_start(&cfg, &sth);
  assert_non_null(sv);
  snprintf(ep, sizeof ep, "%s", srv_endpoint(sv));
  const char *json =
      "{\"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"inertia\": [1, 1, 1],"
      " \"pose\": {\"p\": [0, 0, 3]}}]}";
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_connect(ep, 1000, 5, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  char *argv[] = {"watch", id, "--server", ep, "--csv", "--count", "6", "--timeout", "10", NULL};
  watcher w = {.f = f, .argv = argv};
  pthread_t wth;
  assert_int_equal(pthread_create(&wth, NULL, watch_main, &w), 0);
  sleep_s(0.5);  // subscribed
  for (int k = 0; k < 3; k++) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  }
  test_server_stop(&sv, sth);  // saves the session
  cfg.bind = ep;               // the same port; the stream takes another
  sv = test_server_start(&cfg, &sth);
  assert_non_null(sv);
  double t0 = now_s();
  while (!atomic_load(&w.done) && now_s() - t0 < 12) {
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
    sleep_s(0.1);
  }
  pthread_join(wth, NULL);
  int rows = 0;
  for (const char *p = w.out; (p = strchr(p, '\n')); p++) rows++;
  print_message("  watch across the restart: status %d, %d lines\n", w.rc, rows);
  assert_int_equal(w.rc, 0);
  assert_int_equal(rows, 1 + 6);  // the header and 6 messages, 3 of them after the restart
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  test_server_stop(&sv, sth);
  char saved[256];
  snprintf(saved, sizeof saved, "%s/%s.session", sd, id);
  unlink(saved);
  snprintf(saved, sizeof saved, "%s/ccsimd.lock", sd);
  unlink(saved);
  rmdir(sd);
}

// what f (a memory stream) holds, closed; the caller frees it
static char *closed_text(FILE *f, char **buf) {
  fclose(f);
  return *buf;
}

// Body names reach CSV headers as one field each, however they are spelled (RFC 4180:
// quoted, quotes doubled), and a terminal never gets their control characters.
static void test_names_in_output(void **state) {
  (void)state;
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  cli_csv_column(f, "ball", "px");
  cli_csv_column(f, "a,\"b\"\nc", "qw");
  char *t = closed_text(f, &buf);
  assert_string_equal(t, ",ball.px,\"a,\"\"b\"\"\nc.qw\"");
  free(t);
  f = open_memstream(&buf, &n);
  cli_put_name(f, "arm\x1b[2J\r\tend");
  t = closed_text(f, &buf);
  assert_string_equal(t, "arm?[2J??end");
  free(t);
}

// a server started without --idle-timeout frees idle sessions after 10 minutes (a client
// killed without closing its session no longer holds it for ever)
static void test_idle_timeout_default(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  ccsim_client_destroy(&c);
  assert_double_near(info.idle_timeout, 600, 0);
}

// write text (a line) to DIR/name
static void write_text(const fixture *f, const char *name, const char *text) {
  char p[128];
  snprintf(p, sizeof p, "%s/%s", f->dir, name);
  FILE *o = fopen(p, "w");
  assert_non_null(o);
  fprintf(o, "%s\n", text);
  fclose(o);
}

// ccsim close: without a token it is refused, pointing at the admin token; with the
// controller's token it closes its session; with the server's admin token (ccsimd
// --admin-token FILE, mode 600) it closes a session whose client is gone, which then
// answers EEXPIRED saying so. The admin token steps nothing.
static void test_close(void **state) {
  fixture *f = *state;
  test_server_stop(&f->s, f->thread);
  char admin[128], ctl[128], errp[128], err[256], out[4096], msg[1024];
  snprintf(admin, sizeof admin, "%s/admin.token", f->dir);
  snprintf(ctl, sizeof ctl, "%s/ctl.token", f->dir);
  snprintf(errp, sizeof errp, "%s/err.txt", f->dir);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = NULL;
  cfg.workers = 2;
  cfg.admin_token_file = admin;
  f->s = test_server_start(&cfg, &f->thread);
  assert_non_null(f->s);
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  struct stat st;
  assert_int_equal(stat(admin, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  const char *json = "{\"gravity\": [0, 0, -9.81], \"bodies\": [{\"name\": \"ball\", \"mass\": 1,"
                     " \"inertia\": [1, 1, 1], \"pose\": {\"p\": [0, 0, 3]}}]}";
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  ccsim_session *s1 = ccsim_session_create(c, sc), *s2 = ccsim_session_create(c, sc);
  assert_non_null(s1);
  assert_non_null(s2);
  char id1[64], id2[64];
  snprintf(id1, sizeof id1, "%s", ccsim_session_id(s1));
  snprintf(id2, sizeof id2, "%s", ccsim_session_id(s2));
  // no token: refused, saying how an operator closes it
  char *bare[] = {"close", id1, "--server", f->endpoint, NULL};
  int saved = test_capture_begin(2, errp);
  int rc = run(f, cli_close_main, bare, out, sizeof out);
  test_capture_end(2, saved);
  test_read_text(errp, msg, sizeof msg);
  assert_int_equal(rc, 1);
  if (!strstr(msg, "--admin-token")) print_error("got '%s'\n", msg);
  assert_non_null(strstr(msg, "CCSIM_EPERM"));
  assert_non_null(strstr(msg, "--admin-token"));
  // its controller's token
  write_text(f, "ctl.token", ccsim_session_token(s1));
  char *as_ctl[] = {"close", id1, "--server", f->endpoint, "--token-file", ctl, NULL};
  assert_int_equal(run(f, cli_close_main, as_ctl, out, sizeof out), 0);
  assert_non_null(strstr(out, "closed"));
  ccsim_session_release(&s1);
  // the admin token: a close only
  char token[64] = "";
  FILE *in = fopen(admin, "r");
  assert_non_null(in);
  assert_non_null(fgets(token, sizeof token, in));
  fclose(in);
  token[strcspn(token, "\n")] = 0;
  void *zctx = zmq_ctx_new();
  void *sock = test_dealer(zctx, f->endpoint);
  Ccsim__Reply *r = test_raw_step_reply(sock, id2, token, 1, 1, 1e-3, NULL);
  int step_code = r && r->error ? (int)r->error->code : -1000;
  if (r) ccsim__reply__free_unpacked(r, NULL);
  zmq_close(sock);
  zmq_ctx_term(zctx);
  assert_int_equal(step_code, CCSIM_EPERM);
  ccsim_session_release(&s2);  // its client "killed": only the operator can end it now
  char *as_admin[] = {"close", id2, "--server", f->endpoint, "--token-file", admin, NULL};
  assert_int_equal(run(f, cli_close_main, as_admin, out, sizeof out), 0);
  ccsim_session *again = ccsim_session_attach(c, id2);
  snprintf(msg, sizeof msg, "%s", ccsim_client_errmsg(c));
  assert_null(again);
  if (!strstr(msg, "operator")) print_error("got '%s'\n", msg);
  assert_non_null(strstr(msg, "closed by the server's operator"));
  ccsim_session_info *all = NULL;
  size_t n = 9;
  assert_int_equal(ccsim_client_list_sessions(c, &all, &n), CCSIM_OK);
  free(all);
  assert_int_equal(n, 0);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  rm(f->dir, "admin.token");
  rm(f->dir, "ctl.token");
  rm(f->dir, "err.txt");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_in_output),
      cmocka_unit_test_setup_teardown(test_keygen, setup, teardown),
      cmocka_unit_test_setup_teardown(test_idle_timeout_default, setup, teardown),
      cmocka_unit_test_setup_teardown(test_close, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sessions_and_watch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_watch_ends_with_server, setup, teardown),
      cmocka_unit_test_setup_teardown(test_watch_follows_restart, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
