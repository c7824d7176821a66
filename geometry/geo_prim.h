// Generated primitive meshes. These conventions are part of the wire protocol: keep them.
//
// All tessellations are the standard INSCRIBED ones: every vertex lies on the true smooth
// surface, so each convex primitive's mesh is contained in the true solid (the torus mesh
// is not, near its hole). Faces are counter-clockwise seen from outside; every mesh is
// closed (watertight, manifold, consistently oriented). Resolution arguments <= 0 select
// the documented defaults. Sizes must be finite, > 0 and <= GEO_MESH_MAX_COORD.
// Returns a new mesh (caller owns; geo_mesh_destroy) or NULL + message in err (nullable).
//
// Vertex layout (ids are stable, part of the convention):
// - box: 8 corners, id = ix + 2 iy + 4 iz with coordinate (ix ? +sx/2 : -sx/2, ...);
//   12 triangles, two per face.
// - sphere: id 0 = north pole (0,0,r), then stacks-1 rings from north to south, ring i
//   (1..stacks-1) at polar angle theta_i = pi i / stacks, slices vertices each at azimuth
//   phi_j = 2 pi j / slices (j = 0..slices-1); last id = south pole (0,0,-r).
//   Quads between rings are split into two triangles. Defaults 32 slices x 16 stacks;
//   minimum 3 x 2.
// - cylinder: ring at z = -h/2 (ids 0..n-1), ring at z = +h/2 (ids n..2n-1), vertex j at
//   azimuth 2 pi j / n; then the bottom cap centre (2n) and the top cap centre (2n+1);
//   caps are fans around their centre. Default 32 segments, minimum 3.
// - cone: base disc at z = 0, apex at z = h. Ring i (i = 0..rings-1) at z = h i / rings
//   with radius r (1 - i / rings), ids i*n .. i*n+n-1, vertex j at azimuth 2 pi j / n;
//   then the apex (rings*n) and the base centre (rings*n+1); the base is a fan around its
//   centre. Splitting the side into rings adds vertices on the generators; the solid is
//   the same pyramid for every rings value. Default 64 segments, minimum 3; rings <= 0
//   means 1.
// - torus: vertex (i, j) = ((R + r cos v) cos u, (R + r cos v) sin u, r sin v) with
//   u = 2 pi i / nmajor, v = 2 pi j / nminor, id = i * nminor + j. Requires R > r.
//   Defaults 48 x 24; minimum 3 x 3.
#ifndef GEO_PRIM_H
#define GEO_PRIM_H

#include "geo_mesh.h"

#define GEO_SPHERE_DEFAULT_SLICES 32
#define GEO_SPHERE_DEFAULT_STACKS 16
#define GEO_CYLINDER_DEFAULT_SEGMENTS 32
#define GEO_CONE_DEFAULT_SEGMENTS 64
#define GEO_CONE_DEFAULT_RINGS 1
#define GEO_TORUS_DEFAULT_MAJOR 48
#define GEO_TORUS_DEFAULT_MINOR 24
#define GEO_PRIM_MAX_RES 4096   // cap on any resolution argument

geo_mesh *geo_mesh_box(double sx, double sy, double sz, char *err, size_t err_sz);               // full edge lengths, centred on origin
geo_mesh *geo_mesh_sphere(double r, int slices, int stacks, char *err, size_t err_sz);           // centred; slices around z
geo_mesh *geo_mesh_cylinder(double r, double h, int segments, char *err, size_t err_sz);         // axis z, centred on origin
geo_mesh *geo_mesh_cone(double r, double h, int segments, int rings, char *err, size_t err_sz);  // base disc at z=0, apex at z=h, side split into `rings` rings (>=1), closed base
geo_mesh *geo_mesh_torus(double R, double r, int nmajor, int nminor, char *err, size_t err_sz);  // axis z, centred on origin

// Triangles each tessellation above has for the same resolution arguments (<= 0: the
// default), counted without building it, so a caller can refuse a too-fine shape before
// allocating it; the builders count with these. Resolutions out of range are counted as
// given (the builders refuse them).
#define GEO_BOX_TRIANGLES 12
long long geo_sphere_triangles(int slices, int stacks);
long long geo_cylinder_triangles(int segments);
long long geo_cone_triangles(int segments, int rings);
long long geo_torus_triangles(int nmajor, int nminor);

#endif
