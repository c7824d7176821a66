#include "srv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_arena.h"
#include "sim_data.h"
#include "sim_model.h"
#include "wire.h"

#define SRV_ID_LEN 32     // hex characters of a session id
#define SRV_MAX_DT 3600.0 // longest single step request [s]

typedef struct srv_session {
  char id[SRV_ID_LEN + 1];  // "" when the slot is free
  sim_model *m;             // owned
  sim_data *d;              // owned
  uint64_t last_seq;        // last sequenced Step executed (0: none yet)
  uint8_t *last_reply;      // its serialized reply, for a retried seq (owned)
  size_t last_reply_len;
} srv_session;

struct srv {
  srv_config cfg;
  void *zctx;               // owned ZeroMQ context (NULL without a socket)
  void *router;             // ROUTER socket, used only by the srv_run thread
  char endpoint[256];
  atomic_int stop;
  srv_session *sessions;    // (cfg.max_sessions)
  int nsessions;
  ccsim_arena arena;        // reply messages of the request being handled
  uint64_t requests;
  struct timespec started;
};

// ---- helpers -----------------------------------------------------------------------

static void set_err(char *err, size_t err_sz, const char *fmt, ...) {
  if (!err || err_sz == 0) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_sz, fmt, ap);
  va_end(ap);
}

static double seconds_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static int new_session_id(char out[SRV_ID_LEN + 1]) {
  unsigned char raw[SRV_ID_LEN / 2];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -1;
    }
    got += (size_t)r;
  }
  for (size_t i = 0; i < sizeof raw; i++) {
    snprintf(out + 2 * i, 3, "%02x", raw[i]);
  }
  return 0;
}

static srv_session *find_session(srv *s, const char *id) {
  if (!id || !id[0]) {
    return NULL;
  }
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    if (s->sessions[i].id[0] && strcmp(s->sessions[i].id, id) == 0) {
      return &s->sessions[i];
    }
  }
  return NULL;
}

static void session_free(srv_session *ss) {
  sim_data_destroy(&ss->d);
  sim_model_destroy(&ss->m);
  free(ss->last_reply);
  memset(ss, 0, sizeof *ss);
}

// ---- dispatch ----------------------------------------------------------------------

// The reply being built for one request; every allocation lives in s->arena.
typedef struct reply_ctx {
  srv *s;
  Ccsim__Reply *reply;
  char msg[512];
} reply_ctx;

static int fail(reply_ctx *rc, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rc->msg, sizeof rc->msg, fmt, ap);
  va_end(ap);
  rc->reply->error->code = (Ccsim__Code)code;
  rc->reply->error->message = rc->msg;
  rc->reply->body_case = CCSIM__REPLY__BODY__NOT_SET;
  return code;
}

#define NEW(rc, T, init) ((T *)new_msg((rc), sizeof(T), (void (*)(void *))(init)))
static void *new_msg(reply_ctx *rc, size_t size, void (*init)(void *)) {
  void *p = ccsim_arena_alloc(&rc->s->arena, size);
  if (p) {
    init(p);
  }
  return p;
}

static int do_hello(reply_ctx *rc, const Ccsim__Hello *h) {
  if (!h->has_protocol_version || h->protocol_version != CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT) {
    return fail(rc, CCSIM_EVERSION,
                "protocol version %u is not supported: this server speaks version %d",
                h->has_protocol_version ? h->protocol_version : 0u,
                (int)CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT);
  }
  Ccsim__HelloReply *hr = NEW(rc, Ccsim__HelloReply, ccsim__hello_reply__init);
  if (!hr) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  hr->has_protocol_version = 1;
  hr->protocol_version = CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
  hr->server_version = SRV_VERSION;
  rc->reply->body_case = CCSIM__REPLY__BODY_HELLO;
  rc->reply->hello = hr;
  return CCSIM_OK;
}

