// ctest-label: e2e
// ctest-timeout: 60
// Liveness: a client process killed mid-run leaves its session to the idle timeout, which
// frees it while another client is served throughout; a client coming back to it is told
// why it is gone (EEXPIRED with the reason).
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ccsim_client.h"
#include "ccsim_scene.h"
#include "srv.h"

#define IDLE_TIMEOUT 0.5  // [s]

typedef struct fixture {
  srv *s;
  pthread_t thread;
  char endpoint[256];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 2;
  cfg.idle_timeout = IDLE_TIMEOUT;
  cfg.heartbeat_ms = 100;
  f->s = test_server_start(&cfg, &f->thread);
  if (!f->s) {
    free(f);
    return -1;
  }
  snprintf(f->endpoint, sizeof f->endpoint, "%s", srv_endpoint(f->s));
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  test_server_stop(&f->s, f->thread);
  free(f);
  return 0;
}

static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81], \"bodies\": [{\"name\": \"ball\", \"mass\": 1,"
    " \"inertia\": [0.1, 0.1, 0.1], \"pose\": {\"p\": [0, 0, 10]}}]}";

// a client that keeps stepping its own session until told to stop
typedef struct steady_arg {
  const char *endpoint;
  atomic_int stop;
  int status;
  long steps;
  double worst;  // longest round trip [s]
} steady_arg;

static void *steady_client(void *p) {
  steady_arg *a = p;
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_new(a->endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, sc) : NULL;
  a->status = s ? CCSIM_OK : -100;
  while (s && a->status == CCSIM_OK && !atomic_load(&a->stop)) {
    double t = now_s();
    a->status = ccsim_session_step(s, 1e-3, NULL, 0);
    a->worst = fmax(a->worst, now_s() - t);
    a->steps++;
    sleep_s(0.002);
  }
  if (s && ccsim_session_close(&s) != CCSIM_OK) {
    a->status = -101;
  }
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  return NULL;
}

// the child: create a session, report its id on the pipe, step until killed
static void doomed_client(const char *endpoint, int fd) {
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_new(endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, sc) : NULL;
  char id[64] = "";
  if (s) {
    snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  }
  if (write(fd, id, sizeof id) != (ssize_t)sizeof id) {
    _exit(2);
  }
  while (s && ccsim_session_step(s, 1e-3, NULL, 0) == CCSIM_OK) {
  }
  _exit(1);
}

static void test_killed_client_session_expires(void **state) {
  fixture *f = *state;
  char err[256];
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  // the doomed client runs in a fresh image of this program: a child that went on after
  // fork() in this multithreaded process (the server's threads) could deadlock on a lock
  // another thread held at the fork, as happens under AddressSanitizer
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", fds[1]);
    execl("/proc/self/exe", "test_srv_liveness", "--doomed-client", f->endpoint, fdarg,
          (char *)NULL);
    _exit(3);
  }
  close(fds[1]);
  char id[64] = "";
  assert_int_equal(read(fds[0], id, sizeof id), (ssize_t)sizeof id);
  close(fds[0]);
  assert_int_equal(strlen(id), 32);

  steady_arg a = {.endpoint = f->endpoint};
  pthread_t th;
  pthread_create(&th, NULL, steady_client, &a);
  sleep_s(0.1);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  assert_non_null(c);
  ccsim_session *obs = ccsim_session_attach(c, id);
  assert_non_null(obs);
  ccsim_session_release(&obs);
  // the doomed client is mid-run: its session is alive and moving
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  assert_int_equal(info.sessions, 2);
  assert_double_near(info.idle_timeout, IDLE_TIMEOUT, 0);
  kill(pid, SIGKILL);
  int wst = 0;
  waitpid(pid, &wst, 0);
  assert_true(WIFSIGNALED(wst));
  double killed = now_s();

  // the session is freed after the idle timeout, not before
  double freed = 0;
  while (now_s() - killed < 20 * IDLE_TIMEOUT) {
    assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
    if (info.sessions == 1) {
      freed = now_s();
      break;
    }
    sleep_s(0.02);
  }
  assert_true(freed > 0);
  assert_true(freed - killed >= IDLE_TIMEOUT - 0.05);
  assert_int_equal(info.expired, 1);
  // coming back: EEXPIRED, and the message says why
  obs = ccsim_session_attach(c, id);
  assert_null(obs);
  assert_non_null(strstr(ccsim_client_errmsg(c), "CCSIM_EEXPIRED"));
  assert_non_null(strstr(ccsim_client_errmsg(c), "idle timeout"));
  // the steady client was served throughout and its session is still there
  sleep_s(0.1);
  atomic_store(&a.stop, 1);
  pthread_join(th, NULL);
  assert_int_equal(a.status, CCSIM_OK);
  assert_true(a.steps > 50);
  print_message("steady client: %ld steps, worst round trip %.2f ms\n", a.steps, 1e3 * a.worst);
  assert_true(a.worst < IDLE_TIMEOUT);
  assert_int_equal(srv_session_count(f->s), 0);
  ccsim_client_destroy(&c);
}

static void test_idle_session_expires_for_its_controller(void **state) {
  fixture *f = *state;
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_new(f->endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  // requests keep it alive
  for (int k = 0; k < 8; k++) {
    sleep_s(IDLE_TIMEOUT / 4);
    assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  }
  sleep_s(IDLE_TIMEOUT * 2);
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_EEXPIRED);
  assert_non_null(strstr(ccsim_client_errmsg(c), "without a request"));
  assert_int_equal(ccsim_session_close(&s), CCSIM_EEXPIRED);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--doomed-client") == 0) {
    doomed_client(argv[2], atoi(argv[3]));  // never returns
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_killed_client_session_expires, setup, teardown),
      cmocka_unit_test_setup_teardown(test_idle_session_expires_for_its_controller, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
