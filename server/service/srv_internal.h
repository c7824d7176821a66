// Internals of the ccsim service shared by its files (not installed, not for clients).
//
// Threads: a pool (the workers and the thread that called srv_run) runs as leader and
// followers. One pool thread at a time holds the I/O duty (srv.pool.leader): it receives every
// request on the ROUTER, decodes it, answers the cheap ones itself (Hello, ServerInfo,
// ListSessions, AttachSession and GetState from the session's published view), queues the
// rest as jobs, and serves the ZAP handler, the wake PULL and the housekeeping. When a job
// is ready and another pool thread is idle, the leader takes the job and passes the duty
// on (srv_pool_take_over): the follower's wake-up then overlaps the job instead of
// preceding it. No thread runs a job unless another is left for the I/O duty, so a slow
// session delays nobody's reply, with two exceptions. A paced (HIL) step while every other
// thread is busy: the leader runs it and the first thread to finish takes the I/O duty, so
// requests wait at most one paced step instead of the paced step waiting for an unpaced
// one. And a request of a session whose recent jobs all took less than cfg.inline_us: the
// leader runs it keeping the duty, because handing it over (a futex wake-up and a context
// switch) costs more than the job; when such a job runs longer than its watch the duty is
// passed on - by a Step itself, at its next contact evaluation, Jacobian or stretch, and
// by the pacer for any other job (and for a Step at ten times the watch) (srv_pool.c) - so
// a session that turns slow delays others by about that. A session's jobs run one at a time in
// arrival order, never holding a lock while stepping; the thread that ran a job sends its reply and
// stream message itself (srv_send_job). The pacer thread holds the replies of lockstep-paced steps
// until their wall-clock time, sends them, and fires free-running ticks.
//
// The ROUTER and the stream's XPUB are the two sockets more than one thread uses. ZeroMQ allows
// that when every use is fenced, so every call on them is made under srv.sock.mu. The leader waits
// for requests on the ROUTER's ZMQ_FD outside the lock; a sender whose call may have taken that
// wake-up from it (the ROUTER processes its commands during any call) looks at ZMQ_EVENTS and, when
// a request waits while the leader sleeps, wakes it over inproc. The stream socket (an XPUB)
// reports subscriptions: the leader polls its ZMQ_FD too, and every publisher takes what came in
// right after its send, under the same lock. The wake PULL and the ZAP socket pass from leader to
// leader under srv.mu (the fence ZeroMQ asks for when a socket changes threads).
//
// One mutex (srv.mu) guards srv.pool (the ready queue, the leader flag, the idle list, the
// pacer's list), srv.store (the session table) and every session's sched and view; the
// fields are grouped in struct srv and struct srv_session by the lock that guards them.
// A session's sim_data and its exactly-once record are touched only by the thread running
// its current job. Lock order: srv.mu before srv.sock.mu, srv.stream.mu a leaf (nothing
// sends while holding srv.mu today).
#ifndef SRV_INTERNAL_H
#define SRV_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ccsim.pb-c.h"
#include "ccsim_arena.h"
#include "ccsim_limits.h"
#include "sim_data.h"
#include "sim_model.h"
#include "srv.h"
#include "srv_models.h"

#define SRV_ID_LEN 32        // hex characters of a session id and of a controller token
#define SRV_VIEW 13          // doubles per body in a view: p(3) q(4) v(3) w(3)
#define SRV_STOP_GRACE 1.0         // wall time a running request gets once the server stops [s]
#define SRV_STOP_LINGER_MS 500     // wall time the last replies get to leave at destroy [ms]
#define SRV_WAKE_EP_FMT "inproc://ccsim-srv-wake-%p"

// why a request's physics was stopped before its end (srv_job.stopped)
enum { SRV_STOPPED_LIMIT = 1, SRV_STOPPED_SHUTDOWN = 2 };
#define SRV_ZAP_EP "inproc://zeromq.zap.01"

typedef struct srv_session srv_session;
typedef struct srv_job srv_job;
typedef struct srv_member srv_member;
typedef struct srv_rctx srv_rctx;  // a reply being built (srv_dispatch.c)

// A job's run function: fills j->reply / j->pub, on the thread that runs the job (a pool
// thread, or srv_handle's caller). a is scratch, reset before each job.
typedef void srv_job_run(srv *s, srv_job *j, ccsim_arena *a);

