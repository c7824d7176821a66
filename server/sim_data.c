#include "sim_data.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "geo_vec.h"

struct sim_data {
  const sim_model *m;  // borrowed; outlives d
  double time;         // [s]
  int nstate;          // SIM_NQ * nfree
  int need_reinit;     // state changed outside the integrator
  double *kin_pos;     // (nbody x 3) reference pose of fixed and kinematic bodies [m]
  double *kin_quat;    // (nbody x 4)
  double *kin_vel;     // (nbody x 3) their twist (world) [m/s]
  double *kin_omega;   // (nbody x 3) [rad/s]
  double *force_in;    // (nbody x 3) held world-frame force at the COM [N]
  double *torque_in;   // (nbody x 3) held world-frame torque [N m]
  SUNContext ctx;      // one per session: SUNDIALS contexts are not thread-safe
  void *cvode;
  N_Vector y;          // (nstate) the integrated state, SIM_NQ per free body
  SUNMatrix J;
  SUNLinearSolver ls;
  sim_stats stats;
  char err[256];
};

static void set_err(char *err, size_t err_sz, const char *fmt, ...) {
  if (!err || err_sz == 0) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_sz, fmt, ap);
  va_end(ap);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// ---- dynamics ----------------------------------------------------------------------

// q (x) (0, w): the quaternion rate 2 qdot for body angular velocity w
static void quat_rate(double out[4], const double q[4], const double w[3]) {
  out[0] = -q[1] * w[0] - q[2] * w[1] - q[3] * w[2];
  out[1] = q[0] * w[0] + q[2] * w[2] - q[3] * w[1];
  out[2] = q[0] * w[1] - q[1] * w[2] + q[3] * w[0];
  out[3] = q[0] * w[2] + q[1] * w[1] - q[2] * w[0];
}

// Newton-Euler equations of every free body: state (p, q, v, w_body) -> its rate.
static int rhs(sunrealtype t, N_Vector yv, N_Vector ydotv, void *user) {
  (void)t;
  sim_data *d = user;
  const sim_model *m = d->m;
  const double *y = N_VGetArrayPointer(yv);
  double *yd = N_VGetArrayPointer(ydotv);
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) {
      continue;
    }
    const double *q = y + s + 3, *v = y + s + 7, *w = y + s + 10;
    double *pd = yd + s, *qd = yd + s + 3, *vd = yd + s + 7, *wd = yd + s + 10;
    if (!isfinite(q[0]) || !isfinite(w[0]) || !isfinite(v[0])) {
      return 1;  // recoverable: CVODE retries with a smaller step
    }
    // the rotation uses q/|q|: drift of |q| never distorts the body
    double qn[4] = {q[0], q[1], q[2], q[3]}, R[9];
    if (geo_quat_normalize(qn) == 0) {
      return 1;
    }
    geo_quat_to_mat(R, qn);
    geo_v3_copy(pd, v);
    // qdot = 1/2 q (x) (0, w), linear in q so |q| is conserved by the exact flow
    quat_rate(qd, q, w);
    for (int k = 0; k < 4; k++) {
      qd[k] *= 0.5;
    }
    const double *f = d->force_in + 3 * b, *tau = d->torque_in + 3 * b;
    double im = 1.0 / m->mass[b];
    for (int k = 0; k < 3; k++) {
      vd[k] = m->gravity[k] + f[k] * im;
    }
    // Euler: I wdot = R^T tau - w x (I w), body frame
    const double *I = m->inertia + 9 * b, *Ii = m->inertia_inv + 9 * b;
    double taub[3], Iw[3], gyro[3], rhs3[3];
    geo_m3_tmulv(taub, R, tau);
    geo_m3_mulv(Iw, I, w);
    geo_v3_cross(gyro, w, Iw);
    geo_v3_sub(rhs3, taub, gyro);
    geo_m3_mulv(wd, Ii, rhs3);
  }
  return 0;
}

