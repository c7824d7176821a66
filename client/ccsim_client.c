#include "ccsim_client.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "ccsim.pb-c.h"

struct ccsim_client {
  void *zctx;            // owned
  void *sock;            // DEALER, owned
  uint64_t next_id;      // request ids, increasing
  int timeout_ms;
  char err[512];
};

struct ccsim_session {
  ccsim_client *c;               // borrowed
  char id[64];
  int nbody;
  char (*names)[64];             // (nbody)
  ccsim_body_state *bodies;      // (nbody)
  ccsim_step_stats stats;
  double time;
  uint64_t seq;                  // last Step seq sent
};

static void cerr(ccsim_client *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, sizeof c->err, fmt, ap);
  va_end(ap);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

// Send rq, wait for the reply with the same request_id. *out gets the unpacked reply
// (caller frees with ccsim__reply__free_unpacked) when the status is OK or a server error.
static int roundtrip(ccsim_client *c, Ccsim__Request *rq, Ccsim__Reply **out) {
  *out = NULL;
  rq->has_request_id = 1;
  rq->request_id = ++c->next_id;
  size_t n = ccsim__request__get_packed_size(rq);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) {
    cerr(c, "out of memory");
    return CCSIM_ENOMEM;
  }
  ccsim__request__pack(rq, buf);
  int rc = zmq_send(c->sock, buf, n, 0);
  free(buf);
  if (rc < 0) {
    cerr(c, "send failed: %s", zmq_strerror(zmq_errno()));
    return CCSIM_EIO;
  }
  double deadline = now_us() + 1e3 * c->timeout_ms;
  for (;;) {
    double left = deadline - now_us();
    if (left <= 0) {
      cerr(c, "no reply within %d ms", c->timeout_ms);
      return CCSIM_ETIMEOUT;
    }
    zmq_pollitem_t it = {.socket = c->sock, .events = ZMQ_POLLIN};
    rc = zmq_poll(&it, 1, (long)(left / 1e3) + 1);
    if (rc < 0) {
      if (zmq_errno() == EINTR) {
        continue;
      }
      cerr(c, "poll failed: %s", zmq_strerror(zmq_errno()));
      return CCSIM_EIO;
    }
    if (rc == 0) {
      continue;
    }
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, c->sock, 0) < 0) {
      zmq_msg_close(&msg);
      cerr(c, "receive failed: %s", zmq_strerror(zmq_errno()));
      return CCSIM_EIO;
    }
    Ccsim__Reply *r = ccsim__reply__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
    zmq_msg_close(&msg);
    if (!r) {
      cerr(c, "the server sent a reply that is not a ccsim.Reply");
      return CCSIM_EPROTO;
    }
    if (r->request_id != rq->request_id) {
      ccsim__reply__free_unpacked(r, NULL);  // a late reply to an earlier request
      continue;
    }
    *out = r;
    if (r->error && r->error->code != CCSIM__CODE__OK) {
      cerr(c, "%s: %s", ccsim_status_name((int)r->error->code),
           r->error->message ? r->error->message : "");
      return (int)r->error->code;
    }
    return CCSIM_OK;
  }
}

ccsim_client *ccsim_client_new(const char *endpoint, char *err, size_t err_sz) {
  ccsim_client *c = calloc(1, sizeof *c);
  if (!c) {
    if (err) snprintf(err, err_sz, "out of memory");
    return NULL;
  }
  c->timeout_ms = 30000;
  c->zctx = zmq_ctx_new();
  c->sock = c->zctx ? zmq_socket(c->zctx, ZMQ_DEALER) : NULL;
  int linger = 0;
  if (!c->sock) {
    if (err) snprintf(err, err_sz, "cannot create a ZeroMQ socket");
    ccsim_client_destroy(&c);
    return NULL;
  }
  zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
  if (zmq_connect(c->sock, endpoint) != 0) {
    if (err) snprintf(err, err_sz, "cannot connect to %s: %s", endpoint, zmq_strerror(zmq_errno()));
    ccsim_client_destroy(&c);
    return NULL;
  }
  // Hello: checks that a ccsim server of our protocol version answers
  Ccsim__Request rq;
  Ccsim__Hello h;
  ccsim__request__init(&rq);
  ccsim__hello__init(&h);
  h.has_protocol_version = 1;
  h.protocol_version = CCSIM__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
  h.client_name = "libccsim";
  rq.body_case = CCSIM__REQUEST__BODY_HELLO;
  rq.hello = &h;
  Ccsim__Reply *r = NULL;
  int st = roundtrip(c, &rq, &r);
  if (r) ccsim__reply__free_unpacked(r, NULL);
  if (st != CCSIM_OK) {
    if (err) snprintf(err, err_sz, "%s: %s", endpoint, c->err);
    ccsim_client_destroy(&c);
    return NULL;
  }
  return c;
}

