#include "ccsim_client.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_arena.h"
#include "ccsim_key.h"
#include "ccsim_pb.h"
#include "ccsim_random.h"
#include "ccsim_scene_msg.h"
#include "ccsim_status.h"

// longest wait without reading the handshake's events [ms]
#define CLIENT_MONITOR_SLICE_MS 100.0
// connections refused this long without one made [us] mean nothing listens at the
// endpoint: ZeroMQ retries every 100 ms (ZMQ_RECONNECT_IVL) for ever, so a request would
// otherwise wait out its timeout and every retry; a server restarting takes longer to be
// back, and a retry of the same call finds it then
#define CLIENT_REFUSED_US 1e6

// What a socket's handshakes say: a server refusing our key, or one that speaks another
// security mechanism than we do, would otherwise show only as a timeout, as if it were down.
typedef struct handshakes {
  void *mon;      // PAIR receiving the socket's handshake events (owned)
  unsigned made;  // monitors made so far: each one's inproc name is new
  int failures;   // failed without detail since the last success
  int last_failure;  // the last one's errno (-1: a protocol error)
  int probed;        // the peer's greeting was asked for (ccsim_zmtp_mechanism)
  double refused_since;  // the first connection refused since one was last made [us]
                         // (0: none refused, or one made since)
} handshakes;

struct ccsim_client {
  char endpoint[512];
  void *zctx;            // owned
  void *sock;            // DEALER, owned
  handshakes hs;         // sock's
  uint64_t next_id;      // request ids, increasing
  int timeout_ms;
  int retries;
  int heartbeat_ms;
  int attempts;          // attempts the last round trip took
  int stale;             // the socket may hold unsent requests or a refused connection:
                         // the next round trip opens a fresh one first
  int curve;
  uint64_t max_request;  // the server's limit on a request [bytes] (0: not told)
  char server_key[41], public_key[41], secret_key[41];
  char err[512];
  // replies are unpacked into this arena and live until the next round trip: a Step's
  // reply is a dozen small messages, each a malloc and a free otherwise
  ccsim_arena rx;
};

struct ccsim_session {
  ccsim_client *c;               // borrowed
  char id[64];
  char token[64];                // "" for observers
  int nbody;
  char (*names)[64];             // (nbody)
  ccsim_body_state *bodies;      // (nbody)
  ccsim_step_stats stats;
  ccsim_deadline_stats deadline;
  double time;
  uint64_t seq;                  // last Step seq completed
  struct input_msg *inm;         // (incap) a Step's input messages, kept between Steps
  Ccsim__BodyInput **inp;        // (incap) pointers to them
  size_t incap;
  int want_contacts;             // Steps ask for their contacts
  ccsim_contact *contacts;       // (ccap) the last Step's, when it asked
  size_t ncontacts, ccap;
};

static void cerr(ccsim_client *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ccsim_vset_err(c->err, sizeof c->err, fmt, ap);
  va_end(ap);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

void ccsim_client_opts_defaults(ccsim_client_opts *o) {
  memset(o, 0, sizeof *o);
  o->timeout_ms = 30000;
  o->retries = 2;
  o->heartbeat_ms = 1000;
}

// CURVE options on a socket that connects to a CURVE server
static int set_curve(void *sock, const char *server, const char *pub, const char *sec) {
  return zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server, 41) ||
         zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, pub, 41) ||
         zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, sec, 41);
}

static void handshakes_close(handshakes *h) {
  if (h->mon) {
    zmq_close(h->mon);
    h->mon = NULL;
  }
}

// Close *sock and h watching it, in that order of effect: the socket's monitor is stopped
// while h's end still reads it (ZeroMQ's I/O thread sends a monitor's events blocking, under
// the lock that stopping it takes: with no reader left it could wait for ever), then h, then
// the socket, whose monitor goes at once rather than when the reaper gets to it (a client
// reopening after every failed request would otherwise run out of the context's sockets).
static void close_watched(handshakes *h, void **sock) {
  if (*sock) zmq_socket_monitor(*sock, NULL, 0);
  handshakes_close(h);
  if (*sock) zmq_close(*sock);
  *sock = NULL;
}

// Watch sock's handshakes into h->mon (after closing the one before), and with refusals
// its connections refused (a stream's subscriber waits for its server instead); 0, or -1
// (errno from ZeroMQ). owner names the inproc endpoint: unique in its context.
static int handshakes_watch(handshakes *h, void *zctx, void *sock, const void *owner,
                            int refusals) {
  handshakes_close(h);
  h->failures = 0;
  h->probed = 0;
  h->refused_since = 0;
  char ep[96];
  snprintf(ep, sizeof ep, "inproc://ccsim-handshakes-%p-%u", owner, h->made++);
  int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  if (refusals) {
    // and whether connections are made at all: a refused one is retried for ever
    events |= ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED;
  }
  h->mon = ccsim_monitor_open(zctx, sock, ep, events);
  return h->mon ? 0 : -1;
}

// Read the events h->mon holds about the connection to endpoint (curve: with CURVE):
// CCSIM_EPERM with the reason in err when they say for sure that it cannot succeed (a
// refused key, a mechanism mismatch), CCSIM_EIO when every connection has been refused for
// CLIENT_REFUSED_US since `since` [us] (nothing listens there: never started, or stopped
// or killed since; refusals before the wait began do not count, so a server back since
// then gets the time to take the reconnection), else CCSIM_OK (the wait goes on; failures
// without detail are counted for handshakes_hint).
static int handshakes_read(handshakes *h, const char *endpoint, int curve, double since,
                           char *err, size_t err_sz) {
  uint16_t id;
  uint32_t value;
  while (ccsim_monitor_next(h->mon, &id, &value)) {
    if (id == ZMQ_EVENT_CONNECTED) {
      h->refused_since = 0;
      continue;
    }
    if (id == ZMQ_EVENT_CONNECT_RETRIED) {
      // also after a connection made is lost: the server's restart is given the same time
      if (h->refused_since == 0) {
        h->refused_since = now_us();
      }
      continue;
    }
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      h->failures = 0;
      continue;
    }
    if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH && value >= 500) {
      // ccsimd answers 500 when it cannot read its allow list: the key is not to blame
      ccsim_set_err(err, err_sz,
                    "%s: %s cannot check client keys now (ZAP status %u): its --curve-allow "
                    "directory cannot be read (ccsimd says why); no client is admitted until "
                    "it can",
                    ccsim_status_name(CCSIM_EPERM), endpoint, value);
      return CCSIM_EPERM;
    }
    if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      ccsim_set_err(err, err_sz,
                    "%s: %s refused this client's CURVE key (ZAP status %u): its public key must "
                    "be in the server's --curve-allow directory",
                    ccsim_status_name(CCSIM_EPERM), endpoint, value);
      return CCSIM_EPERM;
    }
    // a hang-up before the peer's greeting was read hides a mismatch of mechanisms: the
    // first one asks the peer for its greeting on a connection of our own (once a socket)
    char mech[21] = "";
    int mismatch = id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
                   value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH;
    if (!mismatch && !h->probed) {
      h->probed = 1;
      mismatch =
          ccsim_zmtp_mechanism(endpoint, 300, mech) && strcmp(mech, curve ? "CURVE" : "NULL") != 0;
    }
    if (mismatch) {
      ccsim_set_err(err, err_sz, "%s: %s %s", ccsim_status_name(CCSIM_EPERM), endpoint,
                    curve ? "does not use CURVE, and this client does (CCSIM_SERVER_KEY and "
                            "CCSIM_CLIENT_KEY): unset them, or start ccsimd with --curve-secret"
                          : "requires CURVE: set CCSIM_SERVER_KEY to the server's .pub file and "
                            "CCSIM_CLIENT_KEY to this client's .secret file (ccsim keygen)");
      return CCSIM_EPERM;
    }
    // Else it is what a wrong server key gives, but also a relay (a port forward, a
    // proxy) with no server behind it, or a server restarting. The wait goes on, retries
    // included; a timeout says what the failures may mean.
    h->failures++;
    h->last_failure = id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ? -1 : (int)value;
  }
  if (h->refused_since > 0 &&
      now_us() - fmax(h->refused_since, since) >= CLIENT_REFUSED_US) {
    ccsim_set_err(err, err_sz, "nothing accepts connections at %s \u2014 is ccsimd running?",
                  endpoint);
    return CCSIM_EIO;
  }
  return CCSIM_OK;
}

