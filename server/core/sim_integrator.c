// The compliant stepper: CVODE (BDF, Newton with our analytic Jacobian) over every free
// body's Newton-Euler equations with the contact forces of the collider, integrated in
// stretches that conservative advancement bounds, one internal step at a time: each
// accepted one adds its contact impulse to the step's mean and, with friction, moves the
// anchors on. Every session has the integrator:
// rigid mode keeps its state in the integrator's vector.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "geo_vec.h"
#include "sim_data_impl.h"

#define SIM_MAX_TOUCH_RETRIES 400  // evaluations past the standoff one sim_step tolerates
#define SIM_DENSE_MAX_FREE 16      // up to this many free bodies: dense LU; beyond: KLU

// q (x) (0, w): the quaternion rate 2 qdot for body angular velocity w
static void quat_rate(double out[4], const double q[4], const double w[3]) {
  out[0] = -q[1] * w[0] - q[2] * w[1] - q[3] * w[2];
  out[1] = q[0] * w[0] + q[2] * w[2] - q[3] * w[1];
  out[2] = q[0] * w[1] - q[1] * w[2] + q[3] * w[0];
  out[3] = q[0] * w[2] + q[1] * w[1] - q[2] * w[0];
}

// Contacts at (t, y) into d->wrench. Returns 0, 1 (recoverable: retry smaller) or -1
// (d->contact_status says why; the collider's message explains).
static int eval_contacts(const sim_model *m, sim_data *d, double t, const double *y,
                         sim_kinematics *k) {
  // every right-hand side, Jacobian and report of contacts; a stop is unrecoverable for CVODE
  if (sim_progress_check(&d->progress)) {
    d->contact_status = CCSIM_ELIMIT;
    return -1;
  }
  sim_motion_at(m, &d->kin, t, y, k);
  memset(d->wrench, 0, sizeof(double) * 6 * (size_t)m->nbody);
  d->contact_time = NAN;
  if (!d->col) return 0;
  ccsim_status st = sim_collide(m, d->col, k, d->wrench);
  d->stats.geometry_ns = sim_collider_geometry_ns(d->col);
  if (st == CCSIM_ESOLVER) {
    d->stats.penetrations++;
    // CVODE retries smaller; when hundreds of retries do not help, the contact is too soft
    // for the load and more retries would only burn time: stop the step
    if (++d->touches <= SIM_MAX_TOUCH_RETRIES) return 1;
  }
  if (st != CCSIM_OK) {
    d->contact_status = st;
    return -1;
  }
  d->contact_time = t;
  int n = 0;
  const sim_contact *c = sim_collider_contacts(d->col, &n);
  uint32_t carrying = 0;
  for (int i = 0; i < n; i++) carrying += c[i].force > 0;
  d->stats.contacts = carrying;
  d->stats.max_depth = sim_collider_max_depth(d->col);
  return 0;
}

// Body b's contact wrench w (force, torque about its centre of mass) as the mean reports
// it: the torque about the reference origin, placed as k.
static void wrench_about_origin(const sim_kinematics *k, int b, const double *w, double out[6]) {
  double r[3];
  geo_v3_sub(r, k->com + 3 * b, k->pos + 3 * b);
  geo_v3_copy(out, w);
  geo_v3_cross(out + 3, r, w);
  geo_v3_add(out + 3, out + 3, w + 3);
}

