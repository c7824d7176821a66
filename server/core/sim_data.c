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
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "geo_vec.h"
#include "sim_rigid.h"

#define SIM_MAX_TOUCH_RETRIES 400  // evaluations past the standoff one sim_step tolerates
#define SIM_DENSE_MAX_FREE 16      // up to this many free bodies: dense LU; beyond: KLU
#define SIM_CROSS_PER_BODY 32      // Jacobian blocks coupling two bodies, per free body
#define SIM_NB (SIM_NQ * SIM_NQ)   // entries of a body's own Jacobian block

struct sim_data {
  const sim_model *m;  // borrowed; outlives d
  int (*progress)(void *);  // sim_set_progress (NULL: none)
  void *progress_arg;
  int stopped;         // the progress function asked this sim_step to stop
  double time;         // [s]
  int nstate;          // SIM_NQ * nfree
  int need_reinit;     // state changed outside the integrator
  double *kin_pos;     // (nbody x 3) reference pose of fixed and kinematic bodies [m]
  double *kin_quat;    // (nbody x 4)
  double *kin_vel;     // (nbody x 3) their twist (world) [m/s]
  double *kin_omega;   // (nbody x 3) [rad/s]
  double kin_t0;       // time at which kin_pos/kin_quat hold [s] (= time between steps)
  double *kin_target;  // (nbody x 7) pose a kinematic body reaches at the step's end
  int *kin_has_target; // (nbody) 1 when kin_target is set for the coming step
  double *kin_target_t;  // (nbody) time at which body b's kinematic target is reached [s]
  double *force_in;    // (nbody x 3) held world-frame force at the COM [N]
  double *torque_in;   // (nbody x 3) held world-frame torque [N m]
  double *input_used;  // (nbody x 6) force_in then torque_in as the last sim_step held them
  // scratch of one evaluation: every body's placement and motion (see sim_kinematics)
  double *x_pos, *x_quat, *x_com, *x_vel, *x_omega;  // (nbody x 3/4/3/3/3)
  double *wrench;      // (nbody x 6) contact force and torque about the COM, world: scratch
                       // too, filled by each contact evaluation before it is read
  sim_collider *col;   // contact queries; NULL when fewer than two bodies have geometry
  sim_collider *qcol;  // sim_eval_contacts_at's own, made at its first call: what it caches
                       // and finds must not reach the integration's collider
  sim_rigid *rigid;    // rigid mode stepper; NULL in compliant mode
  double contact_time; // time of the contacts held by col (NAN: none evaluated)
  int touches;         // evaluations past the standoff during the current sim_step
  ccsim_status contact_status;  // why the last evaluation that failed for good failed
                                // (CCSIM_OK: none since the step began); message in col
  SUNContext ctx;      // one per session: SUNDIALS contexts are not thread-safe
  void *cvode;
  N_Vector y;          // (nstate) the integrated state, SIM_NQ per free body
  SUNMatrix J;
  SUNLinearSolver ls;
  // the Jacobian in blocks: per free body its own 13 x 13 block; per ordered pair of free
  // bodies coupled by contacts a 6 x 13 block (accelerations of one, state of the other)
  int sparse;          // 1: KLU on a CSC matrix (many bodies), 0: dense LU
  double *jself;       // (nfree x 169) row-major
  int jcap, jn;        // cross blocks: capacity and count
  int *jrow, *jcol;    // (jcap) free-body indices of each cross block's rows and columns
  double *jcross;      // (jcap x 78) row-major 6 x 13
  int *jorder;         // (jcap) cross blocks sorted by column body (sparse assembly)
  int *jstart;         // (nfree + 1) first entry of each column body in jorder
  sunindextype *jpat;  // (nstate + 1 + nnz) the last CSC pattern, to notice a change
  sunindextype nnz;    // capacity of the sparse matrix
  uint64_t jdropped;   // contact couplings left out of the Jacobian (cross blocks full)
  sim_stats stats;
  char err[256];
};

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

// Pose of kinematic body b at time t: it moves with its held twist from kin_t0.
static void kinematic_pose(const sim_data *d, int b, double t, double pos[3], double quat[4]) {
  sim_pose_advance(d->kin_pos + 3 * b, d->kin_quat + 4 * b, d->kin_vel + 3 * b,
                   d->kin_omega + 3 * b, t - d->kin_t0, pos, quat);
}

// Every body's placement and motion at time t and state y, into d's scratch.
static void fill_kinematics(const sim_model *m, sim_data *d, double t, const double *y,
                            sim_kinematics *k) {
  for (int b = 0; b < m->nbody; b++) {
    double *pos = d->x_pos + 3 * b, *q = d->x_quat + 4 * b, *com = d->x_com + 3 * b;
    double *vel = d->x_vel + 3 * b, *om = d->x_omega + 3 * b, R[9], rc[3];
    int s = m->state_index[b];
    if (s >= 0) {
      memcpy(q, y + s + 3, 4 * sizeof(double));
      if (geo_quat_normalize(q) == 0) q[0] = 1;
      geo_quat_to_mat(R, q);
      geo_v3_copy(com, y + s);
      geo_m3_mulv(rc, R, m->com + 3 * b);
      geo_v3_sub(pos, com, rc);
      geo_v3_copy(vel, y + s + 7);
      geo_m3_mulv(om, R, y + s + 10);
      continue;
    }
    if (m->type[b] == SIM_BODY_KINEMATIC) {
      kinematic_pose(d, b, t, pos, q);
    } else {
      geo_v3_copy(pos, d->kin_pos + 3 * b);
      memcpy(q, d->kin_quat + 4 * b, 4 * sizeof(double));
    }
    geo_quat_to_mat(R, q);
    geo_m3_mulv(rc, R, m->com + 3 * b);
    geo_v3_add(com, pos, rc);
    geo_v3_copy(om, d->kin_omega + 3 * b);
    double wxr[3];
    geo_v3_cross(wxr, om, rc);
    geo_v3_add(vel, d->kin_vel + 3 * b, wxr);
  }
  k->pos = d->x_pos, k->quat = d->x_quat, k->com = d->x_com;
  k->vel = d->x_vel, k->omega = d->x_omega;
}

