// Round trip per Step over tcp loopback for a one-body scene with 1, 8 and 16 concurrent
// clients (each on its own session): median and p99 [us] and steps per second, next to a
// raw libzmq DEALER/ROUTER request/reply with the same message sizes in the same program
// (the floor), and the core's own step time. With --paced S, a 1 kHz lockstep-paced
// session runs for S seconds while 8 other sessions (--paced-busy) step flat out, and its deadline
// misses (split into late requests and the server's own) and worst lateness are reported,
// next to the wake-up lateness of bare timer threads, one pinned to each core, over the
// same time: the machine's own floor. Each late step is matched with the stalls those
// threads saw, from the client's view (when its replies came).
//
// Two floors: "floor" gives every raw client its own ZeroMQ context, as libccsim's clients
// have and as a client in another process would (the server's and the client's ZeroMQ I/O
// threads both carry each message); "shared-context floor" puts the raw clients in the echo
// server's context, so one ZeroMQ I/O thread serves both ends of every connection - a
// topology no separate client can have, printed for comparison with older figures.
//
// CPU per round trip is given for the whole process and split by thread: the server's own
// (the echo's in the floor), the clients' (libccsim's or raw libzmq calls) and the ZeroMQ
// I/O threads' of both ends, which carry the same messages in both.
//
// The goal line checks median <= 1.3 x floor + physics with the core's own median step
// time as the physics allowance; the "physics" column is the server's StepStats.physics_us
// per request, wall time in sim_step truncated to whole microseconds per step, which grows
// when the server's thread loses its CPU. With more clients than cores a second line
// allows N / cores core steps instead of one: under saturation each request waits for
// about that much physics, its own step and others' (the goal's text counts one step).
//
//   bench_service [--steps N] [--paced S] [--paced-over tcp|ipc] [--rt PRIO] [--spin US]
//                 [--inline US] [--clients N] [--only W] [--rounds R] [--client-heartbeat MS]
//                 [--probe-hz HZ] [--paced-busy N]
//   (defaults: 5000 steps per client, no paced run, normal priority, no spinning; --rt runs
//   the server's threads and the paced client SCHED_FIFO at PRIO; --spin and --inline set
//   the server's spin_us and inline_us (default: the server's); --paced-over ipc runs the
//   paced session and its 8 neighbours over a Unix socket instead of tcp loopback;
//   --clients N measures only N clients instead of 1, 8 and 16; --only shared, floor or
//   service measures only that one, for profiling it; the floors and the service alternate
//   in R rounds (default 5) whose samples are pooled; --client-heartbeat sets the ccsim
//   clients' heartbeat_ms, default libccsim's; --probe-hz the timer threads' rate, default
//   1000: a stall shorter than their period may fall between two wake-ups; faster ones
//   made this virtual machine stall more; --paced-busy the sessions stepping flat out beside
//   the paced one, default 8: 0 shows what the machine does to a paced session alone)
#define _GNU_SOURCE  // pthread_setaffinity_np, CPU_SET
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "sim_data.h"
#include "sim_model.h"
#include "srv.h"
#include "wire.h"

static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81],"
    " \"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"inertia\": [0.1, 0.2, 0.3],"
    "   \"pose\": {\"p\": [0, 0, 10]}, \"velocity\": {\"v\": [1, 0, 0], \"w\": [0.1, 1, 0.1]}}]}";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct result {
  double median, p99, rate;  // [us], [us], round trips per second (all clients)
} result;

static result summarize(double *t, size_t n, double wall_us) {
  qsort(t, n, sizeof *t, cmp);
  result r = {t[n / 2], t[(size_t)(0.99 * (double)(n - 1))], (double)n / (wall_us * 1e-6)};
  return r;
}

// ---- the floor: raw DEALER/ROUTER with the same message sizes ----------------------------

typedef struct echo_server {
  void *ctx, *router;
  char endpoint[256];
  size_t reply_len;
  atomic_int stop;
  pthread_t th;
} echo_server;

static void *echo_main(void *p) {
  echo_server *e = p;
  prctl(PR_SET_NAME, "bench-echo", 0, 0, 0);  // its CPU apart from the clients' in perf
  uint8_t *reply = calloc(1, e->reply_len);
  while (!atomic_load(&e->stop)) {
    zmq_pollitem_t it = {.socket = e->router, .events = ZMQ_POLLIN};
    if (zmq_poll(&it, 1, 50) <= 0) {
      continue;
    }
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    zmq_msg_recv(&id, e->router, 0);
    zmq_msg_recv(&body, e->router, 0);
    zmq_msg_send(&id, e->router, ZMQ_SNDMORE);
    zmq_send(e->router, reply, e->reply_len, 0);
    zmq_msg_close(&body);
  }
  free(reply);
  return NULL;
}

