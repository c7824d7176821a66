// libFuzzer target for the OBJ reader: any input must give a valid mesh or NULL + message,
// never a crash, leak or undefined behaviour. A returned mesh is checked for the
// invariants the header promises (indices in range, finite unit normals, adjacency).
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "geo_mass.h"
#include "geo_mesh.h"

static void check_mesh(const geo_mesh *m) {
  if (m->nvert <= 0 || m->ntri <= 0 || m->nedge <= 0) abort();
  for (int i = 0; i < 3 * m->ntri; i++)
    if (m->tri[i] < 0 || m->tri[i] >= m->nvert) abort();
  for (int i = 0; i < 3 * m->nvert; i++)
    if (!isfinite(m->vert[i]) || fabs(m->vert[i]) > GEO_MESH_MAX_COORD) abort();
  for (int t = 0; t < m->ntri; t++) {
    const double *n = m->tri_normal + 3 * t;
    if (!(m->tri_area[t] > 0) || fabs(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1) > 1e-12) abort();
    for (int k = 0; k < 3; k++) {
      int e = m->tri_edge[3 * t + k];
      if (e < 0 || e >= m->nedge) abort();
    }
  }
  for (int e = 0; e < m->nedge; e++)
    if (m->edge[2 * e] >= m->edge[2 * e + 1] || m->edge_tri[2 * e] < 0) abort();
  if (m->vert_tri_start[m->nvert] != 3 * m->ntri) abort();
  if (m->vert_edge_start[m->nvert] != 2 * m->nedge) abort();
  geo_mass g;
  char err[256];
  if (geo_mass_properties(m, 1.0, &g, err, sizeof err) == 0 && !(g.volume > 0)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[256];
  err[0] = 0;
  geo_mesh *m = geo_mesh_parse_obj((const char *)data, size, "fuzz.obj", err, sizeof err);
  if (m) {
    check_mesh(m);
    geo_mesh_destroy(&m);
  } else if (err[0] == 0 || strlen(err) >= sizeof err) {
    abort();  // every failure explains itself
  }
  return 0;
}