void sim_set_progress(sim_data *d, int (*fn)(void *arg), void *arg) {
  d->progress = fn;
  d->progress_arg = arg;
}

int sim_data_progress(sim_data *d) {
  if (!d->stopped && d->progress && d->progress(d->progress_arg) != 0) d->stopped = 1;
  return d->stopped;
}

// Contacts at (t, y) into d->wrench. Returns 0, 1 (recoverable: retry smaller) or -1
// (d->contact_status says why; the collider's message explains).
static int eval_contacts(const sim_model *m, sim_data *d, double t, const double *y,
                         sim_kinematics *k) {
  // every right-hand side, Jacobian and report of contacts; a stop is unrecoverable for CVODE
  if (sim_data_progress(d)) {
    d->contact_status = CCSIM_ELIMIT;
    return -1;
  }
  fill_kinematics(m, d, t, y, k);
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
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) {
      continue;
    }
    const double *q = y + s + 3, *v = y + s + 7, *w = y + s + 10;
    double *pd = yd + s, *qd = yd + s + 3, *vd = yd + s + 7, *wd = yd + s + 10;
    // the rotation uses q/|q|: drift of |q| never distorts the body
    double R[9];
    geo_quat_to_mat(R, d->x_quat + 4 * b);
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

// [a]x as a row-major matrix
static void skew(double S[9], const double a[3]) {
  S[0] = 0, S[1] = -a[2], S[2] = a[1];
  S[3] = a[2], S[4] = 0, S[5] = -a[0];
  S[6] = -a[1], S[7] = a[0], S[8] = 0;
}

// E(q), 3 x 4 row-major: the body-frame rotation dtheta = E dq of a change dq of the
// unit quaternion q (from dq = 1/2 q (x) (0, dtheta), so dtheta = 2 vec(q* (x) dq)).
static void quat_dtheta(double E[12], const double q[4]) {
  const double e[12] = {-q[1], q[0],  q[3],  -q[2], -q[2], -q[3],
                        q[0],  q[1],  -q[3], q[2],  -q[1], q[0]};
  for (int i = 0; i < 12; i++) E[i] = 2 * e[i];
}

// the cross block for rows of free body fa and columns of free body fb: found among the
// last ones (a pair's contacts are stored together), else a new one; NULL when full
static double *cross_block(sim_data *d, int fa, int fb) {
  for (int i = d->jn - 1; i >= 0 && i >= d->jn - 2; i--) {
    if (d->jrow[i] == fa && d->jcol[i] == fb) return d->jcross + (size_t)78 * i;
  }
  if (d->jn == d->jcap) {
    d->jdropped++;  // the Newton Jacobian may be approximate: the coupling is left out
    return NULL;
  }
  int i = d->jn++;
  d->jrow[i] = fa;
  d->jcol[i] = fb;
  double *blk = d->jcross + (size_t)78 * i;
  memset(blk, 0, 78 * sizeof(double));
  return blk;
}

// One term of a contact's force law in the Jacobian, with the witness points frozen on
// their bodies and the directions frozen in the world: the force on B changes by
// -kp f (g . du) - kv f (g . du'), where du is the displacement of B's witness point
// relative to A's. Through J_f = [-f, -(r_A x f), f, r_B x f] and J_g alike, the
// generalised forces change by -kp J_f J_g^T dq (and -kv ... for velocities); mapping
// displacements to (p, q), velocities to (v, w_body) and generalised forces to
// accelerations, every block is an outer product u_a w_b^T.
static void add_jacobian_term(const sim_model *m, sim_data *d, const sim_contact *ct,
                              const double f[3], const double g[3], double kp, double kv) {
  if (kp == 0 && kv == 0) return;
  int body[2] = {ct->body_a, ct->body_b};
  const double *wp[2] = {ct->pa, ct->pb};
  double u[2][6], wpos[2][7], wvel[2][6];
  for (int side = 0; side < 2; side++) {
    int b = body[side];
    if (m->state_index[b] < 0) continue;
    double sign = side == 0 ? -1.0 : 1.0, r[3], R[9], E[12];
    geo_v3_sub(r, wp[side], d->x_com + 3 * b);
    const double *q = d->x_quat + 4 * b;
    geo_quat_to_mat(R, q);
    quat_dtheta(E, q);
    for (int pass = 0; pass < 2; pass++) {
      const double *dir = pass == 0 ? f : g;
      double rxd[3], jl[3], ja[3], t3[3];
      geo_v3_cross(rxd, r, dir);
      geo_v3_scale(jl, dir, sign);
      geo_v3_scale(ja, rxd, sign);
      geo_m3_tmulv(t3, R, ja);  // R^T J_ang
      if (pass == 0) {
        // u = M^-1 J_f: linear / m, angular I^-1 R^T J_ang
        for (int j = 0; j < 3; j++) u[side][j] = jl[j] / m->mass[b];
        geo_m3_mulv(u[side] + 3, m->inertia_inv + 9 * b, t3);
        continue;
      }
      // wpos = (J_lin, E^T R^T J_ang) with dtheta_body = E(q) dq; wvel = (J_lin, R^T J_ang)
      for (int j = 0; j < 3; j++) wpos[side][j] = wvel[side][j] = jl[j];
      for (int j = 0; j < 4; j++) {
        wpos[side][3 + j] = E[j] * t3[0] + E[4 + j] * t3[1] + E[8 + j] * t3[2];
      }
      for (int j = 0; j < 3; j++) wvel[side][3 + j] = t3[j];
    }
  }
  for (int sa = 0; sa < 2; sa++) {
    int ra = m->state_index[body[sa]];
    if (ra < 0) continue;
    for (int sb = 0; sb < 2; sb++) {
      int cb = m->state_index[body[sb]];
      if (cb < 0) continue;
      // rows 7..12 (accelerations) of the self block, or rows 0..5 of a cross block
      double *blk = ra == cb ? d->jself + (size_t)SIM_NB * (ra / SIM_NQ) + 7 * SIM_NQ
                             : cross_block(d, ra / SIM_NQ, cb / SIM_NQ);
      if (!blk) continue;
      for (int j = 0; j < 6; j++) {
        double kpu = -kp * u[sa][j], kvu = -kv * u[sa][j];
        double *row = blk + SIM_NQ * j;
        for (int l = 0; l < 7; l++) row[l] += kpu * wpos[sb][l];
        for (int l = 0; l < 6; l++) row[7 + l] += kvu * wvel[sb][l];
      }
    }
  }
}