static int do_server_info(reply_ctx *rc) {
  Ccsim__ServerInfoReply *si = NEW(rc, Ccsim__ServerInfoReply, ccsim__server_info_reply__init);
  if (!si) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  si->server_version = SRV_VERSION;
  si->has_protocol_version = si->has_sessions = si->has_uptime = si->has_requests = 1;
  si->protocol_version = CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
  si->sessions = (uint32_t)rc->s->nsessions;
  si->uptime = seconds_since(&rc->s->started);
  si->requests = rc->s->requests;
  rc->reply->body_case = CCSIM__REPLY__BODY_SERVER_INFO;
  rc->reply->server_info = si;
  return CCSIM_OK;
}

static int do_create(reply_ctx *rc, const Ccsim__CreateSession *cs) {
  srv *s = rc->s;
  if (!cs->scene) {
    return fail(rc, CCSIM_EINVAL, "create_session: scene missing");
  }
  srv_session *slot = NULL;
  for (int i = 0; i < s->cfg.max_sessions && !slot; i++) {
    if (!s->sessions[i].id[0]) {
      slot = &s->sessions[i];
    }
  }
  if (!slot) {
    return fail(rc, CCSIM_ELIMIT, "create_session: the server already holds %d sessions (its limit)",
                s->cfg.max_sessions);
  }
  char err[400] = "";
  sim_model *m = wire_scene_compile(cs->scene, err, sizeof err);
  if (!m) {
    return fail(rc, CCSIM_EINVAL, "create_session: %s", err);
  }
  sim_data *d = sim_data_new(m, err, sizeof err);
  if (!d) {
    sim_model_destroy(&m);
    return fail(rc, CCSIM_ESOLVER, "create_session: %s", err);
  }
  Ccsim__CreateSessionReply *cr = NEW(rc, Ccsim__CreateSessionReply, ccsim__create_session_reply__init);
  char **names = ccsim_arena_alloc(&s->arena, sizeof(char *) * (size_t)(m->nbody ? m->nbody : 1));
  char id[SRV_ID_LEN + 1];
  if (!cr || !names || new_session_id(id) != 0) {
    sim_data_destroy(&d);
    sim_model_destroy(&m);
    return fail(rc, CCSIM_ENOMEM, "create_session: out of memory or no randomness for an id");
  }
  memcpy(slot->id, id, sizeof id);
  slot->m = m;
  slot->d = d;
  s->nsessions++;
  for (int b = 0; b < m->nbody; b++) {
    names[b] = m->name[b];  // the model outlives the reply's packing
  }
  cr->session_id = slot->id;
  cr->n_body_names = (size_t)m->nbody;
  cr->body_names = names;
  rc->reply->body_case = CCSIM__REPLY__BODY_CREATE_SESSION;
  rc->reply->create_session = cr;
  return CCSIM_OK;
}

static Ccsim__StepStats *stats_delta(reply_ctx *rc, const sim_stats *a, const sim_stats *b) {
  Ccsim__StepStats *st = NEW(rc, Ccsim__StepStats, ccsim__step_stats__init);
  if (!st) {
    return NULL;
  }
  st->has_steps = st->has_rhs_evals = st->has_jac_evals = st->has_newton_fails = 1;
  st->has_error_fails = st->has_physics_us = st->has_contacts = st->has_max_depth = 1;
  st->has_geometry_us = st->has_penetrations = st->has_last_step_size = 1;
  st->steps = b->steps - a->steps;
  st->rhs_evals = b->rhs_evals - a->rhs_evals;
  st->jac_evals = b->jac_evals - a->jac_evals;
  st->newton_fails = b->newton_fails - a->newton_fails;
  st->error_fails = b->error_fails - a->error_fails;
  st->physics_us = (b->physics_ns - a->physics_ns) / 1000;
  st->geometry_us = (b->geometry_ns - a->geometry_ns) / 1000;
  st->penetrations = b->penetrations - a->penetrations;
  st->contacts = b->contacts;
  st->max_depth = b->max_depth;
  st->last_step_size = b->last_step;
  return st;
}

