// The service's lifecycle and its I/O duty: sockets, the request loop a pool thread runs
// while it leads, sending replies and the state stream (from any thread), idle expiry and
// periodic saves.
#include "srv.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include "ccsim_key.h"
#include "ccsim_pb.h"
#include "srv_clock.h"
#include "srv_curve.h"
#include "srv_dispatch.h"
#include "srv_io.h"
#include "srv_job.h"
#include "srv_pool.h"
#include "srv_store.h"
#include "srv_stream.h"


void srv_config_defaults(srv_config *c) {
  memset(c, 0, sizeof *c);
  c->bind = SRV_DEFAULT_BIND;
  c->max_sessions = SRV_DEFAULT_MAX_SESSIONS;
  c->max_msg_bytes = SRV_DEFAULT_MAX_MSG_BYTES;
  c->max_bodies = SRV_DEFAULT_MAX_BODIES;
  c->max_triangles = SRV_DEFAULT_MAX_TRIANGLES;
  c->max_substeps = SRV_DEFAULT_MAX_SUBSTEPS;
  c->max_contacts = SRV_DEFAULT_MAX_CONTACTS;
  c->max_step_seconds = SRV_DEFAULT_MAX_STEP_SECONDS;
  c->idle_timeout = SRV_DEFAULT_IDLE_TIMEOUT;
  c->heartbeat_ms = 1000;
  c->spin_us = 0;
  c->inline_us = 50;
  c->model_cache_mb = SRV_DEFAULT_MODEL_CACHE_MB;
}

int srv_endpoint_is_local(const char *ep) {
  if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0) {
    return 1;
  }
  if (strncmp(ep, "tcp://", 6) != 0) {
    return 0;  // pgm, epgm, tipc, vmci, ws: other machines' transports
  }
  // bound, a name such as localhost reads as its address
  const char *h = ep + 6;
  return strncmp(h, "127.", 4) == 0 || strncmp(h, "[::1]:", 6) == 0;
}

// A socket other machines can reach without CURVE: say so on stderr (the bound endpoint).
static void warn_if_open(const srv_config *c, const char *what, const char *ep) {
  if (!srv_endpoint_is_local(ep) && !c->curve_secret_file) {
    fprintf(stderr,
            "ccsimd: warning: %s %s, reachable from other machines without "
            "encryption or authentication (see --curve-secret)\n",
            what, ep);
  }
}

// "auto": the request endpoint's host on a free port (tcp), or PATH-stream (ipc)
static int stream_endpoint_for(const char *bound, char *out, size_t n) {
  if (strncmp(bound, "tcp://", 6) == 0) {
    const char *colon = strrchr(bound, ':');
    if (!colon || colon < bound + 6) {
      return -1;
    }
    snprintf(out, n, "%.*s:*", (int)(colon - bound), bound);
    return 0;
  }
  if (strncmp(bound, "ipc://", 6) == 0) {
    snprintf(out, n, "%s-stream", bound);
    return 0;
  }
  return -1;
}

static int check_config(const srv_config *c, char *err, size_t err_sz) {
  const char *what = NULL;
  if (c->max_sessions <= 0 || c->max_sessions > 100000) {
    what = "max_sessions must be in [1, 100000]";
  } else if (c->max_msg_bytes < 64 || c->max_msg_bytes > (size_t)1 << 31) {
    what = "max_msg_bytes must be in [64, 2^31]";
  } else if (c->max_bodies <= 0 || c->max_bodies > SIM_MAX_BODIES) {
    what = "max_bodies must be in [1, 4096]";
  } else if (c->max_triangles < 0) {
    what = "max_triangles must be >= 0";
  } else if (c->max_substeps <= 0 || c->max_substeps > 10000000) {
    what = "max_substeps must be in [1, 1e7]";
  } else if (c->max_contacts < 0) {
    what = "max_contacts must be >= 0";
  } else if (c->workers < 0 || c->workers > 1024) {
    what = "workers must be in [0, 1024]";
  } else if (!(c->max_step_seconds >= 0) || c->max_step_seconds > 1e9) {
    what = "max_step_seconds must be in [0, 1e9] s";
  } else if (!(c->idle_timeout >= 0) || c->idle_timeout > 1e9) {
    what = "idle_timeout must be in [0, 1e9] s";
  } else if (c->rt_priority < 0 || c->rt_priority > 99) {
    what = "rt_priority must be in [0, 99]";
  } else if (c->spin_us < 0 || c->spin_us > 1000000) {
    what = "spin_us must be in [0, 1e6]";
  } else if (c->inline_us < 0 || c->inline_us > 1000000) {
    what = "inline_us must be in [0, 1e6]";
  } else if (c->heartbeat_ms < 0 || c->heartbeat_ms > 3600000) {
    what = "heartbeat_ms must be in [0, 3.6e6]";
  } else if (!(c->checkpoint_interval >= 0) || c->checkpoint_interval > 1e9) {
    what = "checkpoint_interval must be in [0, 1e9] s";
  } else if (!c->curve_secret_file != !c->curve_allow_dir) {
    what = "CURVE needs both a secret key file and an allow directory";
  }
  if (what) {
    ccsim_set_err(err, err_sz, "bad server configuration: %s", what);
    return -1;
  }
  return 0;
}

