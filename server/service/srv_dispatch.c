// Requests to replies, through one request table (below). srv_accept (the leader) decodes,
// looks the request's row up, checks the role and answers what needs no physics; the rest
// is queued with a run function the pool calls (job->run): CreateSession, Step, SetState,
// CloseSession, checkpoints, QueryContacts, and free-running ticks and saves. Every
// rejected request leaves the session unchanged.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccsim_pb.h"
#include "srv_clock.h"
#include "srv_dispatch.h"
#include "srv_job.h"
#include "srv_pool.h"
#include "srv_store.h"
#include "srv_stream.h"
#include "sim_rigid.h"
#include "wire.h"

typedef srv_rctx rctx;

struct srv_rctx {
  srv *s;
  ccsim_arena *a;
  Ccsim__Reply reply;
  Ccsim__Error error;
  char msg[1024];
  srv_blob *bytes;  // an answer stored already (one reference), sent instead of reply
};

// ---- the request table ----------------------------------------------------------------
//
// One row per request type (Redis' command table): what srv_accept, the pool and the
// replies ask of a request's kind, they read here. A session's request is looked up and its
// role known before its answer runs; a row on the pool is queued behind the session's
// running job and runs there. Answers run on the I/O thread under srv.mu (session rows) or
// without it (the others); runs on the session's worker, the lock not held.

static int answer_hello(rctx *rc, srv_job *j, srv_session *ss);
static int answer_server_info(rctx *rc, srv_job *j, srv_session *ss);
static int answer_list(rctx *rc, srv_job *j, srv_session *ss);
static int answer_create(rctx *rc, srv_job *j, srv_session *ss);
static int answer_get_state(rctx *rc, srv_job *j, srv_session *ss);
static int answer_attach(rctx *rc, srv_job *j, srv_session *ss);
static int answer_query_contacts(rctx *rc, srv_job *j, srv_session *ss);
static void run_create(rctx *rc, srv_job *j, srv_session *ss);
static int exec_step(rctx *rc, srv_job *j, srv_session *ss, int *record);
static void run_set_state(rctx *rc, srv_job *j, srv_session *ss);
static void run_checkpoint(rctx *rc, srv_job *j, srv_session *ss);
static void run_close(rctx *rc, srv_job *j, srv_session *ss);
static void run_query_contacts(rctx *rc, srv_job *j, srv_session *ss);
static void run_request(srv *s, srv_job *j, ccsim_arena *a);

enum { ANY = SRV_ROLE_ANY, CTL = SRV_ROLE_CONTROLLER };
enum { IO = SRV_ON_IO, POOL = SRV_ON_POOL, EITHER = SRV_ON_EITHER };

// clang-format off
static const srv_request requests[] = {
  // body                               name              session role seq where  steps
  // answer                 run                  exec (sequenced rows)
  {CCSIM__REQUEST__BODY_HELLO,          "hello",          0,      ANY, 0,  IO,     0,
   answer_hello,            NULL,                 NULL},
  {CCSIM__REQUEST__BODY_SERVER_INFO,    "server_info",    0,      ANY, 0,  IO,     0,
   answer_server_info,      NULL,                 NULL},
  {CCSIM__REQUEST__BODY_LIST_SESSIONS,  "list_sessions",  0,      ANY, 0,  IO,     0,
   answer_list,             NULL,                 NULL},
  // checked on the I/O thread, built on the pool (or answered from the session its key made)
  {CCSIM__REQUEST__BODY_CREATE_SESSION, "create_session", 0,      ANY, 0,  EITHER, 0,
   answer_create,           run_create,           NULL},
  {CCSIM__REQUEST__BODY_ATTACH_SESSION, "attach_session", 1,      ANY, 0,  IO,     0,
   answer_attach,           NULL,                 NULL},
  {CCSIM__REQUEST__BODY_STEP,           "step",           1,      CTL, 1,  POOL,   1,
   NULL,                    NULL,                 exec_step},
  {CCSIM__REQUEST__BODY_SET_STATE,      "set_state",      1,      CTL, 0,  POOL,   0,
   NULL,                    run_set_state,        NULL},
  // the published view on the I/O thread; a checkpoint (the controller's) on the pool
  {CCSIM__REQUEST__BODY_GET_STATE,      "get_state",      1,      ANY, 0,  EITHER, 0,
   answer_get_state,        run_checkpoint,       NULL},
  {CCSIM__REQUEST__BODY_CLOSE_SESSION,  "close_session",  1,      CTL, 0,  POOL,   0,
   NULL,                    run_close,            NULL},
  // at the current state from the last answer kept, else computed on the pool
  {CCSIM__REQUEST__BODY_QUERY_CONTACTS, "query_contacts", 1,      ANY, 0,  EITHER, 0,
   answer_query_contacts,   run_query_contacts,   NULL},
};
// clang-format on

// the row of a request's body, or NULL (none set, or one this server does not know)
static const srv_request *request_row(Ccsim__Request__BodyCase body) {
  for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
    if (requests[i].body == body) {
      return &requests[i];
    }
  }
  return NULL;
}

static void rctx_init(rctx *rc, srv *s, ccsim_arena *a) {
  memset(rc, 0, sizeof *rc);
  rc->s = s;
  rc->a = a;
  ccsim__reply__init(&rc->reply);
  ccsim__error__init(&rc->error);
  rc->error.has_code = 1;
  rc->error.code = CCSIM__CODE__OK;
  rc->reply.error = &rc->error;
}

static int fail(rctx *rc, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ccsim_vset_err(rc->msg, sizeof rc->msg, fmt, ap);
  va_end(ap);
  rc->error.code = (Ccsim__Code)code;
  rc->error.message = rc->msg;
  rc->reply.body_case = CCSIM__REPLY__BODY__NOT_SET;
  return code;
}

#define NEW(rc, T, init) ((T *)new_msg((rc)->a, sizeof(T), (void (*)(void *))(init)))
static void *new_msg(ccsim_arena *a, size_t size, void (*init)(void *)) {
  void *p = ccsim_arena_alloc(a, size);
  if (p) {
    init(p);
  }
  return p;
}

// Serialize r behind a request_id field: protobuf merges fields in any order, so a
// stored reply (packed without an id) is answered again by prefixing the new id.
static uint8_t *pack_prefixed(const uint8_t *body, size_t n, uint64_t id, size_t *len) {
  uint8_t *buf = malloc(n + 11);
  if (!buf) {
    return NULL;
  }
  size_t p = 0;
  buf[p++] = 0x08;  // field 1, varint
  do {
    uint8_t b = (uint8_t)(id & 0x7f);
    id >>= 7;
    buf[p++] = (uint8_t)(b | (id ? 0x80 : 0));
  } while (id);
  memcpy(buf + p, body, n);
  *len = p + n;
  return buf;
}

// r serialized (malloc; NULL when out of memory); without request_id set, the form stored
// for retries
static uint8_t *pack_bare(const Ccsim__Reply *r, size_t *len) {
  return ccsim_pb_pack_new(&r->base, 0, len);
}

// A request refused before it is decoded still gets its request_id back when it has a
// readable one: a client cannot match a reply without it, and would wait and time out.
static void echo_request_id(rctx *rc, const uint8_t *req, size_t len) {
  uint64_t id = 0;
  if (ccsim_pb_peek_varint(len, req, 1, &id)) {
    rc->reply.has_request_id = 1;
    rc->reply.request_id = id;
  }
}

static void log_reply(const rctx *rc, const srv_job *j) {
  if (rc->s->cfg.verbose && j->rq) {
    fprintf(stderr, "ccsimd: request %llu body %d -> %s%s%s\n",
            (unsigned long long)j->rq->request_id, (int)j->rq->body_case,
            ccsim_status_name((int)rc->error.code), rc->msg[0] ? ": " : "", rc->msg);
  }
}

// j's reply: rc->reply with the request's id, packed once (out of memory: none, and the
// client times out)
static void finish(rctx *rc, srv_job *j) {
  if (j->rq) {
    rc->reply.has_request_id = 1;
    rc->reply.request_id = j->rq->request_id;
  }
  free(j->reply);
  size_t n = 0;
  j->reply = pack_bare(&rc->reply, &n);
  j->reply_len = j->reply ? n : 0;
  log_reply(rc, j);
}

// j's reply: a stored reply (serialized without request_id) with the request's id
static void finish_bytes(rctx *rc, srv_job *j, const uint8_t *bare, size_t n) {
  free(j->reply);
  j->reply = pack_prefixed(bare, n, j->rq->request_id, &j->reply_len);
  log_reply(rc, j);
}

// j's reply: the session's stored reply with the request's id
static void finish_stored(rctx *rc, srv_job *j, const srv_session *ss) {
  finish_bytes(rc, j, ss->once.last_reply->data, ss->once.last_reply->len);
}