typedef struct worker_arg {
  const char *endpoint;
  const ccsim_scene *scene;
  int raw;              // 1: raw zmq round trips, 0: ccsim Steps
  void *ctx;            // raw: the echo server's context to share, or NULL for one's own
  size_t req_len;
  int n;
  double *t;            // (n) round trips [us]
  uint64_t physics_us;  // ccsim: physics time reported by the server
  int status;
  pthread_barrier_t *go;    // all warmed up: the measurement starts
  pthread_barrier_t *done;  // twice: all measured; then the CPU times are taken (every
                            // thread, ZeroMQ's too, alive until then)
} worker_arg;

static int client_heartbeat_ms = -1;  // --client-heartbeat; -1: libccsim's default

// A client as libccsim makes one, with the heartbeat asked for; NULL with err set.
static ccsim_client *bench_client(const char *endpoint, char *err, size_t err_sz) {
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  if (client_heartbeat_ms >= 0) {
    o.heartbeat_ms = client_heartbeat_ms;
  }
  return ccsim_client_new_opts(endpoint, &o, err, err_sz);
}

static void *worker(void *p) {
  worker_arg *a = p;
  prctl(PR_SET_NAME, "bench-client", 0, 0, 0);
  a->status = 0;
  if (a->raw) {
    void *own = a->ctx ? NULL : zmq_ctx_new();
    void *s = zmq_socket(a->ctx ? a->ctx : own, ZMQ_DEALER);
    zmq_connect(s, a->endpoint);
    uint8_t *req = calloc(1, a->req_len);
    zmq_msg_t m;
    for (int k = 0; k < 100; k++) {  // warm-up
      zmq_send(s, req, a->req_len, 0);
      zmq_msg_init(&m);
      zmq_msg_recv(&m, s, 0);
      zmq_msg_close(&m);
    }
    pthread_barrier_wait(a->go);
    for (int k = 0; k < a->n; k++) {
      double t0 = now_us();
      zmq_send(s, req, a->req_len, 0);
      zmq_msg_init(&m);
      zmq_msg_recv(&m, s, 0);
      zmq_msg_close(&m);
      a->t[k] = now_us() - t0;
    }
    pthread_barrier_wait(a->done);
    pthread_barrier_wait(a->done);
    free(req);
    int linger = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s);
    if (own) {
      zmq_ctx_term(own);
    }
    return NULL;
  }
  char err[256];
  ccsim_client *c = bench_client(a->endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, a->scene) : NULL;
  for (int k = 0; k < 100 && s; k++) {
    ccsim_session_step(s, 1e-3, NULL, 0);
  }
  pthread_barrier_wait(a->go);
  if (!s) {
    a->status = -1;
  }
  for (int k = 0; k < a->n && s; k++) {
    double t0 = now_us();
    if (ccsim_session_step(s, 1e-3, NULL, 0) != CCSIM_OK) {
      fprintf(stderr, "bench: %s\n", ccsim_client_errmsg(c));
      a->status = -1;
      break;
    }
    a->t[k] = now_us() - t0;
    a->physics_us += ccsim_session_stats(s)->physics_us;
  }
  pthread_barrier_wait(a->done);
  pthread_barrier_wait(a->done);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  return NULL;
}

// The process's threads by what they are, told apart by the names they give themselves
enum { G_SERVER, G_CLIENT, G_ECHO, G_ZMQ_SERVER, G_ZMQ_CLIENT, NGROUP };

// ZeroMQ's threads all have one name: those of the server's and the echo's contexts are
// the ones that exist before a measurement's clients start (the earlier ones' are gone)
static long server_zmq[8];
static int nserver_zmq;

