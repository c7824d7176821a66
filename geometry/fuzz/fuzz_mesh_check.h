// What the parser fuzzers check of a parse result: a returned mesh keeps every invariant
// geo_mesh.h promises (indices in range, finite unit normals, adjacency, a positive
// volume when closed); a refusal always explains itself. abort() reports a finding.
#ifndef FUZZ_MESH_CHECK_H
#define FUZZ_MESH_CHECK_H

#include <math.h>
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

// Check a parse result (m owned: freed here) and its message buffer of err_sz bytes.
static void check_parse(geo_mesh *m, const char *err, size_t err_sz) {
  if (m) {
    check_mesh(m);
    geo_mesh_destroy(&m);
  } else if (err[0] == 0 || strlen(err) >= err_sz) {
    abort();  // every failure explains itself
  }
}

#endif
