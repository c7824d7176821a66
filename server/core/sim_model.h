// The compiled, immutable description of a plant: bodies, inertias, shapes, contact
// parameters and integrator settings. Built once from a sim_scene by sim_model_compile;
// shared read-only by any number of sessions and threads.
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stddef.h>

#include "ccsim_status.h"
#include "geo_bvh.h"
#include "geo_mesh.h"

#define SIM_NAME_MAX 64          // body names, including the terminating NUL
#define SIM_MAX_BODIES 4096      // bodies per scene
#define SIM_MAX_MESH_TRIS 2000000  // triangles per body mesh
#define SIM_MAX_PATH 100000        // waypoints per kinematic body's path
#define SIM_MIN_RIGID_DT 1e-6      // [s] rigid mode's smallest step: finer would only stall
// shortest step to t_out, relative to max(1 s, |t|): CVODE's round-off on times is ~1e-14
// of them, so below it the integrator cannot tell a step's end from its start
#define SIM_MIN_STEP_DT 1e-12
#define SIM_PATH_STRIDE 8          // doubles per waypoint: t, position (3), quaternion (4)
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

typedef enum sim_body_type {
  SIM_BODY_FREE = 0,       // integrated
  SIM_BODY_FIXED = 1,      // never moves
  SIM_BODY_KINEMATIC = 2,  // pose and twist set by the client
} sim_body_type;

typedef enum sim_shape_type {
  SIM_SHAPE_NONE = 0,  // no geometry: a point mass that touches nothing
  SIM_SHAPE_BOX,
  SIM_SHAPE_SPHERE,
  SIM_SHAPE_CYLINDER,
  SIM_SHAPE_CONE,
  SIM_SHAPE_TORUS,
  SIM_SHAPE_MESH,
} sim_shape_type;

typedef enum sim_linsolver {
  SIM_LINSOLVER_AUTO = 0,   // dense LU for few free bodies, KLU for many
  SIM_LINSOLVER_DENSE = 1,
  SIM_LINSOLVER_KLU = 2,
} sim_linsolver;

typedef enum sim_mode {
  SIM_MODE_COMPLIANT = 0,  // Marhefka-Orin springs integrated by CVODE
  SIM_MODE_RIGID = 1,      // velocity-level LCP time stepping
} sim_mode;

// Bits of sim_contact_params.set: which fields a body override sets.
enum {
  SIM_CP_K = 1 << 0,
  SIM_CP_ALPHA = 1 << 1,
  SIM_CP_N = 1 << 2,
  SIM_CP_STANDOFF = 1 << 3,
  SIM_CP_MU = 1 << 4,
  SIM_CP_MU_DYNAMIC = 1 << 5,
};

// Marhefka-Orin contact law and friction parameters.
typedef struct sim_contact_params {
  double k;           // stiffness [N/m^n]
  double alpha;       // restitution slope, e ~ 1 - alpha v [s/m]
  double n;           // exponent: 1 (default) or 1.5
  double standoff;    // d_s: pairs closer than this carry force [m]
  double mu;          // static Coulomb friction
  double mu_dynamic;  // sliding Coulomb friction
  unsigned set;       // SIM_CP_* bits of the fields given (overrides only)
} sim_contact_params;

// A shape as the scene gives it. Mesh arrays are borrowed until sim_model_compile returns.
typedef struct sim_shape_desc {
  sim_shape_type type;
  double size[3];      // box: full edge lengths [m]
  double radius;       // sphere, cylinder, cone (base) [m]
  double height;       // cylinder, cone [m]
  double major, minor; // torus radii [m]
  int res[2];          // tessellation: sphere slices/stacks, cylinder/cone segments and
                       // cone rings, torus major/minor segments; <= 0: default
  const double *vert;  // mesh: (nvert x 3) [m], borrowed
  int nvert;
  const unsigned *tri; // mesh: (ntri x 3) vertex ids, borrowed
  int ntri;
  const char *source;  // mesh: file name for messages (nullable, borrowed)
} sim_shape_desc;

// One body as the scene gives it. Poses and twists are of the body's reference frame.
typedef struct sim_body_desc {
  const char *name;            // borrowed; unique within the scene
  sim_body_type type;
  double mass;                 // [kg]; 0 with density > 0: from the shape
  int ninertia;                // 0 (from shape), 3 (diagonal) or 9 (row-major)
  double inertia[9];           // about the centre of mass, body axes [kg m^2]
  double density;              // [kg/m^3]
  int has_com;
  double com[3];               // centre of mass in the body frame [m]
  sim_shape_desc shape;
  double pos[3], quat[4];      // reference frame pose in the world [m], (w, x, y, z)
  double vel[3], omega[3];     // reference frame origin velocity, angular velocity (world)
  sim_contact_params contact;  // overrides (set bits)
  int npath;                   // kinematic bodies: waypoints of a scripted path (0: none)
  const double *path;          // (npath x 8) t [s], position (3) [m], quaternion (4, w x y z);
                               // borrowed
} sim_body_desc;

