// libccsim: the C client API of ccsim. Connect to a ccsimd, create sessions from scenes,
// step them, read states, watch state streams. Every call returns a ccsim_status
// (ccsim_status.h, installed beside this header) and, when it fails, leaves a readable
// message in ccsim_client_errmsg(). A client and its sessions belong to one thread at a time.
#ifndef CCSIM_CLIENT_H
#define CCSIM_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "ccsim_scene.h"
#include "ccsim_status.h"

typedef struct ccsim_client ccsim_client;
typedef struct ccsim_session ccsim_session;

// Reference-frame pose and twist of a body, world frame (see proto/ccsim.proto).
typedef struct ccsim_body_state {
  double p[3];  // position [m]
  double q[4];  // unit quaternion (w, x, y, z), body -> world
  double v[3];  // velocity of the frame origin [m/s]
  double w[3];  // angular velocity [rad/s]
  double contact_force[3];   // total contact force on the body, world [N]
  double contact_torque[3];  // total contact torque about the frame origin, world [N m]
  int contact_count;         // witness pairs carrying force on it
  // the contact impulse over the step (a Step's sub-steps together) divided by its length:
  // sees impacts shorter than a step, which the end values above miss; zero in states that
  // no step made (GetState, SetState)
  double mean_contact_force[3];   // world [N]
  double mean_contact_torque[3];  // about the frame origin, world [N m]
} ccsim_body_state;

// Solver statistics of the last step (see StepStats in proto/ccsim.proto).
typedef struct ccsim_step_stats {
  uint64_t steps, rhs_evals, jac_evals, newton_fails, error_fails;
  uint64_t physics_us, geometry_us, penetrations;
  uint32_t contacts;
  double max_depth, last_step_size;
} ccsim_step_stats;

// Real-time pacing statistics (DeadlineStats in proto/ccsim.proto).
typedef struct ccsim_deadline_stats {
  uint64_t paced_steps;   // steps that had a deadline
  uint64_t misses;        // of them, late
  uint64_t late_requests;  // of the misses, requests the server received after the deadline
  double worst_lateness;  // [s]
  double last_lateness;   // [s]; negative: early
  double worst_release_delay;  // [s] lockstep: the latest a held reply went out past its time
} ccsim_deadline_stats;

// Input held over one step: world-frame force at the centre of mass and torque.
typedef struct ccsim_input {
  uint32_t body;     // body index (order of the scene)
  double force[3];   // free bodies: world force at the centre of mass [N]
  double torque[3];  // free bodies: world torque [N m]
  // Kinematic bodies instead (force and torque are then not sent): the pose reached at the
  // end of the step, moving there at constant velocity (kept in later steps that do not
  // name the body), or without a pose the twist held over the step.
  int has_pose;
  double p[3], q[4];  // reference frame's position [m] and orientation (w, x, y, z), world
  int has_twist;
  double v[3], w[3];  // frame origin's velocity [m/s] and angular velocity [rad/s], world
} ccsim_input;

typedef struct ccsim_server_info {
  char version[32];
  uint32_t protocol_version;
  uint32_t sessions;
  double uptime;      // [s]
  uint64_t requests;
  char stream_endpoint[256];      // "" when the server has no stream
  ccsim_deadline_stats deadline;  // over every paced session
  uint32_t max_sessions, workers, max_bodies, max_substeps;
  uint64_t max_triangles, max_msg_bytes;
  uint32_t max_contacts;          // contacts in one reply
  double idle_timeout;            // [s] (0: never)
  uint64_t expired;               // sessions freed by the idle timeout
  double max_step_seconds;        // wall time of physics per request [s] (0: no limit)
} ccsim_server_info;

typedef enum ccsim_pacing {
  CCSIM_PACING_NONE = 0,          // as fast as possible
  CCSIM_PACING_LOCKSTEP = 1,      // a step's reply waits for the wall clock
  CCSIM_PACING_FREE_RUNNING = 2,  // the server steps at real time; Step sets inputs
} ccsim_pacing;

// Connection options; ccsim_client_opts_defaults fills them.
typedef struct ccsim_client_opts {
  int timeout_ms;          // per attempt [ms] (default 30000)
  int retries;             // attempts after a timeout, each on a fresh connection (default 2);
                           // Steps keep their seq, so a retried step runs exactly once
  int heartbeat_ms;        // ZeroMQ heartbeats [ms] (default 1000; 0: off)
  const char *server_key;  // CURVE: server public key, 40 Z85 characters (NULL: no CURVE)
  const char *public_key;  // CURVE: this client's public key (Z85)
  const char *secret_key;  // CURVE: this client's secret key (Z85)
} ccsim_client_opts;

