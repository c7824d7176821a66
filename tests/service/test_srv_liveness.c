// ctest-label: e2e
// ctest-timeout: 60
// Liveness: a client process killed mid-run leaves its session to the idle timeout, which
// frees it while another client is served throughout; a client coming back to it is told
// why it is gone (EEXPIRED with the reason). A client whose connection goes silent while
// it is idle (a network that drops everything, no FIN) notices it from the server's
// heartbeats or its own and connects afresh before its next request.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

// A TCP relay on loopback that can go silent: the connections it carries at that moment
// lose every byte both ways, and a close at one end is not passed to the other, as behind
// a dead network path; connections made afterwards are carried normally.
#define RELAY_MAX 8

typedef struct tcp_relay {
  int lfd, port;
  struct sockaddr_in to;
  int fd[RELAY_MAX][2];  // client side, server side; -1 when free
  int dead[RELAY_MAX];
  atomic_int silence;  // set by the test; the relay clears it once every pair is dead
  atomic_int stop;
  atomic_long dropped;  // bytes lost by dead pairs
  pthread_t th;
} tcp_relay;

static void relay_close(tcp_relay *r, int k) {
  for (int side = 0; side < 2; side++) {
    if (r->fd[k][side] >= 0) close(r->fd[k][side]);
    r->fd[k][side] = -1;
  }
}

static void relay_accept(tcp_relay *r) {
  int a = accept(r->lfd, NULL, NULL);
  if (a < 0) {
    return;
  }
  int b = socket(AF_INET, SOCK_STREAM, 0);
  for (int k = 0; k < RELAY_MAX; k++) {
    if (r->fd[k][0] < 0 && r->fd[k][1] < 0) {
      if (b >= 0 && connect(b, (struct sockaddr *)&r->to, sizeof r->to) == 0) {
        r->fd[k][0] = a;
        r->fd[k][1] = b;
        r->dead[k] = 0;
        return;
      }
      break;
    }
  }
  close(a);  // no room or no server: refused as a server would
  if (b >= 0) close(b);
}

static void *relay_main(void *p) {
  tcp_relay *r = p;
  char buf[4096];
  while (!atomic_load(&r->stop)) {
    if (atomic_load(&r->silence)) {
      for (int k = 0; k < RELAY_MAX; k++) {
        r->dead[k] = 1;
      }
      atomic_store(&r->silence, 0);
    }
    struct pollfd pf[1 + 2 * RELAY_MAX];
    int n = 0;
    pf[n++] = (struct pollfd){.fd = r->lfd, .events = POLLIN};
    for (int k = 0; k < RELAY_MAX; k++) {
      for (int side = 0; side < 2; side++) {
        pf[n++] = (struct pollfd){.fd = r->fd[k][side], .events = POLLIN};  // -1: ignored
      }
    }
    if (poll(pf, (nfds_t)n, 10) <= 0) {
      continue;
    }
    if (pf[0].revents & POLLIN) {
      relay_accept(r);
    }
    for (int k = 0; k < RELAY_MAX; k++) {
      for (int side = 0; side < 2; side++) {
        if (r->fd[k][side] < 0 || !pf[1 + 2 * k + side].revents) {
          continue;
        }
        ssize_t got = read(r->fd[k][side], buf, sizeof buf);
        if (got <= 0 && r->dead[k]) {
          close(r->fd[k][side]);  // the other end hears nothing of it
          r->fd[k][side] = -1;
        } else if (got <= 0) {
          relay_close(r, k);  // an end closed: so does the other
        } else if (r->dead[k]) {
          atomic_fetch_add(&r->dropped, (long)got);
        } else if (write(r->fd[k][!side], buf, (size_t)got) != got) {
          relay_close(r, k);
        }
      }
    }
  }
  for (int k = 0; k < RELAY_MAX; k++) {
    relay_close(r, k);
  }
  return NULL;
}