// ---- the request table (srv_dispatch.c) ---------------------------------------------

enum { SRV_ROLE_ANY = 0, SRV_ROLE_CONTROLLER = 1 };
// where a request is answered: on the I/O thread, on the pool (queued behind its session's
// running job), or either (its answer says SRV_QUEUE to queue it)
enum { SRV_ON_IO = 0, SRV_ON_POOL = 1, SRV_ON_EITHER = 2 };
enum { SRV_ANSWERED = 1, SRV_QUEUE = 0 };

// One row per request type: what every part of the service asks of a request's kind.
typedef struct srv_request {
  Ccsim__Request__BodyCase body;
  const char *name;  // as replies name it ("step")
  int session;       // names a session: looked up (ENOTFOUND / EEXPIRED) before its answer
  int role;          // SRV_ROLE_*: who may send it (SRV_ROLE_CONTROLLER: else EPERM)
  int sequenced;     // carries a seq run exactly once: run_sequenced keeps the session's
                     // once record around exec (a repeat answered from the stored reply)
  int where;         // SRV_ON_*
  int steps;         // runs sim_step, whose progress calls watch the step's own time
  // on the I/O thread (under srv.mu for a session's request): SRV_ANSWERED with the reply
  // in rc, or SRV_QUEUE (NULL only for SRV_ON_POOL, whose rows name a session)
  int (*answer)(srv_rctx *rc, srv_job *j, srv_session *ss);
  // on the session's worker: the reply, always, in j (NULL: never queued, or sequenced)
  void (*run)(srv_rctx *rc, srv_job *j, srv_session *ss);
  // a sequenced request's work on the session's worker, the reply in rc; sets *record once
  // the plant may have changed (the seq is then spent, whatever the outcome)
  int (*exec)(srv_rctx *rc, srv_job *j, srv_session *ss, int *record);
} srv_request;

// A serialized Reply (without request_id) shared by reference: a reader takes a reference
// under srv.mu and copies the bytes after releasing it.
typedef struct srv_blob {
  atomic_int refs;
  size_t len;
  uint8_t data[];
} srv_blob;

typedef struct srv_deadline {
  uint64_t paced;         // steps with a deadline
  uint64_t misses;        // of them, late
  uint64_t late_requests;  // of the misses, requests received after their deadline
  double worst;           // largest lateness [s]
  double last;            // lateness of the last one [s] (negative: early)
  double worst_release;   // largest delay of a held lockstep reply past its time [s]
} srv_deadline;

typedef enum srv_job_kind {
  SRV_JOB_REQUEST = 0,  // a client's request
  SRV_JOB_TICK,         // free-running: advance to the wall clock
  SRV_JOB_SAVE,         // --state-dir: checkpoint to disk
} srv_job_kind;

struct srv_job {
  srv_job *next;         // in a session queue, the ready queue or the pacer list
  int stopped;           // its physics was stopped: SRV_STOPPED_* (0: ran to its end)
  srv_job_kind kind;
  srv_job_run *run;      // what the pool calls to run it (set before it is queued)
  const srv_request *req;  // its row in the request table (NULL: a tick, a save, refused)
  srv_session *ss;       // target (NULL: CreateSession)
  Ccsim__Request *rq;    // in rq_arena; NULL for ticks and saves
  ccsim_arena rq_arena;  // the decoded request's every piece (owned)
  uint8_t *ident;        // ROUTER identity of the client (owned; NULL: no reply to send)
  size_t ident_len;
  int delim;             // the client is a REQ socket: an empty delimiter frame goes back
  double arrived;        // monotonic [s]
  int controller;        // sent by the session's controller: its end counts as activity
  int admin;             // a CloseSession under the server's admin token (controller set too)
  uint8_t *reply;        // owned, the serialized Reply to send
  size_t reply_len;
  double send_at;        // monotonic [s]; 0: at once (lockstep pacing holds replies)
  double cost;           // a held reply's job: how long it ran [s] (for srv_session_done)
  uint8_t *pub;          // owned, a StreamState to publish (topic = pub_topic)
  size_t pub_len;
  char pub_topic[SRV_ID_LEN + 1];
  // CreateSession only (under srv.mu)
  int slot;                // holds one of srv.store.pending_creates' places
  int over_limit;          // let go by the create it waited for, with no place free: ELIMIT
  srv_job *waiting;        // a keyed create being built: copies of it that came meanwhile
                           // (retries), linked by next, admitted again when it ends (owned)
  srv_job *building_next;  // in srv.store.building
};