void ccsim_client_destroy(ccsim_client **pc) {
  if (!pc || !*pc) {
    return;
  }
  ccsim_client *c = *pc;
  if (c->sock) zmq_close(c->sock);
  if (c->zctx) zmq_ctx_term(c->zctx);
  free(c);
  *pc = NULL;
}

void ccsim_client_set_timeout(ccsim_client *c, int ms) { c->timeout_ms = ms > 0 ? ms : 1; }

const char *ccsim_client_errmsg(const ccsim_client *c) { return c ? c->err : "no client"; }

int ccsim_client_server_info(ccsim_client *c, ccsim_server_info *out, double *rtt_us) {
  Ccsim__Request rq;
  Ccsim__ServerInfo si;
  ccsim__request__init(&rq);
  ccsim__server_info__init(&si);
  rq.body_case = CCSIM__REQUEST__BODY_SERVER_INFO;
  rq.server_info = &si;
  Ccsim__Reply *r = NULL;
  double t0 = now_us();
  int st = roundtrip(c, &rq, &r);
  if (rtt_us) *rtt_us = now_us() - t0;
  if (st == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_SERVER_INFO || !r->server_info)) {
    cerr(c, "server_info: the reply has no server_info");
    st = CCSIM_EPROTO;
  }
  if (st == CCSIM_OK && out) {
    memset(out, 0, sizeof *out);
    snprintf(out->version, sizeof out->version, "%s",
             r->server_info->server_version ? r->server_info->server_version : "");
    out->protocol_version = r->server_info->protocol_version;
    out->sessions = r->server_info->sessions;
    out->uptime = r->server_info->uptime;
    out->requests = r->server_info->requests;
  }
  if (r) ccsim__reply__free_unpacked(r, NULL);
  return st;
}

// copy BodyState messages into the session's arrays; checks indices and presence
static int take_bodies(ccsim_session *s, Ccsim__BodyState **bs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const Ccsim__BodyState *b = bs[i];
    if (b->body >= (uint32_t)s->nbody || !b->pose || !b->pose->p || !b->pose->q || !b->twist ||
        !b->twist->v || !b->twist->w) {
      cerr(s->c, "reply: body state %zu is incomplete or out of range", i);
      return CCSIM_EPROTO;
    }
    ccsim_body_state *o = &s->bodies[b->body];
    o->p[0] = b->pose->p->x, o->p[1] = b->pose->p->y, o->p[2] = b->pose->p->z;
    o->q[0] = b->pose->q->w, o->q[1] = b->pose->q->x, o->q[2] = b->pose->q->y;
    o->q[3] = b->pose->q->z;
    o->v[0] = b->twist->v->x, o->v[1] = b->twist->v->y, o->v[2] = b->twist->v->z;
    o->w[0] = b->twist->w->x, o->w[1] = b->twist->w->y, o->w[2] = b->twist->w->z;
  }
  return CCSIM_OK;
}

ccsim_session *ccsim_session_create(ccsim_client *c, const ccsim_scene *scene) {
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  ccsim__request__init(&rq);
  ccsim__create_session__init(&cs);
  cs.scene = (Ccsim__Scene *)ccsim_scene_message(scene);
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = &cs;
  Ccsim__Reply *r = NULL;
  int st = roundtrip(c, &rq, &r);
  ccsim_session *s = NULL;
  if (st == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_CREATE_SESSION || !r->create_session ||
                         !r->create_session->session_id)) {
    cerr(c, "create_session: the reply has no session id");
    st = CCSIM_EPROTO;
  }
  if (st == CCSIM_OK) {
    const Ccsim__CreateSessionReply *cr = r->create_session;
    s = calloc(1, sizeof *s);
    size_t nb = cr->n_body_names ? cr->n_body_names : 1;
    if (s) {
      s->names = calloc(nb, sizeof *s->names);
      s->bodies = calloc(nb, sizeof *s->bodies);
    }
    if (!s || !s->names || !s->bodies) {
      cerr(c, "out of memory");
      if (s) {
        free(s->names);
        free(s->bodies);
        free(s);
      }
      s = NULL;
    } else {
      s->c = c;
      snprintf(s->id, sizeof s->id, "%s", cr->session_id);
      s->nbody = (int)cr->n_body_names;
      for (int b = 0; b < s->nbody; b++) {
        snprintf(s->names[b], sizeof s->names[b], "%s", cr->body_names[b]);
      }
    }
  }
  if (r) ccsim__reply__free_unpacked(r, NULL);
  if (s && ccsim_session_get_state(s) != CCSIM_OK) {
    ccsim_session_close(&s);
  }
  return s;
}