// Start a relay to the server at tcp://127.0.0.1:PORT; 0 or -1.
static int relay_start(tcp_relay *r, const char *server_endpoint) {
  memset(r, 0, sizeof *r);
  memset(r->fd, -1, sizeof r->fd);
  const char *colon = strrchr(server_endpoint, ':');
  r->to.sin_family = AF_INET;
  r->to.sin_port = htons((uint16_t)atoi(colon + 1));
  r->to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof me;
  r->lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (r->lfd < 0 || bind(r->lfd, (struct sockaddr *)&me, sizeof me) != 0 ||
      listen(r->lfd, 8) != 0 || getsockname(r->lfd, (struct sockaddr *)&me, &len) != 0) {
    return -1;
  }
  r->port = ntohs(me.sin_port);
  return pthread_create(&r->th, NULL, relay_main, r) == 0 ? 0 : -1;
}

static void relay_stop(tcp_relay *r) {
  atomic_store(&r->stop, 1);
  pthread_join(r->th, NULL);
  close(r->lfd);
}

// Through a relay, a request; idle for idle_s; the connection goes silent; 1 s later a
// request, which must not wait out the client's 3 s timeout on the dead connection.
static void silent_connection(fixture *f, int heartbeat_ms, double idle_s) {
  tcp_relay r;
  assert_int_equal(relay_start(&r, f->endpoint), 0);
  char ep[64], err[256];
  snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", r.port);
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  o.timeout_ms = 3000;
  o.heartbeat_ms = heartbeat_ms;
  ccsim_client *c = ccsim_client_new_opts(ep, &o, err, sizeof err);
  assert_non_null(c);
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  sleep_s(idle_s);
  atomic_store(&r.silence, 1);
  sleep_s(1.0);
  assert_true(atomic_load(&r.dropped) > 0);  // heartbeats were lost
  double t = now_s();
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  double took = now_s() - t;
  print_message("heartbeat %d ms: first request after the silence took %.1f ms\n", heartbeat_ms,
                1e3 * took);
  assert_true(took < 1.0);
  ccsim_client_destroy(&c);
  relay_stop(&r);
}

// The server's heartbeats: a client without heartbeats of its own that has idled past a
// ping of the server's (every 0.1 s) drops the connection 0.3 s after the last one, as the
// ping told it (ZeroMQ's heartbeat TTL).
static void test_server_heartbeats_end_a_silent_connection(void **state) {
  silent_connection(*state, 0, 0.25);
}

// The client's heartbeats: the connection goes silent right after a reply, before any
// ping of the server's arrives to set the TTL; the client's own pings (every 0.2 s) go
// unanswered and it drops the connection 0.6 s after the first.
static void test_client_heartbeats_end_a_silent_connection(void **state) {
  silent_connection(*state, 200, 0);
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
  // an observer's requests, allowed or refused, do not keep it alive for its controller
  ccsim_session *obs = ccsim_session_attach(c, ccsim_session_id(s));
  assert_non_null(obs);
  for (int k = 0; k < 8; k++) {
    sleep_s(IDLE_TIMEOUT / 4);
    int st = k % 2 ? ccsim_session_step(obs, 1e-3, NULL, 0) : ccsim_session_get_state(obs);
    if (k < 3) assert_int_equal(st, k % 2 ? CCSIM_EPERM : CCSIM_OK);
  }
  assert_int_equal(ccsim_session_get_state(obs), CCSIM_EEXPIRED);
  ccsim_session_release(&obs);
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_EEXPIRED);
  assert_non_null(strstr(ccsim_client_errmsg(c), "without a request"));
  assert_int_equal(ccsim_session_close(&s), CCSIM_EEXPIRED);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// A request that takes longer than the idle timeout (a step cut by --max-step-seconds, a