// A pool thread while it idles. Whoever gives it a task pops it from srv.pool.idle and sets
// the task under srv.mu, then posts go: the thread starts on the task without taking the
// mutex or a condition variable's wake-up path.
struct srv_member {
  sem_t go;          // posted once per task (or to leave at srv.pool.quit)
  srv_member *next;  // in srv.pool.idle
  int lead;          // task: the I/O duty (srv.pool.leader stays set: it passes directly);
                     // 2: the ROUTER was just found empty, start by polling
  srv_job *job;      // task: run this job (the member owns it once posted)
};

struct srv_session {
  // identity and physics, fixed at creation (d: only the thread running the session's job)
  char id[SRV_ID_LEN + 1];
  char token[SRV_ID_LEN + 1];
  srv_model *model;         // one reference owned: the compiled scene it shares (srv_models.h)
  const sim_model *m;       // borrowed from model: immutable, shared with its other sessions
  sim_data *d;              // owned; only the thread running the session's job uses it
  const Ccsim__Scene *scene;  // borrowed from model (decoded), for checkpoints

  // snapshot scratch (the job thread)
  struct {
    double *snap;            // (snap_cap) scratch for snapshots (srv_snapshot)
    size_t nsnap, snap_cap;  // doubles of the last snapshot in it, and room
  } scratch;

  // exactly-once record (written by the session's job thread; last_seq is also read by
  // the thread that answers AttachSession, hence atomic)
  struct {
    _Atomic uint64_t last_seq;  // last sequenced Step executed (0: none)
    uint64_t last_digest;       // digest of that Step (0: not known, any retry matches)
    srv_blob *last_reply;       // its Reply serialized without request_id (one reference owned)
  } once;

  // the create's retry record (fixed once the session is in the table)
  struct {
    uint8_t key[SRV_CREATE_KEY_MAX];  // CreateSession.create_key (key_len 0: none)
    size_t key_len;
    uint64_t digest;  // of the CreateSession that made it (0: not known, any matches)
  } create;

  // scheduling (under srv.mu)
  struct {
    srv_job *qhead, *qtail;  // jobs waiting behind the running one
    int busy;                // a job of this session is queued in ready or running
    int dead;                // closed or expired: out of the table, freed when idle
    double last_active;      // monotonic time the controller's last request came or ended [s]
    double cost;             // decaying maximum of its jobs' wall times [s]; < 0: none ran
    int save_queued;         // a save job is queued or running: one at a time, or a long
                             // step would have one queued every interval behind it
    double next_tick;        // free-running: monotonic due time of the next tick
    int tick_queued;         // free-running: a tick is queued or running
  } sched;

  // published view (under srv.mu), written after every job
  struct {
    double time;              // simulated time [s]
    double *bodies;           // (nbody x SRV_VIEW)
    uint64_t steps;           // stream sequence number: Step requests, SetStates, ticks run
    srv_blob *contacts;       // QueryContacts' Reply at the state after step contacts_steps
    uint64_t contacts_steps;  // (one reference owned): the same question at that state is
                              // answered from it by the thread that receives it
    uint64_t saved_steps;     // steps at the last save to the state dir
    srv_deadline dl;          // pacing statistics
  } view;

  // pacing (mode and period fixed at creation; the rest the job thread's, copied under mu)
  struct {
    int mode;       // CCSIM__PACING_MODE__*
    double period;  // free-running plant step [s]
    int started;
    double wall_origin;  // monotonic [s] matching sim_origin
    double sim_origin;   // [s]
  } pace;
};

// A line on stderr that a peer can make the server say again and again (a refused client
// reconnects every 100 ms): said at once, then at most once per 10 s with the count.
typedef struct srv_log_limit {
  uint64_t count;  // events since the last line
  double said_at;  // monotonic time of the last line [s] (0: none)
} srv_log_limit;

// A job the duty holder runs while keeping the I/O duty (srv_pool_take_over): kept is set,
// and the duty is still the holder's after the job when srv.pool.duty_gen still equals gen.
typedef struct srv_duty {
  int kept;
  unsigned gen;
  int watched;  // kept for a Step: the stepping thread watches its own time (srv_pool.c)
} srv_duty;