// A whole scene as plain data; every pointer borrowed until sim_model_compile returns.
typedef struct sim_scene {
  double gravity[3];           // [m/s^2]
  sim_contact_params contact;  // defaults; unset fields take the documented defaults
  double rtol, atol;           // CVODE tolerances (0: 1e-6, 1e-9)
  double max_step;             // [s] (0: unbounded)
  sim_linsolver linsolver;     // Newton's linear solver
  sim_mode mode;
  double rigid_dt;             // [s] (0: 1e-3)
  int friction_dirs;           // rigid mode pyramid sides (0: 4)
  int nbody;
  const sim_body_desc *bodies;
} sim_scene;

// The compiled model. Every array is owned by the model; read-only after compile.
typedef struct sim_model {
  int nbody;
  int nfree;                     // free (integrated) bodies
  double gravity[3];             // [m/s^2]
  double rtol, atol, max_step;
  sim_linsolver linsolver;
  sim_mode mode;
  double rigid_dt;
  int friction_dirs;
  sim_contact_params contact;    // scene defaults, every field filled

  char (*name)[SIM_NAME_MAX];    // (nbody) body names
  sim_body_type *type;           // (nbody)
  int *state_index;              // (nbody) first state slot of a free body, -1 otherwise
  double *mass;                  // (nbody) [kg] (fixed/kinematic: as given, may be 0)
  double *inertia;               // (nbody x 9) about the COM, body axes [kg m^2]
  double *inertia_inv;           // (nbody x 9) inverse of inertia (free bodies)
  double *com;                   // (nbody x 3) COM in the body's reference frame [m]
  double *pos0, *quat0;          // (nbody x 3), (nbody x 4) initial reference pose
  double *vel0, *omega0;         // (nbody x 3) initial reference twist (world)
  sim_contact_params *body_contact;  // (nbody) per-body overrides (set bits)
  sim_shape_type *shape_type;    // (nbody)
  geo_mesh **mesh;               // (nbody) body-frame mesh, NULL for SIM_SHAPE_NONE; owned
  geo_bvh **bvh;                 // (nbody) hierarchy of mesh[i], NULL without mesh; owned
  double *bound_r;               // (nbody) radius of a sphere about the COM holding the mesh [m]
  int *path_n;                   // (nbody) waypoints of a path-driven kinematic body, else 0
  double **path;                 // (nbody) its waypoints (path_n x SIM_PATH_STRIDE, unit
                                 // quaternions), owned; NULL without a path
} sim_model;

// Per free body in the state vector: p_com (3), q (4), v_com (3), omega_body (3).
#define SIM_NQ 13

// Fill unset scene-level contact parameters with the documented defaults.
void sim_contact_defaults(sim_contact_params *cp);

// Check a scene and compile it. Returns the model (caller owns; free with
// sim_model_destroy) or NULL with a message naming the body and field in err.
sim_model *sim_model_compile(const sim_scene *scene, char *err, size_t err_sz);

// Free a model and set *m to NULL. NULL-safe. No session may still use it.
void sim_model_destroy(sim_model **m);

// Index of the body called name, or -1.
int sim_model_body(const sim_model *m, const char *name);

// Pose of path-driven body b at time t [s]: linear in position, the shortest rotation in
// orientation between neighbouring waypoints; the first pose before the path, the last
// after it. b must have a path (m->path_n[b] > 0).
void sim_model_path_pose(const sim_model *m, int b, double t, double pos[3], double quat[4]);

// NULL when position p, velocity v and angular velocity w (any may be NULL) are within
// SIM_MAX_COORD / SIM_MAX_SPEED / SIM_MAX_SPIN, else which bound is passed (a static
// string). Values are assumed finite (checked before).
const char *sim_motion_out_of_range(const double p[3], const double v[3], const double w[3]);

// NULL when force f and torque t (finite, either may be NULL) are within SIM_MAX_FORCE /
// SIM_MAX_TORQUE, else which bound is passed (a static string).
const char *sim_input_out_of_range(const double f[3], const double t[3]);

// Pose (pos, quat) reached from (p0, q0) after time h [s] moving with the constant world
// twist v, w: the motion sim_twist_between's twist makes. Outputs may not alias inputs.
void sim_pose_advance(const double p0[3], const double q0[4], const double v[3], const double w[3],
                      double h, double pos[3], double quat[4]);

// The constant twist (world frame: v of the reference origin, w) that carries pose
// (p0, q0) to (p1, q1) in time dt > 0 along the shortest rotation; quaternions unit.
void sim_twist_between(const double p0[3], const double q0[4], const double p1[3],
                       const double q1[4], double dt, double v[3], double w[3]);

#endif