// CPU time [us] each group of this process's threads has run so far, from the scheduler's
// per-thread nanosecond account (getrusage has no per-thread split, /proc's stat ticks
// are 10 ms); threads of no group (main, ZeroMQ's reaper) are left out
static void group_cpu(double out[NGROUP], int note_server_zmq) {
  memset(out, 0, NGROUP * sizeof out[0]);
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') {
      continue;
    }
    char path[300], comm[32] = "";
    unsigned long long ns = 0;
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    int ok = f && fgets(comm, sizeof comm, f);
    comm[strcspn(comm, "\n")] = 0;
    if (f) fclose(f);
    snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
    f = ok ? fopen(path, "r") : NULL;
    ok = f && fscanf(f, "%llu", &ns) == 1;
    if (f) fclose(f);
    long tid = atol(e->d_name);
    int g = !strncmp(comm, "ccsim-", 6)          ? G_SERVER
            : !strncmp(comm, "bench-client", 12) ? G_CLIENT
            : !strncmp(comm, "bench-echo", 10)   ? G_ECHO
            : !strncmp(comm, "ZMQbg/IO", 8)      ? G_ZMQ_CLIENT
                                                 : -1;
    if (g == G_ZMQ_CLIENT && note_server_zmq && nserver_zmq < 8) {
      server_zmq[nserver_zmq++] = tid;
    }
    for (int k = 0; g == G_ZMQ_CLIENT && k < nserver_zmq; k++) {
      g = server_zmq[k] == tid ? G_ZMQ_SERVER : g;
    }
    if (ok && g >= 0) {
      out[g] += 1e-3 * (double)ns;
    }
  }
  if (d) closedir(d);
}

// round trips of one kind pooled over the rounds of a measurement
typedef struct samples {
  double *t;  // (cap) round trips [us]
  size_t n, cap;
  double wall_us;  // summed over the rounds
  double phys_us;  // ccsim: server physics time summed over the round trips [us]
  double cpu_us;   // the whole process's CPU time (user + system) over the rounds [us]
  double csw;      // the whole process's context switches over the rounds
  double grp_us[NGROUP];  // CPU time of each group of threads over the rounds [us]
} samples;

// CPU time [us] and context switches of the whole process so far: the server, the echo
// server and every client thread live in it, so per round trip this is what a step costs
// the machine, a figure other programs' load on the shared machine hardly moves
static void process_usage(double *cpu_us, double *csw) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *cpu_us = 1e6 * (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  *csw = (double)(ru.ru_nvcsw + ru.ru_nivcsw);
}

// nclients threads, n round trips each; raw or ccsim; appended to *out
static int run_clients(const char *endpoint, const ccsim_scene *sc, int raw, void *ctx,
                       size_t req_len, int nclients, int n, samples *out) {
  worker_arg *a = calloc((size_t)nclients, sizeof *a);
  pthread_t *th = calloc((size_t)nclients, sizeof *th);
  double *all = out->t + out->n;
  pthread_barrier_t go, done;
  pthread_barrier_init(&go, NULL, (unsigned)nclients + 1);
  pthread_barrier_init(&done, NULL, (unsigned)nclients + 1);
  double g0[NGROUP], g1[NGROUP];
  nserver_zmq = 0;
  group_cpu(g0, 1);  // only to note the ZeroMQ threads of the servers; taken again below
  for (int i = 0; i < nclients; i++) {
    a[i] = (worker_arg){.endpoint = endpoint,
                        .scene = sc,
                        .raw = raw,
                        .ctx = ctx,
                        .req_len = req_len,
                        .n = n,
                        .t = all + (size_t)i * (size_t)n,
                        .go = &go,
                        .done = &done};
    pthread_create(&th[i], NULL, worker, &a[i]);
  }
  pthread_barrier_wait(&go);
  double t0 = now_us(), cpu0, csw0, cpu1, csw1;
  process_usage(&cpu0, &csw0);
  group_cpu(g0, 0);
  pthread_barrier_wait(&done);
  out->wall_us += now_us() - t0;
  process_usage(&cpu1, &csw1);
  group_cpu(g1, 0);
  pthread_barrier_wait(&done);
  int rc = 0;
  uint64_t phys = 0;
  for (int i = 0; i < nclients; i++) {
    pthread_join(th[i], NULL);
    rc |= a[i].status;
    phys += a[i].physics_us;
  }
  out->cpu_us += cpu1 - cpu0;
  out->csw += csw1 - csw0;
  for (int g = 0; g < NGROUP; g++) {
    out->grp_us[g] += g1[g] - g0[g];
  }
  out->n += (size_t)nclients * (size_t)n;
  out->phys_us += (double)phys;
  pthread_barrier_destroy(&go);
  pthread_barrier_destroy(&done);
  free(th);
  free(a);
  return rc;
}