// After a timeout: what h's failed handshakes since the last success may mean, appended
// to err ("" when none failed).
static void handshakes_hint(const handshakes *h, const char *whose, int curve, char *err,
                            size_t err_sz) {
  if (h->failures == 0) {
    return;
  }
  size_t n = strlen(err);
  ccsim_set_err(err + n, err_sz - n,
                "; %s handshake failed %d time%s without detail (the last: %s): %s, or a "
                "relay in between has no server behind it",
                whose, h->failures, h->failures == 1 ? "" : "s",
                h->last_failure >= 0 ? zmq_strerror(h->last_failure) : "a protocol error",
                curve ? "CCSIM_SERVER_KEY may not hold this server's public key (ccsimd prints "
                        "it at start), the server may not use CURVE"
                      : "the server may require CURVE (CCSIM_SERVER_KEY and CCSIM_CLIENT_KEY)");
}

static int open_socket(ccsim_client *c) {
  close_watched(&c->hs, &c->sock);
  c->sock = zmq_socket(c->zctx, ZMQ_DEALER);
  if (!c->sock) {
    cerr(c, "cannot create a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
    return CCSIM_EIO;
  }
  int linger = 0;
  zmq_setsockopt(c->sock, ZMQ_LINGER, &linger, sizeof linger);
  // a send blocks once the server stops taking requests (its queue full): bounded too
  zmq_setsockopt(c->sock, ZMQ_SNDTIMEO, &c->timeout_ms, sizeof c->timeout_ms);
  c->stale = 0;
  if (c->heartbeat_ms > 0) {
    int ivl = c->heartbeat_ms, tmo = 3 * c->heartbeat_ms;
    zmq_setsockopt(c->sock, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(c->sock, ZMQ_HEARTBEAT_TIMEOUT, &tmo, sizeof tmo);
    zmq_setsockopt(c->sock, ZMQ_HEARTBEAT_TTL, &tmo, sizeof tmo);
  }
  if (c->curve && set_curve(c->sock, c->server_key, c->public_key, c->secret_key) != 0) {
    cerr(c, "cannot set CURVE keys: %s", zmq_strerror(zmq_errno()));
    return CCSIM_EINVAL;
  }
  if (handshakes_watch(&c->hs, c->zctx, c->sock, c, 1) != 0) {
    cerr(c, "cannot watch the connection's handshake: %s", zmq_strerror(zmq_errno()));
    return CCSIM_EIO;
  }
  if (ccsim_zmq_ipv6_for(c->sock, c->endpoint) != 0 || zmq_connect(c->sock, c->endpoint) != 0) {
    cerr(c, "cannot connect to %s: %s", c->endpoint, zmq_strerror(zmq_errno()));
    return CCSIM_EIO;
  }
  return CCSIM_OK;
}

int ccsim_client_reconnect(ccsim_client *c) {
  return open_socket(c);
}

// Let a (reset, or holding earlier messages) grow by what a message of len bytes may take
// decoded, and no more.
static void decoded_limit(ccsim_arena *a, size_t len) {
  size_t more = ccsim_pb_decoded_max(len);
  a->limit = a->total > SIZE_MAX - more ? SIZE_MAX : a->total + more;
}

// Wait up to timeout for the reply to request id; CCSIM_ETIMEOUT when none came.
static int await_reply(ccsim_client *c, uint64_t id, Ccsim__Reply **out) {
  double started = now_us(), deadline = started + 1e3 * c->timeout_ms;
  for (;;) {
    double left = deadline - now_us();
    if (left <= 0) {
      return CCSIM_ETIMEOUT;
    }
    // the receive waits in slices, the handshake's events read between them: a reply
    // costs one system call, as a plain receive does, and a refusal is told within a slice
    int wait_ms = (int)fmin(left / 1e3 + 1, CLIENT_MONITOR_SLICE_MS);
    zmq_setsockopt(c->sock, ZMQ_RCVTIMEO, &wait_ms, sizeof wait_ms);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, c->sock, 0) < 0) {
      int e = zmq_errno();
      zmq_msg_close(&msg);
      if (e == EAGAIN || e == EINTR) {
        int st = handshakes_read(&c->hs, c->endpoint, c->curve, started, c->err, sizeof c->err);
        if (st != CCSIM_OK) {
          return st;
        }
        continue;  // the deadline decides
      }
      cerr(c, "receive failed: %s", zmq_strerror(e));
      return CCSIM_EIO;
    }
    size_t len = zmq_msg_size(&msg);
    // a server's reply is bounded like its requests are: the arena may grow by so much
    decoded_limit(&c->rx, len);
    Ccsim__Reply *r =
        (Ccsim__Reply *)ccsim_pb_unpack(&ccsim__reply__descriptor, &c->rx, len, zmq_msg_data(&msg));
    zmq_msg_close(&msg);
    if (!r) {
      if (c->rx.out_of_memory) {
        cerr(c, "out of memory decoding a reply of %zu bytes", len);
        return CCSIM_ENOMEM;
      }
      if (c->rx.over_limit) {
        cerr(c, "%s: the server sent a reply of %zu bytes that takes more than %zu bytes decoded",
             ccsim_status_name(CCSIM_EPROTO), len, ccsim_pb_decoded_max(len));
        return CCSIM_EPROTO;
      }
      cerr(c, "the server sent a reply that is not a ccsim.Reply");
      return CCSIM_EPROTO;
    }
    if (r->request_id != id) {
      continue;  // a late reply to an earlier request (its memory goes with the arena's)
    }
    *out = r;
    return CCSIM_OK;
  }
}

// What a request asks, for messages: its name in the server's request table.
static const char *request_name(const Ccsim__Request *rq) {
  switch (rq->body_case) {
  case CCSIM__REQUEST__BODY_HELLO: return "hello";
  case CCSIM__REQUEST__BODY_CREATE_SESSION: return "create_session";
  case CCSIM__REQUEST__BODY_STEP: return "step";
  case CCSIM__REQUEST__BODY_GET_STATE: return "get_state";
  case CCSIM__REQUEST__BODY_SET_STATE: return "set_state";
  case CCSIM__REQUEST__BODY_QUERY_CONTACTS: return "query_contacts";
  case CCSIM__REQUEST__BODY_CLOSE_SESSION: return "close_session";
  case CCSIM__REQUEST__BODY_SERVER_INFO: return "server_info";
  case CCSIM__REQUEST__BODY_ATTACH_SESSION: return "attach_session";
  case CCSIM__REQUEST__BODY_LIST_SESSIONS: return "list_sessions";
  default: return "request";
  }
}