// ---- message builders ---------------------------------------------------------------

static Ccsim__DeadlineStats *deadline_msg(ccsim_arena *a, const srv_deadline *dl) {
  Ccsim__DeadlineStats *m = new_msg(a, sizeof *m, (void (*)(void *))ccsim__deadline_stats__init);
  if (m) {
    m->has_paced_steps = m->has_misses = m->has_worst_lateness = m->has_last_lateness = 1;
    m->has_late_requests = 1;
    m->paced_steps = dl->paced;
    m->misses = dl->misses;
    m->late_requests = dl->late_requests;
    m->worst_lateness = dl->worst;
    m->last_lateness = dl->last;
    m->has_worst_release_delay = dl->worst_release > 0;
    m->worst_release_delay = dl->worst_release;
  }
  return m;
}

// a session's pacing statistics dl for its replies and stream messages: NULL and 0 for an
// unpaced session (pacing mode none: nothing to report), -1 when out of memory
static int session_deadline(ccsim_arena *a, int pacing, const srv_deadline *dl,
                            Ccsim__DeadlineStats **out) {
  *out = NULL;
  if (pacing == CCSIM__PACING_MODE__PACING_NONE) {
    return 0;
  }
  *out = deadline_msg(a, dl);
  return *out ? 0 : -1;
}

// session_deadline for a reply built by the session's job thread (takes mu: the pacer and
// readers share dl); left out when out of memory
static void reply_deadline(rctx *rc, const srv_session *ss, Ccsim__DeadlineStats **out) {
  *out = NULL;
  if (ss->pace.mode == CCSIM__PACING_MODE__PACING_NONE) {
    return;  // nothing to report: no server-wide lock on the unpaced step path
  }
  pthread_mutex_lock(&rc->s->mu);
  session_deadline(rc->a, ss->pace.mode, &ss->view.dl, out);
  pthread_mutex_unlock(&rc->s->mu);
}

static Ccsim__Pacing *pacing_msg(ccsim_arena *a, int mode, double period) {
  Ccsim__Pacing *p = new_msg(a, sizeof *p, (void (*)(void *))ccsim__pacing__init);
  if (p) {
    p->has_mode = p->has_period = 1;
    p->mode = (Ccsim__PacingMode)mode;
    p->period = period;
  }
  return p;
}

// BodyState messages from view rows (nbody x SRV_VIEW); -1 when the arena is exhausted
static int bodies_from_view(ccsim_arena *a, int nbody, const double *view,
                            Ccsim__BodyState ***out, size_t *n) {
  Ccsim__BodyState **arr = ccsim_arena_alloc(a, sizeof *arr * (size_t)(nbody ? nbody : 1));
  if (!arr) {
    return -1;
  }
  for (int b = 0; b < nbody; b++) {
    const double *v = view + (size_t)b * SRV_VIEW;
    Ccsim__BodyState *bs = new_msg(a, sizeof *bs, (void (*)(void *))ccsim__body_state__init);
    Ccsim__Pose *po = new_msg(a, sizeof *po, (void (*)(void *))ccsim__pose__init);
    Ccsim__Twist *tw = new_msg(a, sizeof *tw, (void (*)(void *))ccsim__twist__init);
    if (!bs || !po || !tw || !(po->p = wire_vec3_new(a, v)) || !(po->q = wire_quat_new(a, v + 3)) ||
        !(tw->v = wire_vec3_new(a, v + 7)) || !(tw->w = wire_vec3_new(a, v + 10))) {
      return -1;
    }
    bs->has_body = 1;
    bs->body = (uint32_t)b;
    bs->pose = po;
    bs->twist = tw;
    arr[b] = bs;
  }
  *out = arr;
  *n = (size_t)nbody;
  return 0;
}

static Ccsim__StepStats *stats_delta(ccsim_arena *a, const sim_stats *x, const sim_stats *y) {
  Ccsim__StepStats *st = new_msg(a, sizeof *st, (void (*)(void *))ccsim__step_stats__init);
  if (!st) {
    return NULL;
  }
  st->steps = y->steps - x->steps;
  st->rhs_evals = y->rhs_evals - x->rhs_evals;
  st->jac_evals = y->jac_evals - x->jac_evals;
  st->newton_fails = y->newton_fails - x->newton_fails;
  st->error_fails = y->error_fails - x->error_fails;
  st->physics_us = (y->physics_ns - x->physics_ns) / 1000;
  st->geometry_us = (y->geometry_ns - x->geometry_ns) / 1000;
  st->penetrations = y->penetrations - x->penetrations;
  st->contacts = y->contacts;
  st->max_depth = y->max_depth;
  st->last_step_size = y->last_step;
  if (y->lcp_solver != SIM_LCP_SOLVER_NONE) {
    st->lcp_solver = y->lcp_solver == SIM_LCP_SOLVER_DANTZIG ? "dantzig" : "lemke";
    st->has_lcp_pivots = st->has_lcp_failures = 1;
    st->lcp_pivots = y->lcp_pivots - x->lcp_pivots;
    st->lcp_failures = y->lcp_failures - x->lcp_failures;
  }
  // zero fields stay off the wire (they read as 0): a quiet step's stats are mostly zeros,
  // and every field costs both ends time in a reply sent at 1 kHz
  st->has_steps = st->steps != 0;
  st->has_rhs_evals = st->rhs_evals != 0;
  st->has_jac_evals = st->jac_evals != 0;
  st->has_newton_fails = st->newton_fails != 0;
  st->has_error_fails = st->error_fails != 0;
  st->has_physics_us = st->physics_us != 0;
  st->has_geometry_us = st->geometry_us != 0;
  st->has_penetrations = st->penetrations != 0;
  st->has_contacts = st->contacts != 0;
  st->has_max_depth = st->max_depth != 0;
  st->has_last_step_size = st->last_step_size != 0;
  return st;
}

// whether t is the token want (SRV_ID_LEN characters; "" matches nothing), in constant time
static int same_token(const char *want, const char *t) {
  if (!t || strlen(t) != SRV_ID_LEN || strlen(want) != SRV_ID_LEN) {
    return 0;
  }
  unsigned diff = 0;
  for (int i = 0; i < SRV_ID_LEN; i++) {
    diff |= (unsigned)(want[i] ^ t[i]);
  }
  return diff == 0;
}

static int token_ok(const srv_session *ss, const char *t) { return same_token(ss->token, t); }

// ---- answered by the leader ---------------------------------------------------------

static int do_hello(rctx *rc, const Ccsim__Hello *h) {
  if (!h->has_protocol_version ||
      h->protocol_version != CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT) {
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
  hr->has_max_msg_bytes = 1;
  hr->max_msg_bytes = rc->s->cfg.max_msg_bytes;
  rc->reply.body_case = CCSIM__REPLY__BODY_HELLO;
  rc->reply.hello = hr;
  return CCSIM_OK;
}

static int do_server_info(rctx *rc) {
  Ccsim__ServerInfoReply *si = NEW(rc, Ccsim__ServerInfoReply, ccsim__server_info_reply__init);
  if (!si) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&rc->s->mu);
  srv_fill_server_info(rc->s, si, rc->a);
  pthread_mutex_unlock(&rc->s->mu);
  if (!si->deadline) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  rc->reply.body_case = CCSIM__REPLY__BODY_SERVER_INFO;
  rc->reply.server_info = si;
  return CCSIM_OK;
}

static int do_list(rctx *rc) {
  srv *s = rc->s;
  Ccsim__SessionList *sl = NEW(rc, Ccsim__SessionList, ccsim__session_list__init);
  if (!sl) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&s->mu);
  double now = srv_now();
  sl->sessions = ccsim_arena_alloc(rc->a, sizeof *sl->sessions * (size_t)(s->store.nsessions + 1));
  int ok = sl->sessions != NULL;
  for (int i = 0; ok && i < s->cfg.max_sessions; i++) {
    const srv_session *ss = s->store.tab[i];
    if (!ss) {
      continue;
    }
    Ccsim__SessionSummary *m = NEW(rc, Ccsim__SessionSummary, ccsim__session_summary__init);
    if (!m || !(m->session_id = ccsim_arena_strdup(rc->a, ss->id)) ||
        !(m->pacing = pacing_msg(rc->a, ss->pace.mode, ss->pace.period)) ||
        !(m->deadline = deadline_msg(rc->a, &ss->view.dl))) {
      ok = 0;
      break;
    }
    m->has_time = m->has_bodies = m->has_steps = m->has_idle = 1;
    m->time = ss->view.time;
    m->bodies = (uint32_t)ss->m->nbody;
    m->steps = ss->view.steps;
    m->idle = now > ss->sched.last_active ? now - ss->sched.last_active : 0;  // a held reply: ahead
    sl->sessions[sl->n_sessions++] = m;
  }
  pthread_mutex_unlock(&s->mu);
  if (!ok) {
    return fail(rc, CCSIM_ENOMEM, "list_sessions: out of memory");
  }
  rc->reply.body_case = CCSIM__REPLY__BODY_SESSIONS;
  rc->reply.sessions = sl;
  return CCSIM_OK;
}