// the exact sizes of a Step request and its reply for this scene, from the real dispatcher
static void message_sizes(const ccsim_scene *sc, size_t *req_len, size_t *rep_len) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = NULL;
  char err[256];
  srv *s = srv_new(&cfg, err, sizeof err);
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  ccsim__request__init(&rq);
  ccsim__create_session__init(&cs);
  cs.scene = (Ccsim__Scene *)ccsim_scene_message(sc);
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = &cs;
  uint8_t buf[4096];
  size_t n = ccsim__request__pack(&rq, buf), rlen = 0;
  uint8_t *rep = srv_handle(s, buf, n, &rlen);
  Ccsim__Reply *r = ccsim__reply__unpack(NULL, rlen, rep);
  free(rep);
  Ccsim__Step st;
  ccsim__step__init(&st);
  st.has_dt = 1;
  st.dt = 1e-3;
  ccsim__request__init(&rq);
  rq.has_request_id = rq.has_seq = 1;
  rq.request_id = 123456;
  rq.seq = 1;
  rq.session_id = r->create_session->session_id;
  rq.token = r->create_session->controller_token;
  rq.body_case = CCSIM__REQUEST__BODY_STEP;
  rq.step = &st;
  *req_len = ccsim__request__pack(&rq, buf);
  rep = srv_handle(s, buf, *req_len, rep_len);
  Ccsim__Reply *sr = ccsim__reply__unpack(NULL, *rep_len, rep);
  if (!sr || sr->body_case != CCSIM__REPLY__BODY_STEP) {
    fprintf(stderr, "bench: the sizing step failed: %s\n",
            sr && sr->error && sr->error->message ? sr->error->message : "?");
  }
  if (sr) ccsim__reply__free_unpacked(sr, NULL);
  free(rep);
  ccsim__reply__free_unpacked(r, NULL);
  srv_destroy(&s);
}

static void *serve(void *arg) {
  srv_run(arg);
  return NULL;
}

// a server from cfg serving on *th, or NULL with the reason on stderr
static srv *server_start(const srv_config *cfg, pthread_t *th) {
  char err[512];
  srv *s = srv_new(cfg, err, sizeof err);
  if (!s) {
    fprintf(stderr, "bench: %s\n", err);
    return NULL;
  }
  pthread_create(th, NULL, serve, s);
  return s;
}

// stop the server started on th, join it and free it
static void server_stop(srv **s, pthread_t th) {
  srv_stop(*s);
  pthread_join(th, NULL);
  srv_destroy(s);
}

// ---- paced session next to busy ones ------------------------------------------------------

typedef struct busy_arg {
  const char *endpoint;
  const ccsim_scene *scene;
  atomic_int *stop;
  long steps;
} busy_arg;

static void *busy(void *p) {
  busy_arg *a = p;
  char err[256];
  ccsim_client *c = bench_client(a->endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, a->scene) : NULL;
  while (s && !atomic_load(a->stop) && ccsim_session_step(s, 1e-3, NULL, 0) == CCSIM_OK) {
    a->steps++;
  }
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  return NULL;
}

// The machine's own floor for pacing: one bare thread per core, pinned to it, that only
// sleeps to its next wake-up (1 kHz, --probe-hz) and notes how late it woke (with --rt at
// a priority above all of ours). A wake-up much later than that is a hiccup of its core (the
// host running another guest on that virtual CPU, the kernel) that any thread on that core
// sat through, whatever the software. One probe per core because such a stall is often
// one core's: a floating probe on the other core would not see it. Each stall over
// PROBE_STALL_US is kept, to be matched with the paced session's late steps.
#define PROBE_STALL_US 200.0
#define PROBE_MAX_STALLS 8192

typedef struct stall {
  double from, to;  // monotonic [us]: the wake-up was due, it came
} stall;

typedef struct probe_arg {
  atomic_int *stop;
  int rt, cpu;
  long period_ns;
  long wakes, over_half, over_period;
  double worst;  // [us]
  stall *stalls;  // (PROBE_MAX_STALLS)
  int nstalls;
} probe_arg;