// The contact forces' share of the Jacobian. Normal: F(delta, delta') along n with
// d delta = -n . du. Friction while within the cone: -k_t T du - c_t T du' with T the
// tangent projector, two terms along a tangent basis. On the cone: mu F_n e, whose size
// follows the normal force (mu dF/ddelta along e from n) and whose direction e turns
// with the trial force across it (the e-perpendicular tangent, scaled by cap / |trial|).
static void add_contact_jacobian(const sim_model *m, sim_data *d) {
  int n = 0;
  const sim_contact *c = d->col ? sim_collider_contacts(d->col, &n) : NULL;
  for (int i = 0; i < n; i++) {
    const sim_contact *ct = &c[i];
    add_jacobian_term(m, d, ct, ct->normal, ct->normal, ct->dF_ddepth, ct->dF_drate);
    if (!(ct->k_t > 0)) continue;
    double tn = geo_v3_norm(ct->trial), e[3], p[3];
    if (tn > ct->cap) {
      geo_v3_scale(e, ct->trial, 1.0 / tn);
      geo_v3_cross(p, ct->normal, e);
      add_jacobian_term(m, d, ct, e, ct->normal, ct->mu * ct->dF_ddepth,
                        ct->mu * ct->dF_drate);
      double r = ct->cap / tn;
      add_jacobian_term(m, d, ct, p, p, r * ct->k_t, r * ct->c_t);
      continue;
    }
    // any tangent basis (t1, t2) of the contact plane: T = t1 t1^T + t2 t2^T
    double t1[3], t2[3];
    geo_v3_any_perp(t1, ct->normal);
    geo_v3_cross(t2, ct->normal, t1);
    add_jacobian_term(m, d, ct, t1, t1, ct->k_t, ct->c_t);
    add_jacobian_term(m, d, ct, t2, t2, ct->k_t, ct->c_t);
  }
}

// The rigid-body terms of free body b into its own block J (13 x 13 row-major; local
// indices: p 0..2, q 3..6, v 7..9, w 10..12).
static void body_jacobian(const sim_model *m, const sim_data *d, int b, const double *y,
                          double *J) {
  int s = m->state_index[b];
  const double *q = y + s + 3, *w = y + s + 10;
#define JE(i, j) J[SIM_NQ * (i) + (j)]
  const int P = 0, Q = 3, V = 7, W = 10;
  for (int j = 0; j < 3; j++) {
    JE(P + j, V + j) = 1.0;
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
  for (int j = 0; j < 9; j++) {
    A[j] -= SIw[j];
  }
  geo_m3_mul(B, Ii, A);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      JE(W + i, W + j) += -B[3 * i + j];
    }
  }
  // d(wdot)/dq through R^T tau: a body rotation dtheta turns R^T tau by
  // [R^T tau]x dtheta, and dtheta = E(q) dq
  const double *qh = d->x_quat + 4 * b, *cw = d->wrench + 6 * b;
  double R[9], tw[3], tb[3], St[9], IiSt[9], E[12];
  geo_quat_to_mat(R, qh);
  geo_v3_add(tw, d->torque_in + 3 * b, cw + 3);
  geo_m3_tmulv(tb, R, tw);
  skew(St, tb);
  geo_m3_mul(IiSt, Ii, St);
  quat_dtheta(E, qh);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 4; j++) {
      JE(W + i, Q + j) += IiSt[3 * i] * E[j] + IiSt[3 * i + 1] * E[4 + j] +
                          IiSt[3 * i + 2] * E[8 + j];
    }
  }
#undef JE
}

// Blocks into CVODE's dense matrix.
static void scatter_dense(const sim_data *d, SUNMatrix J) {
  int nfree = d->nstate / SIM_NQ;
  SUNMatZero(J);
  for (int f = 0; f < nfree; f++) {
    const double *blk = d->jself + (size_t)SIM_NB * f;
    for (int i = 0; i < SIM_NQ; i++) {
      for (int j = 0; j < SIM_NQ; j++) {
        SM_ELEMENT_D(J, SIM_NQ * f + i, SIM_NQ * f + j) = blk[SIM_NQ * i + j];
      }
    }
  }
  for (int k = 0; k < d->jn; k++) {
    const double *blk = d->jcross + (size_t)78 * k;
    int r0 = SIM_NQ * d->jrow[k] + 7, c0 = SIM_NQ * d->jcol[k];
    for (int i = 0; i < 6; i++) {
      for (int j = 0; j < SIM_NQ; j++) SM_ELEMENT_D(J, r0 + i, c0 + j) = blk[SIM_NQ * i + j];
    }
  }
}