// What the pool needs of the layers above it, filled by srv_new (SUNDIALS' ops shape): the
// pool calls up only through these, and knows nothing of dispatch or the sockets.
typedef struct srv_pool_ops {
  // the I/O duty (srv_lead)
  srv_job *(*lead)(srv *s, int poll_first, srv_duty *duty);
  // send a finished job's reply and stream message, then free it (srv_send_job)
  void (*send)(srv *s, srv_job *j, void *wake);
  // a PUSH to wake the leader, or NULL (srv_wake_open)
  void *(*wake_open)(srv *s);
  // run function of the free-running ticks the pacer queues (srv_run_tick)
  srv_job_run *tick;
} srv_pool_ops;

struct srv {
  // fixed once srv_new returns (threaded: set by srv_pool_start before any pool thread)
  srv_config cfg;
  srv_models *models;     // compiled scenes shared by sessions (owned; thread-safe)
  srv_pool_ops pool_ops;
  double started;     // monotonic [s]
  int state_lock_fd;  // the --state-dir lock, held while the server lives (-1: none)
  char admin_token[SRV_ID_LEN + 1];  // closes any session (cfg.admin_token_file; "": none)
  int threaded;       // the pool and the pacer run (srv_run)

  // read and written without a lock
  _Atomic int compiling;  // CreateSessions compiling their scene now (the stop names them)
  atomic_int stop;
  atomic_ullong requests;

  // the sockets: every call on router and pub under sock.mu; wake and zap the leader's
  // (passed from leader to leader under srv.mu)
  struct {
    pthread_mutex_t mu;  // every call on router and pub
    char endpoint[256];
    char stream_endpoint[256];
    void *zctx;          // owned ZeroMQ context (NULL without sockets)
    void *router, *pub;  // any thread, under mu; pub is an XPUB: it also tells
                         // which topics (session id prefixes) someone subscribes to
    void *wake, *zap;    // the leader only
    char wake_ep[64];
    int router_fd, wake_fd;  // the ROUTER's and the wake PULL's ZMQ_FD (the leader polls)
    int zap_fd;              // the ZAP socket's ZMQ_FD (-1: no CURVE)
    int pub_fd;              // the stream XPUB's ZMQ_FD (-1: no stream)
    int io_sleeping;         // the leader waits on router_fd (under mu)
    double subs_drain_at;    // publishers drain the XPUB from then on (under mu)
    void *hs_mon[2];         // PAIRs receiving the ROUTER's and the XPUB's failed
                             // handshakes (the leader, from its housekeeping; owned)
  } sock;

  // the topics subscribed on the stream, as the XPUB reports them (each once, while at
  // least one subscriber holds it): only sessions a topic is a prefix of publish. Topics
  // past the table's room are counted in subs_more and make every session publish.
  // libzmq's SUB and XSUB never cancel a topic they do not hold, but a peer writing ZMTP
  // by hand can, and the XPUB reports that cancel too: the topic then stops publishing
  // until its subscribers all leave and subscribe afresh (and when it had overflowed,
  // subs_more counts one too few). Stream peers are meant to be the server's own clients
  // (loopback, or CURVE-authenticated elsewhere; the server warns when neither holds).
  // Under stream.mu, a leaf lock: nothing else is taken while it is held.
  struct {
    pthread_mutex_t mu;
    struct {
      unsigned char len;
      char p[SRV_ID_LEN];
    } subs[SRV_SUBS_MAX];
    int nsubs, subs_more;
    atomic_ullong published;  // stream messages sent (atomic, no lock)
  } stream;

  pthread_mutex_t mu;  // guards pool and store (and every session's sched, view)

  // the pool and the pacer (under mu unless said)
  struct {
    pthread_cond_t pace_cv;  // the pacer waits here (CLOCK_MONOTONIC)
    int quit;                // threads leave
    int leader;              // a pool thread holds the I/O duty
    srv_member *idle;        // idle pool threads, the last one to idle first
    double inline_since;     // monotonic start of the job the duty holder runs itself
                             // (0: none)
    atomic_uint duty_gen;    // bumped (under mu) when the watchdog takes the duty from such
                             // a job; read without mu under sock.mu by the duty holder
    uint64_t inline_jobs;    // jobs run by the duty holder so far
    uint64_t step_passes;    // duty passes made by a Step's own watch
    double pacer_wake;       // when the pacer wakes by itself (0: it is awake)
    double pacer_watch;      // the pacer's watch over the duty holder's current (or last)
                             // job: inline_watch, or ten times that for a Step, which
                             // watches itself
    srv_job *rhead, *rtail;  // ready queue
    srv_job *phead, *ptail;  // ready queue of paced sessions, served first
    atomic_int nready;       // jobs in the ready queue (read without mu by the leader)
    srv_job *delayed;        // pacer: replies held until send_at (sorted)
  } pool;