void ccsim_client_opts_defaults(ccsim_client_opts *o);

// Room for the three CURVE keys of ccsim_client_opts (Z85, NUL-terminated).
typedef struct ccsim_curve_keys {
  char server[41], pub[41], secret[41];
} ccsim_curve_keys;

// The CURVE keys the environment names, CCSIM_SERVER_KEY (the server's .pub file) and
// CCSIM_CLIENT_KEY (this client's .secret file), read into keys (the caller's; o points
// into it). Returns 0 (o untouched when neither is set), or -1 with the reason in err when
// one is set without the other (the connection would silently go unencrypted) or a key
// cannot be read.
int ccsim_client_opts_from_env(ccsim_client_opts *o, ccsim_curve_keys *keys, char *err,
                               size_t err_sz);

// Connect to a server at endpoint (e.g. "tcp://127.0.0.1:5555") and say Hello; requests
// wait 10 s per attempt and are tried 3 times (see ccsim_client_opts). When every connection
// to the endpoint has been refused for 1 s (nothing listens there, or the server stopped),
// a request fails at once with CCSIM_EIO, "nothing accepts connections at E -- is ccsimd
// running?", instead of waiting out its attempts; a timeout's message names the endpoint,
// the request and its seq. With the
// environment variables CCSIM_SERVER_KEY (a server .pub file) and CCSIM_CLIENT_KEY (a
// client .secret file) set, the connection uses CURVE. A client created on a SCHED_FIFO or
// SCHED_RR thread runs its ZeroMQ I/O thread at the same policy and priority. Returns the
// client (caller owns; ccsim_client_destroy) or NULL with a message in err.
ccsim_client *ccsim_client_new(const char *endpoint, char *err, size_t err_sz);

// ccsim_client_new with its own timeout per attempt [ms] (<= 0: the default of 30 s) and
// number of retries (the CURVE environment is read the same way).
ccsim_client *ccsim_client_connect(const char *endpoint, int timeout_ms, int retries, char *err,
                                   size_t err_sz);

// The same with explicit options (o nullable: defaults; environment not read).
ccsim_client *ccsim_client_new_opts(const char *endpoint, const ccsim_client_opts *o, char *err,
                                    size_t err_sz);

// Close the connection and free c; sessions must be closed or released first. NULL-safe.
void ccsim_client_destroy(ccsim_client **c);

// How long a request waits for its reply per attempt [ms]; after the last retry,
// CCSIM_ETIMEOUT. ms <= 0 restores the default of 30 s (as in ccsim_client_opts).
void ccsim_client_set_timeout(ccsim_client *c, int ms);

// Attempts after a timeout (each on a fresh connection); 0: none.
void ccsim_client_set_retries(ccsim_client *c, int n);

// Drop the connection and connect again (a new ZeroMQ identity). Returns a status.
int ccsim_client_reconnect(ccsim_client *c);

// The last error of c or of any of its sessions (borrowed; valid until the next call; ""
// after a request answered without error).
const char *ccsim_client_errmsg(const ccsim_client *c);

// Ask the server for its version and load; round trip time [us] in *rtt_us (nullable).
int ccsim_client_server_info(ccsim_client *c, ccsim_server_info *out, double *rtt_us);

// One open session as ListSessions reports it.
typedef struct ccsim_session_info {
  char id[64];
  double time;       // simulated time [s]
  uint32_t bodies;
  uint64_t steps;    // the stream's sequence number: one per Step request, SetState and
                     // free-running tick
  double idle;       // since its last request [s]
  ccsim_pacing pacing;
  double period;     // free-running period [s]
  ccsim_deadline_stats deadline;
} ccsim_session_info;

// The server's open sessions: *out (caller frees with free()) gets *n entries.
int ccsim_client_list_sessions(ccsim_client *c, ccsim_session_info **out, size_t *n);

// Create a session from a scene; this client becomes its controller. Retried on timeout
// under a random create key: the server makes one session however many attempts reach it.
// (After the last attempt timed out, one may still have been made; a server with an idle
// timeout frees it.) Returns the session (caller owns; ccsim_session_close) or NULL
// (message in ccsim_client_errmsg(c)).
ccsim_session *ccsim_session_create(ccsim_client *c, const ccsim_scene *scene);