// Blocks into the CSC matrix of KLU. Every free body's own block is stored whole, so the
// pattern changes only when the graph of bodies in contact does; then KLU is told to
// analyse it afresh (its symbolic factorisation, the only allocation on this path).
static void scatter_sparse(sim_data *d, SUNMatrix J) {
  int nfree = d->nstate / SIM_NQ;
  // cross blocks by column body (counting sort), then each column's rows ascending
  memset(d->jstart, 0, sizeof(int) * (size_t)(nfree + 1));
  for (int k = 0; k < d->jn; k++) d->jstart[d->jcol[k] + 1]++;
  for (int f = 0; f < nfree; f++) d->jstart[f + 1] += d->jstart[f];
  for (int k = 0; k < d->jn; k++) d->jorder[d->jstart[d->jcol[k]]++] = k;
  for (int f = nfree; f > 0; f--) d->jstart[f] = d->jstart[f - 1];
  d->jstart[0] = 0;
  for (int c = 0; c < nfree; c++) {
    for (int i = d->jstart[c] + 1; i < d->jstart[c + 1]; i++) {
      int k = d->jorder[i], j = i;
      for (; j > d->jstart[c] && d->jrow[d->jorder[j - 1]] > d->jrow[k]; j--) {
        d->jorder[j] = d->jorder[j - 1];
      }
      d->jorder[j] = k;
    }
  }
  sunindextype *colptr = SUNSparseMatrix_IndexPointers(J);
  sunindextype *rowval = SUNSparseMatrix_IndexValues(J);
  double *val = SUNSparseMatrix_Data(J);
  sunindextype nz = 0;
  for (int c = 0; c < nfree; c++) {
    for (int l = 0; l < SIM_NQ; l++) {
      colptr[SIM_NQ * c + l] = nz;
      int k = d->jstart[c], self_done = 0;
      while (k < d->jstart[c + 1] || !self_done) {
        int use_self = !self_done && (k >= d->jstart[c + 1] || c < d->jrow[d->jorder[k]]);
        if (use_self) {
          const double *blk = d->jself + (size_t)SIM_NB * c;
          for (int i = 0; i < SIM_NQ; i++) {
            rowval[nz] = SIM_NQ * c + i;
            val[nz++] = blk[SIM_NQ * i + l];
          }
          self_done = 1;
        } else {
          int b = d->jorder[k++];
          const double *blk = d->jcross + (size_t)78 * b;
          for (int i = 0; i < 6; i++) {
            rowval[nz] = SIM_NQ * d->jrow[b] + 7 + i;
            val[nz++] = blk[SIM_NQ * i + l];
          }
        }
      }
    }
  }
  colptr[d->nstate] = nz;
  // a new pattern: keep it and have KLU analyse it at its next set-up
  size_t npat = (size_t)d->nstate + 1 + (size_t)nz;
  int same = d->jpat[0] == (sunindextype)npat &&
             memcmp(d->jpat + 1, colptr, sizeof(sunindextype) * ((size_t)d->nstate + 1)) == 0 &&
             memcmp(d->jpat + 2 + d->nstate, rowval, sizeof(sunindextype) * (size_t)nz) == 0;
  if (!same) {
    d->jpat[0] = (sunindextype)npat;
    memcpy(d->jpat + 1, colptr, sizeof(sunindextype) * ((size_t)d->nstate + 1));
    memcpy(d->jpat + 2 + d->nstate, rowval, sizeof(sunindextype) * (size_t)nz);
    SUNLinSol_KLUReInit(d->ls, J, d->nnz, SUNKLU_REINIT_PARTIAL);
  }
}

// Analytic Jacobian of rhs: rigid-body terms exactly, contact springs with frozen
// witness points and normals (above). A Newton Jacobian may be approximate: CVODE's
// error control never sees it.
static int jac_fn(sunrealtype t, N_Vector yv, N_Vector fy, SUNMatrix J, void *user, N_Vector t1,
                  N_Vector t2, N_Vector t3) {
  (void)fy, (void)t1, (void)t2, (void)t3;
  sim_data *d = user;
  const sim_model *m = d->m;
  const double *y = N_VGetArrayPointer(yv);
  sim_kinematics k;
  int rc = eval_contacts(m, d, t, y, &k);  // also the progress call
  if (rc != 0) return rc;
  memset(d->jself, 0, sizeof(double) * (size_t)d->nstate * SIM_NQ);
  d->jn = 0;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s >= 0) body_jacobian(m, d, b, y, d->jself + (size_t)SIM_NB * (s / SIM_NQ));
  }
  add_contact_jacobian(m, d);
  if (d->sparse) {
    scatter_sparse(d, J);
  } else {
    scatter_dense(d, J);
  }
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
    d->kin_has_target[b] = 0;  // placed anew: a target it was heading for is gone
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
  d->kin_t0 = 0;
}

// ---- lifecycle ---------------------------------------------------------------------