// under mu: the session's identity for a new controller or observer
static Ccsim__CreateSessionReply *session_reply(rctx *rc, const srv_session *ss, int controller) {
  Ccsim__CreateSessionReply *cr = NEW(rc, Ccsim__CreateSessionReply,
                                      ccsim__create_session_reply__init);
  int nb = ss->m->nbody;
  char **names = ccsim_arena_alloc(rc->a, sizeof(char *) * (size_t)(nb ? nb : 1));
  if (!cr || !names || !(cr->session_id = ccsim_arena_strdup(rc->a, ss->id)) ||
      !(cr->pacing = pacing_msg(rc->a, ss->pace.mode, ss->pace.period))) {
    return NULL;
  }
  for (int b = 0; b < nb; b++) {
    if (!(names[b] = ccsim_arena_strdup(rc->a, ss->m->name[b]))) {
      return NULL;
    }
  }
  if (controller && !(cr->controller_token = ccsim_arena_strdup(rc->a, ss->token))) {
    return NULL;
  }
  cr->n_body_names = (size_t)nb;
  cr->body_names = names;
  cr->has_time = cr->has_last_seq = 1;
  cr->time = ss->view.time;
  cr->last_seq = ss->once.last_seq;
  return cr;
}

// under mu: GetState from the view the last job published (never waits for physics)
static int state_from_view(rctx *rc, const srv_session *ss) {
  Ccsim__StateReply *sr = NEW(rc, Ccsim__StateReply, ccsim__state_reply__init);
  if (!sr ||
      bodies_from_view(rc->a, ss->m->nbody, ss->view.bodies, &sr->bodies, &sr->n_bodies) != 0 ||
      session_deadline(rc->a, ss->pace.mode, &ss->view.dl, &sr->deadline) != 0) {
    return fail(rc, CCSIM_ENOMEM, "get_state: out of memory for the reply");
  }
  sr->has_time = 1;
  sr->time = ss->view.time;
  rc->reply.body_case = CCSIM__REPLY__BODY_STATE;
  rc->reply.state = sr;
  return CCSIM_OK;
}

// ---- admitting creates ----------------------------------------------------------------

static int fail_session_limit(rctx *rc) {
  const srv *s = rc->s;
  // the usual cause: sessions of clients that went away without closing them
  return fail(rc, CCSIM_ELIMIT,
              "create_session: the server already holds %d sessions (its limit, "
              "--max-sessions); `ccsim sessions` lists them, `ccsim close` ends one, and %s",
              s->cfg.max_sessions,
              s->cfg.idle_timeout > 0
                  ? "sessions idle past --idle-timeout are freed"
                  : "this server never frees idle ones (--idle-timeout 0): clients that went "
                    "away without closing keep theirs");
}