// The contact impulse of one accepted internal step [ta, tb] added to d->impulse at no
// extra contact evaluation, from the wrench of the step's last right-hand side (d->wrench:
// the final Newton iterate, within the nonlinear tolerance of the accepted state; a failed
// attempt is always followed by another, so it belongs to the accepted step), placed at
// the accepted state y (the torque's arm), and those of the two accepted steps before
// (d->wprev, d->wprev2): the integral of the parabola through the three, an error of
// order h^4 f''' per step, exact for a wrench quadratic in time. Right after a (re)start,
// which may change the wrench (a break-away), the trapezoid from the start's wrench (rhs,
// d->w0_pending). The friction commit leaves the force at the accepted state unchanged.
static void mean_add(const sim_model *m, sim_data *d, double ta, double tb, const double *y) {
  if (!(tb > ta)) return;
  sim_kinematics k;
  sim_motion_at(m, &d->kin, tb, y, &k);
  double h = tb - ta, a = d->hprev;
  // integral over [0, h] of the parabola through (-a, f0), (0, f1), (h, f2):
  // h (f1 + f2) / 2 - h^2 (a f2 + h f0 - (a + h) f1) / (6 a (a + h))
  double c = a > 0 ? -h * h / (6 * a * (a + h)) : 0;
  for (int b = 0; b < m->nbody; b++) {
    double w[6], *w1 = d->wprev + 6 * b, *w0 = d->wprev2 + 6 * b, *imp = d->impulse + 6 * b;
    wrench_about_origin(&k, b, d->wrench + 6 * b, w);
    for (int j = 0; j < 6; j++) {
      imp[j] += 0.5 * h * (w1[j] + w[j]) + c * (a * w[j] + h * w0[j] - (a + h) * w1[j]);
      w0[j] = w1[j];
      w1[j] = w[j];
    }
  }
  d->hprev = h;
}

// Models without free bodies (no integrator): the impulse over [ta, tb] from the midpoint
// (kinematic bodies move at constant twist), on a collider of its own with a copy of the
// anchors, so the session's contacts and coherence caches never see it.
static void mean_add_kinematic(const sim_model *m, sim_data *d, double ta, double tb) {
  if (!d->mcol || !(tb > ta)) return;
  if (sim_friction_copy(d->mcol, d->col) != CCSIM_OK) return;  // one model: same capacity
  double h = tb - ta, t = ta + 0.5 * h;
  sim_kinematics k;
  sim_motion_at(m, &d->kin, t, NULL, &k);
  memset(d->wprev, 0, 6 * sizeof(double) * (size_t)m->nbody);
  if (sim_collide(m, d->mcol, &k, d->wprev) != CCSIM_OK) return;
  for (int b = 0; b < m->nbody; b++) {
    double w[6], *imp = d->impulse + 6 * b;
    wrench_about_origin(&k, b, d->wprev + 6 * b, w);
    for (int j = 0; j < 6; j++) imp[j] += h * w[j];
  }
}

// Newton-Euler equations of every free body: state (p, q, v, w_body) -> its rate.
static int rhs(sunrealtype t, N_Vector yv, N_Vector ydotv, void *user) {
  sim_data *d = user;
  const sim_model *m = d->m;
  const double *y = N_VGetArrayPointer(yv);
  double *yd = N_VGetArrayPointer(ydotv);
  for (int i = 0; i < d->nstate; i++) {
    if (!isfinite(y[i])) return 1;  // recoverable: CVODE retries with a smaller step
  }
  sim_kinematics k;
  int rc = eval_contacts(m, d, t, y, &k);
  if (rc != 0) return rc;
  if (d->w0_pending) {
    // CVODE's first evaluation after a (re)start is at its initial state: the first
    // internal step's start for the mean (mean_add)
    for (int b = 0; b < m->nbody; b++)
      wrench_about_origin(&k, b, d->wrench + 6 * b, d->wprev + 6 * b);
    d->w0_pending = 0;
    d->hprev = 0;  // no step before it to fit through
  }
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) {
      continue;
    }
    const double *q = y + s + 3, *v = y + s + 7, *w = y + s + 10;
    double *pd = yd + s, *qd = yd + s + 3, *vd = yd + s + 7, *wd = yd + s + 10;
    // the rotation uses q/|q|: drift of |q| never distorts the body
    double R[9];
    geo_quat_to_mat(R, d->kin.x_quat + 4 * b);
    geo_v3_copy(pd, v);
    // qdot = 1/2 q (x) (0, w), linear in q so |q| is conserved by the exact flow
    quat_rate(qd, q, w);
    for (int j = 0; j < 4; j++) {
      qd[j] *= 0.5;
    }
    const double *f = d->force_in + 3 * b, *tau = d->torque_in + 3 * b;
    const double *cw = d->wrench + 6 * b;
    double im = 1.0 / m->mass[b];
    for (int j = 0; j < 3; j++) {
      vd[j] = m->gravity[j] + (f[j] + cw[j]) * im;
    }
    // Euler: I wdot = R^T tau - w x (I w), body frame
    const double *I = m->inertia + 9 * b, *Ii = m->inertia_inv + 9 * b;
    double tw[3], taub[3], Iw[3], gyro[3], rhs3[3];
    geo_v3_add(tw, tau, cw + 3);
    geo_m3_tmulv(taub, R, tw);
    geo_m3_mulv(Iw, I, w);
    geo_v3_cross(gyro, w, Iw);
    geo_v3_sub(rhs3, taub, gyro);
    geo_m3_mulv(wd, Ii, rhs3);
  }
  return 0;
}