// [a]x as a row-major matrix
static void skew(double S[9], const double a[3]) {
  S[0] = 0, S[1] = -a[2], S[2] = a[1];
  S[3] = a[2], S[4] = 0, S[5] = -a[0];
  S[6] = -a[1], S[7] = a[0], S[8] = 0;
}

// Analytic Jacobian of rhs. Held inputs are constant; the torque's dependence on q
// through R^T is left out (a Newton Jacobian may be approximate; CVODE's error control
// never sees it).
static int jac(sunrealtype t, N_Vector yv, N_Vector fy, SUNMatrix J, void *user, N_Vector t1,
               N_Vector t2, N_Vector t3) {
  (void)t, (void)fy, (void)t1, (void)t2, (void)t3;
  sim_data *d = user;
  const sim_model *m = d->m;
  const double *y = N_VGetArrayPointer(yv);
  SUNMatZero(J);
#define JE(i, j) SM_ELEMENT_D(J, (i), (j))
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) {
      continue;
    }
    const double *q = y + s + 3, *w = y + s + 10;
    int P = s, Q = s + 3, V = s + 7, W = s + 10;
    for (int k = 0; k < 3; k++) {
      JE(P + k, V + k) = 1.0;
    }
    // d(qdot)/dq = 1/2 W(w): right multiplication by (0, w)
    const double Wm[16] = {0,    -w[0], -w[1], -w[2], w[0], 0,    w[2],  -w[1],
                           w[1], -w[2], 0,     w[0],  w[2], w[1], -w[0], 0};
    // d(qdot)/dw = 1/2 Q(q)
    const double Qm[12] = {-q[1], -q[2], -q[3], q[0],  -q[3], q[2],
                           q[3],  q[0],  -q[1], -q[2], q[1],  q[0]};
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) {
        JE(Q + i, Q + j) = 0.5 * Wm[4 * i + j];
      }
      for (int j = 0; j < 3; j++) {
        JE(Q + i, W + j) = 0.5 * Qm[3 * i + j];
      }
    }
    // d(wdot)/dw = -I^-1 ([w]x I - [I w]x)
    const double *I = m->inertia + 9 * b, *Ii = m->inertia_inv + 9 * b;
    double Sw[9], SIw[9], Iw[3], A[9], B[9];
    geo_m3_mulv(Iw, I, w);
    skew(Sw, w);
    skew(SIw, Iw);
    geo_m3_mul(A, Sw, I);
    for (int k = 0; k < 9; k++) {
      A[k] -= SIw[k];
    }
    geo_m3_mul(B, Ii, A);
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        JE(W + i, W + j) = -B[3 * i + j];
      }
    }
  }
#undef JE
  return 0;
}

static void err_handler(int code, const char *module, const char *function, char *msg,
                        void *user) {
  sim_data *d = user;
  // warnings (code > 0) are not failures; keep the last real error only
  if (code < 0) {
    snprintf(d->err, sizeof d->err, "%s %s: %s", module, function, msg);
  }
}

// ---- state -------------------------------------------------------------------------

// Write body b's reference-frame pose/twist into the state (free) or the kinematic arrays.
static void put_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                     const double quat[4], const double vel[3], const double omega[3]) {
  double q[4] = {quat[0], quat[1], quat[2], quat[3]};
  if (geo_quat_normalize(q) == 0) {
    q[0] = 1;
  }
  int s = m->state_index[b];
  if (s < 0) {
    geo_v3_copy(d->kin_pos + 3 * b, pos);
    memcpy(d->kin_quat + 4 * b, q, sizeof q);
    geo_v3_copy(d->kin_vel + 3 * b, vel);
    geo_v3_copy(d->kin_omega + 3 * b, omega);
    return;
  }
  double *y = N_VGetArrayPointer(d->y) + s;
  double R[9], rc[3], vc[3];
  geo_quat_to_mat(R, q);
  geo_m3_mulv(rc, R, m->com + 3 * b);
  // the state holds the centre of mass: p_com = p + R c, v_com = v + w x (R c)
  geo_v3_add(y, pos, rc);
  memcpy(y + 3, q, sizeof q);
  geo_v3_cross(vc, omega, rc);
  geo_v3_add(y + 7, vel, vc);
  geo_m3_tmulv(y + 10, R, omega);
}