static void *probe(void *p) {
  probe_arg *a = p;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(a->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (a->rt > 0) {
    struct sched_param sp = {.sched_priority = a->rt};
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!atomic_load(a->stop)) {
    next.tv_nsec += a->period_ns;
    if (next.tv_nsec >= 1000000000L) {
      next.tv_nsec -= 1000000000L;
      next.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    double due = 1e6 * (double)next.tv_sec + 1e-3 * (double)next.tv_nsec;
    double late = now_us() - due;
    a->wakes++;
    a->over_half += late > 500;
    a->over_period += late > 1000;
    if (late > a->worst) {
      a->worst = late;
    }
    if (late > PROBE_STALL_US && a->nstalls < PROBE_MAX_STALLS) {
      a->stalls[a->nstalls++] = (stall){due, due + late};
    }
  }
  return NULL;
}

// whether any probe saw its core stalled during [from, to] (monotonic [us])
static int stalled_within(const probe_arg *pa, int nprobe, double from, double to) {
  for (int i = 0; i < nprobe; i++) {
    for (int k = 0; k < pa[i].nstalls; k++) {
      if (pa[i].stalls[k].from <= to && pa[i].stalls[k].to >= from) {
        return 1;
      }
    }
  }
  return 0;
}

// the host's steal time [ms] of every core so far (/proc/stat, in clock ticks): time a
// virtual CPU was ready but the host ran something else; -1 where unknown
static void steal_ms(double *out, int ncpu) {
  for (int i = 0; i < ncpu; i++) {
    out[i] = -1;
  }
  FILE *f = fopen("/proc/stat", "r");
  char line[512];
  long tick = sysconf(_SC_CLK_TCK);
  while (f && fgets(line, sizeof line, f)) {
    int cpu;
    unsigned long long v[8];
    if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
               &v[3], &v[4], &v[5], &v[6], &v[7]) == 9 &&
        cpu >= 0 && cpu < ncpu && tick > 0) {
      out[cpu] = 1e3 * (double)v[7] / (double)tick;
    }
  }
  if (f) fclose(f);
}

static void paced_run(const char *endpoint, const ccsim_scene *sc, double seconds, int rt,
                      int probe_hz, int nbusy) {
  atomic_int stop = 0;
  busy_arg b[64];
  pthread_t th[64];
  for (int i = 0; i < nbusy; i++) {
    b[i] = (busy_arg){.endpoint = endpoint, .scene = sc, .stop = &stop};
    pthread_create(&th[i], NULL, busy, &b[i]);
  }
  // with --rt, above every thread of ours, so what they see is the machine's, not ours
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nprobe = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;
  probe_arg *pa = calloc((size_t)nprobe, sizeof *pa);
  pthread_t *pth = calloc((size_t)nprobe, sizeof *pth);
  double steal0[64], steal1[64];
  steal_ms(steal0, nprobe);
  for (int i = 0; i < nprobe; i++) {
    pa[i] = (probe_arg){.stop = &stop,
                        .rt = rt > 0 ? (rt + 10 < 99 ? rt + 10 : 99) : 0,
                        .cpu = i,
                        .period_ns = 1000000000L / probe_hz,
                        .stalls = calloc(PROBE_MAX_STALLS, sizeof(stall))};
    pthread_create(&pth[i], NULL, probe, &pa[i]);
  }
  char err[256];
  if (rt > 0) {
    struct sched_param sp = {.sched_priority = rt};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
      fprintf(stderr, "bench: no SCHED_FIFO for the paced client\n");
    }
  }
  ccsim_client *c = bench_client(endpoint, err, sizeof err);
  ccsim_session *s = ccsim_session_create_paced(c, sc, CCSIM_PACING_LOCKSTEP, 0);
  long n = (long)(seconds * 1000);
  // per step: when its reply came [us] and whether the server counted it late
  double *got = calloc((size_t)n + 1, sizeof *got);
  unsigned char *late = calloc((size_t)n + 1, 1);
  uint64_t misses = 0;
  double t0 = now_us();
  got[0] = t0;
  long done = 0;
  for (long k = 1; k <= n && s; k++) {
    if (ccsim_session_step(s, 1e-3, NULL, 0) != CCSIM_OK) {
      fprintf(stderr, "bench: paced: %s\n", ccsim_client_errmsg(c));
      break;
    }
    got[k] = now_us();
    uint64_t m = ccsim_session_deadline(s)->misses;
    late[k] = m > misses;
    misses = m;
    done = k;
  }
  double wall = (now_us() - t0) * 1e-6;
  atomic_store(&stop, 1);
  for (int i = 0; i < nprobe; i++) {
    pthread_join(pth[i], NULL);
  }
  steal_ms(steal1, nprobe);
  long others = 0;
  for (int i = 0; i < nbusy; i++) {
    pthread_join(th[i], NULL);
    others += b[i].steps;
  }
  if (s) {
    const ccsim_deadline_stats *d = ccsim_session_deadline(s);
    printf(
        "paced 1 kHz lockstep over %s for %.1f s (%.3f s wall) beside %d busy sessions "
        "(%.0f steps/s together): %llu of %llu steps late, worst lateness %.1f us; of the "
        "late steps %llu had their request read after the deadline, %llu were late "
        "by the server; held replies went out at most %.1f us after their time\n",
        endpoint, seconds, wall, nbusy, (double)others / wall, (unsigned long long)d->misses,
        (unsigned long long)d->paced_steps, 1e6 * d->worst_lateness,
        (unsigned long long)d->late_requests, (unsigned long long)(d->misses - d->late_requests),
        1e6 * d->worst_release_delay);
    // Step k's reply is held until the session's start + k ms and never leaves before:
    // the earliest reply against that schedule places it (to within a round trip's
    // jitter). A late step's time runs from when the reply before it was due (its
    // delivery is on the path) to its own reply; a step late because the one before was
    // (the schedule is absolute: a long stall makes a chain) counts apart.
    double origin = got[1] - 1000;
    for (long k = 2; k <= done; k++) {
      origin = got[k] - 1000.0 * (double)k < origin ? got[k] - 1000.0 * (double)k : origin;
    }
    long stalled = 0, chained = 0, unexplained = 0;
    for (long k = 1; k <= done; k++) {
      if (!late[k]) continue;
      if (stalled_within(pa, nprobe, origin + 1000.0 * (double)(k - 1), got[k])) {
        stalled++;
      } else if (late[k - 1]) {
        chained++;
      } else {
        unexplained++;
        // CLOCK_MONOTONIC, as perf record -k CLOCK_MONOTONIC stamps a trace of the run
        printf(
            "  late step %ld at %.3f s (monotonic %.6f s): no core stalled over %.0f us "
            "since the reply before was due (its reply %.1f us after that one's, %.1f us "
            "after its time)\n",
            k, 1e-6 * (got[k] - t0), 1e-6 * got[k], PROBE_STALL_US, got[k] - got[k - 1],
            got[k] - origin - 1000.0 * (double)k);
      }
    }
    // "neither" is not "ours" by elimination: several shorter waits on the round trip's
    // hops add up unseen (under the threshold, or between two wake-ups of a probe)
    printf(
        "late steps by cause, from the client's view: %ld with a core stalled over %.0f us "
        "since the reply before was due, %ld right after a late step, %ld with neither "
        "(no stall the probes could see)\n",
        stalled, PROBE_STALL_US, chained, unexplained);
    long over_half = 0, over_period = 0, wakes = 0, nst = 0;
    double worst = 0;
    for (int i = 0; i < nprobe; i++) {
      over_half += pa[i].over_half;
      over_period += pa[i].over_period;
      wakes += pa[i].wakes;
      nst += pa[i].nstalls;
      worst = pa[i].worst > worst ? pa[i].worst : worst;
    }
    printf(
        "machine's own floor meanwhile: %d bare %d Hz timer threads, one pinned to each core "
        "(%s), woke > %.0f us late %ld times, > 0.5 ms %ld, > 1 ms %ld of %ld, worst %.1f us; "
        "the host's steal time",
        nprobe, probe_hz, pa[0].rt > 0 ? "SCHED_FIFO above all ours" : "normal priority",
        PROBE_STALL_US, nst, over_half, over_period, wakes, worst);
    for (int i = 0; i < nprobe; i++) {
      if (steal0[i] >= 0 && steal1[i] >= 0) {
        printf(" cpu%d %.0f ms", i, steal1[i] - steal0[i]);
      }
    }
    printf("\n");
  }
  for (int i = 0; i < nprobe; i++) {
    free(pa[i].stalls);
  }
  free(pa);
  free(pth);
  free(got);
  free(late);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
}

