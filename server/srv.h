// The ccsim service: a ZeroMQ ROUTER socket, a table of sessions (each a compiled model
// plus its sim_data), and a dispatcher that turns one Request into one Reply.
#ifndef SRV_H
#define SRV_H

#include <stddef.h>
#include <stdint.h>

#define SRV_DEFAULT_BIND "tcp://127.0.0.1:5555"
#define SRV_VERSION "0.1.0"

typedef struct srv_config {
  const char *bind;        // endpoint to bind (borrowed); NULL: no socket (srv_handle only)
  int max_sessions;        // open sessions at once (default 64)
  size_t max_msg_bytes;    // largest request accepted [bytes] (default 64 MiB)
  int verbose;             // log every request to stderr
} srv_config;

typedef struct srv srv;

// Fill c with the defaults (bind SRV_DEFAULT_BIND).
void srv_config_defaults(srv_config *c);

// Create the service and bind its socket. Returns NULL with a message in err on failure
// (bad endpoint, address in use, out of memory).
srv *srv_new(const srv_config *c, char *err, size_t err_sz);

// The bound endpoint with any wildcard port resolved (borrowed; valid while s lives).
const char *srv_endpoint(const srv *s);

// Serve requests until srv_stop is called. Returns 0, or -1 on a transport failure.
int srv_run(srv *s);

// Ask srv_run to return soon. Thread-safe and async-signal-safe.
void srv_stop(srv *s);

// Close every session, the socket and the context; set *s to NULL. NULL-safe. srv_run
// must have returned.
void srv_destroy(srv **s);

// Decode one serialized Request, act on it and return the serialized Reply (caller
// frees with free()); *reply_len gets its size. Transport-free, for tests and fuzzing.
// Returns NULL only when out of memory. Not thread-safe (one caller at a time).
uint8_t *srv_handle(srv *s, const uint8_t *req, size_t len, size_t *reply_len);

// Number of open sessions.
int srv_session_count(const srv *s);

#endif