int ccsim_session_step(ccsim_session *s, double dt, const ccsim_input *in, size_t nin) {
  Ccsim__Request rq;
  Ccsim__Step st;
  ccsim__request__init(&rq);
  ccsim__step__init(&st);
  st.has_dt = 1;
  st.dt = dt;
  Ccsim__BodyInput *bi = NULL, **bip = NULL;
  Ccsim__Vec3 *vecs = NULL;
  if (nin > 0) {
    bi = calloc(nin, sizeof *bi);
    bip = calloc(nin, sizeof *bip);
    vecs = calloc(2 * nin, sizeof *vecs);
    if (!bi || !bip || !vecs) {
      free(bi), free(bip), free(vecs);
      cerr(s->c, "out of memory");
      return CCSIM_ENOMEM;
    }
    for (size_t i = 0; i < nin; i++) {
      ccsim__body_input__init(&bi[i]);
      ccsim__vec3__init(&vecs[2 * i]);
      ccsim__vec3__init(&vecs[2 * i + 1]);
      Ccsim__Vec3 *f = &vecs[2 * i], *t = &vecs[2 * i + 1];
      f->has_x = f->has_y = f->has_z = t->has_x = t->has_y = t->has_z = 1;
      f->x = in[i].force[0], f->y = in[i].force[1], f->z = in[i].force[2];
      t->x = in[i].torque[0], t->y = in[i].torque[1], t->z = in[i].torque[2];
      bi[i].has_body = 1;
      bi[i].body = in[i].body;
      bi[i].force = f;
      bi[i].torque = t;
      bip[i] = &bi[i];
    }
  }
  st.n_inputs = nin;
  st.inputs = bip;
  rq.session_id = s->id;
  rq.has_seq = 1;
  rq.seq = s->seq + 1;
  rq.body_case = CCSIM__REQUEST__BODY_STEP;
  rq.step = &st;
  Ccsim__Reply *r = NULL;
  int status = roundtrip(s->c, &rq, &r);
  free(bi), free(bip), free(vecs);
  if (status == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_STEP || !r->step)) {
    cerr(s->c, "step: the reply has no step result");
    status = CCSIM_EPROTO;
  }
  if (status == CCSIM_OK) {
    s->seq++;
    status = take_bodies(s, r->step->bodies, r->step->n_bodies);
    s->time = r->step->time;
    const Ccsim__StepStats *ps = r->step->stats;
    if (ps) {
      ccsim_step_stats *o = &s->stats;
      o->steps = ps->steps, o->rhs_evals = ps->rhs_evals, o->jac_evals = ps->jac_evals;
      o->newton_fails = ps->newton_fails, o->error_fails = ps->error_fails;
      o->physics_us = ps->physics_us, o->geometry_us = ps->geometry_us;
      o->penetrations = ps->penetrations, o->contacts = ps->contacts;
      o->max_depth = ps->max_depth, o->last_step_size = ps->last_step_size;
    }
  }
  if (r) ccsim__reply__free_unpacked(r, NULL);
  return status;
}

int ccsim_session_get_state(ccsim_session *s) {
  Ccsim__Request rq;
  Ccsim__GetState gs;
  ccsim__request__init(&rq);
  ccsim__get_state__init(&gs);
  rq.session_id = s->id;
  rq.body_case = CCSIM__REQUEST__BODY_GET_STATE;
  rq.get_state = &gs;
  Ccsim__Reply *r = NULL;
  int status = roundtrip(s->c, &rq, &r);
  if (status == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_STATE || !r->state)) {
    cerr(s->c, "get_state: the reply has no state");
    status = CCSIM_EPROTO;
  }
  if (status == CCSIM_OK) {
    status = take_bodies(s, r->state->bodies, r->state->n_bodies);
    s->time = r->state->time;
  }
  if (r) ccsim__reply__free_unpacked(r, NULL);
  return status;
}

int ccsim_session_close(ccsim_session **ps) {
  if (!ps || !*ps) {
    return CCSIM_OK;
  }
  ccsim_session *s = *ps;
  Ccsim__Request rq;
  Ccsim__CloseSession cl;
  ccsim__request__init(&rq);
  ccsim__close_session__init(&cl);
  rq.session_id = s->id;
  rq.body_case = CCSIM__REQUEST__BODY_CLOSE_SESSION;
  rq.close_session = &cl;
  Ccsim__Reply *r = NULL;
  int status = roundtrip(s->c, &rq, &r);
  if (r) ccsim__reply__free_unpacked(r, NULL);
  free(s->names);
  free(s->bodies);
  free(s);
  *ps = NULL;
  return status;
}

double ccsim_session_time(const ccsim_session *s) { return s->time; }

int ccsim_session_nbody(const ccsim_session *s) { return s->nbody; }

const char *ccsim_session_body_name(const ccsim_session *s, int b) {
  return b >= 0 && b < s->nbody ? s->names[b] : NULL;
}

int ccsim_session_body_index(const ccsim_session *s, const char *name) {
  for (int b = 0; b < s->nbody; b++) {
    if (strcmp(s->names[b], name) == 0) {
      return b;
    }
  }
  return -1;
}

const ccsim_body_state *ccsim_session_bodies(const ccsim_session *s) { return s->bodies; }

const ccsim_step_stats *ccsim_session_stats(const ccsim_session *s) { return &s->stats; }

const char *ccsim_session_id(const ccsim_session *s) { return s->id; }