int main(int argc, char **argv) {
  int n = 5000;
  double paced = 0;
  int rt = 0, spin = 0, only_clients = 0, want_shared = 1, want_floor = 1, want_svc = 1;
  int rounds = 5, inline_us = -1, paced_ipc = 0, probe_hz = 1000, paced_busy = 8;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--paced") && i + 1 < argc) {
      paced = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--paced-over") && i + 1 < argc) {
      i++;
      paced_ipc = !strcmp(argv[i], "ipc");
      if (!paced_ipc && strcmp(argv[i], "tcp") != 0) {
        fprintf(stderr, "bench: --paced-over takes tcp or ipc\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--paced-busy") && i + 1 < argc) {
      paced_busy = atoi(argv[++i]);
      if (paced_busy < 0 || paced_busy > 64) {
        fprintf(stderr, "bench: --paced-busy takes 0 to 64\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--probe-hz") && i + 1 < argc) {
      probe_hz = atoi(argv[++i]);
      if (probe_hz < 1 || probe_hz > 20000) {
        fprintf(stderr, "bench: --probe-hz takes 1 to 20000\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--rt") && i + 1 < argc) {
      rt = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--spin") && i + 1 < argc) {
      spin = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--inline") && i + 1 < argc) {
      inline_us = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--clients") && i + 1 < argc) {
      only_clients = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--client-heartbeat") && i + 1 < argc) {
      client_heartbeat_ms = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
               (!strcmp(argv[i + 1], "shared") || !strcmp(argv[i + 1], "floor") ||
                !strcmp(argv[i + 1], "service"))) {
      i++;  // anything else is refused below: it would measure nothing and print NaN
      want_shared = !strcmp(argv[i], "shared");
      want_floor = !strcmp(argv[i], "floor");
      want_svc = !strcmp(argv[i], "service");
    } else {
      fprintf(stderr,
              "usage: bench_service [--steps N] [--paced SECONDS] [--paced-over tcp|ipc]\n"
              "                     [--rt PRIO] [--spin US] [--inline US] [--clients N]\n"
              "                     [--only shared|floor|service] [--rounds R]\n"
              "                     [--client-heartbeat MS] [--probe-hz HZ] [--paced-busy N]\n");
      return 2;
    }
  }
  if (n < 100) n = 100;
  if (rounds < 1) rounds = 1;
  if (rounds > n / 20) rounds = n / 20;
  char err[512];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "bench", NULL, err, sizeof err);
  if (!sc) {
    fprintf(stderr, "bench: %s\n", err);
    return 1;
  }
  // the core alone
  sim_model *m = wire_scene_compile(ccsim_scene_message(sc), err, sizeof err);
  sim_data *d = m ? sim_data_new(m, err, sizeof err) : NULL;
  double *t = calloc((size_t)n, sizeof *t);
  for (int k = 1; k <= 100; k++) sim_step(m, d, k * 1e-3);
  double tt = sim_data_time(d), c0 = now_us();
  for (int k = 0; k < n; k++) {
    double t0 = now_us();
    tt += 1e-3;
    sim_step(m, d, tt);
    t[k] = now_us() - t0;
  }
  result core = summarize(t, (size_t)n, now_us() - c0);
  free(t);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  size_t req_len = 0, rep_len = 0;
  message_sizes(sc, &req_len, &rep_len);
  printf("one-body scene, dt = 1 ms; Step request %zu bytes, reply %zu bytes; %d steps per "
         "client\n", req_len, rep_len, n);
  printf("core sim_step alone: median %.2f us, p99 %.2f us\n\n", core.median, core.p99);
  printf("%-7s | %-22s | %-34s | %-34s | %s\n", "clients", "shared-ctx floor: med/p99",
         "raw zmq floor: median / p99 / rt/s", "ccsim Step: median / p99 / steps/s",
         "median / floor (/ shared-ctx floor)");

  echo_server e = {.reply_len = rep_len};
  e.ctx = zmq_ctx_new();
  e.router = zmq_socket(e.ctx, ZMQ_ROUTER);
  zmq_bind(e.router, "tcp://127.0.0.1:*");
  size_t el = sizeof e.endpoint;
  zmq_getsockopt(e.router, ZMQ_LAST_ENDPOINT, e.endpoint, &el);
  pthread_create(&e.th, NULL, echo_main, &e);

  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = "auto";  // as ccsimd runs by default (nobody subscribes here)
  cfg.rt_priority = rt > 0 && rt < 100 ? rt : 0;
  cfg.spin_us = spin > 0 ? spin : 0;
  if (inline_us >= 0) {
    cfg.inline_us = inline_us;
  }
  pthread_t sth;
  srv *s = server_start(&cfg, &sth);
  if (!s) {
    return 1;
  }
  int counts[3] = {1, 8, 16}, ncounts = 3;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;
  if (only_clients > 0) {
    counts[0] = only_clients;
    ncounts = 1;
  }
  int rc = 0;
  for (int i = 0; i < ncounts; i++) {
    // the floors and the service take turns in short rounds, so a change in the machine's
    // load (it is shared) falls on all of them alike
    int per = (counts[i] == 1 ? n : n / 2) / rounds;
    size_t cap = (size_t)counts[i] * (size_t)per * (size_t)rounds;
    samples sh = {.t = calloc(cap, sizeof(double)), .cap = cap};
    samples fl = {.t = calloc(cap, sizeof(double)), .cap = cap};
    samples sv = {.t = calloc(cap, sizeof(double)), .cap = cap};
    for (int r = 0; r < rounds; r++) {
      if (want_shared) {
        rc |= run_clients(e.endpoint, sc, 1, e.ctx, req_len, counts[i], per, &sh);
      }
      if (want_floor) {
        rc |= run_clients(e.endpoint, sc, 1, NULL, req_len, counts[i], per, &fl);
      }
      if (want_svc) {
        rc |= run_clients(srv_endpoint(s), sc, 0, NULL, 0, counts[i], per, &sv);
      }
    }
    result shared_r = {0}, floor_r = {0}, svc = {0};
    double phys = 0;
    if (want_shared) {
      shared_r = summarize(sh.t, sh.n, sh.wall_us);
    }
    if (want_floor) {
      floor_r = summarize(fl.t, fl.n, fl.wall_us);
    }
    if (want_svc) {
      svc = summarize(sv.t, sv.n, sv.wall_us);
      phys = sv.phys_us / (double)sv.n;
    }
    free(sh.t);
    free(fl.t);
    free(sv.t);
    printf("%-7d | %7.1f us %8.1f us | %7.1f us %8.1f us %8.0f/s | %7.1f us %8.1f us %8.0f/s | "
           "%.2f (%.2f) physics %.1f us\n",
           counts[i], shared_r.median, shared_r.p99, floor_r.median, floor_r.p99, floor_r.rate,
           svc.median, svc.p99, svc.rate, svc.median / floor_r.median,
           svc.median / shared_r.median, phys);
    if (want_floor && want_svc) {
      // the server's physics_us is wall time in sim_step, which grows when its thread is
      // preempted under load; the core's uncontended median is the stricter allowance
      double goal = 1.3 * floor_r.median + core.median;
      printf(
          "        | goal median <= 1.3 x floor + core physics = %.1f us: %s (%+.1f us)%s\n", goal,
          svc.median <= goal ? "met" : "NOT met", svc.median - goal,
          counts[i] == 1 ? (svc.p99 < 1000 ? "; p99 < 1 ms: met" : "; p99 < 1 ms: NOT met") : "");
      if (counts[i] > ncpu) {
        // more clients than cores: every request waits for about N / cores steps (its own
        // and others'), physics the literal allowance (one step) does not count; shown
        // beside it, for the goal's owner to choose between the two readings
        double queued = 1.3 * floor_r.median + core.median * counts[i] / (double)ncpu;
        printf(
            "        | allowing the N / cores = %.1f steps of physics queued under "
            "saturation: goal %.1f us: %s (%+.1f us)\n",
            (double)counts[i] / ncpu, queued, svc.median <= queued ? "met" : "NOT met",
            svc.median - queued);
      }
      printf(
          "        | CPU per round trip (whole process): floor %.1f us, %.2f context "
          "switches; ccsim %.1f us, %.2f context switches\n",
          fl.cpu_us / (double)fl.n, fl.csw / (double)fl.n, sv.cpu_us / (double)sv.n,
          sv.csw / (double)sv.n);
      double fn = (double)fl.n, sn = (double)sv.n;
      printf(
          "        | CPU per round trip by thread, floor -> ccsim: server %.1f -> %.1f us "
          "(its ZeroMQ I/O %.1f -> %.1f), clients %.1f -> %.1f us (their ZeroMQ I/O %.1f -> "
          "%.1f)\n",
          fl.grp_us[G_ECHO] / fn, sv.grp_us[G_SERVER] / sn, fl.grp_us[G_ZMQ_SERVER] / fn,
          sv.grp_us[G_ZMQ_SERVER] / sn, fl.grp_us[G_CLIENT] / fn, sv.grp_us[G_CLIENT] / sn,
          fl.grp_us[G_ZMQ_CLIENT] / fn, sv.grp_us[G_ZMQ_CLIENT] / sn);
    }
    fflush(stdout);
  }
  if (paced > 0) {
    // over ipc the paced run gets a server of its own on a Unix socket (abstract name)
    srv *ps = s;
    pthread_t pth;
    char ipc[64];
    if (paced_ipc) {
      srv_config pc = cfg;
      snprintf(ipc, sizeof ipc, "ipc://@ccsim-bench-%d", (int)getpid());
      pc.bind = ipc;
      if (!(ps = server_start(&pc, &pth))) {
        return 1;
      }
    }
    paced_run(srv_endpoint(ps), sc, paced, cfg.rt_priority, probe_hz, paced_busy);
    if (ps != s) {
      server_stop(&ps, pth);
    }
  }
  server_stop(&s, sth);
  atomic_store(&e.stop, 1);
  pthread_join(e.th, NULL);
  int linger = 0;
  zmq_setsockopt(e.router, ZMQ_LINGER, &linger, sizeof linger);
  zmq_close(e.router);
  zmq_ctx_term(e.ctx);
  ccsim_scene_destroy(&sc);
  return rc ? 1 : 0;
}