// Send rq, wait for the reply with the same request_id; on a timeout, reconnect and send
// the same bytes again (retryable requests only). *out gets the unpacked reply when the
// status is OK or a server error; it lives in c->rx until the next round trip on c.
static int roundtrip_ex(ccsim_client *c, Ccsim__Request *rq, Ccsim__Reply **out, int retryable) {
  *out = NULL;
  ccsim_arena_reset(&c->rx);  // the previous reply is gone from here on
  c->err[0] = 0;              // a call that succeeds leaves no stale message
  rq->has_request_id = 1;
  rq->request_id = ++c->next_id;
  // a Step's request fits the stack (packed there once, zmq_send copies it); a scene may not
  uint8_t stack[4096], *heap = NULL;
  size_t n = ccsim_pb_pack_tail(&rq->base, stack, sizeof stack);
  if (n == SIZE_MAX && !(heap = ccsim_pb_pack_new(&rq->base, 0, &n))) {
    cerr(c, "out of memory");
    return CCSIM_ENOMEM;
  }
  const uint8_t *buf = heap ? heap : stack + sizeof stack - n;
  if (c->max_request && n > c->max_request) {
    // sent, it would be dropped past the server's limit + 1 KiB, the wait ending in a
    // timeout; within that slack the server would refuse it too
    free(heap);
    cerr(c,
         "%s: request of %zu bytes exceeds the server's limit of %llu bytes (ccsimd "
         "--max-msg-bytes)",
         ccsim_status_name(CCSIM_ELIMIT), n, (unsigned long long)c->max_request);
    return CCSIM_ELIMIT;
  }
  int tries = 1 + (retryable ? c->retries : 0);
  int st = CCSIM_ETIMEOUT;
  c->attempts = 0;
  for (int k = 0; k < tries; k++) {
    c->attempts++;
    if ((k > 0 || c->stale) && (st = open_socket(c)) != CCSIM_OK) {
      break;  // a fresh connection (new identity) for the retry
    }
    if (zmq_send(c->sock, buf, n, 0) < 0) {
      if (zmq_errno() == EAGAIN) {
        st = CCSIM_ETIMEOUT;  // not even taken: the server is gone or swamped
        continue;
      }
      cerr(c, "send failed: %s", zmq_strerror(zmq_errno()));
      st = CCSIM_EIO;
      break;
    }
    st = await_reply(c, rq->request_id, out);
    if (st != CCSIM_ETIMEOUT) {
      break;
    }
  }
  free(heap);
  if (st == CCSIM_ETIMEOUT || st == CCSIM_EPERM || st == CCSIM_EIO) {
    // requests still queued on this socket would reach a server that comes back, long
    // after their caller gave up, and a connection refused by CURVE is not tried again
    c->stale = 1;
  }
  if (st == CCSIM_ETIMEOUT) {
    char seq[40] = "";
    if (rq->has_seq && rq->seq) {
      snprintf(seq, sizeof seq, " (seq %llu)", (unsigned long long)rq->seq);
    }
    cerr(c, "no reply from %s to %s%s within %d ms (%d attempt%s)", c->endpoint,
         request_name(rq), seq, c->timeout_ms, c->attempts, c->attempts == 1 ? "" : "s");
    handshakes_hint(&c->hs, "in the last attempt the", c->curve, c->err, sizeof c->err);
    return st;
  }
  if (st != CCSIM_OK) {
    return st;
  }
  Ccsim__Reply *r = *out;
  if (r->error && r->error->code != CCSIM__CODE__OK) {
    cerr(c, "%s: %s", ccsim_status_name((int)r->error->code),
         r->error->message ? r->error->message : "");
    return (int)r->error->code;
  }
  return CCSIM_OK;
}

static int roundtrip(ccsim_client *c, Ccsim__Request *rq, Ccsim__Reply **out) {
  return roundtrip_ex(c, rq, out, 1);
}

ccsim_client *ccsim_client_new(const char *endpoint, char *err, size_t err_sz) {
  // three attempts of 10 s: 30 s in all, as before retries existed
  return ccsim_client_connect(endpoint, 10000, 2, err, err_sz);
}

ccsim_client *ccsim_client_connect(const char *endpoint, int timeout_ms, int retries, char *err,
                                   size_t err_sz) {
  ccsim_client_opts o;
  ccsim_client_opts_defaults(&o);
  if (timeout_ms > 0) o.timeout_ms = timeout_ms;  // else the default, as set_timeout
  o.retries = retries >= 0 ? retries : 0;
  ccsim_curve_keys keys;
  char e[512] = "";
  if (ccsim_client_opts_from_env(&o, &keys, e, sizeof e) != 0) {
    ccsim_set_err(err, err_sz, "%s", e);
    return NULL;
  }
  return ccsim_client_new_opts(endpoint, &o, err, err_sz);
}

int ccsim_client_opts_from_env(ccsim_client_opts *o, ccsim_curve_keys *keys, char *err,
                               size_t err_sz) {
  const char *skf = getenv("CCSIM_SERVER_KEY"), *ckf = getenv("CCSIM_CLIENT_KEY");
  int has_s = skf && *skf, has_c = ckf && *ckf;
  if (!has_s && !has_c) {
    return 0;
  }
  if (!has_s || !has_c) {
    ccsim_set_err(err, err_sz,
                  "%s is set but %s is not: CURVE needs both (the server's .pub file and this "
                  "client's .secret file)",
                  has_s ? "CCSIM_SERVER_KEY" : "CCSIM_CLIENT_KEY",
                  has_s ? "CCSIM_CLIENT_KEY" : "CCSIM_SERVER_KEY");
    return -1;
  }
  err[0] = 0;
  if (ccsim_read_key(skf, keys->server, err, err_sz) != 0 ||
      ccsim_read_key(ckf, keys->secret, err, err_sz) != 0) {
    return -1;
  }
  if (zmq_curve_public(keys->pub, keys->secret) != 0) {
    ccsim_set_err(err, err_sz, "%s: not a CURVE secret key", ckf);
    return -1;
  }
  o->server_key = keys->server;
  o->public_key = keys->pub;
  o->secret_key = keys->secret;
  return 0;
}

// What a client or a watch is given to connect with: an endpoint of at most 511 characters
// and, with a server key, all three CURVE keys of 40 Z85 characters. 0, or -1 with the
// reason in err (nothing is read past a key's end).
static int connect_args_ok(const char *endpoint, const ccsim_client_opts *o, char *err,
                           size_t err_sz) {
  if (!endpoint || !endpoint[0] || strlen(endpoint) >= 512) {
    ccsim_set_err(err, err_sz, "bad endpoint: %s", endpoint ? "empty or too long" : "NULL");
    return -1;
  }
  if (o && o->server_key &&
      (!o->public_key || !o->secret_key || strnlen(o->server_key, 41) != 40 ||
       strnlen(o->public_key, 41) != 40 || strnlen(o->secret_key, 41) != 40)) {
    ccsim_set_err(err, err_sz, "CURVE needs three keys of 40 Z85 characters");
    return -1;
  }
  return 0;
}

