// Mass properties of a closed triangle mesh: the divergence theorem as a sum of signed
// tetrahedra (reference point, face) with the exact tetrahedron moments.
#include "geo_err.h"
#include "geo_mass.h"
#include "geo_vec.h"

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

void geo_sym3_eig(const double A_in[9], double lam[3], double V[9]) {
  double A[9];
  memcpy(A, A_in, sizeof A);
  geo_m3_identity(V);
  for (int sweep = 0; sweep < 32; sweep++) {
    double off = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    double diag = A[0] * A[0] + A[4] * A[4] + A[8] * A[8];
    if (off <= 1e-30 * diag || off == 0.0) {
      break;
    }
    for (int p = 0; p < 2; p++) {
      for (int q = p + 1; q < 3; q++) {
        double apq = A[3 * p + q];
        if (apq == 0.0) {
          continue;
        }
        double theta = (A[3 * q + q] - A[3 * p + p]) / (2.0 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        // A <- J^T A J with the rotation in the (p, q) plane
        for (int k = 0; k < 3; k++) {
          double akp = A[3 * k + p], akq = A[3 * k + q];
          A[3 * k + p] = c * akp - s * akq;
          A[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {
          double apk = A[3 * p + k], aqk = A[3 * q + k];
          A[3 * p + k] = c * apk - s * aqk;
          A[3 * q + k] = s * apk + c * aqk;
        }
        // accumulate: rows of V are eigenvectors
        for (int k = 0; k < 3; k++) {
          double vp = V[3 * p + k], vq = V[3 * q + k];
          V[3 * p + k] = c * vp - s * vq;
          V[3 * q + k] = s * vp + c * vq;
        }
      }
    }
  }
  lam[0] = A[0], lam[1] = A[4], lam[2] = A[8];
}
