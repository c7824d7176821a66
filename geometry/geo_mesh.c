// Placeholder so the tree builds; the implementation follows.
#include "geo_mesh.h"
#include <stdio.h>
#include <stdlib.h>
static void stub(char *err, size_t err_sz) { if (err && err_sz) snprintf(err, err_sz, "geo_mesh: not implemented yet"); }
geo_mesh *geo_mesh_new(const double *vert, int nvert, const int *tri, int ntri, const char *source, char *err, size_t err_sz) {
  (void)vert; (void)nvert; (void)tri; (void)ntri; (void)source; stub(err, err_sz); return NULL;
}
void geo_mesh_destroy(geo_mesh **m) { (void)m; }
geo_mesh *geo_mesh_load(const char *path, char *err, size_t err_sz) { (void)path; stub(err, err_sz); return NULL; }
geo_mesh *geo_mesh_parse_obj(const char *buf, size_t len, const char *name, char *err, size_t err_sz) { (void)buf; (void)len; (void)name; stub(err, err_sz); return NULL; }
geo_mesh *geo_mesh_parse_stl(const unsigned char *buf, size_t len, const char *name, char *err, size_t err_sz) { (void)buf; (void)len; (void)name; stub(err, err_sz); return NULL; }