// lockstep reply held until the wall clock reaches its time) leaves its session active
// from when it ended: the controller's next request, soon after, finds it there. It used
// to find it expired, the idle clock counting from the request's arrival.
static void test_long_request_is_not_idleness(void **state) {
  (void)state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.idle_timeout = IDLE_TIMEOUT;
  cfg.max_substeps = 10000000;
  cfg.max_step_seconds = 1.6 * IDLE_TIMEOUT;
  pthread_t th;
  srv *sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_connect(srv_endpoint(sv), 10000, 0, err, sizeof err);
  assert_non_null(c);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  double t0 = now_s();
  assert_int_equal(ccsim_session_step_n(s, 1e-3, 3000000, NULL, 0, NULL, NULL), CCSIM_ELIMIT);
  assert_true(now_s() - t0 > IDLE_TIMEOUT);
  sleep_s(IDLE_TIMEOUT / 4);  // the server's housekeeping runs every 50 ms meanwhile
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_OK);
  ccsim_session *p = ccsim_session_create_paced(c, sc, CCSIM_PACING_LOCKSTEP, 0);
  assert_non_null(p);
  t0 = now_s();
  assert_int_equal(ccsim_session_step(p, 1.6 * IDLE_TIMEOUT, NULL, 0), CCSIM_OK);
  assert_true(now_s() - t0 > IDLE_TIMEOUT);  // held
  sleep_s(IDLE_TIMEOUT / 4);
  assert_int_equal(ccsim_session_step(p, 1e-3, NULL, 0), CCSIM_OK);
  // and idleness after the end still counts
  sleep_s(2 * IDLE_TIMEOUT);
  assert_int_equal(ccsim_session_step(s, 1e-3, NULL, 0), CCSIM_EEXPIRED);
  assert_int_equal(ccsim_session_step(p, 1e-3, NULL, 0), CCSIM_EEXPIRED);
  ccsim_session_release(&s);
  ccsim_session_release(&p);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  test_server_stop(&sv, th);
}