void sim_get_body(const sim_model *m, const sim_data *d, int b, double pos[3], double quat[4],
                  double vel[3], double omega[3]) {
  int s = m->state_index[b];
  if (s < 0) {
    if (pos) geo_v3_copy(pos, d->kin_pos + 3 * b);
    if (quat) memcpy(quat, d->kin_quat + 4 * b, 4 * sizeof(double));
    if (vel) geo_v3_copy(vel, d->kin_vel + 3 * b);
    if (omega) geo_v3_copy(omega, d->kin_omega + 3 * b);
    return;
  }
  const double *y = N_VGetArrayPointer(d->y) + s;
  double q[4] = {y[3], y[4], y[5], y[6]}, R[9], rc[3], w[3], vc[3];
  geo_quat_normalize(q);
  geo_quat_to_mat(R, q);
  geo_m3_mulv(rc, R, m->com + 3 * b);
  geo_m3_mulv(w, R, y + 10);
  if (pos) geo_v3_sub(pos, y, rc);
  if (quat) memcpy(quat, q, sizeof q);
  if (vel) {
    geo_v3_cross(vc, w, rc);
    geo_v3_sub(vel, y + 7, vc);
  }
  if (omega) geo_v3_copy(omega, w);
}

static void load_initial(const sim_model *m, sim_data *d) {
  for (int b = 0; b < m->nbody; b++) {
    const double zero[3] = {0, 0, 0};
    int moving = m->type[b] != SIM_BODY_FIXED;
    put_body(m, d, b, m->pos0 + 3 * b, m->quat0 + 4 * b, moving ? m->vel0 + 3 * b : zero,
             moving ? m->omega0 + 3 * b : zero);
  }
  d->time = 0;
}

// ---- lifecycle ---------------------------------------------------------------------

static int cvode_setup(const sim_model *m, sim_data *d, char *err, size_t err_sz) {
  if (SUNContext_Create(NULL, &d->ctx) != 0) {
    set_err(err, err_sz, "SUNContext_Create failed");
    return -1;
  }
  d->y = N_VNew_Serial(d->nstate, d->ctx);
  if (!d->y) {
    set_err(err, err_sz, "out of memory (state vector)");
    return -1;
  }
  load_initial(m, d);
  if (d->nstate == 0) {
    return 0;  // nothing to integrate: time simply advances
  }
  d->cvode = CVodeCreate(CV_BDF, d->ctx);
  d->J = SUNDenseMatrix(d->nstate, d->nstate, d->ctx);
  d->ls = d->J ? SUNLinSol_Dense(d->y, d->J, d->ctx) : NULL;
  if (!d->cvode || !d->J || !d->ls) {
    set_err(err, err_sz, "out of memory (integrator)");
    return -1;
  }
  if (CVodeSetErrHandlerFn(d->cvode, err_handler, d) != CV_SUCCESS ||
      CVodeInit(d->cvode, rhs, 0.0, d->y) != CV_SUCCESS ||
      CVodeSetUserData(d->cvode, d) != CV_SUCCESS ||
      CVodeSStolerances(d->cvode, m->rtol, m->atol) != CV_SUCCESS ||
      CVodeSetLinearSolver(d->cvode, d->ls, d->J) != CV_SUCCESS ||
      CVodeSetJacFn(d->cvode, jac) != CV_SUCCESS ||
      CVodeSetMaxNumSteps(d->cvode, 100000) != CV_SUCCESS ||
      (m->max_step > 0 && CVodeSetMaxStep(d->cvode, m->max_step) != CV_SUCCESS)) {
    set_err(err, err_sz, "CVODE set-up failed: %s", d->err);
    return -1;
  }
  // prime: CVODE allocates on its first step; take one tiny step, then restart at t = 0
  N_Vector y0 = N_VClone(d->y);
  if (!y0) {
    set_err(err, err_sz, "out of memory (state vector)");
    return -1;
  }
  N_VScale(1.0, d->y, y0);
  double tret = 0;
  CVodeSetStopTime(d->cvode, 1e-9);
  int flag = CVode(d->cvode, 1e-9, d->y, &tret, CV_NORMAL);
  N_VScale(1.0, y0, d->y);
  N_VDestroy(y0);
  if (flag < 0) {
    set_err(err, err_sz, "the initial state cannot be integrated: %s", d->err);
    return -1;
  }
  if (CVodeReInit(d->cvode, 0.0, d->y) != CV_SUCCESS) {
    set_err(err, err_sz, "CVodeReInit failed: %s", d->err);
    return -1;
  }
  return 0;
}

