// Placeholder so the tree builds; the implementation follows.
#include "geo_prim.h"
#include <stdio.h>
static void stub(char *err, size_t err_sz) { if (err && err_sz) snprintf(err, err_sz, "geo_prim: not implemented yet"); }
geo_mesh *geo_mesh_box(double sx, double sy, double sz, char *err, size_t err_sz) { (void)sx; (void)sy; (void)sz; stub(err, err_sz); return NULL; }
geo_mesh *geo_mesh_sphere(double r, int slices, int stacks, char *err, size_t err_sz) { (void)r; (void)slices; (void)stacks; stub(err, err_sz); return NULL; }
geo_mesh *geo_mesh_cylinder(double r, double h, int segments, char *err, size_t err_sz) { (void)r; (void)h; (void)segments; stub(err, err_sz); return NULL; }
geo_mesh *geo_mesh_cone(double r, double h, int segments, int rings, char *err, size_t err_sz) { (void)r; (void)h; (void)segments; (void)rings; stub(err, err_sz); return NULL; }
geo_mesh *geo_mesh_torus(double R, double r, int nmajor, int nminor, char *err, size_t err_sz) { (void)R; (void)r; (void)nmajor; (void)nminor; stub(err, err_sz); return NULL; }