// Analytic Jacobian of rhs (sim_jacobian.c) at the contacts of y.
static int jac_fn(sunrealtype t, N_Vector yv, N_Vector fy, SUNMatrix J, void *user, N_Vector t1,
                  N_Vector t2, N_Vector t3) {
  (void)fy, (void)t1, (void)t2, (void)t3;
  sim_data *d = user;
  const sim_model *m = d->m;
  const double *y = N_VGetArrayPointer(yv);
  sim_kinematics k;
  int rc = eval_contacts(m, d, t, y, &k);  // also the progress call
  if (rc != 0) return rc;
  sim_jacobian_assemble(m, d, y, J);
  return 0;
}

static void err_handler(int code, const char *module, const char *function, char *msg, void *user) {
  sim_data *d = user;
  // warnings (code > 0) are not failures; keep the last real error only
  if (code < 0) {
    snprintf(d->err, sizeof d->err, "%s %s: %s", module, function, msg);
  }
}

int sim_integrator_init(const sim_model *m, sim_data *d, char *err, size_t err_sz) {
  if (SUNContext_Create(NULL, &d->ctx) != 0) {
    ccsim_set_err(err, err_sz, "SUNContext_Create failed");
    return -1;
  }
  d->y = N_VNew_Serial(d->nstate, d->ctx);
  if (!d->y) {
    ccsim_set_err(err, err_sz, "out of memory (state vector)");
    return -1;
  }
  sim_load_initial(m, d);
  if (d->nstate == 0) {
    return 0;  // nothing to integrate: time simply advances
  }
  d->cvode = CVodeCreate(CV_BDF, d->ctx);
  int nfree = d->nstate / SIM_NQ;
  d->sparse = m->linsolver == SIM_LINSOLVER_KLU ||
              (m->linsolver == SIM_LINSOLVER_AUTO && nfree > SIM_DENSE_MAX_FREE);
  if (sim_jacobian_init(m, d, nfree) != 0) {
    ccsim_set_err(err, err_sz, "out of memory (Jacobian blocks)");
    return -1;
  }
  if (d->sparse) {
    d->nnz = (sunindextype)nfree * SIM_NB + (sunindextype)d->jcap * 78;
    d->jpat = calloc((size_t)d->nstate + 2 + (size_t)d->nnz, sizeof(sunindextype));
    d->J = d->jpat ? SUNSparseMatrix(d->nstate, d->nstate, d->nnz, CSC_MAT, d->ctx) : NULL;
    d->ls = d->J ? SUNLinSol_KLU(d->y, d->J, d->ctx) : NULL;
  } else {
    d->J = SUNDenseMatrix(d->nstate, d->nstate, d->ctx);
    d->ls = d->J ? SUNLinSol_Dense(d->y, d->J, d->ctx) : NULL;
  }
  if (!d->cvode || !d->J || !d->ls) {
    ccsim_set_err(err, err_sz, "out of memory (integrator)");
    return -1;
  }
  if (CVodeSetErrHandlerFn(d->cvode, err_handler, d) != CV_SUCCESS ||
      CVodeInit(d->cvode, rhs, 0.0, d->y) != CV_SUCCESS ||
      CVodeSetUserData(d->cvode, d) != CV_SUCCESS ||
      CVodeSStolerances(d->cvode, m->rtol, m->atol) != CV_SUCCESS ||
      CVodeSetLinearSolver(d->cvode, d->ls, d->J) != CV_SUCCESS ||
      CVodeSetJacFn(d->cvode, jac_fn) != CV_SUCCESS ||
      CVodeSetMaxNumSteps(d->cvode, 100000) != CV_SUCCESS ||
      (m->max_step > 0 && CVodeSetMaxStep(d->cvode, m->max_step) != CV_SUCCESS)) {
    ccsim_set_err(err, err_sz, "CVODE set-up failed: %s", d->err);
    return -1;
  }
  // prime: CVODE allocates on its first step; take one tiny step, then restart at t = 0
  N_Vector y0 = N_VClone(d->y);
  if (!y0) {
    ccsim_set_err(err, err_sz, "out of memory (state vector)");
    return -1;
  }
  N_VScale(1.0, d->y, y0);
  double tret = 0;
  CVodeSetStopTime(d->cvode, 1e-9);
  int flag = CVode(d->cvode, 1e-9, d->y, &tret, CV_NORMAL);
  N_VScale(1.0, y0, d->y);
  N_VDestroy(y0);
  if (flag < 0) {
    // the collider's message names the bodies when they start inside each other
    ccsim_set_err(err, err_sz, "the initial state cannot be integrated: %s",
                  d->col && (d->stats.penetrations || d->contact_status != CCSIM_OK)
                      ? sim_collider_errmsg(d->col)
                      : d->err);
    return -1;
  }
  if (CVodeReInit(d->cvode, 0.0, d->y) != CV_SUCCESS) {
    ccsim_set_err(err, err_sz, "CVodeReInit failed: %s", d->err);
    return -1;
  }
  return 0;
}