sim_data *sim_data_new(const sim_model *m, char *err, size_t err_sz) {
  if (!m) {
    set_err(err, err_sz, "no model");
    return NULL;
  }
  sim_data *d = calloc(1, sizeof *d);
  if (!d) {
    set_err(err, err_sz, "out of memory");
    return NULL;
  }
  size_t nb = m->nbody > 0 ? (size_t)m->nbody : 1;
  d->m = m;
  d->nstate = SIM_NQ * m->nfree;
  d->kin_pos = calloc(nb * 3, sizeof(double));
  d->kin_quat = calloc(nb * 4, sizeof(double));
  d->kin_vel = calloc(nb * 3, sizeof(double));
  d->kin_omega = calloc(nb * 3, sizeof(double));
  d->force_in = calloc(nb * 3, sizeof(double));
  d->torque_in = calloc(nb * 3, sizeof(double));
  if (!d->kin_pos || !d->kin_quat || !d->kin_vel || !d->kin_omega || !d->force_in ||
      !d->torque_in) {
    set_err(err, err_sz, "out of memory");
    sim_data_destroy(&d);
    return NULL;
  }
  if (cvode_setup(m, d, err, err_sz) != 0) {
    sim_data_destroy(&d);
    return NULL;
  }
  return d;
}

void sim_data_destroy(sim_data **pd) {
  if (!pd || !*pd) {
    return;
  }
  sim_data *d = *pd;
  if (d->cvode) CVodeFree(&d->cvode);
  if (d->ls) SUNLinSolFree(d->ls);
  if (d->J) SUNMatDestroy(d->J);
  if (d->y) N_VDestroy(d->y);
  if (d->ctx) SUNContext_Free(&d->ctx);
  free(d->kin_pos);
  free(d->kin_quat);
  free(d->kin_vel);
  free(d->kin_omega);
  free(d->force_in);
  free(d->torque_in);
  free(d);
  *pd = NULL;
}

const char *sim_data_errmsg(const sim_data *d) { return d ? d->err : "no data"; }

double sim_data_time(const sim_data *d) { return d->time; }

const sim_stats *sim_data_stats(const sim_data *d) { return &d->stats; }

ccsim_status sim_set_input(const sim_model *m, sim_data *d, int b, const double force[3],
                           const double torque[3]) {
  if (b < 0 || b >= m->nbody) {
    snprintf(d->err, sizeof d->err, "input: body %d out of range [0, %d)", b, m->nbody);
    return CCSIM_EINVAL;
  }
  if (m->type[b] != SIM_BODY_FREE) {
    snprintf(d->err, sizeof d->err, "input: body %d (\"%s\") is not free", b, m->name[b]);
    return CCSIM_EINVAL;
  }
  for (int k = 0; k < 3; k++) {
    if (!isfinite(force[k]) || !isfinite(torque[k])) {
      snprintf(d->err, sizeof d->err, "input: body %d: force and torque must be finite", b);
      return CCSIM_EINVAL;
    }
  }
  geo_v3_copy(d->force_in + 3 * b, force);
  geo_v3_copy(d->torque_in + 3 * b, torque);
  return CCSIM_OK;
}

void sim_clear_inputs(const sim_model *m, sim_data *d) {
  memset(d->force_in, 0, sizeof(double) * 3 * (size_t)m->nbody);
  memset(d->torque_in, 0, sizeof(double) * 3 * (size_t)m->nbody);
}