ccsim_client *ccsim_client_new_opts(const char *endpoint, const ccsim_client_opts *o, char *err,
                                    size_t err_sz) {
  ccsim_client_opts def;
  if (!o) {
    ccsim_client_opts_defaults(&def);
    o = &def;
  }
  if (connect_args_ok(endpoint, o, err, err_sz) != 0) {
    return NULL;
  }
  ccsim_client *c = calloc(1, sizeof *c);
  if (!c) {
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  snprintf(c->endpoint, sizeof c->endpoint, "%s", endpoint);
  ccsim_arena_init(&c->rx, 16 * 1024, 0);
  c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
  c->retries = o->retries > 0 ? o->retries : 0;
  c->heartbeat_ms = o->heartbeat_ms > 0 ? o->heartbeat_ms : 0;
  if (o->server_key) {  // checked above
    c->curve = 1;
    memcpy(c->server_key, o->server_key, 41);
    memcpy(c->public_key, o->public_key, 41);
    memcpy(c->secret_key, o->secret_key, 41);
  }
  c->zctx = zmq_ctx_new();
  int policy = 0;
  struct sched_param sp;
  if (c->zctx && pthread_getschedparam(pthread_self(), &policy, &sp) == 0 &&
      (policy == SCHED_FIFO || policy == SCHED_RR)) {
    // a real-time controller's requests and replies pass through ZeroMQ's I/O thread:
    // at normal priority it would wait behind every other process on the machine
    zmq_ctx_set(c->zctx, ZMQ_THREAD_SCHED_POLICY, policy);
    zmq_ctx_set(c->zctx, ZMQ_THREAD_PRIORITY, sp.sched_priority);
  }
  if (!c->zctx || open_socket(c) != CCSIM_OK) {
    ccsim_set_err(err, err_sz, "%s", c->zctx ? c->err : "cannot create a ZeroMQ context");
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
  if (st != CCSIM_OK) {
    if (err) {
      // a timeout's message names the endpoint already
      if (strstr(c->err, endpoint)) {
        ccsim_set_err(err, err_sz, "%s", c->err);
      } else {
        ccsim_set_err(err, err_sz, "%s: %s", endpoint, c->err);
      }
    }
    ccsim_client_destroy(&c);
    return NULL;
  }
  if (r->body_case == CCSIM__REPLY__BODY_HELLO && r->hello && r->hello->has_max_msg_bytes) {
    c->max_request = r->hello->max_msg_bytes;
  }
  return c;
}

void ccsim_client_destroy(ccsim_client **pc) {
  if (!pc || !*pc) {
    return;
  }
  ccsim_client *c = *pc;
  close_watched(&c->hs, &c->sock);
  if (c->zctx) zmq_ctx_term(c->zctx);
  ccsim_arena_fini(&c->rx);
  free(c);
  *pc = NULL;
}

void ccsim_client_set_timeout(ccsim_client *c, int ms) {
  c->timeout_ms = ms > 0 ? ms : 30000;  // as ccsim_client_opts reads 0
  if (c->sock) zmq_setsockopt(c->sock, ZMQ_SNDTIMEO, &c->timeout_ms, sizeof c->timeout_ms);
}

void ccsim_client_set_retries(ccsim_client *c, int n) { c->retries = n > 0 ? n : 0; }

const char *ccsim_client_errmsg(const ccsim_client *c) { return c ? c->err : "no client"; }

static void take_deadline(ccsim_deadline_stats *o, const Ccsim__DeadlineStats *d) {
  if (!d) {
    return;
  }
  o->paced_steps = d->paced_steps;
  o->misses = d->misses;
  o->late_requests = d->late_requests;
  o->worst_lateness = d->worst_lateness;
  o->last_lateness = d->last_lateness;
  o->worst_release_delay = d->worst_release_delay;
}

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
    const Ccsim__ServerInfoReply *i = r->server_info;
    memset(out, 0, sizeof *out);
    snprintf(out->version, sizeof out->version, "%s", i->server_version ? i->server_version : "");
    snprintf(out->stream_endpoint, sizeof out->stream_endpoint, "%s",
             i->stream_endpoint ? i->stream_endpoint : "");
    out->protocol_version = i->protocol_version;
    out->sessions = i->sessions;
    out->uptime = i->uptime;
    out->requests = i->requests;
    take_deadline(&out->deadline, i->deadline);
    out->max_sessions = i->max_sessions;
    out->workers = i->workers;
    out->max_bodies = i->max_bodies;
    out->max_substeps = i->max_substeps;
    out->max_triangles = i->max_triangles;
    out->max_msg_bytes = i->max_msg_bytes;
    out->max_contacts = i->max_contacts;
    out->idle_timeout = i->idle_timeout;
    out->max_step_seconds = i->max_step_seconds;
    out->expired = i->expired;
  }
  return st;
}

int ccsim_client_list_sessions(ccsim_client *c, ccsim_session_info **out, size_t *n) {
  *out = NULL;
  *n = 0;
  Ccsim__Request rq;
  Ccsim__ListSessions ls;
  ccsim__request__init(&rq);
  ccsim__list_sessions__init(&ls);
  rq.body_case = CCSIM__REQUEST__BODY_LIST_SESSIONS;
  rq.list_sessions = &ls;
  Ccsim__Reply *r = NULL;
  int st = roundtrip(c, &rq, &r);
  if (st == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_SESSIONS || !r->sessions)) {
    cerr(c, "list_sessions: the reply has no session list");
    st = CCSIM_EPROTO;
  }
  if (st == CCSIM_OK) {
    const Ccsim__SessionList *sl = r->sessions;
    *out = calloc(sl->n_sessions ? sl->n_sessions : 1, sizeof **out);
    if (!*out) {
      cerr(c, "out of memory");
      st = CCSIM_ENOMEM;
    } else {
      for (size_t i = 0; i < sl->n_sessions; i++) {
        const Ccsim__SessionSummary *m = sl->sessions[i];
        ccsim_session_info *o = &(*out)[i];
        snprintf(o->id, sizeof o->id, "%s", m->session_id ? m->session_id : "");
        o->time = m->time;
        o->bodies = m->bodies;
        o->steps = m->steps;
        o->idle = m->idle;
        if (m->pacing) {
          o->pacing = (ccsim_pacing)m->pacing->mode;
          o->period = m->pacing->period;
        }
        take_deadline(&o->deadline, m->deadline);
      }
      *n = sl->n_sessions;
    }
  }
  return st;
}

// copy BodyState messages into an array of nbody states; checks indices and presence
// a Vec3 message of x[3] (every field set), and x[3] of one (NULL: zeros)
static void vec3_msg(Ccsim__Vec3 *m, const double *x) {
  ccsim__vec3__init(m);
  m->has_x = m->has_y = m->has_z = 1;
  m->x = x[0], m->y = x[1], m->z = x[2];
}

static void vec3_take(double *x, const Ccsim__Vec3 *m) {
  x[0] = m ? m->x : 0, x[1] = m ? m->y : 0, x[2] = m ? m->z : 0;
}

// copy n body states into dst (nbody entries); EPROTO with the reason in err otherwise
static int take_bodies_into(char *err, size_t err_sz, ccsim_body_state *dst, int nbody,
                            Ccsim__BodyState **bs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const Ccsim__BodyState *b = bs[i];
    if (b->body >= (uint32_t)nbody || !b->pose || !b->pose->p || !b->pose->q || !b->twist ||
        !b->twist->v || !b->twist->w) {
      ccsim_set_err(err, err_sz, "reply: body state %zu is incomplete or out of range", i);
      return CCSIM_EPROTO;
    }
    ccsim_body_state *o = &dst[b->body];
    vec3_take(o->p, b->pose->p);
    o->q[0] = b->pose->q->w, o->q[1] = b->pose->q->x, o->q[2] = b->pose->q->y;
    o->q[3] = b->pose->q->z;
    vec3_take(o->v, b->twist->v);
    vec3_take(o->w, b->twist->w);
    vec3_take(o->contact_force, b->contact_force);
    vec3_take(o->contact_torque, b->contact_torque);
    o->contact_count = b->has_contact_count ? (int)b->contact_count : 0;
    vec3_take(o->mean_contact_force, b->mean_contact_force);
    vec3_take(o->mean_contact_torque, b->mean_contact_torque);
  }
  return CCSIM_OK;
}

