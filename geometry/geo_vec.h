// Small inline helpers on 3-vectors (double[3]), 3x3 row-major matrices (double[9]),
// unit quaternions (double[4] = w, x, y, z) and rigid transforms for the geometry module.
// Header-only, allocation-free and thread-safe (pure functions on caller memory).
// Output arguments may alias inputs unless a comment says otherwise.
#ifndef GEO_VEC_H
#define GEO_VEC_H

#include <math.h>

// The feature of a convex piece a witness point lies on, in the piece's own ids: a vertex,
// an edge or a face (types numbered 0, 1, 2 in that order, like the mesh's feature types).
enum { GEO_CF_VERTEX = 0, GEO_CF_EDGE = 1, GEO_CF_FACE = 2 };
typedef struct geo_cfeat {
  int type;  // GEO_CF_VERTEX, GEO_CF_EDGE or GEO_CF_FACE
  int id;    // the piece's own id of that vertex, edge or face (-1 when it has none)
} geo_cfeat;

// A rigid transform x -> R x + t (R row-major rotation, t translation [m]).
typedef struct geo_xform {
  double R[9];  // rotation matrix, row-major (3 x 3)
  double t[3];  // translation [m]
} geo_xform;

// out = a
static inline void geo_v3_copy(double out[3], const double a[3]) {
  out[0] = a[0];
  out[1] = a[1];
  out[2] = a[2];
}

// out = (x, y, z)
static inline void geo_v3_set(double out[3], double x, double y, double z) {
  out[0] = x;
  out[1] = y;
  out[2] = z;
}

// out = a + b
static inline void geo_v3_add(double out[3], const double a[3], const double b[3]) {
  out[0] = a[0] + b[0];
  out[1] = a[1] + b[1];
  out[2] = a[2] + b[2];
}

// out = a - b
static inline void geo_v3_sub(double out[3], const double a[3], const double b[3]) {
  out[0] = a[0] - b[0];
  out[1] = a[1] - b[1];
  out[2] = a[2] - b[2];
}

// out = s a
static inline void geo_v3_scale(double out[3], const double a[3], double s) {
  out[0] = s * a[0];
  out[1] = s * a[1];
  out[2] = s * a[2];
}

// out = a + s b
static inline void geo_v3_madd(double out[3], const double a[3], double s, const double b[3]) {
  out[0] = a[0] + s * b[0];
  out[1] = a[1] + s * b[1];
  out[2] = a[2] + s * b[2];
}

// out = a + t (b - a): linear interpolation between two points.
static inline void geo_v3_lerp(double out[3], const double a[3], const double b[3], double t) {
  out[0] = a[0] + t * (b[0] - a[0]);
  out[1] = a[1] + t * (b[1] - a[1]);
  out[2] = a[2] + t * (b[2] - a[2]);
}