static void *probe_main(void *arg) {
  return arg;
}

// 0 when a thread may run SCHED_FIFO at prio, else the error. A thread of its own is the
// probe: the caller's scheduling is left alone.
static int realtime_refused(int prio) {
  pthread_attr_t a;
  struct sched_param sp = {.sched_priority = prio};
  pthread_t t;
  int rc = pthread_attr_init(&a);
  if (rc == 0) {
    rc = pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
    rc = rc ? rc : pthread_attr_setschedpolicy(&a, SCHED_FIFO);
    rc = rc ? rc : pthread_attr_setschedparam(&a, &sp);
    rc = rc ? rc : pthread_create(&t, &a, probe_main, NULL);
    if (rc == 0) {
      pthread_join(t, NULL);
    }
    pthread_attr_destroy(&a);
  }
  return rc;
}

// A new admin token for s, written to path (created or truncated; mode 600, so only the
// server's user reads it): 0, or -1 with the reason in err.
static int write_admin_token(srv *s, const char *path, char *err, size_t err_sz) {
  if (srv_new_id(s, s->admin_token) != 0) {
    ccsim_set_err(err, err_sz, "no randomness for an admin token");
    return -1;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  char line[SRV_ID_LEN + 2];
  snprintf(line, sizeof line, "%s\n", s->admin_token);
  int ok = fd >= 0 && fchmod(fd, 0600) == 0 &&
           write(fd, line, SRV_ID_LEN + 1) == (ssize_t)(SRV_ID_LEN + 1);
  int e = errno;
  if (fd >= 0 && close(fd) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (!ok) {
    ccsim_set_err(err, err_sz, "cannot write the admin token to %s: %s", path, strerror(e));
    s->admin_token[0] = 0;
    return -1;
  }
  return 0;
}

srv *srv_new(const srv_config *c, char *err, size_t err_sz) {
  srv_config def;
  if (!c) {
    srv_config_defaults(&def);
    c = &def;
  }
  if (check_config(c, err, err_sz) != 0) {
    return NULL;
  }
  int rt_err = c->rt_priority > 0 ? realtime_refused(c->rt_priority) : 0;
  if (rt_err) {
    // ZeroMQ's I/O thread would abort the process on the same refusal; and a HIL rig that
    // asked for real time should not run on without it
    ccsim_set_err(err, err_sz,
                  "real-time priority %d refused (%s): SCHED_FIFO needs CAP_SYS_NICE or an "
                  "rtprio limit of at least %d (ulimit -r); run without --realtime otherwise",
                  c->rt_priority, strerror(rt_err), c->rt_priority);
    return NULL;
  }
  int lock_fd = -1;
  if (c->state_dir && (lock_fd = srv_state_dir_open(c->state_dir, err, err_sz)) < 0) {
    return NULL;
  }
  srv *s = calloc(1, sizeof *s);
  if (!s) {
    if (lock_fd >= 0) close(lock_fd);
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  s->state_lock_fd = lock_fd;
  s->cfg = *c;
  s->pool_ops = (srv_pool_ops){
      .lead = srv_lead, .send = srv_send_job, .wake_open = srv_wake_open, .tick = srv_run_tick};
  s->store.tab = calloc((size_t)c->max_sessions, sizeof *s->store.tab);
  s->models = srv_models_new(c->model_cache_mb > SIZE_MAX >> 20 ? SIZE_MAX
                                                                 : c->model_cache_mb << 20);
  if (c->curve_allow_dir) {
    // read again at every handshake that may follow a change, long after the caller's
    // configuration is gone
    s->curve.allow_dir = strdup(c->curve_allow_dir);
    s->cfg.curve_allow_dir = s->curve.allow_dir;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->sock.mu, NULL);
  pthread_mutex_init(&s->stream.mu, NULL);
  s->sock.pub_fd = -1;
  atomic_init(&s->stream.published, 0);
  pthread_cond_init(&s->pool.pace_cv, &ca);
  pthread_condattr_destroy(&ca);
  ccsim_arena_init(&s->io.arena, 64 * 1024, 0);
  atomic_init(&s->stop, 0);
  atomic_init(&s->requests, 0);
  atomic_init(&s->pool.nready, 0);
  s->started = srv_now();
  if (!s->store.tab || !s->models || (c->curve_allow_dir && !s->curve.allow_dir)) {
    ccsim_set_err(err, err_sz, "out of memory");
    srv_destroy(&s);
    return NULL;
  }
  if (c->admin_token_file && write_admin_token(s, c->admin_token_file, err, err_sz) != 0) {
    srv_destroy(&s);
    return NULL;
  }
  if (!c->bind) {
    srv_restore_all(s);
    return s;
  }
  s->sock.zctx = zmq_ctx_new();
  if (s->sock.zctx && c->rt_priority > 0) {
    // ZeroMQ's own I/O thread carries every message: it gets the same priority
    zmq_ctx_set(s->sock.zctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
    zmq_ctx_set(s->sock.zctx, ZMQ_THREAD_PRIORITY, c->rt_priority);
  }
  s->sock.router = s->sock.zctx ? zmq_socket(s->sock.zctx, ZMQ_ROUTER) : NULL;
  s->sock.wake = s->sock.zctx ? zmq_socket(s->sock.zctx, ZMQ_PULL) : NULL;
  snprintf(s->sock.wake_ep, sizeof s->sock.wake_ep, SRV_WAKE_EP_FMT, (void *)s);
  size_t fdl = sizeof s->sock.router_fd, wfdl = sizeof s->sock.wake_fd;
  if (!s->sock.router || !s->sock.wake || zmq_bind(s->sock.wake, s->sock.wake_ep) != 0 ||
      zmq_getsockopt(s->sock.router, ZMQ_FD, &s->sock.router_fd, &fdl) != 0 ||
      zmq_getsockopt(s->sock.wake, ZMQ_FD, &s->sock.wake_fd, &wfdl) != 0) {
    ccsim_set_err(err, err_sz, "cannot create ZeroMQ sockets: %s", zmq_strerror(zmq_errno()));
    srv_destroy(&s);
    return NULL;
  }
  int linger = 0;
  int64_t maxmsg = (int64_t)c->max_msg_bytes + 1024;  // backstop; the real check replies
  zmq_setsockopt(s->sock.router, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s->sock.router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
  if (c->heartbeat_ms > 0) {
    // dead peers are noticed and their queues dropped; clients see the same interval
    int ivl = c->heartbeat_ms, tmo = 3 * c->heartbeat_ms;
    zmq_setsockopt(s->sock.router, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(s->sock.router, ZMQ_HEARTBEAT_TIMEOUT, &tmo, sizeof tmo);
    zmq_setsockopt(s->sock.router, ZMQ_HEARTBEAT_TTL, &tmo, sizeof tmo);
  }
  if (c->curve_secret_file && srv_curve_setup(s, s->sock.router, err, err_sz) != 0) {
    srv_destroy(&s);
    return NULL;
  }
  if (ccsim_zmq_ipv6_for(s->sock.router, c->bind) != 0 || zmq_bind(s->sock.router, c->bind) != 0) {
    ccsim_set_err(err, err_sz, "cannot bind %s: %s", c->bind, zmq_strerror(zmq_errno()));
    srv_destroy(&s);
    return NULL;
  }
  if (srv_handshake_monitor(s, s->sock.router, 0, err, err_sz) != 0) {
    srv_destroy(&s);
    return NULL;
  }
  size_t n = sizeof s->sock.endpoint;
  zmq_getsockopt(s->sock.router, ZMQ_LAST_ENDPOINT, s->sock.endpoint, &n);
  warn_if_open(c, "bound to", s->sock.endpoint);
  if (c->stream_bind) {
    char ep[300];
    if (strcmp(c->stream_bind, "auto") == 0) {
      if (stream_endpoint_for(s->sock.endpoint, ep, sizeof ep) != 0) {
        ccsim_set_err(err, err_sz, "cannot derive a stream endpoint from %s; give one",
                      s->sock.endpoint);
        srv_destroy(&s);
        return NULL;
      }
    } else {
      snprintf(ep, sizeof ep, "%s", c->stream_bind);
    }
    s->sock.pub = zmq_socket(s->sock.zctx, ZMQ_XPUB);
    int hwm = 1000;  // per subscriber: a slow one loses messages, never slows stepping
    if (s->sock.pub) {
      zmq_setsockopt(s->sock.pub, ZMQ_LINGER, &linger, sizeof linger);
      zmq_setsockopt(s->sock.pub, ZMQ_SNDHWM, &hwm, sizeof hwm);
      if (c->curve_secret_file && srv_curve_setup(s, s->sock.pub, err, err_sz) != 0) {
        srv_destroy(&s);
        return NULL;
      }
    }
    if (!s->sock.pub || ccsim_zmq_ipv6_for(s->sock.pub, ep) != 0 ||
        zmq_bind(s->sock.pub, ep) != 0) {
      ccsim_set_err(err, err_sz, "cannot bind the stream at %s: %s", ep, zmq_strerror(zmq_errno()));
      srv_destroy(&s);
      return NULL;
    }
    if (srv_handshake_monitor(s, s->sock.pub, 1, err, err_sz) != 0) {
      srv_destroy(&s);
      return NULL;
    }
    n = sizeof s->sock.stream_endpoint;
    zmq_getsockopt(s->sock.pub, ZMQ_LAST_ENDPOINT, s->sock.stream_endpoint, &n);
    warn_if_open(c, "streaming states at", s->sock.stream_endpoint);
    size_t pfl = sizeof s->sock.pub_fd;
    if (zmq_getsockopt(s->sock.pub, ZMQ_FD, &s->sock.pub_fd, &pfl) != 0) {
      ccsim_set_err(err, err_sz, "cannot poll the stream socket: %s", zmq_strerror(zmq_errno()));
      srv_destroy(&s);
      return NULL;
    }
  }
  int restored = srv_restore_all(s);
  if (restored > 0) {
    fprintf(stderr, "ccsimd: restored %d sessions from %s\n", restored, c->state_dir);
  }
  return s;
}

const char *srv_endpoint(const srv *s) {
  return s->sock.endpoint;
}

const char *srv_stream_endpoint(const srv *s) {
  return s->sock.stream_endpoint;
}

int srv_session_count(srv *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->store.nsessions;
  pthread_mutex_unlock(&s->mu);
  return n;
}

void srv_stop(srv *s) { atomic_store(&s->stop, 1); }

void srv_inline_stats(srv *s, uint64_t *inline_jobs, uint64_t *watchdog_passes,
                      uint64_t *step_passes) {
  pthread_mutex_lock(&s->mu);
  *inline_jobs = s->pool.inline_jobs;
  *watchdog_passes = s->pool.duty_gen;
  *step_passes = s->pool.step_passes;
  pthread_mutex_unlock(&s->mu);
}

uint8_t *srv_handle(srv *s, const uint8_t *req, size_t len, size_t *reply_len) {
  ccsim_arena_reset(&s->io.arena);
  srv_job *j = calloc(1, sizeof *j);
  if (!j) {
    return NULL;
  }
  if (srv_accept(s, j, req, len) == 0) {
    j->run(s, j, &s->io.arena);
    srv_session_done(s, j->ss, -1, srv_job_active_until(j));
  }
  uint8_t *out = j->reply;
  *reply_len = j->reply_len;
  j->reply = NULL;
  srv_job_free(j);
  return out;
}

// ---- the I/O duty -------------------------------------------------------------------

// sock.mu is held for one send or receive, a few microseconds, typically by the thread
// that just passed on the I/O duty (sending its reply) against the new leader (taking the
// next request): sleeping on the futex and being woken would cost more than the wait
static void sock_lock(srv *s) {
  if (pthread_mutex_trylock(&s->sock.mu) == 0) {
    return;
  }
  double until = srv_now() + 20e-6;
  for (int k = 1;; k++) {
    if (pthread_mutex_trylock(&s->sock.mu) == 0) {
      return;
    }
    if ((k & 15) == 0 && srv_now() > until) {
      break;  // the holder may have lost its CPU: sleep
    }
  }
  pthread_mutex_lock(&s->sock.mu);
}

// under sock.mu
static void send_reply_locked(srv *s, const srv_job *j) {
  if (!j->ident || !j->reply) {
    return;
  }
  if (zmq_send(s->sock.router, j->ident, j->ident_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    return;  // the client is gone
  }
  if (j->delim) {
    zmq_send(s->sock.router, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT);
  }
  zmq_send(s->sock.router, j->reply, j->reply_len, ZMQ_DONTWAIT);
}

// the leader's drain: takes sock.mu (no-op without a stream)
static void drain_subs(srv *s) {
  if (s->sock.pub) {
    sock_lock(s);
    srv_stream_drain_locked(s);
    pthread_mutex_unlock(&s->sock.mu);
  }
}

void *srv_wake_open(srv *s) {
  void *push = s->sock.zctx ? zmq_socket(s->sock.zctx, ZMQ_PUSH) : NULL;
  if (!push) {
    return NULL;
  }
  int one = 1, zero = 0;
  zmq_setsockopt(push, ZMQ_SNDHWM, &one, sizeof one);  // one pending wake-up is enough
  zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_connect(push, s->sock.wake_ep) != 0) {
    zmq_close(push);
    return NULL;
  }
  return push;
}

void srv_send_job(srv *s, srv_job *j, void *wake) {
  sock_lock(s);
  send_reply_locked(s, j);
  if (j->pub) {
    srv_stream_publish_locked(s, j->pub_topic, j->pub, j->pub_len);
  }
  // our calls may have processed the ROUTER's commands, and with them the signal on
  // router_fd the sleeping leader waits for: wake it when a request is waiting
  int wake_io = 0;
  if (wake && s->sock.io_sleeping) {
    int ev = 0;
    size_t evl = sizeof ev;
    wake_io = zmq_getsockopt(s->sock.router, ZMQ_EVENTS, &ev, &evl) == 0 && (ev & ZMQ_POLLIN);
  }
  pthread_mutex_unlock(&s->sock.mu);
  if (wake_io) {
    zmq_send(wake, "", 0, ZMQ_DONTWAIT);  // a full pipe means a wake-up is pending already
  }
  srv_job_free(j);
}

// wake-ups from senders: only their arrival matters; receiving until none is left also
// re-arms wake_fd
static void drain_wake(srv *s) {
  char b;
  while (zmq_recv(s->sock.wake, &b, sizeof b, ZMQ_DONTWAIT) >= 0) {
  }
}

// Receive one whole multipart message into frames (at most max); extra frames dropped.
static int recv_multipart(void *sock, zmq_msg_t *frames, int max, int *nframes) {
  int n = 0, more = 1;
  while (more) {
    zmq_msg_t tmp;
    zmq_msg_t *f = n < max ? &frames[n] : &tmp;
    zmq_msg_init(f);
    if (zmq_msg_recv(f, sock, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(f);
      for (int i = 0; i < n && i < max; i++) {
        zmq_msg_close(&frames[i]);
      }
      return -1;
    }
    more = zmq_msg_more(f);
    if (n >= max) {
      zmq_msg_close(f);
    }
    n++;
  }
  *nframes = n;
  return 0;
}

// Take and handle one request when one waits: returns 1 (answered) or 2 (queued as a job).
// Returns 0 when the ROUTER had none, and then the leader counts as sleeping: the failed
// receive processed the ROUTER's commands, so router_fd wakes it only for what comes after,
// and a sender that may take that wake-up from now on sees io_sleeping and wakes it itself.
static int serve_one(srv *s) {
  zmq_msg_t fr[4];
  int n = 0;
  sock_lock(s);
  int got = recv_multipart(s->sock.router, fr, 4, &n) == 0;
  s->sock.io_sleeping = !got;
  pthread_mutex_unlock(&s->sock.mu);
  if (!got) {
    return 0;
  }
  int kept = n < 4 ? n : 4, queued = 0;
  srv_job *j = calloc(1, sizeof *j);
  if (j) {
    // [identity, (empty delimiter from REQ clients), payload]
    j->delim = kept >= 3 && zmq_msg_size(&fr[1]) == 0;
    int payload = j->delim ? 2 : 1;
    j->ident_len = zmq_msg_size(&fr[0]);
    j->ident = malloc(j->ident_len ? j->ident_len : 1);
    ccsim_arena_reset(&s->io.arena);
    if (!j->ident) {
      srv_job_free(j);  // out of memory: the client times out
    } else {
      memcpy(j->ident, zmq_msg_data(&fr[0]), j->ident_len);
      int done = 1;
      // a client admitted at its handshake whose key was removed from the allow directory
      const char *refusal =
          s->sock.zap ? srv_curve_refusal(s, zmq_msg_gets(&fr[kept - 1], "User-Id")) : NULL;
      if (refusal) {
        srv_refuse(s, j, zmq_msg_data(&fr[kept - 1]), zmq_msg_size(&fr[kept - 1]), CCSIM_EPERM,
                   refusal);
      } else if (n == payload + 1 && kept > payload) {
        done = srv_accept(s, j, zmq_msg_data(&fr[payload]), zmq_msg_size(&fr[payload]));
      } else {
        // malformed envelope: answer with an error the client can still decode
        static const uint8_t bad[1] = {0};
        done = srv_accept(s, j, bad, 1);
      }
      if (done) {
        srv_send_job(s, j, NULL);
      }
      queued = !done;
    }
  }
  for (int i = 0; i < kept; i++) {
    zmq_msg_close(&fr[i]);
  }
  return queued ? 2 : 1;
}

// the stream's last message of ss, out of the table and idle (expired): numbered and timed
// as a close by its controller is
static void publish_closed(srv *s, srv_session *ss) {
  Ccsim__StreamState m;
  ccsim__stream_state__init(&m);
  m.session_id = ss->id;
  m.has_stream_seq = m.has_time = 1;
  m.stream_seq = ++ss->view.steps;
  m.time = ss->view.time;
  m.has_closed = 1;
  m.closed = 1;
  uint8_t buf[128];
  size_t n = ccsim_pb_pack_tail(&m.base, buf, sizeof buf);
  if (n != SIZE_MAX) {
    pthread_mutex_lock(&s->sock.mu);
    srv_stream_publish_locked(s, ss->id, buf + sizeof buf - n, n);
    pthread_mutex_unlock(&s->sock.mu);
  }
}

// Housekeeping runs every 50 ms when a thread holds the I/O duty: a gap over this [s]
// since its last round, in which the process used under a tenth of it in CPU time, means
// the server itself was not running (stopped by SIGSTOP or a debugger, its machine
// paused). A gap with the CPU busy is every pool thread in a long step, no leader: the
// server ran, and idle sessions were idle.
#define SRV_STALL 1.0

// CPU time of the whole process [s]
static double process_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// free sessions without a request for idle_timeout seconds
static void expire_idle(srv *s, double now) {
  srv_session *gone[64];
  int ngone = 0;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->cfg.max_sessions && ngone < 64; i++) {
    srv_session *ss = s->store.tab[i];
    if (ss && !ss->sched.busy && now - ss->sched.last_active > s->cfg.idle_timeout) {
      char why[96];
      snprintf(why, sizeof why, "expired after %g s without a request (idle timeout)",
               s->cfg.idle_timeout);
      srv_remove(s, ss, why);
      s->store.expired++;
      gone[ngone++] = ss;
    }
  }
  pthread_mutex_unlock(&s->mu);
  for (int k = 0; k < ngone; k++) {
    if (s->cfg.verbose) {
      fprintf(stderr, "ccsimd: session %s expired\n", gone[k]->id);
    }
    srv_unlink_session(s, gone[k]->id);
    publish_closed(s, gone[k]);
    srv_session_free(&gone[k]);
  }
}

static void queue_saves(srv *s) {
  int nwake = 0;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    srv_session *ss = s->store.tab[i];
    if (ss && ss->view.steps != ss->view.saved_steps && !ss->sched.save_queued) {
      srv_job *j = calloc(1, sizeof *j);
      if (j) {
        j->kind = SRV_JOB_SAVE;
        j->run = srv_run_save;
        j->ss = ss;
        ss->sched.save_queued = 1;
        nwake += srv_enqueue_locked(s, j);
      }
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (nwake > 0) {
    srv_pool_kick(s);
  }
}

// Every 50 ms, by the leader: stream subscriptions a send's command processing left
// waiting, failed handshakes, the CURVE allow list, idle sessions, periodic saves
static void housekeeping(srv *s) {
  double now = srv_now();
  if (now < s->io.next_housekeeping) {
    return;
  }
  s->io.next_housekeeping = now + 0.05;
  double gap = s->io.last_housekeeping > 0 ? now - s->io.last_housekeeping : 0,
         cpu = process_cpu_s();
  double used = cpu - s->io.last_housekeeping_cpu;
  s->io.last_housekeeping = now;
  s->io.last_housekeeping_cpu = cpu;
  if (gap > SRV_STALL && used < 0.1 * gap) {
    // Time the server was not running is nobody's idleness: a controller's request may
    // have waited in the socket all along, unread, and this round comes before the
    // reader. Every session's idle clock skips the gap.
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->cfg.max_sessions; i++) {
      if (s->store.tab[i]) {
        s->store.tab[i]->sched.last_active += gap;
      }
    }
    pthread_mutex_unlock(&s->mu);
    if (s->cfg.verbose) {
      fprintf(stderr, "ccsimd: not running for %.1f s (stopped?): idle clocks skip it\n", gap);
    }
  }
  drain_subs(s);
  srv_handshake_drain(s);
  if (s->sock.zap) {
    srv_curve_refresh(s);
  }
  if (s->cfg.idle_timeout > 0) {
    expire_idle(s, now);
  }
  if (s->cfg.state_dir && s->cfg.checkpoint_interval > 0 && now >= s->io.next_save) {
    s->io.next_save = now + s->cfg.checkpoint_interval;
    queue_saves(s);
  }
}

srv_job *srv_lead(srv *s, int poll_first, srv_duty *duty) {
  int idle = poll_first;
  while (!atomic_load(&s->stop)) {
    int queued = 0;
    if (!idle) {
      // take what waits on the ROUTER, looking at the stop flag in between; then a job
      // ready while a pool thread idles is ours to run, and the duty passes to that thread.
      // Receiving until the ROUTER is empty first means the next leader starts by waiting:
      // a receive of its own would meet our reply's send on sock.mu.
      for (int k = 0; k < 64 && !atomic_load(&s->stop); k++) {
        int got = serve_one(s);
        if (!got) {
          idle = 1;
          break;
        }
        queued |= got == 2;
      }
      // under load a leader may never reach the poll below: the housekeeping comes first
      housekeeping(s);
    }
    // jobs left ready by our earlier turns count too: short ones wait for us, and so do
    // paced ones when every thread is busy; a leader that starts by waiting looks as well
    srv_job *j =
        queued || atomic_load(&s->pool.nready) > 0 ? srv_pool_take_over(s, idle, duty) : NULL;
    if (j) {
      if (duty->kept) {
        // we receive again before we wait, so senders need not wake us meanwhile; but
        // only while the duty is ours: the watchdog may have passed it (while we waited
        // for sock.mu) to a leader asleep now, whose flag must stand. A leader given the
        // duty after the bump sets its flag under sock.mu: either after us, or before us
        // and then its unlock shows us the bump.
        sock_lock(s);
        if (atomic_load(&s->pool.duty_gen) == duty->gen) {
          s->sock.io_sleeping = 0;
        }
        pthread_mutex_unlock(&s->sock.mu);
      }
      return j;
    }
    // poll(2) on the sockets' file descriptors: zmq_poll would ask every socket for
    // ZMQ_EVENTS and poll once more without waiting, system calls on every round trip.
    // Each descriptor signals only what arrived after that socket last took its commands:
    // serve_one, drain_wake and srv_zap_serve each receive until none is left.
    struct pollfd it[4] = {
        {.fd = s->sock.router_fd, .events = POLLIN},
        {.fd = s->sock.wake_fd, .events = POLLIN},
        {.fd = s->sock.pub_fd, .events = POLLIN},  // -1 (ignored by poll) without a stream
        {.fd = s->sock.zap_fd, .events = POLLIN},
    };
    nfds_t nit = s->sock.zap ? 4 : 3;
    int r = 0;
    if (idle && s->cfg.spin_us > 0) {
      // the next request often follows soon: poll without sleeping for a moment first
      double until = srv_now() + 1e-6 * s->cfg.spin_us;
      while ((r = poll(it, nit, 0)) == 0 && srv_now() < until) {
      }
    }
    if (r == 0) {
      r = poll(it, nit, idle ? 50 : 0);
    }
    if (idle) {
      sock_lock(s);
      s->sock.io_sleeping = 0;
      pthread_mutex_unlock(&s->sock.mu);
    }
    idle = 0;
    if (r < 0 && errno != EINTR) {
      fprintf(stderr, "ccsimd: poll failed: %s; stopping\n", strerror(errno));
      s->io.failed = 1;
      atomic_store(&s->stop, 1);
      break;
    }
    if (r > 0 && (it[1].revents & POLLIN)) {
      drain_wake(s);
    }
    if (r > 0 && (it[2].revents & POLLIN)) {
      drain_subs(s);
    }
    if (r > 0 && s->sock.zap && (it[3].revents & POLLIN)) {
      while (srv_zap_serve(s)) {
      }
    }
    housekeeping(s);
  }
  pthread_mutex_lock(&s->mu);
  s->pool.leader = 0;
  pthread_mutex_unlock(&s->mu);
  srv_pool_quit(s);
  return NULL;
}

int srv_run(srv *s) {
  if (!s->sock.router) {
    return -1;
  }
  char err[256] = "";
  s->sock.zap_fd = -1;
  size_t zfl = sizeof s->sock.zap_fd;
  if (s->sock.zap && zmq_getsockopt(s->sock.zap, ZMQ_FD, &s->sock.zap_fd, &zfl) != 0) {
    fprintf(stderr, "ccsimd: cannot poll the ZAP handler: %s\n", zmq_strerror(zmq_errno()));
    return -1;
  }
  s->io.next_housekeeping = 0;
  s->io.last_housekeeping = 0;
  s->io.failed = 0;
  s->io.next_save = srv_now() + s->cfg.checkpoint_interval;
  int old_policy = 0;
  struct sched_param old_param;
  pthread_getschedparam(pthread_self(), &old_policy, &old_param);
  if (srv_realtime_thread(s) != 0) {
    fprintf(stderr,
            "ccsimd: warning: real-time priority %d refused (needs CAP_SYS_NICE); "
            "running at normal priority\n",
            s->cfg.rt_priority);
  }
  if (srv_pool_start(s, err, sizeof err) != 0) {
    fprintf(stderr, "ccsimd: %s\n", err);
    pthread_setschedparam(pthread_self(), old_policy, &old_param);
    return -1;
  }
  char old_name[16] = "";
  prctl(PR_GET_NAME, old_name, 0, 0, 0);
  prctl(PR_SET_NAME, "ccsim-io", 0, 0, 0);  // the caller's thread: its name comes back below
  // the caller's thread is a pool member like the workers: it leads or runs jobs
  srv_pool_serve(s);
  int rc = s->io.failed ? -1 : 0;
  int busy = 0;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    busy += s->store.tab[i] && s->store.tab[i]->sched.busy;
  }
  pthread_mutex_unlock(&s->mu);
  if (busy > 0) {
    // a long step would otherwise hold the stop up silently
    fprintf(stderr,
            "ccsimd: stopping: %d session%s busy; a running request gets %g s more, then "
            "stops with the state it reached; held lockstep replies go out at once; queued "
            "requests are dropped\n",
            busy, busy == 1 ? "" : "s", SRV_STOP_GRACE);
  }
  int compiling = s->compiling;
  if (compiling > 0) {
    // a scene's compile is not stopped part-way (millions of triangles take seconds)
    fprintf(stderr,
            "ccsimd: stopping: waiting for %d CreateSession%s to finish compiling %s scene\n",
            compiling, compiling == 1 ? "" : "s", compiling == 1 ? "its" : "their");
  }
  srv_pool_stop(s);  // workers send what they computed before they leave
  // lockstep replies still held for the wall clock: their steps ran (and are saved), so
  // they go out now, early, rather than never
  srv_send_held(s, 1, NULL);
  srv_pool_drain(s);
  if (s->cfg.state_dir && srv_save_all(s) < 0) {
    s->save_failed = 1;
    rc = -1;  // a session is lost: ccsimd says so and exits with 1
  }
  pthread_setschedparam(pthread_self(), old_policy, &old_param);  // the caller's thread again
  prctl(PR_SET_NAME, old_name, 0, 0, 0);
  return rc;
}

int srv_save_failed(const srv *s) {
  return s->save_failed;
}

int srv_save_all(srv *s) {
  if (!s->cfg.state_dir) {
    return 0;
  }
  int saved = 0, bad = 0;
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    if (s->store.tab[i]) {
      if (srv_save_session(s, s->store.tab[i]) == 0) {
        saved++;
      } else {
        bad = 1;
      }
    }
  }
  return bad ? -1 : saved;
}

void srv_destroy(srv **ps) {
  if (!ps || !*ps) {
    return;
  }
  srv *s = *ps;
  if (s->store.tab) {
    srv_pool_drain(s);
    for (int i = 0; i < s->cfg.max_sessions; i++) {
      srv_session_free(&s->store.tab[i]);
    }
  }
  free(s->store.tab);
  srv_models_destroy(&s->models);  // after the sessions: they held its models
  if (s->sock.router) {
    // the last replies (a step cut by the stop, held lockstep replies) may still be on
    // their way out: a moment for them, bounded for a peer that is gone
    int linger = SRV_STOP_LINGER_MS;
    zmq_setsockopt(s->sock.router, ZMQ_LINGER, &linger, sizeof linger);
  }
  void *socks[] = {s->sock.hs_mon[0], s->sock.hs_mon[1], s->sock.router,
                   s->sock.pub,       s->sock.wake,      s->sock.zap};
  for (size_t i = 0; i < sizeof socks / sizeof socks[0]; i++) {
    if (socks[i]) {
      zmq_close(socks[i]);
    }
  }
  if (s->sock.zctx) {
    zmq_ctx_term(s->sock.zctx);
  }
  free(s->curve.allow);
  free(s->curve.allow_dir);
  if (s->state_lock_fd >= 0) {
    close(s->state_lock_fd);  // the state dir is free for the next server from here on
  }
  ccsim_arena_fini(&s->io.arena);
  pthread_mutex_destroy(&s->mu);
  pthread_mutex_destroy(&s->sock.mu);
  pthread_mutex_destroy(&s->stream.mu);
  pthread_cond_destroy(&s->pool.pace_cv);
  free(s);
  *ps = NULL;
}