static int take_bodies(ccsim_session *s, Ccsim__BodyState **bs, size_t n) {
  return take_bodies_into(s->c->err, sizeof s->c->err, s->bodies, s->nbody, bs, n);
}

// a session handle from a CreateSessionReply (create, resume or attach)
static ccsim_session *session_from_reply(ccsim_client *c, const Ccsim__CreateSessionReply *cr) {
  if (!cr || !cr->session_id) {
    cerr(c, "create_session: the reply has no session id");
    return NULL;
  }
  ccsim_session *s = calloc(1, sizeof *s);
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
    return NULL;
  }
  s->c = c;
  snprintf(s->id, sizeof s->id, "%s", cr->session_id);
  snprintf(s->token, sizeof s->token, "%s", cr->controller_token ? cr->controller_token : "");
  s->nbody = (int)cr->n_body_names;
  s->seq = cr->last_seq;
  s->time = cr->time;
  for (int b = 0; b < s->nbody; b++) {
    snprintf(s->names[b], sizeof s->names[b], "%s", cr->body_names[b]);
  }
  return s;
}

static void session_free(ccsim_session *s) {
  free(s->names);
  free(s->bodies);
  free(s->contacts);
  free(s->inm);
  free(s->inp);
  free(s);
}

static ccsim_session *create(ccsim_client *c, Ccsim__CreateSession *cs) {
  Ccsim__Request rq;
  ccsim__request__init(&rq);
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = cs;
  // the key makes a retry return the session the first attempt made, if it did; without
  // randomness the create goes once, as a second one would make a second session
  uint8_t key[16];
  int keyed = ccsim_random(key, sizeof key) == 0;
  cs->has_create_key = keyed;
  cs->create_key.data = key;
  cs->create_key.len = sizeof key;
  Ccsim__Reply *r = NULL;
  int st = roundtrip_ex(c, &rq, &r, keyed);
  ccsim_session *s = NULL;
  if (st == CCSIM_OK) {
    if (r->body_case != CCSIM__REPLY__BODY_CREATE_SESSION) {
      cerr(c, "create_session: the reply has no session");
    } else {
      s = session_from_reply(c, r->create_session);
    }
  }
  if (s && ccsim_session_get_state(s) != CCSIM_OK) {
    ccsim_session_close(&s);
  }
  return s;
}

ccsim_session *ccsim_session_create(ccsim_client *c, const ccsim_scene *scene) {
  return ccsim_session_create_paced(c, scene, CCSIM_PACING_NONE, 0);
}

ccsim_session *ccsim_session_create_paced(ccsim_client *c, const ccsim_scene *scene,
                                          ccsim_pacing pacing, double period) {
  if (!scene) {
    cerr(c, "%s: create_session: no scene (did loading it fail?)", ccsim_status_name(CCSIM_EINVAL));
    return NULL;
  }
  if (!(period >= 0) || !isfinite(period)) {  // 0 stands for 1 ms; the server checks the rest
    cerr(c, "%s: create_session: pacing period %g s must be finite and >= 0",
         ccsim_status_name(CCSIM_EINVAL), period);
    return NULL;
  }
  Ccsim__CreateSession cs;
  Ccsim__Pacing pc;
  ccsim__create_session__init(&cs);
  ccsim__pacing__init(&pc);
  cs.scene = (Ccsim__Scene *)ccsim_scene_message(scene);
  if (pacing != CCSIM_PACING_NONE) {
    pc.has_mode = 1;
    pc.mode = (Ccsim__PacingMode)pacing;
    if (period > 0) {
      pc.has_period = 1;
      pc.period = period;
    }
    cs.pacing = &pc;
  }
  return create(c, &cs);
}

ccsim_session *ccsim_session_resume(ccsim_client *c, const void *checkpoint, size_t len) {
  Ccsim__CreateSession cs;
  ccsim__create_session__init(&cs);
  cs.has_checkpoint = 1;
  cs.checkpoint.data = (uint8_t *)checkpoint;
  cs.checkpoint.len = len;
  return create(c, &cs);
}

// AttachSession for session_id (what: the caller's name in messages): the reply's session
// (borrowed until c's next call), or NULL with the reason in c's message and *st its status
static const Ccsim__CreateSessionReply *attach_call(ccsim_client *c, const char *session_id,
                                                    const char *what, int *st) {
  Ccsim__Request rq;
  Ccsim__AttachSession at;
  ccsim__request__init(&rq);
  ccsim__attach_session__init(&at);
  rq.session_id = (char *)session_id;
  rq.body_case = CCSIM__REQUEST__BODY_ATTACH_SESSION;
  rq.attach_session = &at;
  Ccsim__Reply *r = NULL;
  *st = roundtrip(c, &rq, &r);
  if (*st == CCSIM_OK &&
      (r->body_case != CCSIM__REPLY__BODY_ATTACH_SESSION || !r->attach_session)) {
    cerr(c, "%s: the reply has no session", what);
    *st = CCSIM_EPROTO;
  }
  return *st == CCSIM_OK ? r->attach_session : NULL;
}

ccsim_session *ccsim_session_attach(ccsim_client *c, const char *session_id) {
  int st = 0;
  const Ccsim__CreateSessionReply *cr = attach_call(c, session_id, "attach_session", &st);
  ccsim_session *s = cr ? session_from_reply(c, cr) : NULL;
  if (s && ccsim_session_get_state(s) != CCSIM_OK) {
    session_free(s);
    s = NULL;
  }
  return s;
}

typedef struct body_msg {
  Ccsim__BodyState bs;
  Ccsim__Pose pose;
  Ccsim__Twist tw;
  Ccsim__Vec3 p, v, w;
  Ccsim__Quat q;
} body_msg;

// The pose and twist messages of one body, kept in e: *pose / *twist get them (NULL: not
// given). Used by SetState's bodies, QueryContacts' poses and Step's kinematic inputs.
static void pose_twist_msgs(body_msg *e, int has_pose, const double p[3], const double q[4],
                            int has_twist, const double v[3], const double w[3], Ccsim__Pose **pose,
                            Ccsim__Twist **twist) {
  *pose = NULL;
  *twist = NULL;
  if (has_pose) {
    ccsim__pose__init(&e->pose);
    ccsim__quat__init(&e->q);
    vec3_msg(&e->p, p);
    e->q.has_w = e->q.has_x = e->q.has_y = e->q.has_z = 1;
    e->q.w = q[0], e->q.x = q[1], e->q.y = q[2], e->q.z = q[3];
    e->pose.p = &e->p;
    e->pose.q = &e->q;
    *pose = &e->pose;
  }
  if (has_twist) {
    ccsim__twist__init(&e->tw);
    vec3_msg(&e->v, v);
    vec3_msg(&e->w, w);
    e->tw.v = &e->v;
    e->tw.w = &e->w;
    *twist = &e->tw;
  }
}

// One Step input's messages: a force and torque, or a kinematic body's pose and twist
typedef struct input_msg {
  Ccsim__BodyInput bi;
  Ccsim__Vec3 force, torque;
  body_msg kin;
} input_msg;