// add the counters of CVODE since its last (re)initialisation, minus what was added before
static void harvest_stats(sim_data *d, long base[5]) {
  long v[5] = {0, 0, 0, 0, 0};
  CVodeGetNumSteps(d->cvode, &v[0]);
  CVodeGetNumRhsEvals(d->cvode, &v[1]);
  CVodeGetNumJacEvals(d->cvode, &v[2]);
  CVodeGetNumNonlinSolvConvFails(d->cvode, &v[3]);
  CVodeGetNumErrTestFails(d->cvode, &v[4]);
  d->stats.steps += (uint64_t)(v[0] - base[0]);
  d->stats.rhs_evals += (uint64_t)(v[1] - base[1]);
  d->stats.jac_evals += (uint64_t)(v[2] - base[2]);
  d->stats.newton_fails += (uint64_t)(v[3] - base[3]);
  d->stats.error_fails += (uint64_t)(v[4] - base[4]);
  double h = 0;
  CVodeGetLastStep(d->cvode, &h);
  d->stats.last_step = h;
}

static void read_base(sim_data *d, long base[5]) {
  CVodeGetNumSteps(d->cvode, &base[0]);
  CVodeGetNumRhsEvals(d->cvode, &base[1]);
  CVodeGetNumJacEvals(d->cvode, &base[2]);
  CVodeGetNumNonlinSolvConvFails(d->cvode, &base[3]);
  CVodeGetNumErrTestFails(d->cvode, &base[4]);
}

ccsim_status sim_step(const sim_model *m, sim_data *d, double t_out) {
  (void)m;
  if (!isfinite(t_out) || !(t_out > d->time)) {
    snprintf(d->err, sizeof d->err, "step: target time %g must be finite and after %g", t_out,
             d->time);
    return CCSIM_EINVAL;
  }
  if (d->nstate == 0) {
    d->time = t_out;
    return CCSIM_OK;
  }
  uint64_t t0 = now_ns();
  if (d->need_reinit) {
    if (CVodeReInit(d->cvode, d->time, d->y) != CV_SUCCESS) {
      return CCSIM_ESOLVER;
    }
    d->need_reinit = 0;
  }
  long base[5];
  read_base(d, base);
  CVodeSetStopTime(d->cvode, t_out);
  double tret = d->time;
  int flag = CVode(d->cvode, t_out, d->y, &tret, CV_NORMAL);
  harvest_stats(d, base);
  d->stats.physics_ns += now_ns() - t0;
  if (flag < 0) {
    // CVODE leaves y at its last accepted step (tret); restart from there next time
    char why[160];
    memcpy(why, d->err, sizeof why - 1);
    why[sizeof why - 1] = 0;
    snprintf(d->err, sizeof d->err, "integration failed at t = %.9g (flag %d): %s", tret, flag,
             why);
    d->time = tret;
    d->need_reinit = 1;
    return CCSIM_ESOLVER;
  }
  d->time = t_out;  // CV_TSTOP_RETURN: exactly t_out
  return CCSIM_OK;
}

ccsim_status sim_set_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                          const double quat[4], const double vel[3], const double omega[3]) {
  if (b < 0 || b >= m->nbody) {
    snprintf(d->err, sizeof d->err, "set state: body %d out of range [0, %d)", b, m->nbody);
    return CCSIM_EINVAL;
  }
  if (m->type[b] == SIM_BODY_FIXED) {
    snprintf(d->err, sizeof d->err, "set state: body %d (\"%s\") is fixed", b, m->name[b]);
    return CCSIM_EINVAL;
  }
  double qn = 0;
  for (int k = 0; k < 4; k++) {
    qn += quat[k] * quat[k];
  }
  for (int k = 0; k < 3; k++) {
    if (!isfinite(pos[k]) || !isfinite(vel[k]) || !isfinite(omega[k])) {
      snprintf(d->err, sizeof d->err, "set state: body %d: values must be finite", b);
      return CCSIM_EINVAL;
    }
  }
  if (!isfinite(qn) || qn < 1e-12) {
    snprintf(d->err, sizeof d->err, "set state: body %d: quaternion must be finite, nonzero", b);
    return CCSIM_EINVAL;
  }
  put_body(m, d, b, pos, quat, vel, omega);
  d->need_reinit = 1;
  return CCSIM_OK;
}