static int do_step(reply_ctx *rc, srv_session *ss, const Ccsim__Step *st) {
  const sim_model *m = ss->m;
  if (!st->has_dt || !isfinite(st->dt) || !(st->dt > 0)) {
    return fail(rc, CCSIM_EINVAL, "step.dt = %g: must be given, finite and > 0",
                st->has_dt ? st->dt : 0.0);
  }
  if (st->dt > SRV_MAX_DT) {
    return fail(rc, CCSIM_ELIMIT, "step.dt = %g s exceeds the limit of %g s", st->dt, SRV_MAX_DT);
  }
  double t_out = sim_data_time(ss->d) + st->dt;
  if (!(t_out > sim_data_time(ss->d))) {
    return fail(rc, CCSIM_EINVAL, "step.dt = %g is too small to advance time %.17g", st->dt,
                sim_data_time(ss->d));
  }
  // validate every input before touching the session: a rejected request changes nothing
  for (size_t i = 0; i < st->n_inputs; i++) {
    const Ccsim__BodyInput *in = st->inputs[i];
    if (!in->has_body || in->body >= (uint32_t)m->nbody) {
      return fail(rc, CCSIM_EINVAL, "step.inputs[%zu].body: %s (the scene has %d bodies)", i,
                  in->has_body ? "out of range" : "missing", m->nbody);
    }
    if (m->type[in->body] != SIM_BODY_FREE && (in->force || in->torque)) {
      return fail(rc, CCSIM_EINVAL, "step.inputs[%zu]: body %u (\"%s\") is not free", i,
                  in->body, m->name[in->body]);
    }
    if (in->pose || in->twist) {
      return fail(rc, CCSIM_ENOTIMPL, "step.inputs[%zu]: kinematic pose/twist inputs are not "
                  "implemented yet", i);
    }
    double f[3], t[3];
    const double zero[3] = {0, 0, 0};
    if (wire_vec3_get(in->force, f, zero) != 0 || wire_vec3_get(in->torque, t, zero) != 0) {
      return fail(rc, CCSIM_EINVAL, "step.inputs[%zu]: force and torque must be finite", i);
    }
  }
  // inputs hold for this step only; bodies not named get none
  sim_clear_inputs(m, ss->d);
  for (size_t i = 0; i < st->n_inputs; i++) {
    const Ccsim__BodyInput *in = st->inputs[i];
    double f[3], t[3];
    const double zero[3] = {0, 0, 0};
    wire_vec3_get(in->force, f, zero);
    wire_vec3_get(in->torque, t, zero);
    if (in->force || in->torque) {
      sim_set_input(m, ss->d, (int)in->body, f, t);
    }
  }
  sim_stats before = *sim_data_stats(ss->d);
  int status = sim_step(m, ss->d, t_out);
  if (status != CCSIM_OK) {
    return fail(rc, status, "step: %s", sim_data_errmsg(ss->d));
  }
  Ccsim__StepReply *sr = NEW(rc, Ccsim__StepReply, ccsim__step_reply__init);
  if (!sr || wire_bodies_new(&rc->s->arena, m, ss->d, &sr->bodies, &sr->n_bodies) != 0 ||
      !(sr->stats = stats_delta(rc, &before, sim_data_stats(ss->d)))) {
    return fail(rc, CCSIM_ENOMEM, "step: out of memory for the reply");
  }
  sr->has_time = 1;
  sr->time = sim_data_time(ss->d);
  rc->reply->body_case = CCSIM__REPLY__BODY_STEP;
  rc->reply->step = sr;
  return CCSIM_OK;
}

static int state_reply(reply_ctx *rc, srv_session *ss) {
  Ccsim__StateReply *sr = NEW(rc, Ccsim__StateReply, ccsim__state_reply__init);
  if (!sr || wire_bodies_new(&rc->s->arena, ss->m, ss->d, &sr->bodies, &sr->n_bodies) != 0) {
    return fail(rc, CCSIM_ENOMEM, "out of memory for the reply");
  }
  sr->has_time = 1;
  sr->time = sim_data_time(ss->d);
  rc->reply->body_case = CCSIM__REPLY__BODY_STATE;
  rc->reply->state = sr;
  return CCSIM_OK;
}