// the n inputs in as s's input messages (room kept between Steps: no allocation per Step
// once it fits); CCSIM_OK or CCSIM_ENOMEM
static int input_msgs(ccsim_session *s, const ccsim_input *in, size_t n) {
  if (n > s->incap) {
    input_msg *m = realloc(s->inm, n * sizeof *m);
    if (m) s->inm = m;
    Ccsim__BodyInput **p = realloc(s->inp, n * sizeof *p);
    if (p) s->inp = p;
    if (!m || !p) {
      cerr(s->c, "out of memory");
      return CCSIM_ENOMEM;
    }
    s->incap = n;
  }
  for (size_t i = 0; i < n; i++) {
    input_msg *e = &s->inm[i];
    ccsim__body_input__init(&e->bi);
    e->bi.has_body = 1;
    e->bi.body = in[i].body;
    if (in[i].has_pose || in[i].has_twist) {
      // a kinematic body: moved, not pushed (a force on it is refused)
      pose_twist_msgs(&e->kin, in[i].has_pose, in[i].p, in[i].q, in[i].has_twist, in[i].v, in[i].w,
                      &e->bi.pose, &e->bi.twist);
    } else {
      vec3_msg(&e->force, in[i].force);
      vec3_msg(&e->torque, in[i].torque);
      e->bi.force = &e->force;
      e->bi.torque = &e->torque;
    }
    s->inp[i] = &e->bi;
  }
  return CCSIM_OK;
}

// The n contact messages m into *buf (grown as needed; *cap its room), naming bodies below
// nbody: CCSIM_OK, or CCSIM_EPROTO / CCSIM_ENOMEM with the reason in err (*buf kept).
static int take_contacts(char *err, size_t err_sz, int nbody, Ccsim__Contact *const *m, size_t n,
                         ccsim_contact **buf, size_t *cap) {
  if (n > *cap) {
    ccsim_contact *nb = realloc(*buf, n * sizeof *nb);
    if (!nb) {
      ccsim_set_err(err, err_sz, "out of memory for %zu contacts", n);
      return CCSIM_ENOMEM;
    }
    *buf = nb;
    *cap = n;
  }
  for (size_t i = 0; i < n; i++) {
    if (m[i]->body_a >= (uint32_t)nbody || m[i]->body_b >= (uint32_t)nbody) {
      ccsim_set_err(err, err_sz, "contact %zu names a body out of range", i);
      return CCSIM_EPROTO;
    }
    ccsim_contact *c = &(*buf)[i];
    c->body_a = (int)m[i]->body_a;
    c->body_b = (int)m[i]->body_b;
    vec3_take(c->point_a, m[i]->point_a);
    vec3_take(c->point_b, m[i]->point_b);
    vec3_take(c->normal, m[i]->normal);
    c->depth = m[i]->depth;
    c->depth_rate = m[i]->depth_rate;
    vec3_take(c->force, m[i]->force);
  }
  return CCSIM_OK;
}

int ccsim_session_step(ccsim_session *s, double dt, const ccsim_input *in, size_t nin) {
  return ccsim_session_step_n(s, dt, 1, in, nin, NULL, NULL);
}

int ccsim_session_step_n(ccsim_session *s, double dt, uint32_t nsub, const ccsim_input *in,
                         size_t nin, ccsim_body_state *sub, double *sub_t) {
  if (nsub == 0) {
    // the wire's "no substeps" is one step, whose sub-state would not fit a 0 x nbody sub
    cerr(s->c, "%s: step: 0 sub-steps (give at least 1)", ccsim_status_name(CCSIM_EINVAL));
    return CCSIM_EINVAL;
  }
  Ccsim__Request rq;
  Ccsim__Step st;
  ccsim__request__init(&rq);
  ccsim__step__init(&st);
  st.has_dt = 1;
  st.dt = dt;
  if (nsub > 1) {
    st.has_substeps = 1;
    st.substeps = nsub;
  }
  if (sub || sub_t) {
    st.has_want_substates = 1;
    st.want_substates = 1;
  }
  st.has_want_contacts = st.want_contacts = s->want_contacts != 0;  // absent when off
  if (nin > 0 && input_msgs(s, in, nin) != CCSIM_OK) {
    return CCSIM_ENOMEM;
  }
  st.n_inputs = nin;
  st.inputs = nin > 0 ? s->inp : NULL;
  rq.session_id = s->id;
  rq.token = s->token[0] ? s->token : NULL;
  rq.has_seq = 1;
  rq.seq = s->seq + 1;  // the same seq on every retry: the server steps once
  rq.body_case = CCSIM__REQUEST__BODY_STEP;
  rq.step = &st;
  Ccsim__Reply *r = NULL;
  int status = roundtrip(s->c, &rq, &r);
  if (status == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_STEP || !r->step)) {
    cerr(s->c, "step: the reply has no step result");
    status = CCSIM_EPROTO;
  }
  if (status == CCSIM_OK && (sub || sub_t) && r->step->n_substates != (nsub > 1 ? nsub : 1)) {
    cerr(s->c, "step: %zu sub-states for %u sub-steps", r->step->n_substates, nsub);
    status = CCSIM_EPROTO;
  }
  if (status != CCSIM_OK && r && r->error && r->error->has_last_seq &&
      r->error->last_seq == rq.seq) {
    s->seq = rq.seq;  // the step ran and failed part-way: this seq is spent
  }
  if (status == CCSIM_ESEQ && r && r->error && r->error->has_last_seq &&
      r->error->last_seq < s->seq) {
    size_t used = strlen(s->c->err);
    snprintf(s->c->err + used, sizeof s->c->err - used,
             "; the session is behind this handle (last executed %llu, the handle's %llu): a "
             "server restored from an older checkpoint? ccsim_session_resync takes its word",
             (unsigned long long)r->error->last_seq, (unsigned long long)s->seq);
  }
  if (status == CCSIM_OK) {
    s->seq++;
    status = take_bodies(s, r->step->bodies, r->step->n_bodies);
    s->time = r->step->time;
    for (size_t k = 0; status == CCSIM_OK && k < r->step->n_substates; k++) {
      const Ccsim__SubState *ss = r->step->substates[k];
      if (sub) {
        status = take_bodies_into(s->c->err, sizeof s->c->err, sub + k * (size_t)s->nbody, s->nbody,
                                  ss->bodies, ss->n_bodies);
      }
      if (sub_t) {
        sub_t[k] = ss->time;
      }
    }
    s->ncontacts = 0;
    if (status == CCSIM_OK && s->want_contacts) {
      status = take_contacts(s->c->err, sizeof s->c->err, s->nbody, r->step->contacts,
                             r->step->n_contacts, &s->contacts, &s->ccap);
      s->ncontacts = status == CCSIM_OK ? r->step->n_contacts : 0;
    }
    take_deadline(&s->deadline, r->step->deadline);
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
  return status;
}

static int get_state(ccsim_session *s, int checkpoint, uint8_t **blob, size_t *len) {
  Ccsim__Request rq;
  Ccsim__GetState gs;
  ccsim__request__init(&rq);
  ccsim__get_state__init(&gs);
  if (checkpoint) {
    gs.has_checkpoint = 1;
    gs.checkpoint = 1;
    rq.token = s->token[0] ? s->token : NULL;
  }
  rq.session_id = s->id;
  rq.body_case = CCSIM__REQUEST__BODY_GET_STATE;
  rq.get_state = &gs;
  Ccsim__Reply *r = NULL;
  int status = roundtrip(s->c, &rq, &r);
  if (status == CCSIM_OK && (r->body_case != CCSIM__REPLY__BODY_STATE || !r->state)) {
    cerr(s->c, "get_state: the reply has no state");
    status = CCSIM_EPROTO;
  }
  if (status == CCSIM_OK && checkpoint && !r->state->has_checkpoint) {
    cerr(s->c, "get_state: the reply has no checkpoint");
    status = CCSIM_EPROTO;
  }
  if (status == CCSIM_OK) {
    status = take_bodies(s, r->state->bodies, r->state->n_bodies);
    s->time = r->state->time;
    take_deadline(&s->deadline, r->state->deadline);
  }
  if (status == CCSIM_OK && checkpoint) {
    *len = r->state->checkpoint.len;
    *blob = malloc(*len ? *len : 1);
    if (!*blob) {
      cerr(s->c, "out of memory");
      status = CCSIM_ENOMEM;
    } else {
      memcpy(*blob, r->state->checkpoint.data, *len);
    }
  }
  return status;
}

