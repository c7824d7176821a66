// Mass properties of a closed triangle mesh: the divergence theorem as a sum of signed
// tetrahedra (reference point, face) with the exact tetrahedron moments.
#include "geo_err.h"
#include "geo_mass.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// Neumaier compensated sum
typedef struct ksum {
  double s, c;
} ksum;

static void kadd(ksum *k, double x) {
  double t = k->s + x;
  if (fabs(k->s) >= fabs(x))
    k->c += (k->s - t) + x;
  else
    k->c += (x - t) + k->s;
  k->s = t;
}

int geo_mass_properties(const geo_mesh *m, double density, geo_mass *out, char *err,
                        size_t err_sz) {
  if (!m || !out) {
    geo_set_err(err, err_sz, "geo_mass_properties: NULL argument");
    return -1;
  }
  if (!isfinite(density) || !(density > 0.0)) {
    geo_set_err(err, err_sz, "%s: density %g must be finite and > 0", m->source, density);
    return -1;
  }
  if (!m->closed) {
    geo_set_err(err, err_sz,
            "%s: mass properties need a closed mesh (%d open border edges, %d non-manifold "
            "edges, %d inconsistently oriented edges)",
            m->source, m->n_border_edges, m->n_nonmanifold_edges, m->n_misoriented_edges);
    return -1;
  }
  // Reference point: the box centre, so the tetrahedra are small and cancellation mild.
  double ref[3];
  for (int k = 0; k < 3; k++) ref[k] = 0.5 * (m->aabb_min[k] + m->aabb_max[k]);
  ksum vol = {0, 0}, s1[3], s2[6];
  memset(s1, 0, sizeof s1);
  memset(s2, 0, sizeof s2);
  static const int ii[6] = {0, 1, 2, 0, 0, 1}, jj[6] = {0, 1, 2, 1, 2, 2};
  for (int t = 0; t < m->ntri; t++) {
    double a[3], b[3], c[3], s[3];
    const int *f = m->tri + 3 * t;
    for (int k = 0; k < 3; k++) {
      a[k] = m->vert[3 * f[0] + k] - ref[k];
      b[k] = m->vert[3 * f[1] + k] - ref[k];
      c[k] = m->vert[3 * f[2] + k] - ref[k];
      s[k] = a[k] + b[k] + c[k];
    }
    double d = a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2]) +
               a[2] * (b[0] * c[1] - b[1] * c[0]);
    kadd(&vol, d / 6.0);
    for (int k = 0; k < 3; k++) kadd(&s1[k], d / 24.0 * s[k]);
    for (int q = 0; q < 6; q++) {
      int i = ii[q], j = jj[q];
      kadd(&s2[q], d / 120.0 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j]));
    }
  }
  double V = vol.s + vol.c;
  if (!(V > 0.0) || !isfinite(V)) {
    geo_set_err(err, err_sz, "%s: signed volume %g is not positive: faces point inward", m->source, V);
    return -1;
  }
  double cr[3], C[9];
  for (int k = 0; k < 3; k++) cr[k] = (s1[k].s + s1[k].c) / V;
  for (int q = 0; q < 6; q++) {
    int i = ii[q], j = jj[q];
    double cij = (s2[q].s + s2[q].c) - V * cr[i] * cr[j];  // covariance about the com
    C[3 * i + j] = C[3 * j + i] = cij;
  }
  double tr = C[0] + C[4] + C[8];
  out->volume = V;
  out->mass = density * V;
  for (int k = 0; k < 3; k++) out->com[k] = ref[k] + cr[k];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out->inertia[3 * i + j] = density * ((i == j ? tr : 0.0) - C[3 * i + j]);
  return 0;
}