// The same with real-time pacing (period: free-running plant step [s]; 0: 1 ms; negative
// or not finite: CCSIM_EINVAL). A NULL scene is refused the same way.
ccsim_session *ccsim_session_create_paced(ccsim_client *c, const ccsim_scene *scene,
                                          ccsim_pacing pacing, double period);

// Resume a checkpoint (ccsim_session_checkpoint) as a new session this client controls.
ccsim_session *ccsim_session_resume(ccsim_client *c, const void *checkpoint, size_t len);

// Attach to a running session as an observer: get_state and query_contacts work; step,
// set_state and checkpoint are refused (EPERM); close frees the handle only.
ccsim_session *ccsim_session_attach(ccsim_client *c, const char *session_id);

// Advance the session by dt [s] with inputs held over the step (nin may be 0). On
// success the new states and statistics are readable below. Retried on timeout with the
// same seq: the server steps once. After CCSIM_ETIMEOUT (every attempt timed out) the
// step may not have arrived, may have run or may still run: the handle keeps its seq
// unspent and its states and time as they were. The same call again steps or gets the
// stored reply; a different call, if the first ran, is refused CCSIM_ESEQ and the handle
// counts that seq spent (the call after steps). ccsim_session_get_state reads where the
// session is. CCSIM_EIO (connections refused) leaves the handle the same way.
int ccsim_session_step(ccsim_session *s, double dt, const ccsim_input *in, size_t nin);

// Advance by n >= 1 sub-steps of dt with inputs held, in one round trip; bit-identical to
// n calls of ccsim_session_step (n == 0: CCSIM_EINVAL, nothing sent). sub (nullable)
// receives every sub-step's states, n x nbody entries, and sub_t (nullable) their times.
int ccsim_session_step_n(ccsim_session *s, double dt, uint32_t n, const ccsim_input *in,
                         size_t nin, ccsim_body_state *sub, double *sub_t);

// Fetch the current state without stepping (never waits for a running step).
int ccsim_session_get_state(ccsim_session *s);

// Take the server's word for where the session is: the handle's seq becomes the session's
// last executed Step seq, and its state the session's. For a controller refused CCSIM_ESEQ
// because the session is behind the handle: a server that crashed and restored it from an
// older --state-dir checkpoint has rolled it back, and the steps the handle counted since
// are gone with the crash (redo them or not: the caller knows). Not needed after a
// timeout: the same call again gets the stored reply.
int ccsim_session_resync(ccsim_session *s);

// A body's new pose and/or twist (ccsim_session_set_state), or the pose (and twist) to
// query contacts at (ccsim_session_query_contacts, where has_pose is required).
typedef struct ccsim_body_set {
  int body;           // index (ccsim_session_body_index)
  int has_pose;       // set p and q; else the body keeps its pose
  double p[3], q[4];  // reference frame's position [m] and orientation (w, x, y, z), world
  int has_twist;      // set v and w; else the body keeps its twist
  double v[3], w[3];  // frame origin's velocity [m/s] and angular velocity [rad/s], world
} ccsim_body_set;

// Controller only: move the session to time (nullable: keep its time) and set the n bodies'
// poses and twists; the integrator restarts there (paced sessions pair the wall clock with
// the new time at their next step). On success the handle's states and time follow; a
// refusal changes nothing on the server.
int ccsim_session_set_state(ccsim_session *s, const double *time, const ccsim_body_set *b,
                            size_t n);

// One witness pair carrying force, as QueryContacts reports it.
typedef struct ccsim_contact {
  int body_a, body_b;
  double point_a[3], point_b[3];  // witness points on A and B, world [m]
  double normal[3];               // unit, from A towards B
  double depth;                   // deformation d_s - distance [m]
  double depth_rate;              // its rate [m/s]
  double force[3];                // on B, world [N] (A feels the opposite)
} ccsim_contact;

// Contacts and forces at the current state (n == 0), or with the n bodies at the poses
// given (the rest where they are) without changing the session; observers may ask. *out
// (caller frees with free(); NULL when none) gets *nout contacts.
int ccsim_session_query_contacts(ccsim_session *s, const ccsim_body_set *at, size_t n,
                                 ccsim_contact **out, size_t *nout);