// the BodyState messages of n ccsim_body_set entries in *out, all in one allocation
// (*bundle, for free()); CCSIM_OK, or CCSIM_ENOMEM said in c's error
static int body_msgs(ccsim_client *c, const ccsim_body_set *b, size_t n, Ccsim__BodyState ***out,
                     void **bundle) {
  *bundle = NULL;
  *out = NULL;
  if (n == 0) return CCSIM_OK;
  body_msg *bm = calloc(n, sizeof *bm + sizeof(Ccsim__BodyState *));
  if (!bm) {
    cerr(c, "out of memory");
    return CCSIM_ENOMEM;
  }
  Ccsim__BodyState **ptrs = (Ccsim__BodyState **)(bm + n);
  for (size_t i = 0; i < n; i++) {
    body_msg *e = &bm[i];
    ccsim__body_state__init(&e->bs);
    e->bs.has_body = 1;
    e->bs.body = (uint32_t)b[i].body;
    pose_twist_msgs(e, b[i].has_pose, b[i].p, b[i].q, b[i].has_twist, b[i].v, b[i].w, &e->bs.pose,
                    &e->bs.twist);
    ptrs[i] = &e->bs;
  }
  *bundle = bm;
  *out = ptrs;
  return CCSIM_OK;
}

// rq (its body set) for session s with its token, sent and retried (requests that are safe
// to repeat); *r the reply when it carries body want, else EPROTO naming what
static int session_call(ccsim_session *s, Ccsim__Request *rq, Ccsim__Reply__BodyCase want,
                        const char *what, Ccsim__Reply **r) {
  rq->session_id = s->id;
  rq->token = s->token[0] ? s->token : NULL;
  int status = roundtrip(s->c, rq, r);
  if (status == CCSIM_OK && (*r)->body_case != want) {
    cerr(s->c, "%s: the reply is not its answer", what);
    status = CCSIM_EPROTO;
  }
  return status;
}

int ccsim_session_set_state(ccsim_session *s, const double *time, const ccsim_body_set *b,
                            size_t n) {
  Ccsim__Request rq;
  Ccsim__SetState ss;
  ccsim__request__init(&rq);
  ccsim__set_state__init(&ss);
  if (time) {
    ss.has_time = 1;
    ss.time = *time;
  }
  void *bundle = NULL;
  if (body_msgs(s->c, b, n, &ss.bodies, &bundle) != CCSIM_OK) {
    return CCSIM_ENOMEM;
  }
  ss.n_bodies = n;
  rq.body_case = CCSIM__REQUEST__BODY_SET_STATE;
  rq.set_state = &ss;
  Ccsim__Reply *r = NULL;
  // absolute values: a retry after a lost reply sets the same state again
  int status = session_call(s, &rq, CCSIM__REPLY__BODY_STATE, "set_state", &r);
  free(bundle);
  if (status == CCSIM_OK && !r->state) {
    cerr(s->c, "set_state: the reply has no state");
    status = CCSIM_EPROTO;
  }
  if (status == CCSIM_OK) {
    status = take_bodies(s, r->state->bodies, r->state->n_bodies);
    s->time = r->state->time;
    take_deadline(&s->deadline, r->state->deadline);
  }
  return status;
}

int ccsim_session_query_contacts(ccsim_session *s, const ccsim_body_set *at, size_t n,
                                 ccsim_contact **out, size_t *nout) {
  *out = NULL;
  *nout = 0;
  for (size_t i = 0; i < n; i++) {
    if (!at[i].has_pose) {
      cerr(s->c, "query_contacts: at[%zu] has no pose", i);
      return CCSIM_EINVAL;
    }
  }
  Ccsim__Request rq;
  Ccsim__QueryContacts q;
  ccsim__request__init(&rq);
  ccsim__query_contacts__init(&q);
  void *bundle = NULL;
  if (body_msgs(s->c, at, n, &q.poses, &bundle) != CCSIM_OK) {
    return CCSIM_ENOMEM;
  }
  q.n_poses = n;
  rq.body_case = CCSIM__REQUEST__BODY_QUERY_CONTACTS;
  rq.query_contacts = &q;
  Ccsim__Reply *r = NULL;
  int status = session_call(s, &rq, CCSIM__REPLY__BODY_CONTACTS, "query_contacts", &r);
  free(bundle);
  if (status == CCSIM_OK && !r->contacts) {
    cerr(s->c, "query_contacts: the reply has no contacts");
    status = CCSIM_EPROTO;
  }
  if (status != CCSIM_OK || r->contacts->n_contacts == 0) {
    return status;
  }
  size_t nc = r->contacts->n_contacts, cap = 0;
  ccsim_contact *c = NULL;
  status =
      take_contacts(s->c->err, sizeof s->c->err, s->nbody, r->contacts->contacts, nc, &c, &cap);
  if (status != CCSIM_OK) {
    free(c);
    return status;
  }
  *out = c;
  *nout = nc;
  return CCSIM_OK;
}

int ccsim_session_get_state(ccsim_session *s) { return get_state(s, 0, NULL, NULL); }

int ccsim_session_resync(ccsim_session *s) {
  // AttachSession answers with the session's last executed seq (any role may ask)
  int st = 0;
  const Ccsim__CreateSessionReply *cr = attach_call(s->c, s->id, "resync", &st);
  if (!cr) {
    return st;
  }
  s->seq = cr->has_last_seq ? cr->last_seq : 0;
  return ccsim_session_get_state(s);
}

int ccsim_session_checkpoint(ccsim_session *s, uint8_t **blob, size_t *len) {
  *blob = NULL;
  *len = 0;
  return get_state(s, 1, blob, len);
}

int ccsim_client_close_session(ccsim_client *c, const char *session_id, const char *token) {
  Ccsim__Request rq;
  Ccsim__CloseSession cl;
  ccsim__request__init(&rq);
  ccsim__close_session__init(&cl);
  rq.session_id = (char *)session_id;
  rq.token = (char *)token;
  rq.body_case = CCSIM__REQUEST__BODY_CLOSE_SESSION;
  rq.close_session = &cl;
  Ccsim__Reply *r = NULL;
  int status = roundtrip(c, &rq, &r);
  if (status == CCSIM_EEXPIRED && c->attempts > 1) {
    status = CCSIM_OK;  // our first attempt closed it; its reply was lost
  }
  return status;
}

int ccsim_session_close(ccsim_session **ps) {
  if (!ps || !*ps) {
    return CCSIM_OK;
  }
  ccsim_session *s = *ps;
  int status = CCSIM_OK;
  if (s->token[0]) {
    status = ccsim_client_close_session(s->c, s->id, s->token);
  }
  session_free(s);
  *ps = NULL;
  return status;
}