static int same_key(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b) {
  return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

// Under mu: queue a CreateSession (j taken: 0), or 1 when the sessions and the creates
// that may build one fill the limit. A create whose key made a session already, open or
// closed, is answered from it and takes no place; one whose key is being built waits for
// that build (a retry must not build a second copy, nor be refused a place the first holds).
static int admit_create_locked(srv *s, srv_job *j) {
  const Ccsim__CreateSession *cs = j->rq->create_session;
  j->ss = NULL;
  j->slot = 0;
  if (cs->has_create_key && !srv_find_key(s, cs->create_key.data, cs->create_key.len) &&
      srv_tomb_key(s, cs->create_key.data, cs->create_key.len) < 0 &&
      srv_failed_key(s, cs->create_key.data, cs->create_key.len) < 0) {
    for (srv_job *b = s->store.building; b; b = b->building_next) {
      if (same_key(&b->rq->create_session->create_key, &cs->create_key)) {
        j->next = b->waiting;
        b->waiting = j;
        return 0;
      }
    }
    if (s->store.nsessions + s->store.pending_creates >= s->cfg.max_sessions) {
      return 1;
    }
    if (s->threaded) {
      // srv_handle runs each create to its end before the next: nothing can wait there
      j->building_next = s->store.building;
      s->store.building = j;
    }
    j->slot = 1;
  } else if (!cs->has_create_key) {
    if (s->store.nsessions + s->store.pending_creates >= s->cfg.max_sessions) {
      return 1;
    }
    j->slot = 1;
  }
  s->store.pending_creates += j->slot;
  if (s->threaded) {
    srv_enqueue_locked(s, j);
  }
  return 0;
}

// Under mu: create j ended; the copies that waited for it are admitted again (answered
// from its session if it made one; otherwise the first builds and the rest wait again).
static void create_done_locked(srv *s, srv_job *j) {
  if (j->slot) {
    s->store.pending_creates--;
    j->slot = 0;
  }
  for (srv_job **p = &s->store.building; *p; p = &(*p)->building_next) {
    if (*p == j) {
      *p = j->building_next;
      break;
    }
  }
  srv_job *w = j->waiting;
  j->waiting = NULL;
  while (w) {
    srv_job *nx = w->next;
    if (admit_create_locked(s, w) != 0) {
      w->over_limit = 1;  // answered ELIMIT by do_create, as srv_accept would have
      srv_enqueue_locked(s, w);
    }
    w = nx;
  }
}

// ---- answers on the I/O thread (request table's answer column) ----------------------

static int answer_hello(rctx *rc, srv_job *j, srv_session *ss) {
  (void)ss;
  do_hello(rc, j->rq->hello);
  return SRV_ANSWERED;
}

static int answer_server_info(rctx *rc, srv_job *j, srv_session *ss) {
  (void)j, (void)ss;
  do_server_info(rc);
  return SRV_ANSWERED;
}

static int answer_list(rctx *rc, srv_job *j, srv_session *ss) {
  (void)j, (void)ss;
  do_list(rc);
  return SRV_ANSWERED;
}

// CreateSession: checked here, then queued (takes mu) unless the sessions fill the limit
static int answer_create(rctx *rc, srv_job *j, srv_session *ss) {
  (void)ss;
  srv *s = rc->s;
  const Ccsim__CreateSession *cs = j->rq->create_session;
  if (!cs->scene == !cs->has_checkpoint) {
    fail(rc, CCSIM_EINVAL, "create_session: give either a scene or a checkpoint");
    return SRV_ANSWERED;
  }
  if (cs->has_create_key &&
      (cs->create_key.len < SRV_CREATE_KEY_MIN || cs->create_key.len > SRV_CREATE_KEY_MAX)) {
    fail(rc, CCSIM_EINVAL, "create_session: create_key of %zu bytes: give %d to %d random bytes",
         cs->create_key.len, SRV_CREATE_KEY_MIN, SRV_CREATE_KEY_MAX);
    return SRV_ANSWERED;
  }
  // the run function is set before the job may reach a pool thread
  j->run = run_request;
  pthread_mutex_lock(&s->mu);
  int full = admit_create_locked(s, j);
  pthread_mutex_unlock(&s->mu);
  if (full) {
    fail_session_limit(rc);
    return SRV_ANSWERED;
  }
  return SRV_QUEUE;
}

// under mu: GetState from the published view; a checkpoint is the controller's, on the pool
static int answer_get_state(rctx *rc, srv_job *j, srv_session *ss) {
  const Ccsim__GetState *g = j->rq->get_state;
  if (!(g->has_checkpoint && g->checkpoint)) {
    state_from_view(rc, ss);
    return SRV_ANSWERED;
  }
  if (!j->controller) {
    fail(rc, CCSIM_EPERM, "get_state.checkpoint: only the controller of session %s may "
         "take checkpoints (a checkpoint restarts the integrator)", ss->id);
    return SRV_ANSWERED;
  }
  return SRV_QUEUE;
}

// under mu
static int answer_attach(rctx *rc, srv_job *j, srv_session *ss) {
  (void)j;
  Ccsim__CreateSessionReply *cr = session_reply(rc, ss, 0);
  if (!cr) {
    fail(rc, CCSIM_ENOMEM, "attach_session: out of memory");
  } else {
    rc->reply.body_case = CCSIM__REPLY__BODY_ATTACH_SESSION;
    rc->reply.attach_session = cr;
  }
  return SRV_ANSWERED;
}

// under mu: any role may ask. At the current state: answered here when the contacts of the
// published state were computed already, so observers asking again never wait behind the
// controller's steps; else computed on the session's worker, like given poses
static int answer_query_contacts(rctx *rc, srv_job *j, srv_session *ss) {
  if (j->rq->query_contacts->n_poses == 0 && ss->view.contacts &&
      ss->view.contacts_steps == ss->view.steps) {
    rc->bytes = ss->view.contacts;
    atomic_fetch_add(&rc->bytes->refs, 1);
    return SRV_ANSWERED;
  }
  return SRV_QUEUE;
}

void srv_refuse(srv *s, srv_job *j, const uint8_t *req, size_t len, int code, const char *msg) {
  atomic_fetch_add(&s->requests, 1);
  rctx rc;
  rctx_init(&rc, s, &s->io.arena);
  j->arrived = srv_now();
  fail(&rc, code, "%s", msg);
  echo_request_id(&rc, req, len);
  finish(&rc, j);
}

int srv_accept(srv *s, srv_job *j, const uint8_t *req, size_t len) {
  atomic_fetch_add(&s->requests, 1);
  rctx rc;
  rctx_init(&rc, s, &s->io.arena);
  j->arrived = srv_now();
  if (len > s->cfg.max_msg_bytes) {
    fail(&rc, CCSIM_ELIMIT, "request of %zu bytes exceeds the limit of %zu bytes", len,
         s->cfg.max_msg_bytes);
    echo_request_id(&rc, req, len);
    finish(&rc, j);
    return 1;
  }
  size_t decoded_max = ccsim_pb_decoded_max(len);
  ccsim_arena_init(&j->rq_arena, 4096, decoded_max);
  Ccsim__Request *rq =
      (Ccsim__Request *)ccsim_pb_unpack(&ccsim__request__descriptor, &j->rq_arena, len, req);
  if (!rq) {
    if (j->rq_arena.over_limit) {
      fail(&rc, CCSIM_ELIMIT, "request of %zu bytes takes more than %zu bytes decoded", len,
           decoded_max);
    } else if (j->rq_arena.out_of_memory) {
      fail(&rc, CCSIM_ENOMEM, "out of memory decoding a request of %zu bytes", len);
    } else {
      fail(&rc, CCSIM_EPROTO, "request of %zu bytes is not a valid ccsim.Request", len);
    }
    echo_request_id(&rc, req, len);
    finish(&rc, j);
    return 1;
  }
  j->rq = rq;
  const srv_request *row = request_row(rq->body_case);
  if (!row) {
    if (rq->body_case == CCSIM__REQUEST__BODY__NOT_SET) {
      fail(&rc, CCSIM_EPROTO, "request has no body (hello, step, ...)");
    } else {
      fail(&rc, CCSIM_EPROTO, "unknown request body %d", (int)rq->body_case);
    }
    finish(&rc, j);
    return 1;
  }
  j->req = row;
  if (!row->session) {
    // no session to look up: the answer decides, and queues a create itself (the job may
    // run, and be gone, as soon as it is queued)
    if (row->answer(&rc, j, NULL) == SRV_QUEUE) {
      return 0;
    }
    finish(&rc, j);
    return 1;
  }
  pthread_mutex_lock(&s->mu);
  srv_session *ss = srv_find(s, rq->session_id);
  if (!ss) {
    const char *why = srv_tomb(s, rq->session_id);
    if (why[0]) {
      fail(&rc, CCSIM_EEXPIRED, "session %s %s", rq->session_id, why);
    } else {
      fail(&rc, CCSIM_ENOTFOUND, "unknown session \"%.40s\"",
           rq->session_id ? rq->session_id : "");
    }
    pthread_mutex_unlock(&s->mu);
    finish(&rc, j);
    return 1;
  }
  if (token_ok(ss, rq->token)) {
    // idle means: nothing from the controller; an observer's requests, refused or not, or
    // a stranger's, must not keep a session its controller left from the idle timeout
    // never back: a lockstep reply held past now has set it to its send time
    if (j->arrived > ss->sched.last_active) {
      ss->sched.last_active = j->arrived;
    }
    j->controller = 1;  // and when its reply leaves, for a request that takes long
  } else if (rq->body_case == CCSIM__REQUEST__BODY_CLOSE_SESSION &&
             same_token(s->admin_token, rq->token)) {
    // an operator ends a session whose controller is gone: a close only, as its controller
    j->controller = j->admin = 1;
  }
  int queue = 0;
  if (row->role == SRV_ROLE_CONTROLLER && !j->controller) {
    fail(&rc, CCSIM_EPERM, "%s: only the controller of session %s may do this (send the "
         "controller_token CreateSession returned; observers may get_state and "
         "query_contacts)%s", row->name, ss->id,
         rq->body_case == CCSIM__REQUEST__BODY_CLOSE_SESSION
             ? "; an operator closes any session with the token ccsimd --admin-token FILE "
               "wrote"
             : "");
  } else {
    queue = row->where == SRV_ON_POOL || row->answer(&rc, j, ss) == SRV_QUEUE;
  }
  if (queue) {
    j->ss = ss;
    j->run = run_request;
    if (s->threaded) {
      srv_enqueue_locked(s, j);
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
  }
  pthread_mutex_unlock(&s->mu);
  if (rc.bytes) {
    // a large reply is copied outside the lock
    finish_bytes(&rc, j, rc.bytes->data, rc.bytes->len);
    srv_blob_release(&rc.bytes);
    return 1;
  }
  finish(&rc, j);
  return 1;
}

void srv_fill_server_info(srv *s, Ccsim__ServerInfoReply *si, ccsim_arena *a) {
  si->server_version = SRV_VERSION;
  si->has_protocol_version = si->has_sessions = si->has_uptime = si->has_requests = 1;
  si->protocol_version = CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
  si->sessions = (uint32_t)s->store.nsessions;
  si->uptime = srv_now() - s->started;
  si->requests = atomic_load(&s->requests);
  if (s->sock.stream_endpoint[0]) {
    si->stream_endpoint = ccsim_arena_strdup(a, s->sock.stream_endpoint);
  }
  si->deadline = deadline_msg(a, &s->store.dl);
  si->has_max_sessions = si->has_workers = si->has_idle_timeout = si->has_max_bodies = 1;
  si->has_max_triangles = si->has_max_substeps = si->has_max_msg_bytes = si->has_expired = 1;
  si->max_sessions = (uint32_t)s->cfg.max_sessions;
  si->workers = (uint32_t)s->threads.nworkers;
  si->idle_timeout = s->cfg.idle_timeout;
  si->max_bodies = (uint32_t)s->cfg.max_bodies;
  si->max_triangles = (uint64_t)s->cfg.max_triangles;
  si->max_substeps = (uint32_t)s->cfg.max_substeps;
  si->max_msg_bytes = s->cfg.max_msg_bytes;
  si->has_max_contacts = 1;
  si->max_contacts = (uint32_t)s->cfg.max_contacts;
  si->has_max_step_seconds = 1;
  si->max_step_seconds = s->cfg.max_step_seconds;
  si->expired = s->store.expired;
}

// ---- run by a pool thread -----------------------------------------------------------

// After the state changed: publish the view, count the step and build the stream message
// when someone subscribes to the session (packing it for nobody cost as much as the reply)
// and the bodies are there (NULL: out of memory for them); contacts, when the step asked
// for them, go into the stream message too.
static void state_changed(rctx *rc, srv_job *j, srv_session *ss, Ccsim__BodyState **bodies,
                          size_t nbodies, Ccsim__StepStats *stats, Ccsim__Contact **contacts,
                          size_t ncontacts, int closed) {
  srv *s = rc->s;
  srv_deadline dl;
  uint64_t seq = srv_session_publish_view(s, ss, &dl);
  if ((!bodies && !closed) || !srv_stream_watched(s, ss->id)) {
    return;
  }
  Ccsim__StreamState m;
  ccsim__stream_state__init(&m);
  m.session_id = ss->id;
  m.has_stream_seq = m.has_time = 1;
  m.stream_seq = seq;
  m.time = sim_data_time(ss->d);
  m.bodies = bodies;
  m.n_bodies = nbodies;
  m.stats = stats;
  m.contacts = contacts;
  m.n_contacts = ncontacts;
  session_deadline(rc->a, ss->pace.mode, &dl, &m.deadline);  // out of memory: left out
  if (closed) {
    m.has_closed = 1;
    m.closed = 1;
  }
  free(j->pub);
  j->pub = ccsim_pb_pack_new(&m.base, 0, &j->pub_len);
  if (j->pub) {
    memcpy(j->pub_topic, ss->id, sizeof j->pub_topic);
  }
}

// late_request: the request came in after the deadline (the miss is not the server's)
static void record_lateness(srv *s, srv_session *ss, double lateness, int late_request) {
  pthread_mutex_lock(&s->mu);
  srv_deadline *d[2] = {&ss->view.dl, &s->store.dl};
  for (int k = 0; k < 2; k++) {
    d[k]->paced++;
    d[k]->last = lateness;
    if (lateness > 0) {
      d[k]->misses++;
      d[k]->late_requests += late_request != 0;
      if (lateness > d[k]->worst) {
        d[k]->worst = lateness;
      }
    }
  }
  pthread_mutex_unlock(&s->mu);
}

// under mu: the answer to a create whose key names the session made already (a retry of
// a create whose reply was lost): that session again, or a refusal of other bytes
static int create_again(rctx *rc, srv_job *j, srv_session *made, uint64_t digest) {
  if (made->create.digest && made->create.digest != digest) {
    return fail(rc, CCSIM_EINVAL,
                "create_session: create_key already made session %s from a different "
                "request; pick a new key for each session",
                made->id);
  }
  // its controller just came back for the token (a create queued behind a step may have
  // arrived before that step ended)
  if (j->arrived > made->sched.last_active) {
    made->sched.last_active = j->arrived;
  }
  Ccsim__CreateSessionReply *cr = session_reply(rc, made, 1);
  if (!cr) {
    return fail(rc, CCSIM_ENOMEM, "create_session: out of memory for the reply");
  }
  rc->reply.body_case = CCSIM__REPLY__BODY_CREATE_SESSION;
  rc->reply.create_session = cr;
  return CCSIM_OK;
}

// Under mu: 1 with the answer in rc and *code when j's create_key made a session already:
// that session again while it is open; EEXPIRED once it is closed, as a late copy of a
// create whose session was used and closed, built again, would be a session nobody holds.
// Likewise when a create under the key failed lately: the same error, at once (a retry of
// a scene that does not compile must not compile it again, nor wait as long again)
static int known_key_locked(rctx *rc, srv_job *j, uint64_t digest, int *code) {
  const ProtobufCBinaryData *key = &j->rq->create_session->create_key;
  srv_session *made = srv_find_key(rc->s, key->data, key->len);
  if (made) {
    *code = create_again(rc, j, made, digest);
    return 1;
  }
  int t = srv_tomb_key(rc->s, key->data, key->len);
  if (t >= 0) {
    *code = fail(rc, CCSIM_EEXPIRED, "create_session: create_key made session %s, which %s",
                 rc->s->store.tombs[t].id, rc->s->store.tombs[t].why);
    return 1;
  }
  int f = srv_failed_key(rc->s, key->data, key->len);
  if (f >= 0 && rc->s->store.failed[f].digest != digest) {
    *code = fail(rc, CCSIM_EINVAL,
                 "create_session: create_key was used by a different request, which failed; "
                 "pick a new key for each session");
    return 1;
  }
  if (f >= 0) {
    *code = fail(rc, rc->s->store.failed[f].code, "create_session: %s",
                 rc->s->store.failed[f].msg);
    return 1;
  }
  return 0;
}

static int create_session(rctx *rc, srv_job *j) {
  srv *s = rc->s;
  Ccsim__CreateSession *cs = j->rq->create_session;
  const size_t klen = cs->has_create_key ? cs->create_key.len : 0;
  // the whole request but its envelope: a retry resends the same bytes
  const uint64_t digest = klen ? ccsim_pb_digest(&cs->base) : 0;
  if (j->over_limit) {
    return fail_session_limit(rc);
  }
  if (klen) {
    pthread_mutex_lock(&s->mu);
    int code = CCSIM_OK, known = known_key_locked(rc, j, digest, &code);
    if (!known && !j->slot) {
      // admitted as a retry of a session closed since and forgotten (more than SRV_TOMBS
      // closed meanwhile): it builds, so it needs a place
      if (s->store.nsessions + s->store.pending_creates >= s->cfg.max_sessions) {
        code = fail_session_limit(rc);
      } else {
        s->store.pending_creates++;
        j->slot = 1;
      }
    }
    pthread_mutex_unlock(&s->mu);
    if (known || code != CCSIM_OK) {
      return code;
    }
  }
  Ccsim__Checkpoint *cp = NULL;
  char err[1024] = "";
  int code = CCSIM_OK;
  srv_session *ss = NULL;
  const Ccsim__Scene *given = cs->scene;
  if (cs->has_checkpoint) {
    // decoded like the request, into its arena under its limit: protobuf-c's unpack takes
    // time quadratic in a sub-message given again and again
    cp = (Ccsim__Checkpoint *)ccsim_pb_unpack(&ccsim__checkpoint__descriptor, &j->rq_arena,
                                              cs->checkpoint.len, cs->checkpoint.data);
    if (!cp || !cp->scene) {  // its format is checked where saved sessions' are
      const ccsim_arena *a = &j->rq_arena;
      code = a->over_limit ? CCSIM_ELIMIT : a->out_of_memory ? CCSIM_ENOMEM : CCSIM_EINVAL;
      ccsim_set_err(err, sizeof err, "checkpoint: %s",
                    a->over_limit      ? "past the request's decoded-size limit"
                    : a->out_of_memory ? "out of memory decoding it"
                                       : "not a ccsim.Checkpoint with a scene");
    }
    given = cp ? cp->scene : NULL;
  }
  if (code == CCSIM_OK) {
    s->compiling++;
    ss = srv_session_build(s, given, cp, cs->pacing, &code, err, sizeof err);
    s->compiling--;
  }
  if (ss && (srv_new_id(s, ss->id) != 0 || srv_new_id(s, ss->token) != 0)) {
    srv_session_free(&ss);
    code = CCSIM_ENOMEM;
    ccsim_set_err(err, sizeof err, "no randomness for a session id");
  }
  if (ss && klen) {
    memcpy(ss->create.key, cs->create_key.data, klen);
    ss->create.key_len = klen;
    ss->create.digest = digest;
  }
  pthread_mutex_lock(&s->mu);
  if (!ss && klen && code != CCSIM_ENOMEM) {
    // before the copies waiting for this build are admitted again (create_done_locked):
    // they get this answer. Out of memory may pass, so a retry builds again
    srv_failed_key_add(s, cs->create_key.data, klen, digest, code, err);
  }
  Ccsim__CreateSessionReply *cr = NULL;
  if (ss && klen && known_key_locked(rc, j, digest, &code)) {
    // another copy built meanwhile (one admitted as a retry before its session closed,
    // which took a place after the close): the first one in stands
    pthread_mutex_unlock(&s->mu);
    srv_session_free(&ss);
    return code;
  }
  if (ss) {
    srv_insert(s, ss);  // the place j held
    s->store.pending_creates--;
    j->slot = 0;
    cr = session_reply(rc, ss, 1);
    if (ss->pace.mode == CCSIM__PACING_MODE__PACING_FREE_RUNNING) {
      pthread_cond_signal(&s->pool.pace_cv);  // its first tick is due now
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (!ss) {
    return fail(rc, code, "create_session: %s", err);
  }
  if (!cr) {
    return fail(rc, CCSIM_ENOMEM, "create_session: out of memory for the reply");
  }
  rc->reply.body_case = CCSIM__REPLY__BODY_CREATE_SESSION;
  rc->reply.create_session = cr;
  return CCSIM_OK;
}

// CreateSession: build the session, or answer from the one its key made
static int do_create(rctx *rc, srv_job *j) {
  int code = create_session(rc, j);
  pthread_mutex_lock(&rc->s->mu);
  create_done_locked(rc->s, j);
  pthread_mutex_unlock(&rc->s->mu);
  return code;
}

// check a Step's inputs against the model; 0 or an error already in rc
static int check_inputs(rctx *rc, const sim_model *m, const Ccsim__Step *st) {
  char err[256];
  if (wire_inputs_check(m, st, err, sizeof err) != 0) {
    return fail(rc, CCSIM_EINVAL, "%s", err);
  }
  return CCSIM_OK;
}

// a Step's dt: given, finite and > 0 (what the session's time allows is the caller's)
static int check_dt(rctx *rc, const Ccsim__Step *st) {
  if (!st->has_dt || !isfinite(st->dt) || !(st->dt > 0)) {
    return fail(rc, CCSIM_EINVAL, "step.dt = %g: must be given, finite and > 0",
                st->has_dt ? st->dt : 0.0);
  }
  return CCSIM_OK;
}

static int do_step(rctx *rc, srv_job *j, srv_session *ss, int *record) {
  srv *s = rc->s;
  const sim_model *m = ss->m;
  const Ccsim__Step *st = j->rq->step;
  *record = 0;
  if (check_dt(rc, st) != CCSIM_OK) {
    return rc->error.code;
  }
  uint32_t n = st->has_substeps && st->substeps > 1 ? st->substeps : 1;
  if (n > (uint32_t)s->cfg.max_substeps) {
    return fail(rc, CCSIM_ELIMIT, "step.substeps = %u exceeds this server's limit of %d", n,
                s->cfg.max_substeps);
  }
  if (st->dt * n > SRV_MAX_DT) {
    return fail(rc, CCSIM_ELIMIT, "step: dt x substeps = %g s exceeds the limit of %g s",
                st->dt * n, SRV_MAX_DT);
  }
  int want_sub = st->has_want_substates && st->want_substates;
  if (want_sub && (double)n * m->nbody > SRV_MAX_SUBSTATES) {
    return fail(rc, CCSIM_ELIMIT, "step.want_substates: %u sub-steps x %d bodies exceed the "
                "limit of %d body states per reply", n, m->nbody, SRV_MAX_SUBSTATES);
  }
  // a step the core would refuse is refused here, before the request spends its seq
  double t0 = sim_data_time(ss->d);
  char why[256];
  if (sim_step_check(m, ss->d, t0 + st->dt, why, sizeof why) != CCSIM_OK) {
    return fail(rc, CCSIM_EINVAL, "%s", why);
  }
  if (check_inputs(rc, m, st) != CCSIM_OK) {
    return rc->error.code;
  }
  Ccsim__StepReply *sr = NEW(rc, Ccsim__StepReply, ccsim__step_reply__init);
  if (!sr) {
    return fail(rc, CCSIM_ENOMEM, "step: out of memory");
  }
  if (want_sub) {
    sr->substates = ccsim_arena_alloc(rc->a, sizeof *sr->substates * n);
    if (!sr->substates) {
      return fail(rc, CCSIM_ENOMEM, "step: out of memory for %u sub-states", n);
    }
  }
  // inputs hold for this request only (bodies not named get none); a kinematic target
  // pose is reached at the request's end, after all its sub-steps
  wire_inputs_apply(m, ss->d, st, st->dt * n);
  *record = 1;  // from here on the plant may change: the seq is spent
  sim_stats before = *sim_data_stats(ss->d);
  int status = CCSIM_OK;
  // the contact impulses of every sub-step, for the request's mean contact wrench
  size_t nimp = 6 * (size_t)(m->nbody ? m->nbody : 1);
  double *imp = ccsim_arena_alloc(rc->a, nimp * sizeof(double)), span = 0;
  if (imp) memset(imp, 0, nimp * sizeof(double));
  if (ss->pace.mode != CCSIM__PACING_MODE__PACING_FREE_RUNNING) {
    if (ss->pace.mode == CCSIM__PACING_MODE__PACING_LOCKSTEP && !ss->pace.started) {
      ss->pace.started = 1;
      ss->pace.wall_origin = j->arrived;
      ss->pace.sim_origin = t0;
    }
    // sub-steps end where n single steps of dt would: the same bits either way
    for (uint32_t k = 0; k < n && status == CCSIM_OK; k++) {
      status = sim_step(m, ss->d, sim_data_time(ss->d) + st->dt);
      if (imp) wire_impulse_add(m, ss->d, imp, &span);
      if (status == CCSIM_OK && want_sub) {
        Ccsim__SubState *sub = NEW(rc, Ccsim__SubState, ccsim__sub_state__init);
        double *one = ccsim_arena_alloc(rc->a, nimp * sizeof(double)), one_span = 0;
        if (one) memset(one, 0, nimp * sizeof(double)), wire_impulse_add(m, ss->d, one, &one_span);
        if (!sub || !one ||
            wire_bodies_new(rc->a, m, ss->d, one, one_span, &sub->bodies, &sub->n_bodies) != 0) {
          status = CCSIM_ENOMEM;
          break;
        }
        sub->has_time = 1;
        sub->time = sim_data_time(ss->d);
        sr->substates[sr->n_substates++] = sub;
      }
    }
    if (ss->pace.mode == CCSIM__PACING_MODE__PACING_LOCKSTEP) {
      double deadline = ss->pace.wall_origin + (sim_data_time(ss->d) - ss->pace.sim_origin);
      record_lateness(s, ss, srv_now() - deadline, j->arrived > deadline);
      j->send_at = status == CCSIM_OK ? deadline : 0;  // errors are not held back
    }
  }
  Ccsim__StepStats *stats = stats_delta(rc->a, &before, sim_data_stats(ss->d));
  Ccsim__BodyState **bodies = NULL;
  size_t nb = 0;
  if (!imp || wire_bodies_new(rc->a, m, ss->d, imp, span, &bodies, &nb) != 0 || !stats) {
    status = status == CCSIM_OK ? CCSIM_ENOMEM : status;
  }
  // the contacts at the end state, for the reply and the stream alike
  int cst = 0;
  if (status == CCSIM_OK && st->has_want_contacts && st->want_contacts) {
    cst = wire_contacts_new(rc->a, m, ss->d, &sr->contacts, &sr->n_contacts);
  }
  int contacts_ok = cst == 0 && sr->n_contacts <= (size_t)s->cfg.max_contacts;
  // a failure after some progress (a later sub-step, the rigid mode's limits, memory for
  // the reply) still moved the state: published, so GetState and cached contacts follow
  if (status == CCSIM_OK || status == CCSIM_ESOLVER || sim_data_time(ss->d) != t0) {
    state_changed(rc, j, ss, bodies, nb, stats, contacts_ok ? sr->contacts : NULL,
                  contacts_ok ? sr->n_contacts : 0, 0);
  }
  if (status == CCSIM_ENOMEM) {
    return fail(rc, CCSIM_ENOMEM, "step: out of memory for the reply");
  }
  if (status != CCSIM_OK && j->stopped == SRV_STOPPED_SHUTDOWN) {
    return fail(rc, status,
                "step: stopped, the server is shutting down; the state reached at t = %.17g "
                "is kept (and saved with --state-dir)",
                sim_data_time(ss->d));
  }
  if (status != CCSIM_OK && j->stopped) {
    return fail(rc, status,
                "step: stopped after %g s of physics, this server's limit per request "
                "(--max-step-seconds); the state reached at t = %.17g is kept",
                s->cfg.max_step_seconds, sim_data_time(ss->d));
  }
  if (status != CCSIM_OK) {
    return fail(rc, status, "step: %s (at t = %.17g)", sim_data_errmsg(ss->d),
                sim_data_time(ss->d));
  }
  reply_deadline(rc, ss, &sr->deadline);
  sr->has_time = 1;
  sr->time = sim_data_time(ss->d);
  sr->bodies = bodies;
  sr->n_bodies = nb;
  sr->stats = stats;
  if (cst != 0) {
    return fail(rc, cst, "step: contacts: %s",
                cst == CCSIM_ENOMEM ? "out of memory" : sim_data_errmsg(ss->d));
  }
  if (sr->n_contacts > (size_t)s->cfg.max_contacts) {
    // the step itself was taken (its seq is spent); only the contact list is refused
    return fail(rc, CCSIM_ELIMIT, "step: done (t = %.17g), but its %zu contacts exceed this "
                "server's limit of %d per reply; get the state with get_state",
                sim_data_time(ss->d), sr->n_contacts, s->cfg.max_contacts);
  }
  rc->reply.body_case = CCSIM__REPLY__BODY_STEP;
  rc->reply.step = sr;
  return CCSIM_OK;
}

// free-running: a Step only replaces the held inputs (*record: they were, its seq is spent)
static int do_free_step(rctx *rc, srv_job *j, srv_session *ss, int *record) {
  const Ccsim__Step *st = j->rq->step;
  *record = 0;
  if (check_dt(rc, st) != CCSIM_OK) {
    return rc->error.code;
  }
  if ((st->has_want_substates && st->want_substates) ||
      (st->has_want_contacts && st->want_contacts)) {
    // asked for, they would silently be missing: this Step steps nothing
    return fail(rc, CCSIM_EINVAL,
                "step.want_%s: a free-running session steps on its own and a Step "
                "only sets its inputs; its states come in the stream, its contacts from "
                "QueryContacts",
                st->has_want_substates && st->want_substates ? "substates" : "contacts");
  }
  if (check_inputs(rc, ss->m, st) != CCSIM_OK) {
    return rc->error.code;
  }
  wire_inputs_apply(ss->m, ss->d, st, st->dt);
  *record = 1;
  Ccsim__StepReply *sr = NEW(rc, Ccsim__StepReply, ccsim__step_reply__init);
  if (!sr || wire_bodies_new(rc->a, ss->m, ss->d, NULL, 0, &sr->bodies, &sr->n_bodies) != 0) {
    return fail(rc, CCSIM_ENOMEM, "step: out of memory");
  }
  reply_deadline(rc, ss, &sr->deadline);
  sr->has_time = 1;
  sr->time = sim_data_time(ss->d);
  rc->reply.body_case = CCSIM__REPLY__BODY_STEP;
  rc->reply.step = sr;
  return CCSIM_OK;
}

// the body message of a request (its oneof member), for the digest a retry must match
static const ProtobufCMessage *request_body(const Ccsim__Request *rq) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field(&ccsim__request__descriptor, rq->body_case);
  return f ? *(const ProtobufCMessage *const *)((const char *)rq + f->offset) : NULL;
}

// A sequenced request (its row's sequenced column), exactly once: seq = last + 1 runs the
// row's exec; seq = last answers the stored reply again when it is the same request (a
// retry); a different request under a spent seq is refused. A late copy of an older
// request cannot bring back its inputs. seq 0: not sequenced, runs every time.
static void run_sequenced(rctx *rc, srv_job *j, srv_session *ss) {
  const Ccsim__Request *rq = j->rq;
  const char *name = j->req->name;
  uint64_t seq = rq->has_seq ? rq->seq : 0, last = ss->once.last_seq;
  // a retry sends the same request, so the same digest; a different one under it differs
  const ProtobufCMessage *body = request_body(rq);
  uint64_t digest = seq != 0 && body ? ccsim_pb_digest(body) : 0;
  if (seq != 0 && seq == last) {
    int same = !ss->once.last_digest || digest == ss->once.last_digest;
    if (same && ss->once.last_reply) {
      finish_stored(rc, j, ss);
      return;
    }
    // the reply carries last_seq = seq: the client learns the seq is spent and moves on
    if (same) {
      fail(rc, CCSIM_ESEQ,
           "%s: seq %llu ran, but its reply %s; get_state gives the state it reached; "
           "send %llu next",
           name, (unsigned long long)seq,
           // no digest: the seq came with a checkpoint, which keeps no reply
           !ss->once.last_digest ? "is not in the checkpoint this session was resumed from"
                                 : "could not be kept (the server ran out of memory)",
           (unsigned long long)seq + 1);
    } else {
      fail(rc, CCSIM_ESEQ,
           "%s: seq %llu was spent by a different %s, which ran (an "
           "earlier request that timed out?); get_state gives the state it reached; send "
           "%llu next",
           name, (unsigned long long)seq, body ? body->descriptor->short_name : name,
           (unsigned long long)seq + 1);
    }
  } else if (seq != 0 && seq != last + 1) {
    fail(rc, CCSIM_ESEQ, "%s: seq %llu is out of sequence (last executed: %llu; send %llu)",
         name, (unsigned long long)seq, (unsigned long long)last, (unsigned long long)last + 1);
  }
  if (rc->error.code != CCSIM__CODE__OK) {
    rc->error.has_last_seq = 1;
    rc->error.last_seq = last;
    finish(rc, j);
    return;
  }
  int record = 0;
  j->req->exec(rc, j, ss, &record);
  if (seq != 0 && rc->reply.body_case == CCSIM__REPLY__BODY__NOT_SET) {
    // a failure that spent the seq must say so, or the client would send it again and be
    // answered this error for ever
    rc->error.has_last_seq = 1;
    rc->error.last_seq = record ? seq : ss->once.last_seq;
  }
  if (record && seq != 0) {
    // packed once without the id for retries; this request's reply is a prefixed copy.
    // The seq is spent even when no memory is left to keep the reply: a retry is then
    // refused as out of sequence rather than run a second time
    srv_blob *b = srv_blob_pack(&rc->reply);
    srv_blob_release(&ss->once.last_reply);
    ss->once.last_reply = b;
    ss->once.last_seq = seq;
    ss->once.last_digest = digest;
    if (b) {
      finish_stored(rc, j, ss);
      return;
    }
  }
  finish(rc, j);
}

// a Step: steps the plant, or (free-running) sets the inputs the ticks hold
static int exec_step(rctx *rc, srv_job *j, srv_session *ss, int *record) {
  if (ss->pace.mode == CCSIM__PACING_MODE__PACING_FREE_RUNNING) {
    return do_free_step(rc, j, ss, record);
  }
  return do_step(rc, j, ss, record);
}

static void do_tick(rctx *rc, srv_job *j, srv_session *ss) {
  srv *s = rc->s;
  double due = j->arrived;
  if (!ss->pace.started) {
    ss->pace.started = 1;
    ss->pace.wall_origin = due;
    ss->pace.sim_origin = sim_data_time(ss->d);
  }
  // advance to where the wall clock will be one period from now
  double target = ss->pace.sim_origin + (due - ss->pace.wall_origin) + ss->pace.period;
  double t = sim_data_time(ss->d);
  if (!(target > t)) {
    return;
  }
  sim_stats before = *sim_data_stats(ss->d);
  int status = sim_step(ss->m, ss->d, target);
  record_lateness(s, ss, srv_now() - (due + ss->pace.period), 0);
  Ccsim__BodyState **bodies = NULL;
  size_t nb = 0;
  Ccsim__StepStats *stats = stats_delta(rc->a, &before, sim_data_stats(ss->d));
  size_t nimp = 6 * (size_t)(ss->m->nbody ? ss->m->nbody : 1);
  double *imp = ccsim_arena_alloc(rc->a, nimp * sizeof(double)), span = 0;
  if (imp) memset(imp, 0, nimp * sizeof(double)), wire_impulse_add(ss->m, ss->d, imp, &span);
  if (imp && wire_bodies_new(rc->a, ss->m, ss->d, imp, span, &bodies, &nb) == 0 && stats) {
    state_changed(rc, j, ss, bodies, nb, stats, NULL, 0, 0);
  }
  if (status != CCSIM_OK && s->cfg.verbose) {
    fprintf(stderr, "ccsimd: session %s: free-running step: %s\n", ss->id,
            sim_data_errmsg(ss->d));
  }
}

// QueryContacts on the session's worker: the contacts at the current state
static int do_query_contacts(rctx *rc, srv_session *ss, const Ccsim__QueryContacts *q) {
  Ccsim__ContactsReply *cr = NEW(rc, Ccsim__ContactsReply, ccsim__contacts_reply__init);
  if (!cr) {
    return fail(rc, CCSIM_ENOMEM, "query_contacts: out of memory");
  }
  if (q->n_poses > 0) {
    // at the poses given, without changing the session
    char err[256] = "";
    int st = wire_contacts_at_new(rc->a, ss->m, ss->d, q->poses, q->n_poses, &cr->contacts,
                                  &cr->n_contacts, err, sizeof err);
    if (st != 0) return fail(rc, st, "query_contacts: %s", err);
    if (cr->n_contacts > (size_t)rc->s->cfg.max_contacts) {
      return fail(rc, CCSIM_ELIMIT, "query_contacts: %zu contacts exceed this server's limit "
                  "of %d per reply", cr->n_contacts, rc->s->cfg.max_contacts);
    }
    cr->has_time = 1;
    cr->time = sim_data_time(ss->d);
    rc->reply.body_case = CCSIM__REPLY__BODY_CONTACTS;
    rc->reply.contacts = cr;
    return CCSIM_OK;
  }
  int st = wire_contacts_new(rc->a, ss->m, ss->d, &cr->contacts, &cr->n_contacts);
  if (st != 0) {
    return fail(rc, st, "query_contacts: %s",
                st == CCSIM_ENOMEM ? "out of memory for the contacts" : sim_data_errmsg(ss->d));
  }
  if (cr->n_contacts > (size_t)rc->s->cfg.max_contacts) {
    return fail(rc, CCSIM_ELIMIT, "query_contacts: %zu contacts exceed this server's limit of "
                "%d per reply", cr->n_contacts, rc->s->cfg.max_contacts);
  }
  cr->has_time = 1;
  cr->time = sim_data_time(ss->d);
  rc->reply.body_case = CCSIM__REPLY__BODY_CONTACTS;
  rc->reply.contacts = cr;
  return CCSIM_OK;
}

static int do_set_state(rctx *rc, srv_job *j, srv_session *ss, const Ccsim__SetState *st) {
  const sim_model *m = ss->m;
  if (st->has_time && (!isfinite(st->time) || st->time < 0)) {
    return fail(rc, CCSIM_EINVAL, "set_state.time = %g: must be finite and >= 0", st->time);
  }
  // one entry a body: two would merge field by field into a state neither was checked as
  unsigned char *seen =
      st->n_bodies > 1 ? ccsim_arena_alloc(rc->a, (size_t)m->nbody / 8 + 1) : NULL;
  if (st->n_bodies > 1 && !seen) {
    return fail(rc, CCSIM_ENOMEM, "set_state: out of memory");
  }
  for (size_t i = 0; i < st->n_bodies; i++) {
    const Ccsim__BodyState *b = st->bodies[i];
    if (!b->has_body || b->body >= (uint32_t)m->nbody) {
      return fail(rc, CCSIM_EINVAL, "set_state.bodies[%zu].body: %s (the scene has %d bodies)", i,
                  b->has_body ? "out of range" : "missing", m->nbody);
    }
    if (m->type[b->body] == SIM_BODY_FIXED) {
      return fail(rc, CCSIM_EINVAL, "set_state.bodies[%zu]: body %u (\"%s\") is fixed", i,
                  b->body, m->name[b->body]);
    }
    if (seen && (seen[b->body / 8] & (1u << (b->body % 8)))) {
      return fail(rc, CCSIM_EINVAL, "set_state.bodies[%zu]: body %u (\"%s\") is given twice", i,
                  b->body, m->name[b->body]);
    }
    if (seen) seen[b->body / 8] |= (unsigned char)(1u << (b->body % 8));
  }
  // every body is checked before any changes: a refusal leaves the session untouched (an
  // undo would restart its integrator, and the trajectory would differ from then on)
  for (int apply = 0; apply < 2; apply++) {
    if (apply && st->has_time) sim_set_time(m, ss->d, st->time);  // checked above
    for (size_t i = 0; i < st->n_bodies; i++) {
      const Ccsim__BodyState *b = st->bodies[i];
      double p[3], q[4], v[3], w[3];
      sim_get_body(m, ss->d, (int)b->body, p, q, v, w);  // what the entry leaves out stays
      int bad = (b->pose && (wire_vec3_get(b->pose->p, p, p) != 0 ||
                             (b->pose->q && wire_quat_get(b->pose->q, q) != 0))) ||
                (b->twist &&
                 (wire_vec3_get(b->twist->v, v, v) != 0 || wire_vec3_get(b->twist->w, w, w) != 0));
      if (bad) {
        return fail(rc, CCSIM_EINVAL, "set_state.bodies[%zu]: pose and twist must be finite", i);
      }
      ccsim_status bs = apply ? sim_set_body(m, ss->d, (int)b->body, p, q, v, w)
                              : sim_check_body(m, ss->d, (int)b->body, p, q, v, w);
      if (bs != CCSIM_OK) {
        return fail(rc, CCSIM_EINVAL, "set_state.bodies[%zu]: %s", i, sim_data_errmsg(ss->d));
      }
    }
  }
  if (st->has_time) {
    // pacing pairs a wall-clock time with a simulated one: the next step pairs them anew
    // (else a lockstep reply is held for the jump forward, or every step is late by the
    // jump back; a free-running plant freezes or catches up at once)
    ss->pace.started = 0;
  }
  Ccsim__StateReply *sr = NEW(rc, Ccsim__StateReply, ccsim__state_reply__init);
  if (!sr || wire_bodies_new(rc->a, m, ss->d, NULL, 0, &sr->bodies, &sr->n_bodies) != 0) {
    return fail(rc, CCSIM_ENOMEM, "set_state: out of memory for the reply");
  }
  sr->has_time = 1;
  sr->time = sim_data_time(ss->d);
  reply_deadline(rc, ss, &sr->deadline);
  state_changed(rc, j, ss, sr->bodies, sr->n_bodies, NULL, NULL, 0, 0);
  rc->reply.body_case = CCSIM__REPLY__BODY_STATE;
  rc->reply.state = sr;
  return CCSIM_OK;
}

static int do_checkpoint(rctx *rc, srv_session *ss) {
  uint8_t *blob = NULL;
  size_t len = 0;
  char why[256];
  int st = srv_checkpoint(rc->s, ss, &blob, &len, why, sizeof why);
  if (st != CCSIM_OK) {
    return fail(rc, st, "get_state.checkpoint: %s", why);
  }
  Ccsim__StateReply *sr = NEW(rc, Ccsim__StateReply, ccsim__state_reply__init);
  uint8_t *copy = ccsim_arena_alloc(rc->a, len ? len : 1);
  if (copy) {
    memcpy(copy, blob, len);
  }
  free(blob);
  if (!sr || !copy ||
      wire_bodies_new(rc->a, ss->m, ss->d, NULL, 0, &sr->bodies, &sr->n_bodies) != 0) {
    return fail(rc, CCSIM_ENOMEM, "get_state: out of memory for the reply");
  }
  sr->has_time = sr->has_checkpoint = 1;
  sr->time = sim_data_time(ss->d);
  sr->checkpoint.data = copy;
  sr->checkpoint.len = len;
  reply_deadline(rc, ss, &sr->deadline);
  rc->reply.body_case = CCSIM__REPLY__BODY_STATE;
  rc->reply.state = sr;
  return CCSIM_OK;
}

static int do_close(rctx *rc, srv_job *j, srv_session *ss) {
  Ccsim__CloseSessionReply *cr = NEW(rc, Ccsim__CloseSessionReply,
                                     ccsim__close_session_reply__init);
  if (!cr) {
    return fail(rc, CCSIM_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&rc->s->mu);
  srv_remove(rc->s, ss,
             j->admin ? "was closed by the server's operator (admin token)"
                      : "was closed by its controller");
  pthread_mutex_unlock(&rc->s->mu);
  srv_unlink_session(rc->s, ss->id);
  Ccsim__BodyState **bodies = NULL;
  size_t nb = 0;
  if (wire_bodies_new(rc->a, ss->m, ss->d, NULL, 0, &bodies, &nb) == 0) {
    state_changed(rc, j, ss, bodies, nb, NULL, NULL, 0, 1);
  }
  rc->reply.body_case = CCSIM__REPLY__BODY_CLOSE_SESSION;
  rc->reply.close_session = cr;
  return CCSIM_OK;
}

// ---- run functions of the pool's jobs (job->run) ------------------------------------

static void run_create(rctx *rc, srv_job *j, srv_session *ss) {
  (void)ss;
  do_create(rc, j);
  finish(rc, j);
}

static void run_set_state(rctx *rc, srv_job *j, srv_session *ss) {
  do_set_state(rc, j, ss, j->rq->set_state);
  finish(rc, j);
}

static void run_checkpoint(rctx *rc, srv_job *j, srv_session *ss) {
  do_checkpoint(rc, ss);
  finish(rc, j);
}

static void run_close(rctx *rc, srv_job *j, srv_session *ss) {
  do_close(rc, j, ss);
  finish(rc, j);
}

static void run_query_contacts(rctx *rc, srv_job *j, srv_session *ss) {
  const Ccsim__QueryContacts *q = j->rq->query_contacts;
  if (do_query_contacts(rc, ss, q) == CCSIM_OK && q->n_poses == 0) {
    // kept for the same question at this state (the session is ours: steps is its)
    srv_blob *b = srv_blob_pack(&rc->reply);
    if (b) {
      finish_bytes(rc, j, b->data, b->len);
      pthread_mutex_lock(&rc->s->mu);
      srv_blob *old = ss->view.contacts;
      ss->view.contacts = b;
      ss->view.contacts_steps = ss->view.steps;
      pthread_mutex_unlock(&rc->s->mu);
      srv_blob_release(&old);
      return;
    }
  }
  finish(rc, j);
}

// a queued request: its row's run, on the session's worker (a pool thread or srv_handle)
static void run_request(srv *s, srv_job *j, ccsim_arena *a) {
  rctx rc;
  rctx_init(&rc, s, a);
  srv_session *ss = j->ss;
  if (j->req->session && ss->sched.dead) {
    pthread_mutex_lock(&s->mu);
    fail(&rc, CCSIM_EEXPIRED, "session %s %s", ss->id, srv_tomb(s, ss->id));
    pthread_mutex_unlock(&s->mu);
    finish(&rc, j);
    return;
  }
  if (j->req->sequenced) {
    run_sequenced(&rc, j, ss);
  } else {
    j->req->run(&rc, j, ss);
  }
}

void srv_run_tick(srv *s, srv_job *j, ccsim_arena *a) {
  rctx rc;
  rctx_init(&rc, s, a);
  srv_session *ss = j->ss;
  if (!ss->sched.dead) {
    do_tick(&rc, j, ss);
  }
  pthread_mutex_lock(&s->mu);
  ss->sched.tick_queued = 0;
  pthread_mutex_unlock(&s->mu);
}

void srv_run_save(srv *s, srv_job *j, ccsim_arena *a) {
  (void)a;
  srv_session *ss = j->ss;
  pthread_mutex_lock(&s->mu);
  int changed = ss->view.steps != ss->view.saved_steps && !ss->sched.dead;
  uint64_t steps = ss->view.steps;
  pthread_mutex_unlock(&s->mu);
  int saved = changed && srv_save_session(s, ss) == 0;
  pthread_mutex_lock(&s->mu);
  if (saved) {
    ss->view.saved_steps = steps;
  }
  ss->sched.save_queued = 0;
  pthread_mutex_unlock(&s->mu);
}