  // the pool's threads (srv_run's thread only; nworkers is read by ServerInfo)
  struct {
    pthread_t *workers;
    int nworkers;  // pool threads srv_run starts (set before the first)
    int nworkers_started;
    pthread_t pacer;
    int pacer_started;
  } threads;

  // the sessions (under mu)
  struct {
    srv_session **tab;  // (cfg.max_sessions) open sessions, NULL = free slot
    int nsessions;
    int pending_creates;  // CreateSession jobs queued or running that may build one
    srv_job *building;    // keyed CreateSession jobs queued or running that build one
                          // (by building_next): a copy waits for it
    struct {
      char id[SRV_ID_LEN + 1];
      char why[96];
      uint8_t create_key[SRV_CREATE_KEY_MAX];  // the session's (create_key_len 0: none)
      size_t create_key_len;
    } tombs[SRV_TOMBS];
    int tomb_next;
    struct {
      uint8_t create_key[SRV_CREATE_KEY_MAX];  // (create_key_len 0: a free entry)
      size_t create_key_len;
      uint64_t digest;  // the request's bytes (ccsim_pb_digest of its CreateSession)
      double when;      // srv_now() of the failure [s]
      int code;         // its status
      char msg[1024];   // its reason (as long as the reply's: answered the same)
    } failed[SRV_FAILED_CREATES];
    int failed_next;
    uint64_t id_counter;  // deterministic ids
    uint64_t expired;     // sessions freed by the idle timeout
    srv_deadline dl;      // pacing totals over all sessions
  } store;

  // the I/O duty holder's (the leader, or srv_handle's caller)
  struct {
    ccsim_arena arena;             // replies built by the leader or srv_handle
    double next_save;              // monotonic [s]
    double next_housekeeping;      // monotonic [s]
    double last_housekeeping;      // when it last ran [s] (0: not yet)
    double last_housekeeping_cpu;  // the process's CPU time then [s]
    int failed;                    // met a transport failure (srv_run returns -1)
    srv_log_limit zap_log;         // CURVE refusals said on stderr
    srv_log_limit hs_log;          // failed handshakes said on stderr
  } io;
  int save_failed;  // the final save of srv_run lost a session (srv_run's thread)

  // CURVE's allow list (the leader only after start)
  struct {
    char *allow_dir;             // cfg.curve_allow_dir's copy (owned)
    unsigned char (*allow)[32];  // CURVE client keys admitted (nallow)
    int nallow;
    struct timespec allow_ctime;  // the allow directory's ctime when last read
    double allow_read_at;         // monotonic time of the last reading [s]
    int allow_pending;            // key files the last reading left out as being written
    int allow_failed;             // the last read failed: nobody is admitted, read at each ask
    char allow_said[256];         // the last failed reading's reason said on stderr (not twice)
  } curve;
};

// The files, lowest first; each calls only files below it (tests/arch checks it). Each
// file's interface is its own header (srv_clock.h, srv_job.h, ...; srv.c's srv_io.h),
// so a file's includes name what it calls; this header holds the types they share.
//   srv_clock.c, srv_job.c        leaves: the clock; jobs and reply blobs
//   srv_stream.c                  the stream's subscriptions and publishing
//   wire_*.c                      protobuf <-> core
//   srv_models.c                  compiled scenes shared by sessions (the model cache)
//   srv_store.c                   sessions, the table, checkpoints, the state dir
//   srv_pool.c                    pool threads and the pacer: run job->run, call up only
//                                 through srv.pool_ops
//   srv_dispatch.c                the request table: answers and run functions
//   srv_curve.c                   CURVE keys and the ZAP handler
//   srv.c                         lifecycle and the I/O duty (fills srv.pool_ops)

#endif