// a . b
static inline double geo_v3_dot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// out = a x b (out must not alias a or b).
static inline void geo_v3_cross(double out[3], const double a[3], const double b[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

// |a|^2
static inline double geo_v3_norm2(const double a[3]) { return geo_v3_dot(a, a); }

// |a|
static inline double geo_v3_norm(const double a[3]) { return sqrt(geo_v3_dot(a, a)); }

// |a - b|^2
static inline double geo_v3_dist2(const double a[3], const double b[3]) {
  double d[3];
  geo_v3_sub(d, a, b);
  return geo_v3_dot(d, d);
}

// |a - b|
static inline double geo_v3_dist(const double a[3], const double b[3]) {
  return sqrt(geo_v3_dist2(a, b));
}

// Normalise a in place; returns the former length (a untouched when the length is 0).
static inline double geo_v3_normalize(double a[3]) {
  double n = geo_v3_norm(a);
  if (n > 0.0) {
    geo_v3_scale(a, a, 1.0 / n);
  }
  return n;
}

// out = v minus its component along the unit n (the part of v in n's normal plane).
static inline void geo_v3_reject(double out[3], const double v[3], const double n[3]) {
  geo_v3_madd(out, v, -geo_v3_dot(v, n), n);
}

// A unit vector perpendicular to the unit n: the world axis least aligned with n, with
// its n component removed.
static inline void geo_v3_any_perp(double out[3], const double n[3]) {
  int j = fabs(n[0]) <= fabs(n[1]) && fabs(n[0]) <= fabs(n[2]) ? 0
          : fabs(n[1]) <= fabs(n[2])                         ? 1
                                                             : 2;
  double ax[3] = {0, 0, 0};
  ax[j] = 1;
  geo_v3_madd(out, ax, -n[j], n);
  geo_v3_normalize(out);
}

// out = M a, M row-major 3x3 (out must not alias a).
static inline void geo_m3_mulv(double out[3], const double M[9], const double a[3]) {
  out[0] = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
  out[1] = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
  out[2] = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
}

// out = M^T a, M row-major 3x3 (out must not alias a).
static inline void geo_m3_tmulv(double out[3], const double M[9], const double a[3]) {
  out[0] = M[0] * a[0] + M[3] * a[1] + M[6] * a[2];
  out[1] = M[1] * a[0] + M[4] * a[1] + M[7] * a[2];
  out[2] = M[2] * a[0] + M[5] * a[1] + M[8] * a[2];
}

// out = A B, row-major 3x3 (out must not alias A or B).
static inline void geo_m3_mul(double out[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    }
  }
}

// out = A^T B, row-major 3x3 (out must not alias A or B).
static inline void geo_m3_tmul(double out[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
    }
  }
}

// out = identity 3x3.
static inline void geo_m3_identity(double out[9]) {
  for (int i = 0; i < 9; i++) {
    out[i] = (i % 4 == 0) ? 1.0 : 0.0;
  }
}

// Normalise quaternion q (w, x, y, z) in place; returns its former norm (0 leaves q as is).
static inline double geo_quat_normalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0.0) {
    for (int i = 0; i < 4; i++) {
      q[i] /= n;
    }
  }
  return n;
}

// out = a * b (Hamilton product; rotation b first, then a). out must not alias a or b.
static inline void geo_quat_mul(double out[4], const double a[4], const double b[4]) {
  out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// Rotation matrix (row-major) of the unit quaternion q = (w, x, y, z).
static inline void geo_quat_to_mat(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}

// out = q a q* (rotate a by the unit quaternion q). out must not alias a.
static inline void geo_quat_rotate(double out[3], const double q[4], const double a[3]) {
  double R[9];
  geo_quat_to_mat(R, q);
  geo_m3_mulv(out, R, a);
}

// Transform from a pose: position p [m] and unit quaternion q (w, x, y, z).
static inline void geo_xform_from_pose(geo_xform *X, const double p[3], const double q[4]) {
  geo_quat_to_mat(X->R, q);
  geo_v3_copy(X->t, p);
}

// Identity transform.
static inline void geo_xform_identity(geo_xform *X) {
  geo_m3_identity(X->R);
  geo_v3_set(X->t, 0, 0, 0);
}

// out = R a + t (out must not alias a).
static inline void geo_xform_point(double out[3], const geo_xform *X, const double a[3]) {
  geo_m3_mulv(out, X->R, a);
  geo_v3_add(out, out, X->t);
}

// out = R^T (a - t): world point to local frame (out must not alias a).
static inline void geo_xform_inv_point(double out[3], const geo_xform *X, const double a[3]) {
  double d[3];
  geo_v3_sub(d, a, X->t);
  geo_m3_tmulv(out, X->R, d);
}

// out = A^-1 B: the pose of B's frame in A's frame (out must not alias A or B).
static inline void geo_xform_rel(geo_xform *out, const geo_xform *A, const geo_xform *B) {
  double d[3];
  geo_m3_tmul(out->R, A->R, B->R);
  geo_v3_sub(d, B->t, A->t);
  geo_m3_tmulv(out->t, A->R, d);
}

// out = A B: apply B then A (out must not alias A or B).
static inline void geo_xform_mul(geo_xform *out, const geo_xform *A, const geo_xform *B) {
  geo_m3_mul(out->R, A->R, B->R);
  geo_xform_point(out->t, A, B->t);
}

#endif