// Take a checkpoint: *blob (caller frees with free()) gets the whole session, resumable
// with ccsim_session_resume. The session restarts its integrator there (controller only).
int ccsim_session_checkpoint(ccsim_session *s, uint8_t **blob, size_t *len);

// Close the session on the server (controllers) and free the handle; *s becomes NULL.
// Observers only free their handle. NULL-safe.
int ccsim_session_close(ccsim_session **s);

// Free the handle without telling the server (the session stays until its idle timeout).
void ccsim_session_release(ccsim_session **s);

// Close the session session_id on c's server without a handle, as its controller would:
// token is its controller token, or the server's admin token (ccsimd --admin-token FILE),
// which closes any session (nullable: the server refuses with CCSIM_EPERM). Retried like
// other requests; a retry finding it closed by an earlier attempt is CCSIM_OK.
int ccsim_client_close_session(ccsim_client *c, const char *session_id, const char *token);

// Simulated time of the last state received [s].
double ccsim_session_time(const ccsim_session *s);

// Number of bodies, and the name of body b (borrowed; valid while s lives).
int ccsim_session_nbody(const ccsim_session *s);
const char *ccsim_session_body_name(const ccsim_session *s, int b);

// Index of the body called name, or -1.
int ccsim_session_body_index(const ccsim_session *s, const char *name);

// States of all bodies from the last step or get_state (borrowed; nbody entries).
const ccsim_body_state *ccsim_session_bodies(const ccsim_session *s);

// Statistics of the last step (borrowed).
const ccsim_step_stats *ccsim_session_stats(const ccsim_session *s);

// Pacing statistics from the last step or get_state (borrowed).
const ccsim_deadline_stats *ccsim_session_deadline(const ccsim_session *s);

// The server's id of this session, and its controller token ("" for observers) (borrowed).
const char *ccsim_session_id(const ccsim_session *s);
const char *ccsim_session_token(const ccsim_session *s);

// The seq of the last step this handle completed.
uint64_t ccsim_session_seq(const ccsim_session *s);

// Controller: from now on (on != 0) this handle's Steps ask for the contacts at their end
// state, for ccsim_session_contacts and for the state stream's message of each step (which
// subscribers then get in ccsim_stream_msg); off by default (they cost the reply's size).
void ccsim_session_want_contacts(ccsim_session *s, int on);

// The contacts of the last Step, when it asked for them (else *n = 0): borrowed until the
// next step of s.
const ccsim_contact *ccsim_session_contacts(const ccsim_session *s, size_t *n);

// ---- state stream ---------------------------------------------------------------------

typedef struct ccsim_watch ccsim_watch;

// One StreamState message (see proto/ccsim.proto).
typedef struct ccsim_stream_msg {
  char session_id[64];
  uint64_t seq;                   // per session 1, 2, 3...; a gap: messages were dropped
  double time;                    // [s]
  int nbody;
  const ccsim_body_state *bodies; // borrowed; valid until the next ccsim_watch_next
  ccsim_deadline_stats deadline;
  int closed;                     // the session ended
  size_t ncontacts;               // the step's contacts, when its Step asked for them
  const ccsim_contact *contacts;  // (ccsim_session_want_contacts); borrowed as bodies
} ccsim_stream_msg;

// Subscribe to a server's state stream (ServerInfo.stream_endpoint) for one session
// (session_id) or all (NULL). o (nullable) gives CURVE keys. Caller owns the result; NULL
// with a message in err (a NULL or empty endpoint, keys not of 40 characters, ...).
ccsim_watch *ccsim_watch_new(const char *stream_endpoint, const char *session_id,
                             const ccsim_client_opts *o, char *err, size_t err_sz);

// Wait up to timeout_ms (negative: no limit) for the next message. CCSIM_OK,
// CCSIM_ETIMEOUT or an error (ccsim_watch_errmsg says why): CCSIM_EPERM when the
// stream's handshake cannot succeed for sure (a key not admitted, CURVE on one side only),
// as for a client. A wrong server key looks like a relay with no server behind it: the
// wait runs out (CCSIM_ETIMEOUT), and the message counts the failed handshakes and names
// both causes.
int ccsim_watch_next(ccsim_watch *w, int timeout_ms, ccsim_stream_msg *out);

// Why the last ccsim_watch_next did not return CCSIM_OK (borrowed; "" after an OK).
const char *ccsim_watch_errmsg(const ccsim_watch *w);

void ccsim_watch_destroy(ccsim_watch **w);

#endif
