// Translation between protobuf messages (proto/ccsim.proto) and the simulation core.
// Every number coming off the wire is checked here or in sim_model_compile; error
// messages name the field ("bodies[2].shape.box.size.x: ...").
#ifndef WIRE_H
#define WIRE_H

#include <stddef.h>

#include "ccsim.pb-c.h"
#include "ccsim_arena.h"
#include "sim_data.h"
#include "sim_model.h"

// Compile a decoded Scene into a model (caller owns; sim_model_destroy). NULL with a
// message naming the field in err when the scene is invalid.
sim_model *wire_scene_compile(const Ccsim__Scene *scene, char *err, size_t err_sz);

// Triangles the server builds for a Shape message (a primitive's tessellation or the mesh
// as sent; 0 for none), counted without building anything: the limits use it. -1 for a
// resolution out of range, which compiling the scene refuses with the field's name.
long long wire_shape_triangles(const Ccsim__Shape *s);

// The sum of wire_shape_triangles over a scene's bodies (shapes out of range count 0: the
// compile names them): what the per-session triangle limit compares.
long long wire_scene_triangles(const Ccsim__Scene *sc);

// A Vec3 / Quat message allocated in a (NULL when the arena is exhausted).
Ccsim__Vec3 *wire_vec3_new(ccsim_arena *a, const double v[3]);
Ccsim__Quat *wire_quat_new(ccsim_arena *a, const double q[4]);

// Read a Vec3 into out; an absent message gives dflt. Returns 0, or -1 if any
// component is not finite.
int wire_vec3_get(const Ccsim__Vec3 *v, double out[3], const double dflt[3]);

// Read a Quat; absent gives identity. Returns 0, or -1 if not finite.
int wire_quat_get(const Ccsim__Quat *q, double out[4]);

// Every body's state as BodyState messages in a: *out gets an array of m->nbody
// pointers. When the model has contact geometry, the contacts are evaluated at the
// current state and each body's contact force, torque and count are filled in. With imp
// (nbody x 6 contact impulses [N s, N m s], wire_impulse_add; nullable) over span > 0 [s],
// the mean contact force and torque too. Returns 0 or -1 when the arena is exhausted.
int wire_bodies_new(ccsim_arena *a, const sim_model *m, sim_data *d, const double *imp,
                    double span, Ccsim__BodyState ***out, size_t *n);

// Add the contact impulses of d's last sim_step to imp (nbody x 6, caller owns) and the
// time they cover to *span [s].
void wire_impulse_add(const sim_model *m, const sim_data *d, double *imp, double *span);

// Check every input of a Step for model m: body index in range, forces and torques on
// free bodies only, poses and twists on kinematic bodies only, everything finite.
// Returns 0, or -1 with a message naming the input in err. Changes nothing.
int wire_inputs_check(const sim_model *m, const Ccsim__Step *st, char *err, size_t err_sz);

// Apply checked inputs for a step of dt [s]: held forces are replaced (bodies not named
// get none), kinematic bodies get their motion for this step.
void wire_inputs_apply(const sim_model *m, sim_data *d, const Ccsim__Step *st, double dt);

// The contacts with the bodies of poses (BodyState messages: body and pose) placed there
// and the rest where they are, without changing the session, as Contact messages in a.
// Returns 0 or a status with a message in err: CCSIM_EINVAL (bad index or non-finite
// pose), CCSIM_ENOTIMPL (rigid mode), CCSIM_ESOLVER (bodies would touch), CCSIM_ENOMEM.
int wire_contacts_at_new(ccsim_arena *a, const sim_model *m, sim_data *d,
                         Ccsim__BodyState *const *poses, size_t nposes, Ccsim__Contact ***out,
                         size_t *n, char *err, size_t err_sz);

// The contacts at d's current state as Contact messages in a (*out: array of *n).
// Returns 0, CCSIM_ESOLVER when bodies touch past the standoff here (message in
// sim_data_errmsg(d)), or CCSIM_ENOMEM when the arena is exhausted.
int wire_contacts_new(ccsim_arena *a, const sim_model *m, sim_data *d, Ccsim__Contact ***out,
                      size_t *n);

#endif