void sim_integrator_fini(sim_data *d) {
  if (d->cvode) CVodeFree(&d->cvode);
  if (d->ls) SUNLinSolFree(d->ls);
  if (d->J) SUNMatDestroy(d->J);
  if (d->y) N_VDestroy(d->y);
  if (d->ctx) SUNContext_Free(&d->ctx);
  sim_jacobian_fini(d);
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

// Conservative advancement (Drumwright): the longest stretch from time t, within the
// horizon, over which no pair of bodies can close more than half its standoff, from the
// velocities at t plus what gravity and held forces can add. INFINITY when no pair is
// near. CVODE clamps its next step to a stop time but not to a new maximum step, so
// sim_step integrates such stretches one stop time at a time.
static double step_bound(const sim_model *m, sim_data *d, double t, double horizon) {
  if (!d->col) return INFINITY;
  sim_kinematics k;
  const double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  sim_motion_at(m, &d->kin, t, y, &k);
  double acc = geo_v3_norm(m->gravity);
  for (int b = 0; b < m->nbody; b++) {
    if (m->state_index[b] >= 0) {
      double a = geo_v3_norm(d->force_in + 3 * b) / m->mass[b];
      if (a > acc) acc = a;
    }
  }
  // each body of a pair may accelerate by acc towards the other
  double h = sim_collider_time_bound(m, d->col, &k, 2 * acc, horizon, 1);
  // a floor against pathological inputs (tunnelling would need > 5 km/s at d_s = 1 mm)
  return isfinite(h) ? fmax(h, 1e-7) : INFINITY;
}

// After an accepted internal step at time t: the contacts there become the friction
// anchors (sim_friction_commit). Returns 1 when the integrator must restart. A state
// whose contacts cannot be evaluated keeps the old anchors (the next step fails anyway).
static int commit_anchors(const sim_model *m, sim_data *d, double t) {
  sim_kinematics k;
  int touches = d->touches;
  if (eval_contacts(m, d, t, N_VGetArrayPointer(d->y), &k) != 0) {
    d->touches = touches;
    return 0;
  }
  d->contact_time = NAN;  // the contacts now refer to the new anchors' table
  return sim_friction_commit(m, d->col, &k);
}

// The compliant stepper's step (the entry, sim_step, has checked t_out and set the step's
// targets; it times the step).
ccsim_status sim_integrator_step(const sim_model *m, sim_data *d, double t_out) {
  if (d->nstate == 0) {
    mean_add_kinematic(m, d, d->time, t_out);
    sim_inputs_advance(m, d, t_out, 1);
    d->time = t_out;
    return CCSIM_OK;
  }
  // With friction a jump of the load can carry stuck contacts onto the cone inside the
  // next step, and CVODE's history from before the jump then fails its error test down
  // to the minimum step (seen at a 0.6 -> 1.2 mu m g jump): restart there, the standard
  // treatment of a discontinuity. Compared with what the last step held, not with what
  // the caller cleared in between: the same load held again (every control tick, a
  // batch's sub-steps) keeps the history, and frictionless plants always do.
  size_t nin = 3 * (size_t)m->nbody;
  if (memcmp(d->input_used, d->force_in, nin * sizeof(double)) != 0 ||
      memcmp(d->input_used + nin, d->torque_in, nin * sizeof(double)) != 0) {
    if (sim_friction_active(d->col)) d->need_reinit = 1;
    d->hprev = 0;  // the wrench's rate may jump here: no parabola across it (mean_add)
    memcpy(d->input_used, d->force_in, nin * sizeof(double));
    memcpy(d->input_used + nin, d->torque_in, nin * sizeof(double));
  }
  if (d->need_reinit) {
    if (CVodeReInit(d->cvode, d->time, d->y) != CV_SUCCESS) {
      return CCSIM_ESOLVER;
    }
    d->need_reinit = 0;
  }
  long base[5];
  read_base(d, base);
  uint64_t pen0 = d->stats.penetrations;
  d->touches = 0;
  d->contact_status = CCSIM_OK;
  double t = d->time, tret = d->time;
  int flag = CV_SUCCESS;
  int commit = sim_friction_active(d->col);
  while (t < t_out) {
    if (sim_progress_check(&d->progress)) {
      flag = CV_TOO_MUCH_WORK;  // y is at t, where the last stretch ended
      tret = t;
      break;
    }
    double h = step_bound(m, d, t, t_out - t);
    double t_next = isfinite(h) && t + h < t_out ? t + h : t_out;
    CVodeSetStopTime(d->cvode, t_next);
    // one internal step at a time: each accepted one adds its contact impulse (mean_add)
    // and, with friction, moves the anchors on
    double tprev = t;
    do {
      long nst = 0;
      CVodeGetNumSteps(d->cvode, &nst);
      d->w0_pending = nst == 0;  // a (re)start: rhs takes the first step's start wrench
      flag = CVode(d->cvode, t_next, d->y, &tret, CV_ONE_STEP);
      d->w0_pending = 0;
      if (flag < 0) break;
      mean_add(m, d, tprev, tret, N_VGetArrayPointer(d->y));
      tprev = tret;
      if (commit && commit_anchors(m, d, tret)) {
        // a contact broke away and its force dropped to sliding friction: restart there
        if (CVodeReInit(d->cvode, tret, d->y) != CV_SUCCESS) flag = CV_MEM_FAIL;
        CVodeSetStopTime(d->cvode, t_next);
        d->stats.friction_restarts++;
      }
    } while (flag >= 0 && tret < t_next);
    // the corrector moved y after the RHS's last evaluation: its contacts are stale
    d->contact_time = NAN;
    if (flag < 0) break;
    t = t_next;  // CV_TSTOP_RETURN: exactly there
  }
  harvest_stats(d, base);
  if (flag < 0) {
    // CVODE leaves y at its last accepted step (tret); restart from there next time
    if (d->progress.stopped) {
      // asked for (a time limit, a shutdown): not the integrator's failure
      snprintf(d->err, sizeof d->err, "stopped by the progress function at t = %.9g", tret);
    } else {
      char why[160];
      if (d->col && (d->stats.penetrations > pen0 || d->contact_status != CCSIM_OK)) {
        snprintf(why, sizeof why, "%s", sim_collider_errmsg(d->col));
      } else {
        memcpy(why, d->err, sizeof why - 1);
        why[sizeof why - 1] = 0;
      }
      snprintf(d->err, sizeof d->err, "integration failed at t = %.9g (flag %d): %s", tret, flag,
               why);
    }
    sim_inputs_advance(m, d, tret, 0);
    d->time = tret;
    d->need_reinit = 1;
    return d->progress.stopped ? CCSIM_ELIMIT : CCSIM_ESOLVER;
  }
  sim_inputs_advance(m, d, t_out, 1);
  d->time = t_out;
  d->stats.anchors = (uint32_t)sim_friction_anchors(d->col);
  return CCSIM_OK;
}

// The compliant stepper's report of contacts: an evaluation at the current state.
ccsim_status sim_integrator_contacts(const sim_model *m, sim_data *d) {
  sim_kinematics k;
  const double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  d->contact_status = CCSIM_OK;
  d->progress.stopped = 0;
  int rc = eval_contacts(m, d, d->time, y, &k);
  if (rc != 0) {
    snprintf(
        d->err, sizeof d->err, "contacts: %s",
        d->progress.stopped ? "stopped by the progress function" : sim_collider_errmsg(d->col));
    return rc > 0 ? CCSIM_ESOLVER : d->contact_status;
  }
  return CCSIM_OK;
}

ccsim_status sim_eval_derivatives(const sim_model *m, sim_data *d, const double *y, double *ydot,
                                  double *jac) {
  size_t n = sim_state_size(m);
  if (n == 0) return CCSIM_OK;
  N_Vector yv = N_VMake_Serial((sunindextype)n, (double *)y, d->ctx);
  N_Vector fv = N_VMake_Serial((sunindextype)n, ydot, d->ctx);
  if (!yv || !fv) {
    if (yv) N_VDestroy(yv);
    if (fv) N_VDestroy(fv);
    return CCSIM_ENOMEM;
  }
  d->contact_status = CCSIM_OK;
  d->progress.stopped = 0;  // a stop asked of an earlier step is not this evaluation's
  int rc = rhs(d->time, yv, fv, d);
  if (rc == 0 && jac) {
    rc = jac_fn(d->time, yv, fv, d->J, d, NULL, NULL, NULL);
    if (rc == 0 && d->sparse) {
      memset(jac, 0, n * n * sizeof(double));
      const sunindextype *cp = SUNSparseMatrix_IndexPointers(d->J);
      const sunindextype *rv = SUNSparseMatrix_IndexValues(d->J);
      const double *v = SUNSparseMatrix_Data(d->J);
      for (size_t j = 0; j < n; j++) {
        for (sunindextype e = cp[j]; e < cp[j + 1]; e++) jac[j * n + (size_t)rv[e]] = v[e];
      }
    }
    for (size_t j = 0; rc == 0 && !d->sparse && j < n; j++) {
      for (size_t i = 0; i < n; i++) {
        jac[j * n + i] = SM_ELEMENT_D(d->J, (sunindextype)i, (sunindextype)j);
      }
    }
  }
  N_VDestroy(yv);
  N_VDestroy(fv);
  // the scratch now holds the contacts of y, which need not be d's state: not its report
  d->contact_time = NAN;
  if (rc < 0 && d->contact_status != CCSIM_OK) return d->contact_status;
  return rc == 0 ? CCSIM_OK : rc > 0 ? CCSIM_ESOLVER : CCSIM_ELIMIT;
}