// A server stopped (SIGSTOP, a debugger, its machine paused) for longer than the idle
// timeout: that time is nobody's idleness. A Step sent while it was stopped waited in its
// socket; on resume the server's housekeeping ran before its reader and freed the session
// (EEXPIRED "without a request"). A real ccsimd, stopped for 3 idle timeouts.
static void test_stopped_server_is_not_idleness(void **state) {
  (void)state;
  char bin[PATH_MAX + 32], dir[] = "ccsim-stop-XXXXXX", endpoint[128], idle[32];
  if (test_ccsimd_path(bin, sizeof bin) != 0) {
    print_error("ccsimd not found next to the tests (%s)\n", bin);
    fail();
  }
  assert_non_null(mkdtemp(dir));
  snprintf(endpoint, sizeof endpoint, "ipc://%s/sock", dir);
  snprintf(idle, sizeof idle, "%g", IDLE_TIMEOUT);
  pid_t pid = fork();
  if (pid == 0) {
    execl(bin, bin, "--bind", endpoint, "--idle-timeout", idle, "--stream", "none", (char *)NULL);
    _exit(127);
  }
  assert_true(pid > 0);
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_connect(endpoint, 10000, 0, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, sc) : NULL;
  int before = s ? ccsim_session_step(s, 1e-3, NULL, 0) : -1;
  int during = -1;
  if (s) {
    assert_int_equal(kill(pid, SIGSTOP), 0);
    pid_t waker = fork();  // a thread would need the server's locks; a process needs none
    if (waker == 0) {
      sleep_s(3 * IDLE_TIMEOUT);
      kill(pid, SIGCONT);
      _exit(0);
    }
    during = ccsim_session_step(s, 1e-3, NULL, 0);  // sent at once, answered after SIGCONT
    waitpid(waker, NULL, 0);
    if (during != CCSIM_OK) {
      print_error("the step sent while the server was stopped: %s\n", ccsim_client_errmsg(c));
    }
  }
  // idleness after the resume still counts
  sleep_s(3 * IDLE_TIMEOUT);
  int after = s ? ccsim_session_step(s, 1e-3, NULL, 0) : -1;
  kill(pid, SIGCONT);
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  ccsim_session_release(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
  char path[64];
  snprintf(path, sizeof path, "%s/sock", dir);
  unlink(path);
  rmdir(dir);
  assert_int_equal(before, CCSIM_OK);
  assert_int_equal(during, CCSIM_OK);
  assert_int_equal(after, CCSIM_EEXPIRED);
}

typedef struct long_step {
  ccsim_session *s;
  int rc;
} long_step;

static void *long_step_main(void *p) {
  long_step *l = p;
  l->rc = ccsim_session_step_n(l->s, 1e-3, 3000000, NULL, 0, NULL, NULL);
  return NULL;
}

// A server whose every pool thread is in a long step has no thread at the I/O duty, so
// its housekeeping waits too: that gap is the server at work, not stopped, and a session
// idle meanwhile is idle. The stopped-server credit took every such gap (the CPU busy) for a
// stop, and an untouched session outlived the idle timeout for as long as the server was
// kept that busy. One worker; A's short steps make its long one run on the I/O thread.
static void test_busy_server_still_expires(void **state) {
  (void)state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 1;
  cfg.idle_timeout = IDLE_TIMEOUT;
  cfg.max_substeps = 10000000;
  cfg.max_step_seconds = 4 * IDLE_TIMEOUT;  // ends both long steps
  pthread_t th;
  srv *sv = test_server_start(&cfg, &th);
  assert_non_null(sv);
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "ball", NULL, err, sizeof err);
  ccsim_client *c = ccsim_client_connect(srv_endpoint(sv), 10000, 0, err, sizeof err);
  ccsim_client *c2 = ccsim_client_connect(srv_endpoint(sv), 10000, 0, err, sizeof err);
  assert_non_null(c);
  assert_non_null(c2);
  ccsim_session *a = ccsim_session_create(c, sc), *b = ccsim_session_create(c2, sc);
  ccsim_session *idle = ccsim_session_create(c, sc);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(idle);
  for (int k = 0; k < 30; k++) {
    assert_int_equal(ccsim_session_step(a, 1e-3, NULL, 0), CCSIM_OK);
  }
  long_step lb = {.s = b};
  pthread_t bt;
  assert_int_equal(pthread_create(&bt, NULL, long_step_main, &lb), 0);
  sleep_s(0.1);  // B's step runs on the worker
  int ra = ccsim_session_step_n(a, 1e-3, 3000000, NULL, 0, NULL, NULL);
  pthread_join(bt, NULL);
  sleep_s(0.2);  // a housekeeping round or more
  int st = ccsim_session_get_state(idle);
  print_message("long steps: %s and %s; the idle session then: %s\n", ccsim_status_name(ra),
                ccsim_status_name(lb.rc), ccsim_status_name(st));
  assert_int_equal(ra, CCSIM_ELIMIT);
  assert_int_equal(lb.rc, CCSIM_ELIMIT);
  assert_int_equal(st, CCSIM_EEXPIRED);
  ccsim_session_release(&a);
  ccsim_session_release(&b);
  ccsim_session_release(&idle);
  ccsim_client_destroy(&c);
  ccsim_client_destroy(&c2);
  ccsim_scene_destroy(&sc);
  test_server_stop(&sv, th);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--doomed-client") == 0) {
    doomed_client(argv[2], atoi(argv[3]));  // never returns
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_killed_client_session_expires, setup, teardown),
      cmocka_unit_test_setup_teardown(test_idle_session_expires_for_its_controller, setup,
                                      teardown),
      cmocka_unit_test(test_long_request_is_not_idleness),
      cmocka_unit_test(test_stopped_server_is_not_idleness),
      cmocka_unit_test(test_busy_server_still_expires),
      cmocka_unit_test_setup_teardown(test_server_heartbeats_end_a_silent_connection, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_client_heartbeats_end_a_silent_connection, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
