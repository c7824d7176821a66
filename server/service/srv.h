// The ccsim service: a ZeroMQ ROUTER socket and a pool of threads that take turns serving
// it and step sessions in parallel, a PUB socket streaming every session's state, and a
// transport-free entry (srv_handle) that turns one Request into one Reply.
#ifndef SRV_H
#define SRV_H

#include <stddef.h>
#include <stdint.h>

#include "ccsim_limits.h"
#include "ccsim_version.h"

#define SRV_DEFAULT_BIND "tcp://127.0.0.1:5555"
#define SRV_VERSION CCSIM_VERSION

// The server's settings; srv_config_defaults fills the defaults of ccsim_limits.h.
typedef struct srv_config {
  const char *bind;          // endpoint to bind (borrowed); NULL: no sockets (srv_handle only)
  const char *stream_bind;   // PUB endpoint (borrowed); NULL: none. "auto": the bind host
                             // on a free port (tcp) or BIND-stream (ipc)
  int max_sessions;          // open sessions at once
  size_t max_msg_bytes;      // largest request accepted [bytes]
  int max_bodies;            // bodies per session
  long max_triangles;        // triangles per session, meshes and tessellated primitives
  int max_substeps;          // sub-steps per Step
  int max_contacts;          // contacts in one reply
  double max_step_seconds;   // wall time one request may spend in the physics before it is
                             // stopped (CCSIM_ELIMIT, the state reached kept) [s] (0: no
                             // limit)
  int workers;               // pool threads besides srv_run's own (0: twice the cores, at
                             // least 4)
  double idle_timeout;       // free sessions without a request for this long [s] (default
                             // SRV_DEFAULT_IDLE_TIMEOUT; 0: never)
  int heartbeat_ms;          // ZeroMQ heartbeat interval [ms] (0: off; default 1000)
  int rt_priority;           // SCHED_FIFO priority (1..99) of srv_run's thread, workers,
                             // pacer and ZeroMQ's threads, for HIL (0: off, the default); needs
                             // CAP_SYS_NICE, a warning on stderr when refused
  int spin_us;               // idle pool threads and the leader poll this long for work
                             // before they sleep [us] (default 0: never): CPU for latency
  int inline_us;             // the thread holding the I/O duty runs a request itself when its
                             // session's recent jobs all took less than this [us] (default
                             // 50; 0: never), saving the hand-off to another thread; a
                             // watchdog passes the duty on if such a job runs long
  const char *state_dir;     // save sessions here on stop and every checkpoint_interval,
                             // restore them at start (borrowed; NULL: off)
  double checkpoint_interval;  // [s] (0: only on stop)
  const char *curve_secret_file;  // server secret key file (Z85); turns CURVE on
  const char *curve_allow_dir;    // directory of admitted client public keys (*.pub; copied):
                                  // read at start, and again when it changes
  size_t model_cache_mb;     // compiled models no session uses kept for later sessions of the
                             // same scene, least recently used evicted first [MiB] (default
                             // 1024; 0: none kept); models in use are shared, never evicted
  const char *admin_token_file;  // write a new random admin token here at start (mode 600;
                             // borrowed; NULL: none): a CloseSession carrying it as its token
                             // closes any session, for an operator ending one whose
                             // controller is gone; it allows nothing else
  int deterministic_ids;     // ids and tokens from a counter (tests and fuzzing only)
  int verbose;               // log every request to stderr
} srv_config;

typedef struct srv srv;

// Whether a bound endpoint (as srv_endpoint gives it: addresses numeric) is reachable
// only from this machine: ipc://, inproc://, and tcp:// on 127.0.0.0/8 or [::1]. ccsimd
// warns of any other endpoint without CURVE.
int srv_endpoint_is_local(const char *ep);

// Fill c with the defaults (bind SRV_DEFAULT_BIND, no stream, no state dir).
void srv_config_defaults(srv_config *c);

// Create the service, bind its sockets and restore saved sessions (state_dir). Returns
// NULL with a message in err on failure (bad endpoint or key, address in use, no memory).
srv *srv_new(const srv_config *c, char *err, size_t err_sz);

// The bound endpoints with any wildcard port resolved (borrowed; valid while s lives);
// "" when there is none.
const char *srv_endpoint(const srv *s);
const char *srv_stream_endpoint(const srv *s);

// Start the workers and serve requests (the calling thread joins the pool) until srv_stop
// is called; then stop the workers and, with a state_dir, save every session. Returns 0,
// or -1 on a transport failure.
int srv_run(srv *s);

// Whether srv_run's final save (--state-dir) failed for some session (each was named on
// stderr with the reason).
int srv_save_failed(const srv *s);

// Ask srv_run to return soon. Thread-safe and async-signal-safe.
void srv_stop(srv *s);

// Close every session, the sockets and the context; set *s to NULL. NULL-safe. srv_run
// must have returned.
void srv_destroy(srv **s);

// Decode one serialized Request, act on it on the calling thread and return the
// serialized Reply (caller frees with free()); *reply_len gets its size. Transport-free,
// for tests and fuzzing: use it on a server created with bind NULL or while srv_run is
// not running; pacing holds no reply here. Returns NULL only when out of memory.
uint8_t *srv_handle(srv *s, const uint8_t *req, size_t len, size_t *reply_len);

// Number of open sessions. Thread-safe.
int srv_session_count(srv *s);

// Stream messages published since start: only sessions someone subscribes to publish.
// Thread-safe.
uint64_t srv_stream_published(srv *s);

// How many requests the thread holding the I/O duty ran itself (cfg.inline_us), how often
// the duty was passed on because one of them ran long, and how many of those passes a
// Step's own watch made (the rest are the pacer's). Thread-safe; for tests and tuning.
void srv_inline_stats(srv *s, uint64_t *inline_jobs, uint64_t *watchdog_passes,
                      uint64_t *step_passes);

// Save every session to the state dir now (no-op without one). Only while srv_run is not
// running. Returns the number saved, or -1 on an error (reported on stderr).
int srv_save_all(srv *s);

#endif