ccsim_status sim_set_time(const sim_model *m, sim_data *d, double t) {
  (void)m;
  if (!isfinite(t) || t < 0) {
    snprintf(d->err, sizeof d->err, "set state: time %g must be finite and >= 0", t);
    return CCSIM_EINVAL;
  }
  d->time = t;
  d->need_reinit = 1;
  return CCSIM_OK;
}

void sim_reset(const sim_model *m, sim_data *d) {
  load_initial(m, d);
  sim_clear_inputs(m, d);
  d->need_reinit = 1;
}

double sim_energy(const sim_model *m, const sim_data *d) {
  double e = 0;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) {
      continue;
    }
    const double *y = N_VGetArrayPointer(d->y) + s;
    const double *w = y + 10, *I = m->inertia + 9 * b;
    double Iw[3];
    geo_m3_mulv(Iw, I, w);
    e += 0.5 * m->mass[b] * geo_v3_dot(y + 7, y + 7) + 0.5 * geo_v3_dot(w, Iw) -
         m->mass[b] * geo_v3_dot(m->gravity, y);
  }
  return e;
}

// layout: time, then per body p(3) q(4) v(3) w(3) of the state slots or kinematic
// arrays as stored (not converted, so a round trip is exact), then inputs (6 per body)
size_t sim_snapshot_size(const sim_model *m) { return 1 + (size_t)m->nbody * (13 + 6); }

void sim_snapshot_get(const sim_model *m, const sim_data *d, double *buf) {
  double *o = buf;
  *o++ = d->time;
  const double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s >= 0) {
      memcpy(o, y + s, SIM_NQ * sizeof(double));
    } else {
      memcpy(o, d->kin_pos + 3 * b, 3 * sizeof(double));
      memcpy(o + 3, d->kin_quat + 4 * b, 4 * sizeof(double));
      memcpy(o + 7, d->kin_vel + 3 * b, 3 * sizeof(double));
      memcpy(o + 10, d->kin_omega + 3 * b, 3 * sizeof(double));
    }
    o += 13;
  }
  memcpy(o, d->force_in, 3 * sizeof(double) * (size_t)m->nbody);
  memcpy(o + 3 * m->nbody, d->torque_in, 3 * sizeof(double) * (size_t)m->nbody);
}

ccsim_status sim_snapshot_set(const sim_model *m, sim_data *d, const double *buf) {
  size_t n = sim_snapshot_size(m);
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(buf[i])) {
      snprintf(d->err, sizeof d->err, "snapshot: value %zu is not finite", i);
      return CCSIM_EINVAL;
    }
  }
  if (buf[0] < 0) {
    snprintf(d->err, sizeof d->err, "snapshot: negative time");
    return CCSIM_EINVAL;
  }
  const double *in = buf;
  d->time = *in++;
  double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s >= 0) {
      memcpy(y + s, in, SIM_NQ * sizeof(double));
    } else {
      memcpy(d->kin_pos + 3 * b, in, 3 * sizeof(double));
      memcpy(d->kin_quat + 4 * b, in + 3, 4 * sizeof(double));
      memcpy(d->kin_vel + 3 * b, in + 7, 3 * sizeof(double));
      memcpy(d->kin_omega + 3 * b, in + 10, 3 * sizeof(double));
    }
    in += 13;
  }
  memcpy(d->force_in, in, 3 * sizeof(double) * (size_t)m->nbody);
  memcpy(d->torque_in, in + 3 * m->nbody, 3 * sizeof(double) * (size_t)m->nbody);
  d->need_reinit = 1;
  return CCSIM_OK;
}

void sim_restart(const sim_model *m, sim_data *d) {
  (void)m;
  d->need_reinit = 1;
}