static int do_close(reply_ctx *rc, srv_session *ss) {
  Ccsim__CloseSessionReply *cr = NEW(rc, Ccsim__CloseSessionReply, ccsim__close_session_reply__init);
  if (!cr) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  session_free(ss);
  rc->s->nsessions--;
  rc->reply->body_case = CCSIM__REPLY__BODY_CLOSE_SESSION;
  rc->reply->close_session = cr;
  return CCSIM_OK;
}

// A sequenced Step: seq = last + 1 steps, seq = last replays the stored reply.
static int step_seq_check(reply_ctx *rc, srv_session *ss, uint64_t seq, int *replay) {
  *replay = 0;
  if (seq == 0) {
    return CCSIM_OK;  // unsequenced: always steps
  }
  if (ss->last_seq != 0 && seq == ss->last_seq && ss->last_reply) {
    *replay = 1;
    return CCSIM_OK;
  }
  if (seq != ss->last_seq + 1) {
    return fail(rc, CCSIM_ESEQ, "step: seq %llu is out of sequence (last executed: %llu; send %llu)",
                (unsigned long long)seq, (unsigned long long)ss->last_seq,
                (unsigned long long)ss->last_seq + 1);
  }
  return CCSIM_OK;
}

static void dispatch(reply_ctx *rc, const Ccsim__Request *rq, srv_session **stepped) {
  srv *s = rc->s;
  *stepped = NULL;
  switch (rq->body_case) {
  case CCSIM__REQUEST__BODY_HELLO:
    do_hello(rc, rq->hello);
    return;
  case CCSIM__REQUEST__BODY_SERVER_INFO:
    do_server_info(rc);
    return;
  case CCSIM__REQUEST__BODY_CREATE_SESSION:
    do_create(rc, rq->create_session);
    return;
  case CCSIM__REQUEST__BODY__NOT_SET:
    fail(rc, CCSIM_EPROTO, "request has no body (hello, step, ...)");
    return;
  default:
    break;
  }
  srv_session *ss = find_session(s, rq->session_id);
  if (!ss) {
    fail(rc, CCSIM_ENOTFOUND, "unknown session \"%.40s\"", rq->session_id ? rq->session_id : "");
    return;
  }
  switch (rq->body_case) {
  case CCSIM__REQUEST__BODY_STEP: {
    int replay = 0;
    if (step_seq_check(rc, ss, rq->has_seq ? rq->seq : 0, &replay) != CCSIM_OK || replay) {
      if (replay) {
        *stepped = ss;  // the caller sends the stored bytes
      }
      return;
    }
    if (do_step(rc, ss, rq->step) == CCSIM_OK && rq->has_seq && rq->seq) {
      ss->last_seq = rq->seq;
      *stepped = ss;
    }
    return;
  }
  case CCSIM__REQUEST__BODY_GET_STATE:
    state_reply(rc, ss);
    return;
  case CCSIM__REQUEST__BODY_SET_STATE:
    fail(rc, CCSIM_ENOTIMPL, "set_state is not implemented yet");
    return;
  case CCSIM__REQUEST__BODY_QUERY_CONTACTS:
    fail(rc, CCSIM_ENOTIMPL, "query_contacts is not implemented yet (compliant contact lands "
                             "with the Compliant mode)");
    return;
  case CCSIM__REQUEST__BODY_CLOSE_SESSION:
    do_close(rc, ss);
    return;
  default:
    fail(rc, CCSIM_EPROTO, "unknown request body %d", (int)rq->body_case);
    return;
  }
}

static uint8_t *pack_reply(const Ccsim__Reply *r, size_t *len) {
  size_t n = ccsim__reply__get_packed_size(r);
  uint8_t *buf = malloc(n ? n : 1);
  if (buf) {
    *len = ccsim__reply__pack(r, buf);
  }
  return buf;
}

