// Shared LCP pieces: status strings and the verification of a solution against the
// original data, which every solver runs before it may report success.
#include "sim_lcp.h"

#include <math.h>

// max/min without fmax's NaN handling (which costs a library call); inputs are finite
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

const char *sim_lcp_status_str(int status) {
  switch (status) {
#define SIM_LCP_STATUS_TEXT(name, value, text) \
  case value:                                  \
    return text;
    SIM_LCP_STATUS_LIST(SIM_LCP_STATUS_TEXT)
#undef SIM_LCP_STATUS_TEXT
  default:
    return "unknown LCP status";
  }
}

const char *sim_lcp_status_name(int status) {
  switch (status) {
#define SIM_LCP_STATUS_NAME(name, value, text) \
  case value:                                  \
    return #name;
    SIM_LCP_STATUS_LIST(SIM_LCP_STATUS_NAME)
#undef SIM_LCP_STATUS_NAME
  default:
    return "SIM_LCP_UNKNOWN";
  }
}

ccsim_status sim_lcp_status_ccsim(sim_lcp_status status) {
  switch (status) {
  case SIM_LCP_SOLVED:
    return CCSIM_OK;
  case SIM_LCP_EINVAL:
    return CCSIM_EINVAL;
  case SIM_LCP_PIVOT_LIMIT:
    return CCSIM_ELIMIT;
  case SIM_LCP_RAY:
  case SIM_LCP_NUMERICAL:
  default:
    return CCSIM_ESOLVER;
  }
}

int sim_lcp_finite(int n, const double *M, const double *q) {
  // x - x is 0 for finite x and NaN for inf or NaN; four partial sums keep it branch-free
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  const long nn = (long)n * n;
  long k = 0;
  for (; k + 4 <= nn; k += 4) {
    s0 += M[k] - M[k];
    s1 += M[k + 1] - M[k + 1];
    s2 += M[k + 2] - M[k + 2];
    s3 += M[k + 3] - M[k + 3];
  }
  for (; k < nn; k++) s0 += M[k] - M[k];
  for (int i = 0; i < n; i++) s1 += q[i] - q[i];
  return (s0 + s1 + s2 + s3) == 0.0;
}

int sim_lcp_verify(int n, const double *M, const double *q, const double *z, double *w,
                   double tol, sim_lcp_check *out) {
  sim_lcp_check c = {INFINITY, INFINITY, 0.0, 0.0, 0.0, 1.0, 1.0, 0};
  double qn2 = 0.0, res2 = 0.0;
  int finite = 1;
  for (int i = 0; i < n; i++) {
    c.scale_w = dmax(c.scale_w, fabs(q[i]));
    c.scale_z = dmax(c.scale_z, fabs(z[i]));
    qn2 += q[i] * q[i];
  }
  if (w) {
    // w = q + sum_j z_j M[:, j]: column sweeps suit the column-major storage
    for (int i = 0; i < n; i++) w[i] = q[i];
    for (int j = 0; j < n; j++) {
      const double *col = M + (size_t)j * n;
      double zj = z[j];
      if (zj == 0.0) continue;
      for (int i = 0; i < n; i++) w[i] += col[i] * zj;
    }
  }
  for (int i = 0; i < n; i++) {
    double wi = q[i];
    if (w) {
      wi = w[i];
    } else {
      for (int j = 0; j < n; j++) wi += M[i + (size_t)j * n] * z[j];
    }
    if (!isfinite(wi) || !isfinite(z[i])) finite = 0;
    c.min_w = dmin(c.min_w, wi);
    c.min_z = dmin(c.min_z, z[i]);
    c.comp += fabs(wi * z[i]);
    double r = dmin(z[i], wi);  // z - max(0, z - w) == min(z, w)
    c.nat_res = dmax(c.nat_res, fabs(r));
    res2 += r * r;
  }
  c.siconos = qn2 > 0.0 ? sqrt(res2) / sqrt(qn2) : sqrt(res2);
  c.ok = finite && c.min_z >= -tol * c.scale_z && c.min_w >= -tol * c.scale_w &&
         c.comp <= tol * c.scale_w * c.scale_z;
  if (out) *out = c;
  return c.ok;
}
