// libccsim: the C client API of ccsim. Connect to a ccsimd, create sessions from scenes,
// step them, read states. Every call returns a ccsim_status (proto/ccsim_status.h) and
// leaves a readable message in ccsim_client_errmsg(). A client and its sessions belong
// to one thread at a time.
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
} ccsim_body_state;

// Solver statistics of the last step (see StepStats in proto/ccsim.proto).
typedef struct ccsim_step_stats {
  uint64_t steps, rhs_evals, jac_evals, newton_fails, error_fails;
  uint64_t physics_us, geometry_us, penetrations;
  uint32_t contacts;
  double max_depth, last_step_size;
} ccsim_step_stats;

// Input held over one step: world-frame force at the centre of mass and torque.
typedef struct ccsim_input {
  uint32_t body;     // body index (order of the scene)
  double force[3];   // [N]
  double torque[3];  // [N m]
} ccsim_input;

typedef struct ccsim_server_info {
  char version[32];
  uint32_t protocol_version;
  uint32_t sessions;
  double uptime;      // [s]
  uint64_t requests;
} ccsim_server_info;

// Connect to a server at endpoint (e.g. "tcp://127.0.0.1:5555") and say Hello. Returns
// the client (caller owns; ccsim_client_destroy) or NULL with a message in err.
ccsim_client *ccsim_client_new(const char *endpoint, char *err, size_t err_sz);

// Close the connection and free c; sessions must be closed or destroyed first. NULL-safe.
void ccsim_client_destroy(ccsim_client **c);

// How long a request waits for its reply [ms] (default 30000); then CCSIM_ETIMEOUT.
void ccsim_client_set_timeout(ccsim_client *c, int ms);

// The last error of c or of any of its sessions (borrowed; valid until the next call).
const char *ccsim_client_errmsg(const ccsim_client *c);

// Ask the server for its version and load; round trip time [us] in *rtt_us (nullable).
int ccsim_client_server_info(ccsim_client *c, ccsim_server_info *out, double *rtt_us);

// Create a session from a scene. Returns the session (caller owns; ccsim_session_close)
// or NULL (message in ccsim_client_errmsg(c)). The scene is not retained.
ccsim_session *ccsim_session_create(ccsim_client *c, const ccsim_scene *scene);

// Advance the session by dt [s] with inputs held over the step (nin may be 0). On
// success the new states and statistics are readable below.
int ccsim_session_step(ccsim_session *s, double dt, const ccsim_input *in, size_t nin);

// Fetch the current state without stepping.
int ccsim_session_get_state(ccsim_session *s);

// Close the session on the server and free the handle; *s becomes NULL. NULL-safe.
int ccsim_session_close(ccsim_session **s);

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

// The server's id of this session (borrowed).
const char *ccsim_session_id(const ccsim_session *s);

#endif