uint8_t *srv_handle(srv *s, const uint8_t *req, size_t len, size_t *reply_len) {
  s->requests++;
  ccsim_arena_reset(&s->arena);
  Ccsim__Reply reply;
  Ccsim__Error error;
  ccsim__reply__init(&reply);
  ccsim__error__init(&error);
  error.has_code = 1;
  error.code = CCSIM__CODE__OK;
  reply.error = &error;
  reply_ctx rc = {.s = s, .reply = &reply};
  rc.msg[0] = 0;

  if (len > s->cfg.max_msg_bytes) {
    fail(&rc, CCSIM_ELIMIT, "request of %zu bytes exceeds the limit of %zu bytes", len,
         s->cfg.max_msg_bytes);
    return pack_reply(&reply, reply_len);
  }
  Ccsim__Request *rq = ccsim__request__unpack(NULL, len, req);
  if (!rq) {
    fail(&rc, CCSIM_EPROTO, "request of %zu bytes is not a valid ccsim.Request", len);
    return pack_reply(&reply, reply_len);
  }
  reply.has_request_id = 1;
  reply.request_id = rq->request_id;
  srv_session *stepped = NULL;
  dispatch(&rc, rq, &stepped);
  uint8_t *out = NULL;
  if (stepped && reply.body_case == CCSIM__REPLY__BODY__NOT_SET && error.code == CCSIM__CODE__OK) {
    // a retried seq: the stored reply, with this request's id
    Ccsim__Reply *old = ccsim__reply__unpack(NULL, stepped->last_reply_len, stepped->last_reply);
    if (old) {
      old->request_id = rq->request_id;
      out = pack_reply(old, reply_len);
      ccsim__reply__free_unpacked(old, NULL);
    }
  } else {
    out = pack_reply(&reply, reply_len);
    if (out && stepped) {
      uint8_t *copy = malloc(*reply_len ? *reply_len : 1);
      if (copy) {
        memcpy(copy, out, *reply_len);
        free(stepped->last_reply);
        stepped->last_reply = copy;
        stepped->last_reply_len = *reply_len;
      }
    }
  }
  if (s->cfg.verbose) {
    fprintf(stderr, "ccsimd: request %llu body %d -> %s%s%s\n",
            (unsigned long long)rq->request_id, (int)rq->body_case,
            ccsim_status_name((int)error.code), rc.msg[0] ? ": " : "", rc.msg);
  }
  ccsim__request__free_unpacked(rq, NULL);
  return out;
}

// ---- lifecycle and transport -------------------------------------------------------

void srv_config_defaults(srv_config *c) {
  memset(c, 0, sizeof *c);
  c->bind = SRV_DEFAULT_BIND;
  c->max_sessions = 64;
  c->max_msg_bytes = 64u << 20;
}

static int is_loopback(const char *ep) {
  if (strncmp(ep, "tcp://", 6) != 0) {
    return 1;  // ipc:// and inproc:// never leave the machine
  }
  const char *h = ep + 6;
  return strncmp(h, "127.", 4) == 0 || strncmp(h, "localhost:", 10) == 0 ||
         strncmp(h, "[::1]:", 6) == 0;
}