static int cvode_setup(const sim_model *m, sim_data *d, char *err, size_t err_sz) {
  if (SUNContext_Create(NULL, &d->ctx) != 0) {
    ccsim_set_err(err, err_sz, "SUNContext_Create failed");
    return -1;
  }
  d->y = N_VNew_Serial(d->nstate, d->ctx);
  if (!d->y) {
    ccsim_set_err(err, err_sz, "out of memory (state vector)");
    return -1;
  }
  load_initial(m, d);
  if (d->nstate == 0) {
    return 0;  // nothing to integrate: time simply advances
  }
  d->cvode = CVodeCreate(CV_BDF, d->ctx);
  int nfree = d->nstate / SIM_NQ;
  d->sparse = m->linsolver == SIM_LINSOLVER_KLU ||
              (m->linsolver == SIM_LINSOLVER_AUTO && nfree > SIM_DENSE_MAX_FREE);
  d->jcap = SIM_CROSS_PER_BODY * nfree;
  d->jself = calloc((size_t)nfree * SIM_NB, sizeof(double));
  d->jrow = calloc((size_t)d->jcap, sizeof(int));
  d->jcol = calloc((size_t)d->jcap, sizeof(int));
  d->jcross = calloc((size_t)d->jcap * 78, sizeof(double));
  d->jorder = calloc((size_t)d->jcap, sizeof(int));
  d->jstart = calloc((size_t)nfree + 1, sizeof(int));
  if (!d->jself || !d->jrow || !d->jcol || !d->jcross || !d->jorder || !d->jstart) {
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

sim_data *sim_data_new(const sim_model *m, char *err, size_t err_sz) {
  if (!m) {
    ccsim_set_err(err, err_sz, "no model");
    return NULL;
  }
  sim_data *d = calloc(1, sizeof *d);
  if (!d) {
    ccsim_set_err(err, err_sz, "out of memory");
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
  d->input_used = calloc(nb * 6, sizeof(double));
  d->kin_target = calloc(nb * 7, sizeof(double));
  d->kin_has_target = calloc(nb, sizeof(int));
  d->kin_target_t = calloc(nb, sizeof(double));
  d->x_pos = calloc(nb * 3, sizeof(double));
  d->x_quat = calloc(nb * 4, sizeof(double));
  d->x_com = calloc(nb * 3, sizeof(double));
  d->x_vel = calloc(nb * 3, sizeof(double));
  d->x_omega = calloc(nb * 3, sizeof(double));
  d->wrench = calloc(nb * 6, sizeof(double));
  d->contact_time = NAN;
  if (!d->kin_pos || !d->kin_quat || !d->kin_vel || !d->kin_omega || !d->force_in ||
      !d->torque_in || !d->input_used || !d->kin_target || !d->kin_has_target || !d->kin_target_t ||
      !d->x_pos || !d->x_quat || !d->x_com || !d->x_vel || !d->x_omega || !d->wrench) {
    ccsim_set_err(err, err_sz, "out of memory");
    sim_data_destroy(&d);
    return NULL;
  }
  d->col = sim_collider_new(m, 0, err, err_sz);
  if (!d->col) {
    sim_data_destroy(&d);
    return NULL;
  }
  if (m->mode == SIM_MODE_RIGID) {
    if (!(d->rigid = sim_rigid_new(m, err, err_sz))) {
      sim_data_destroy(&d);
      return NULL;
    }
    sim_rigid_bind_inputs(d->rigid, d->force_in, d->torque_in);
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
  free(d->jself);
  free(d->jrow);
  free(d->jcol);
  free(d->jcross);
  free(d->jorder);
  free(d->jstart);
  free(d->jpat);
  free(d->kin_pos);
  free(d->kin_quat);
  free(d->kin_vel);
  free(d->kin_omega);
  free(d->force_in);
  free(d->torque_in);
  free(d->input_used);
  free(d->kin_target);
  free(d->kin_has_target);
  free(d->kin_target_t);
  free(d->x_pos);
  free(d->x_quat);
  free(d->x_com);
  free(d->x_vel);
  free(d->x_omega);
  free(d->wrench);
  sim_collider_destroy(&d->col);
  sim_collider_destroy(&d->qcol);
  sim_rigid_destroy(&d->rigid);
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
  const char *big = sim_input_out_of_range(force, torque);
  if (big) {
    snprintf(d->err, sizeof d->err, "input: body %d: %s", b, big);
    return CCSIM_EINVAL;
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

// Conservative advancement (Drumwright): the longest stretch from time t, within the
// horizon, over which no pair of bodies can close more than half its standoff, from the
// velocities at t plus what gravity and held forces can add. INFINITY when no pair is
// near. CVODE clamps its next step to a stop time but not to a new maximum step, so
// sim_step integrates such stretches one stop time at a time.
static double step_bound(const sim_model *m, sim_data *d, double t, double horizon) {
  if (!d->col) return INFINITY;
  sim_kinematics k;
  const double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  fill_kinematics(m, d, t, y, &k);
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

// Kinematic bodies reach time t: their pose advances with their twist (or snaps to the
// target the step asked for when t is the step's end).
static void advance_kinematic(const sim_model *m, sim_data *d, double t, int reached_end) {
  for (int b = 0; b < m->nbody; b++) {
    if (m->type[b] != SIM_BODY_KINEMATIC) continue;
    double pos[3], q[4];
    // the target lands exactly (no drift from the velocity's rounding) when its time is
    // reached; a request batched into sub-steps passes through on the way
    int arrive =
        reached_end && d->kin_has_target[b] && t >= d->kin_target_t[b] - 1e-9 * fmax(1.0, fabs(t));
    if (arrive) {
      memcpy(pos, d->kin_target + 7 * b, 3 * sizeof(double));
      memcpy(q, d->kin_target + 7 * b + 3, 4 * sizeof(double));
      d->kin_has_target[b] = 0;
    } else {
      kinematic_pose(d, b, t, pos, q);
    }
    // a failed step drops its targets: the body keeps the twist its target gave it (a
    // later step ending past the target's time would snap it back, a jump; and no
    // checkpoint holds a pending target)
    if (!reached_end) d->kin_has_target[b] = 0;
    geo_v3_copy(d->kin_pos + 3 * b, pos);
    memcpy(d->kin_quat + 4 * b, q, sizeof q);
  }
  d->kin_t0 = t;
}

// Kinematic body b moves with constant velocities from its pose now to (pos, q), unit,
// which it reaches dt later.
static void kinematic_target(sim_data *d, int b, const double pos[3], const double q[4],
                             double dt) {
  double v[3], w[3], *v0 = d->kin_vel + 3 * b, *w0 = d->kin_omega + 3 * b;
  sim_twist_between(d->kin_pos + 3 * b, d->kin_quat + 4 * b, pos, q, dt, v, w);
  // a jump of a pusher's velocity is a discontinuity like a jump of a held force (see
  // sim_set_input): restart a frictional plant there; the chords of a straight path
  // differ only by rounding and keep the history
  if (sim_friction_active(d->col) && (geo_v3_dist(v, v0) > 1e-9 * (1e-3 + geo_v3_norm(v0)) ||
                                      geo_v3_dist(w, w0) > 1e-9 * (1e-3 + geo_v3_norm(w0)))) {
    d->need_reinit = 1;
  }
  geo_v3_copy(v0, v);
  geo_v3_copy(w0, w);
  memcpy(d->kin_target + 7 * b, pos, 3 * sizeof(double));
  memcpy(d->kin_target + 7 * b + 3, q, 4 * sizeof(double));
  d->kin_has_target[b] = 1;
  d->kin_target_t[b] = d->time + dt;
}

ccsim_status sim_step(const sim_model *m, sim_data *d, double t_out) {
  if (!isfinite(t_out) || !(t_out > d->time)) {
    snprintf(d->err, sizeof d->err, "step: target time %g must be finite and after %g", t_out,
             d->time);
    return CCSIM_EINVAL;
  }
  // path-driven bodies run the chord to where their path is at the step's end: a waypoint
  // inside the step is cut, the rest of the path is followed exactly at every step's end
  for (int b = 0; b < m->nbody; b++) {
    if (m->path_n[b] == 0) continue;
    double pos[3], q[4];
    sim_model_path_pose(m, b, t_out, pos, q);
    kinematic_target(d, b, pos, q, t_out - d->time);
  }
  uint64_t t0 = now_ns();
  d->stopped = 0;
  if (d->rigid) {
    double reached = d->time;
    ccsim_status st = sim_rigid_step(m, d, d->rigid, d->time, t_out, &reached);
    advance_kinematic(m, d, reached, st == CCSIM_OK);
    d->time = reached;
    // the step's contacts (impulse / h) are the report of this state
    d->contact_time = st == CCSIM_OK ? d->time : NAN;
    if (st != CCSIM_OK) {
      snprintf(d->err, sizeof d->err, "rigid step failed at t = %.9g: %s", reached,
               sim_rigid_errmsg(d->rigid));
    }
    d->stats.physics_ns += now_ns() - t0;
    return st;
  }
  if (d->nstate == 0) {
    advance_kinematic(m, d, t_out, 1);
    d->time = t_out;
    d->stats.physics_ns += now_ns() - t0;
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
    if (sim_data_progress(d)) {
      flag = CV_TOO_MUCH_WORK;  // y is at t, where the last stretch ended
      tret = t;
      break;
    }
    double h = step_bound(m, d, t, t_out - t);
    double t_next = isfinite(h) && t + h < t_out ? t + h : t_out;
    CVodeSetStopTime(d->cvode, t_next);
    if (!commit) {
      flag = CVode(d->cvode, t_next, d->y, &tret, CV_NORMAL);
    } else {
      // friction: one internal step at a time, the anchors move on after each accepted one
      do {
        flag = CVode(d->cvode, t_next, d->y, &tret, CV_ONE_STEP);
        if (flag >= 0 && commit_anchors(m, d, tret)) {
          // a contact broke away and its force dropped to sliding friction: restart there
          if (CVodeReInit(d->cvode, tret, d->y) != CV_SUCCESS) flag = CV_MEM_FAIL;
          CVodeSetStopTime(d->cvode, t_next);
          d->stats.friction_restarts++;
        }
      } while (flag >= 0 && tret < t_next);
    }
    // the corrector moved y after the RHS's last evaluation: its contacts are stale
    d->contact_time = NAN;
    if (flag < 0) break;
    t = t_next;  // CV_TSTOP_RETURN: exactly there
  }
  harvest_stats(d, base);
  if (flag < 0) {
    // CVODE leaves y at its last accepted step (tret); restart from there next time
    if (d->stopped) {
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
    advance_kinematic(m, d, tret, 0);
    d->time = tret;
    d->need_reinit = 1;
    d->stats.physics_ns += now_ns() - t0;
    return d->stopped ? CCSIM_ELIMIT : CCSIM_ESOLVER;
  }
  advance_kinematic(m, d, t_out, 1);
  d->time = t_out;
  d->stats.anchors = (uint32_t)sim_friction_anchors(d->col);
  d->stats.physics_ns += now_ns() - t0;
  return CCSIM_OK;
}

ccsim_status sim_set_kinematic(const sim_model *m, sim_data *d, int b, const double *pos,
                               const double *quat, const double vel[3], const double omega[3],
                               double dt) {
  if (b < 0 || b >= m->nbody || m->type[b] != SIM_BODY_KINEMATIC) {
    snprintf(d->err, sizeof d->err, "kinematic input: body %d is not a kinematic body", b);
    return CCSIM_EINVAL;
  }
  if (m->path_n[b] > 0) {
    snprintf(d->err, sizeof d->err, "kinematic input: body %d (\"%s\") follows its scene path", b,
             m->name[b]);
    return CCSIM_EINVAL;
  }
  if (pos && quat) {
    double q[4] = {quat[0], quat[1], quat[2], quat[3]}, qn = geo_quat_normalize(q);
    if (!isfinite(dt) || !(dt > 0) || !isfinite(qn) || qn == 0 || !isfinite(pos[0]) ||
        !isfinite(pos[1]) || !isfinite(pos[2])) {
      snprintf(d->err, sizeof d->err, "kinematic input: body %d: pose must be finite, dt > 0", b);
      return CCSIM_EINVAL;
    }
    kinematic_target(d, b, pos, q, dt);
    return CCSIM_OK;
  }
  for (int j = 0; j < 3; j++) {
    if (!isfinite(vel[j]) || !isfinite(omega[j])) {
      snprintf(d->err, sizeof d->err, "kinematic input: body %d: twist must be finite", b);
      return CCSIM_EINVAL;
    }
  }
  geo_v3_copy(d->kin_vel + 3 * b, vel);
  geo_v3_copy(d->kin_omega + 3 * b, omega);
  d->kin_has_target[b] = 0;
  return CCSIM_OK;
}

ccsim_status sim_eval_contacts(const sim_model *m, sim_data *d) {
  if (d->col && d->contact_time == d->time) {
    return CCSIM_OK;  // already evaluated at this state
  }
  if (d->rigid) {
    // rigid mode: Baraff's instantaneous forces at this state
    int n = 0;
    ccsim_status st = sim_rigid_contact_forces(m, d, d->rigid, d->time, &n);
    if (st != CCSIM_OK) {
      snprintf(d->err, sizeof d->err, "contacts: %s", sim_rigid_errmsg(d->rigid));
      return st;
    }
    d->contact_time = d->time;
    return CCSIM_OK;
  }
  sim_kinematics k;
  const double *y = d->nstate ? N_VGetArrayPointer(d->y) : NULL;
  d->contact_status = CCSIM_OK;
  d->stopped = 0;
  int rc = eval_contacts(m, d, d->time, y, &k);
  if (rc != 0) {
    snprintf(d->err, sizeof d->err, "contacts: %s",
             d->stopped ? "stopped by the progress function" : sim_collider_errmsg(d->col));
    return rc > 0 ? CCSIM_ESOLVER : d->contact_status;
  }
  return CCSIM_OK;
}

const sim_contact *sim_data_contacts(const sim_data *d, int *n) {
  *n = 0;
  if (!d->col || d->contact_time != d->time) return NULL;
  if (d->rigid) return sim_rigid_contacts(d->rigid, n);
  return sim_collider_contacts(d->col, n);
}

void sim_data_body_contact(const sim_model *m, const sim_data *d, int b, double force[3],
                           double torque[3], int *count) {
  geo_v3_set(force, 0, 0, 0);
  geo_v3_set(torque, 0, 0, 0);
  *count = 0;
  int n = 0;
  const sim_contact *c = sim_data_contacts(d, &n);
  double pos[3];
  sim_get_body(m, d, b, pos, NULL, NULL, NULL);
  for (int i = 0; i < n; i++) {
    if (c[i].force <= 0 || (c[i].body_a != b && c[i].body_b != b)) continue;
    double f[3], r[3], t[3];
    int on_b = c[i].body_b == b;
    geo_v3_scale(f, c[i].normal, c[i].force);
    geo_v3_add(f, f, c[i].friction);  // the force on B
    if (!on_b) geo_v3_scale(f, f, -1.0);
    geo_v3_sub(r, on_b ? c[i].pb : c[i].pa, pos);
    geo_v3_cross(t, r, f);
    geo_v3_add(force, force, f);
    geo_v3_add(torque, torque, t);
    (*count)++;
  }
}

ccsim_status sim_check_body(const sim_model *m, sim_data *d, int b, const double pos[3],
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
  const char *range = sim_motion_out_of_range(pos, vel, omega);
  if (range) {
    snprintf(d->err, sizeof d->err, "set state: body %d: %s", b, range);
    return CCSIM_EINVAL;
  }
  return CCSIM_OK;
}

ccsim_status sim_set_body(const sim_model *m, sim_data *d, int b, const double pos[3],
                          const double quat[4], const double vel[3], const double omega[3]) {
  ccsim_status st = sim_check_body(m, d, b, pos, quat, vel, omega);
  if (st != CCSIM_OK) return st;
  put_body(m, d, b, pos, quat, vel, omega);
  d->need_reinit = 1;
  // a body placed anew has no history of contact: its anchors go
  if (d->col) sim_friction_clear(d->col, b);
  d->contact_time = NAN;
  sim_rigid_reset(d->rigid);
  return CCSIM_OK;
}

ccsim_status sim_set_time(const sim_model *m, sim_data *d, double t) {
  (void)m;
  if (!isfinite(t) || t < 0) {
    snprintf(d->err, sizeof d->err, "set state: time %g must be finite and >= 0", t);
    return CCSIM_EINVAL;
  }
  d->time = t;
  d->kin_t0 = t;
  d->need_reinit = 1;
  sim_rigid_reset(d->rigid);
  return CCSIM_OK;
}

void sim_reset(const sim_model *m, sim_data *d) {
  load_initial(m, d);
  sim_clear_inputs(m, d);
  if (d->col) sim_friction_clear(d->col, -1);
  d->contact_time = NAN;
  d->need_reinit = 1;
  sim_rigid_reset(d->rigid);
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
// arrays as stored (not converted, so a round trip is exact), then inputs (6 per body),
// then the friction anchors (sim_friction_snapshot_get; absent in snapshots taken before
// friction existed, which restore without anchors)
static size_t snapshot_base(const sim_model *m) { return 1 + (size_t)m->nbody * (13 + 6); }

size_t sim_snapshot_size(const sim_model *m, const sim_data *d) {
  return snapshot_base(m) + sim_friction_snapshot_size(d->col);
}

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
  sim_friction_snapshot_get(d->col, buf + snapshot_base(m));
}

ccsim_status sim_snapshot_check(const sim_model *m, const double *buf, size_t n, char *err,
                                size_t err_sz) {
  size_t base = snapshot_base(m);
  if (n < base) {
    ccsim_set_err(err, err_sz, "snapshot: %zu values, the scene needs at least %zu", n, base);
    return CCSIM_EINVAL;
  }
  for (size_t i = 0; i < base; i++) {
    if (!isfinite(buf[i])) {
      ccsim_set_err(err, err_sz, "snapshot: value %zu is not finite", i);
      return CCSIM_EINVAL;
    }
  }
  if (buf[0] < 0) {
    ccsim_set_err(err, err_sz, "snapshot: negative time");
    return CCSIM_EINVAL;
  }
  // the held inputs, bounded as a Step's are (else a crafted checkpoint would bring back
  // what no Step may set)
  const double *in = buf + 1 + 13 * (size_t)m->nbody;
  for (int b = 0; b < m->nbody; b++) {
    const char *big = sim_input_out_of_range(in + 3 * b, in + 3 * (m->nbody + b));
    if (big) {
      ccsim_set_err(err, err_sz, "snapshot: body %d's held input: %s", b, big);
      return CCSIM_EINVAL;
    }
  }
  return CCSIM_OK;
}

ccsim_status sim_snapshot_set(const sim_model *m, sim_data *d, const double *buf, size_t n) {
  size_t base = snapshot_base(m);
  if (sim_snapshot_check(m, buf, n, d->err, sizeof d->err) != CCSIM_OK) {
    return CCSIM_EINVAL;
  }
  ccsim_status fs =
      n > base ? sim_friction_snapshot_set(m, d->col, buf + base, n - base) : CCSIM_OK;
  if (fs != CCSIM_OK) {
    if (fs == CCSIM_ENOMEM) {
      snprintf(d->err, sizeof d->err, "snapshot: out of memory for the friction anchors");
    } else {
      snprintf(d->err, sizeof d->err,
               "snapshot: the friction anchors (values %zu..%zu) are malformed", base, n - 1);
    }
    return fs;
  }
  if (n == base && d->col) sim_friction_clear(d->col, -1);
  const double *in = buf;
  d->time = *in++;
  d->kin_t0 = d->time;
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
      d->kin_has_target[b] = 0;  // a snapshot is taken between requests: none pending
    }
    in += 13;
  }
  memcpy(d->force_in, in, 3 * sizeof(double) * (size_t)m->nbody);
  memcpy(d->torque_in, in + 3 * m->nbody, 3 * sizeof(double) * (size_t)m->nbody);
  sim_restart(m, d);  // as a new session's: two restored alike step alike
  return CCSIM_OK;
}

void sim_restart(const sim_model *m, sim_data *d) {
  (void)m;
  d->need_reinit = 1;
  sim_collider_forget(d->col);
  d->contact_time = NAN;
  sim_rigid_reset(d->rigid);
}

size_t sim_state_size(const sim_model *m) { return (size_t)SIM_NQ * (size_t)m->nfree; }

void sim_get_state(const sim_model *m, const sim_data *d, double *y) {
  if (d->nstate) memcpy(y, N_VGetArrayPointer(d->y), sim_state_size(m) * sizeof(double));
}

ccsim_status sim_eval_derivatives(const sim_model *m, sim_data *d, const double *y,
                                  double *ydot, double *jac) {
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
  d->stopped = 0;  // a stop asked of an earlier step is not this evaluation's
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

double *sim_data_state(sim_data *d) { return d->nstate ? N_VGetArrayPointer(d->y) : NULL; }

sim_collider *sim_data_collider(sim_data *d) { return d->col; }

void sim_data_kinematics_at(const sim_model *m, sim_data *d, double t, sim_kinematics *k) {
  fill_kinematics(m, d, t, sim_data_state(d), k);
}

sim_stats *sim_data_stats_mut(sim_data *d) { return &d->stats; }

ccsim_status sim_eval_contacts_at(const sim_model *m, sim_data *d, const int *given,
                                  const double *pos, const double *quat, const double *vel,
                                  const double *omega, const sim_contact **contacts, int *n) {
  *contacts = NULL;
  *n = 0;
  if (!d->col) return CCSIM_OK;
  if (d->rigid) {
    snprintf(d->err, sizeof d->err, "contacts at given poses: not available in rigid mode");
    return CCSIM_ENOTIMPL;
  }
  // a collider of its own: the session's holds the coherence caches the next step starts
  // from, and they steer its rounding; the anchors (stiction) are the session's
  if (!d->qcol && !(d->qcol = sim_collider_new(m, 0, d->err, sizeof d->err))) {
    return CCSIM_ENOMEM;
  }
  if (sim_friction_copy(d->qcol, d->col) != CCSIM_OK) {
    snprintf(d->err, sizeof d->err, "contacts at given poses: out of memory for the anchors");
    return CCSIM_ENOMEM;
  }
  sim_kinematics k;
  fill_kinematics(m, d, d->time, sim_data_state(d), &k);
  // move the given bodies in the evaluation scratch (every right-hand side fills it
  // anew); d's state and integrator stay as they are. Without a given twist a body keeps
  // its centre of mass's velocity and its angular velocity.
  for (int b = 0; b < m->nbody; b++) {
    if (!(given[b] & SIM_GIVEN_POSE)) continue;
    double q[4] = {quat[4 * b], quat[4 * b + 1], quat[4 * b + 2], quat[4 * b + 3]}, R[9], rc[3];
    if (geo_quat_normalize(q) == 0) q[0] = 1;
    geo_v3_copy(d->x_pos + 3 * b, pos + 3 * b);
    memcpy(d->x_quat + 4 * b, q, sizeof q);
    geo_quat_to_mat(R, q);
    geo_m3_mulv(rc, R, m->com + 3 * b);
    geo_v3_add(d->x_com + 3 * b, pos + 3 * b, rc);
    if (given[b] & SIM_GIVEN_TWIST) {
      // the scratch holds the centre of mass's velocity: v_com = v_origin + w x r_com
      double wxr[3];
      geo_v3_copy(d->x_omega + 3 * b, omega + 3 * b);
      geo_v3_cross(wxr, omega + 3 * b, rc);
      geo_v3_add(d->x_vel + 3 * b, vel + 3 * b, wxr);
    }
  }
  memset(d->wrench, 0, sizeof(double) * 6 * (size_t)m->nbody);
  ccsim_status st = sim_collide(m, d->qcol, &k, d->wrench);
  if (st != CCSIM_OK) {
    snprintf(d->err, sizeof d->err, "contacts at given poses: %s", sim_collider_errmsg(d->qcol));
    return st;
  }
  *contacts = sim_collider_contacts(d->qcol, n);
  return CCSIM_OK;
}