void ccsim_session_release(ccsim_session **ps) {
  if (ps && *ps) {
    session_free(*ps);
    *ps = NULL;
  }
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

const ccsim_deadline_stats *ccsim_session_deadline(const ccsim_session *s) {
  return &s->deadline;
}

const char *ccsim_session_id(const ccsim_session *s) { return s->id; }

const char *ccsim_session_token(const ccsim_session *s) { return s->token; }

uint64_t ccsim_session_seq(const ccsim_session *s) { return s->seq; }

void ccsim_session_want_contacts(ccsim_session *s, int on) {
  s->want_contacts = on != 0;
}

const ccsim_contact *ccsim_session_contacts(const ccsim_session *s, size_t *n) {
  *n = s->ncontacts;
  return s->contacts;
}

// ---- state stream ---------------------------------------------------------------------

struct ccsim_watch {
  void *zctx, *sub;          // owned
  handshakes hs;             // sub's
  char endpoint[512];
  int curve;
  ccsim_body_state *bodies;  // (cap)
  int cap;
  ccsim_contact *contacts;  // (ccap)
  size_t ccap;
  ccsim_arena rx;  // each message is unpacked here: a malloc per field otherwise
  char err[512];
};

ccsim_watch *ccsim_watch_new(const char *stream_endpoint, const char *session_id,
                             const ccsim_client_opts *o, char *err, size_t err_sz) {
  if (connect_args_ok(stream_endpoint, o, err, err_sz) != 0) {
    return NULL;
  }
  ccsim_watch *w = calloc(1, sizeof *w);
  if (!w) {
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  ccsim_arena_init(&w->rx, 16 * 1024, 0);
  w->zctx = zmq_ctx_new();
  w->sub = w->zctx ? zmq_socket(w->zctx, ZMQ_SUB) : NULL;
  int linger = 0;
  const char *topic = session_id ? session_id : "";
  int ok = w->sub && zmq_setsockopt(w->sub, ZMQ_LINGER, &linger, sizeof linger) == 0 &&
           zmq_setsockopt(w->sub, ZMQ_SUBSCRIBE, topic, strlen(topic)) == 0;
  if (ok && o && o->server_key) {  // three keys of 40 characters: checked above
    w->curve = 1;
    ok = set_curve(w->sub, o->server_key, o->public_key, o->secret_key) == 0;
  }
  snprintf(w->endpoint, sizeof w->endpoint, "%s", stream_endpoint);
  if (!ok || handshakes_watch(&w->hs, w->zctx, w->sub, w, 0) != 0 ||
      ccsim_zmq_ipv6_for(w->sub, stream_endpoint) != 0 ||
      zmq_connect(w->sub, stream_endpoint) != 0) {
    ccsim_set_err(err, err_sz, "cannot subscribe to %s: %s", stream_endpoint,
                  zmq_strerror(zmq_errno()));
    ccsim_watch_destroy(&w);
    return NULL;
  }
  return w;
}

int ccsim_watch_next(ccsim_watch *w, int timeout_ms, ccsim_stream_msg *out) {
  w->err[0] = 0;
  double deadline = now_us() + 1e3 * timeout_ms;
  for (;;) {
    // the handshake's events end the wait too: a stream that cannot connect is told
    zmq_pollitem_t it[2] = {{.socket = w->sub, .events = ZMQ_POLLIN},
                            {.socket = w->hs.mon, .events = ZMQ_POLLIN}};
    long wait_ms = timeout_ms < 0 ? -1 : (long)fmax(0.0, ceil((deadline - now_us()) / 1e3));
    int rc = zmq_poll(it, 2, wait_ms);
    if (rc < 0 && zmq_errno() == EINTR) {
      snprintf(w->err, sizeof w->err, "interrupted");
      return CCSIM_ETIMEOUT;
    }
    if (rc < 0) {
      snprintf(w->err, sizeof w->err, "%s", zmq_strerror(zmq_errno()));
      return CCSIM_EIO;
    }
    if ((it[1].revents & ZMQ_POLLIN) &&
        handshakes_read(&w->hs, w->endpoint, w->curve, 0, w->err, sizeof w->err) != CCSIM_OK) {
      return CCSIM_EPERM;
    }
    if (it[0].revents & ZMQ_POLLIN) {
      break;
    }
    if (timeout_ms >= 0 && now_us() >= deadline) {
      snprintf(w->err, sizeof w->err, "nothing within the timeout");
      handshakes_hint(&w->hs, "the stream's", w->curve, w->err, sizeof w->err);
      return CCSIM_ETIMEOUT;
    }
  }
  // [topic][StreamState]; further parts are skipped
  ccsim_arena_reset(&w->rx);  // the previous message's bodies were copied out of it
  zmq_msg_t part;
  zmq_msg_init(&part);
  Ccsim__StreamState *m = NULL;
  size_t len = 0;
  int nparts = 0, more = 1;
  while (more) {
    if (zmq_msg_recv(&part, w->sub, 0) < 0) {
      snprintf(w->err, sizeof w->err, "receive failed: %s", zmq_strerror(zmq_errno()));
      zmq_msg_close(&part);
      return CCSIM_EIO;
    }
    more = zmq_msg_more(&part);
    if (nparts++ == 1) {
      len = zmq_msg_size(&part);
      decoded_limit(&w->rx, len);
      m = (Ccsim__StreamState *)ccsim_pb_unpack(&ccsim__stream_state__descriptor, &w->rx, len,
                                                zmq_msg_data(&part));
    }
  }
  zmq_msg_close(&part);
  if (!m) {
    if (w->rx.out_of_memory) {
      snprintf(w->err, sizeof w->err, "out of memory decoding a stream message of %zu bytes", len);
      return CCSIM_ENOMEM;
    }
    if (w->rx.over_limit) {
      snprintf(w->err, sizeof w->err,
               "a stream message of %zu bytes that takes more than %zu bytes decoded", len,
               ccsim_pb_decoded_max(len));
      return CCSIM_EPROTO;
    }
    if (nparts < 2) {
      snprintf(w->err, sizeof w->err, "a stream message of one part, not [topic][StreamState]");
    } else {
      snprintf(w->err, sizeof w->err, "a stream message that is not a ccsim.StreamState");
    }
    return CCSIM_EPROTO;
  }
  memset(out, 0, sizeof *out);
  snprintf(out->session_id, sizeof out->session_id, "%s", m->session_id ? m->session_id : "");
  out->seq = m->stream_seq;
  out->time = m->time;
  out->closed = m->has_closed && m->closed;
  take_deadline(&out->deadline, m->deadline);
  if (m->n_bodies > (size_t)w->cap) {
    ccsim_body_state *nb = realloc(w->bodies, m->n_bodies * sizeof *nb);
    if (!nb) {
      snprintf(w->err, sizeof w->err, "out of memory for %zu body states", m->n_bodies);
      return CCSIM_ENOMEM;
    }
    w->bodies = nb;
    w->cap = (int)m->n_bodies;
  }
  if (w->cap > 0) memset(w->bodies, 0, (size_t)w->cap * sizeof *w->bodies);  // NULL at 0
  out->nbody = (int)m->n_bodies;
  out->bodies = w->bodies;
  int st =
      take_bodies_into(w->err, sizeof w->err, w->bodies, (int)m->n_bodies, m->bodies, m->n_bodies);
  if (st == CCSIM_OK && m->n_contacts > 0) {
    st = take_contacts(w->err, sizeof w->err, (int)m->n_bodies, m->contacts, m->n_contacts,
                       &w->contacts, &w->ccap);
    out->ncontacts = st == CCSIM_OK ? m->n_contacts : 0;
    out->contacts = w->contacts;
  }
  return st;
}

const char *ccsim_watch_errmsg(const ccsim_watch *w) {
  return w->err;
}

void ccsim_watch_destroy(ccsim_watch **pw) {
  if (!pw || !*pw) {
    return;
  }
  ccsim_watch *w = *pw;
  close_watched(&w->hs, &w->sub);
  if (w->zctx) zmq_ctx_term(w->zctx);
  free(w->bodies);
  free(w->contacts);
  ccsim_arena_fini(&w->rx);
  free(w);
  *pw = NULL;
}
