// Every limit of ccsim, stated once (as SQLite's sqliteLimit.h): one name, one value and the
// reason for it. Hard bounds protect the code from untrusted input (a scene file, a request,
// a saved session) and are checked where an error can name the key; the server's defaults
// for the limits an operator sets (ccsimd --max-*) are here too, beside the hard bound each
// may not pass. The geometry library depends on nothing of ours and keeps the bounds of its
// own algorithms (geo_mesh.h: what a mesh file may hold; geo_prim.h: resolutions); the core
// checks at build time that the limits below fit inside them.
#ifndef CCSIM_LIMITS_H
#define CCSIM_LIMITS_H

#include <stdint.h>

// ---- scenes and models (server/core: sim_model_compile refuses past them) ---------------

#define SIM_NAME_MAX 64            // body names, including the terminating NUL
#define SIM_MAX_BODIES 4096        // bodies per scene
// triangles per body mesh: a 2-million-triangle model takes about 1 GB (hierarchy, hulls,
// adjacency); the server's per-session default (SRV_DEFAULT_MAX_TRIANGLES) is the same
#define SIM_MAX_MESH_TRIS 2000000
#define SIM_MAX_PATH 100000        // waypoints per kinematic body's path
#define SIM_MIN_RIGID_DT 1e-6      // [s] rigid mode's smallest time step: finer would only stall
// shortest step to t_out, relative to max(1 s, |t|): CVODE's round-off on times is ~1e-14
// of them, so below it the integrator cannot tell a step's end from its start
#define SIM_MIN_STEP_DT 1e-12
// Bounds of a body's motion, far beyond any plant but inside what double precision and
// CVODE's tolerances handle: past them a step would fail with an integrator message that
// names nothing the user gave.
#define SIM_MAX_COORD 1e6  // |position| [m]
#define SIM_MAX_SPEED 1e6  // |velocity| [m/s]
#define SIM_MAX_SPIN 1e6   // |angular velocity| [rad/s]
// Bounds of a held input: a larger one drives any body past the bounds above within a
// step, or (1e308 N) past what doubles hold, and a state that is not finite cannot be
// saved or restored.
#define SIM_MAX_FORCE 1e12   // |force| [N]
#define SIM_MAX_TORQUE 1e12  // |torque| [N m]
// Bounds of a free body's mass and principal moments of inertia, from a microgram to a
// million tonnes and (moments) that mass at 1 um to 1e6 m (SIM_MAX_COORD): beyond them the
// accelerations of forces within SIM_MAX_FORCE, or forces of weights (1e300 kg: a CVODE
// failure that named no body), leave the range the integrator's tolerances are set for.
#define SIM_MIN_MASS 1e-9      // [kg]
#define SIM_MAX_MASS 1e9       // [kg]
#define SIM_MIN_INERTIA 1e-21  // [kg m^2]
#define SIM_MAX_INERTIA 1e21   // [kg m^2]
#define SIM_INERTIA_REL 1e-9   // relative allowance of the symmetry and triangle inequality
                               // checks (a thin plate has Izz = Ixx + Iyy up to rounding)

// ---- contact and the rigid mode (server/core) ---------------------------------------------

// Contacts a scene can have at once, at most: the limit of one collider. Its arrays cost
// about 0.7 kB per contact (12 MB at the limit, which a torus on a cone reaches; a box on a
// floor's bound is 864 contacts), set aside when a session is made (nothing grows while it
// steps). Untrusted scenes cannot ask for more.
#define SIM_CONTACTS_MAX 16384
// Largest n any LCP workspace accepts (a 4096^2 dense matrix is 128 MiB).
#define SIM_LCP_N_MAX 4096
#define SIM_RIGID_ROWS_MAX SIM_LCP_N_MAX  // largest LCP a rigid step may build
// LCP rows a rigid session reserves at creation when the model's pairs could ask for more
// (a torus on a cone without friction asks for 334): the room costs 3 n^2 doubles (the
// matrix and Dantzig's factors; 5 n^2 with friction, for Lemke's), 6 MB here and 400 MB at
// SIM_RIGID_ROWS_MAX, so a session pays for a larger LCP only once it meets one (the room
// then grows between LCP steps)
#define SIM_RIGID_ROWS_FIRST 512

// ---- requests (server/service) ------------------------------------------------------------

#define SRV_MAX_DT 3600.0          // longest simulated span of one Step request [s]
#define SRV_MAX_SUBSTATES 1000000  // body states in one reply's substates
// bytes of a CreateSession.create_key: as hard to guess as the token it answers with,
// and small to keep
#define SRV_CREATE_KEY_MIN 16
#define SRV_CREATE_KEY_MAX 64
#define SRV_SUBS_MAX 256           // distinct stream topics tracked one by one
#define SRV_TOMBS 1024             // closed/expired session ids remembered for EEXPIRED replies
// keyed creates that failed, remembered so a retry gets the same error at once instead of
// building again (a retry reaches the server a client's timeout later, seconds or minutes):
// the last SRV_FAILED_CREATES, each for SRV_FAILED_CREATE_TTL seconds
#define SRV_FAILED_CREATES 128
#define SRV_FAILED_CREATE_TTL 600.0
// Largest saved session [bytes], for saving and restoring alike, so every save is read back
// whatever the limits the server restarts with: a scene under --max-msg-bytes (at most
// 2 GiB) plus a stored Step reply (1e6 sub-states, 1e5 contacts: a few hundred MB)
#define SRV_SAVED_MAX ((uint64_t)4 << 30)
// Nesting ccsim_pb_unpack follows at most (protobuf-c has no limit: a hostile message of a
// recursive type could exhaust the stack).
#define CCSIM_PB_MAX_DEPTH 100

// ---- the server's configurable limits: defaults (ccsimd --max-*, srv_config) ---------------

#define SRV_DEFAULT_MAX_SESSIONS 64
#define SRV_DEFAULT_MAX_BODIES 1024                   // per session (<= SIM_MAX_BODIES)
#define SRV_DEFAULT_MAX_TRIANGLES SIM_MAX_MESH_TRIS   // per session, primitives' too
#define SRV_DEFAULT_MAX_SUBSTEPS 10000                // per Step
#define SRV_DEFAULT_MAX_CONTACTS 100000               // in one reply
#define SRV_DEFAULT_MAX_STEP_SECONDS 600              // wall time one request's physics [s]
// largest request [bytes]: a scene's mesh travels as its file, and a binary STL of
// SIM_MAX_MESH_TRIS triangles is 100 MB (an OBJ about as much)
#define SRV_DEFAULT_MAX_MSG_BYTES ((size_t)256 << 20)
#define SRV_DEFAULT_MODEL_CACHE_MB 1024               // unused compiled models kept [MiB]
// sessions without a request from their controller this long are freed by default [s]: a
// client killed without closing its session must not hold its memory and place for ever
#define SRV_DEFAULT_IDLE_TIMEOUT 600.0

// ---- the client ---------------------------------------------------------------------------

#define CCSIM_SCENE_MAX_FILE (256u << 20)  // largest scene file read [bytes]

#endif