srv *srv_new(const srv_config *c, char *err, size_t err_sz) {
  srv_config def;
  if (!c) {
    srv_config_defaults(&def);
    c = &def;
  }
  if (c->max_sessions <= 0 || c->max_sessions > 100000 || c->max_msg_bytes == 0) {
    set_err(err, err_sz, "bad server configuration (max_sessions, max_msg_bytes)");
    return NULL;
  }
  srv *s = calloc(1, sizeof *s);
  if (!s) {
    set_err(err, err_sz, "out of memory");
    return NULL;
  }
  s->cfg = *c;
  s->sessions = calloc((size_t)c->max_sessions, sizeof *s->sessions);
  if (!s->sessions) {
    free(s);
    set_err(err, err_sz, "out of memory");
    return NULL;
  }
  ccsim_arena_init(&s->arena, 64 * 1024, 0);
  atomic_init(&s->stop, 0);
  clock_gettime(CLOCK_MONOTONIC, &s->started);
  if (!c->bind) {
    return s;
  }
  s->zctx = zmq_ctx_new();
  s->router = s->zctx ? zmq_socket(s->zctx, ZMQ_ROUTER) : NULL;
  if (!s->router) {
    set_err(err, err_sz, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
    srv_destroy(&s);
    return NULL;
  }
  int linger = 0;
  int64_t maxmsg = (int64_t)c->max_msg_bytes + 1024;  // backstop; the real check replies
  zmq_setsockopt(s->router, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
  if (zmq_bind(s->router, c->bind) != 0) {
    set_err(err, err_sz, "cannot bind %s: %s", c->bind, zmq_strerror(zmq_errno()));
    srv_destroy(&s);
    return NULL;
  }
  size_t n = sizeof s->endpoint;
  zmq_getsockopt(s->router, ZMQ_LAST_ENDPOINT, s->endpoint, &n);
  if (!is_loopback(s->endpoint)) {
    fprintf(stderr, "ccsimd: warning: bound to %s, reachable from other machines without "
                    "encryption or authentication\n", s->endpoint);
  }
  return s;
}

const char *srv_endpoint(const srv *s) { return s->endpoint; }

int srv_session_count(const srv *s) { return s->nsessions; }

void srv_stop(srv *s) { atomic_store(&s->stop, 1); }

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

static void serve_one(srv *s) {
  zmq_msg_t fr[4];
  int n = 0;
  if (recv_multipart(s->router, fr, 4, &n) != 0) {
    return;
  }
  int kept = n < 4 ? n : 4;
  // [identity, (empty delimiter from REQ clients), payload]
  int delim = kept >= 3 && zmq_msg_size(&fr[1]) == 0;
  int payload = delim ? 2 : 1;
  size_t rlen = 0;
  uint8_t *rep = NULL;
  if (n == payload + 1 && kept > payload) {
    rep = srv_handle(s, zmq_msg_data(&fr[payload]), zmq_msg_size(&fr[payload]), &rlen);
  } else {
    // malformed envelope: answer with an error the client can still decode
    static const uint8_t empty[1] = {0};
    rep = srv_handle(s, empty, 1, &rlen);
  }
  if (rep) {
    zmq_msg_t id;
    zmq_msg_init(&id);
    zmq_msg_copy(&id, &fr[0]);
    if (zmq_msg_send(&id, s->router, ZMQ_SNDMORE) >= 0) {
      if (delim) {
        zmq_send(s->router, "", 0, ZMQ_SNDMORE);
      }
      zmq_send(s->router, rep, rlen, 0);
    } else {
      zmq_msg_close(&id);
    }
    free(rep);
  }
  for (int i = 0; i < kept; i++) {
    zmq_msg_close(&fr[i]);
  }
}

int srv_run(srv *s) {
  if (!s->router) {
    return -1;
  }
  while (!atomic_load(&s->stop)) {
    zmq_pollitem_t it = {.socket = s->router, .events = ZMQ_POLLIN};
    int rc = zmq_poll(&it, 1, 100);
    if (rc < 0) {
      if (zmq_errno() == EINTR) {
        continue;
      }
      return -1;
    }
    if (rc > 0 && (it.revents & ZMQ_POLLIN)) {
      // drain what is queued, but look at the stop flag between requests
      for (int k = 0; k < 64 && !atomic_load(&s->stop); k++) {
        int ev = 0;
        size_t evl = sizeof ev;
        zmq_getsockopt(s->router, ZMQ_EVENTS, &ev, &evl);
        if (!(ev & ZMQ_POLLIN)) {
          break;
        }
        serve_one(s);
      }
    }
  }
  return 0;
}

void srv_destroy(srv **ps) {
  if (!ps || !*ps) {
    return;
  }
  srv *s = *ps;
  if (s->sessions) {
    for (int i = 0; i < s->cfg.max_sessions; i++) {
      if (s->sessions[i].id[0]) {
        session_free(&s->sessions[i]);
      }
    }
  }
  free(s->sessions);
  if (s->router) {
    zmq_close(s->router);
  }
  if (s->zctx) {
    zmq_ctx_term(s->zctx);
  }
  ccsim_arena_fini(&s->arena);
  free(s);
  *ps = NULL;
}
