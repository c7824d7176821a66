#include "sim_rigid.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"
#include "sim_dantzig.h"
#include "sim_lemke.h"

#define TOUCH_RETRIES 12      // step quarterings when a step ends with bodies touching
#define BOUND_PASSES 4        // re-solves when the new velocities ask for a shorter step

// identity of a contact across steps, for Dantzig's warm start
typedef struct contact_key {
  int a, b, fa_type, fa_id, fb_type, fb_id;
} contact_key;

struct sim_rigid {
  int nbody;
  const double *force_in, *torque_in;  // borrowed (nbody x 3) held inputs, or NULL
  double *u;        // (nbody x 6) COM velocity and angular velocity (world), or their rates
  double *vel_new;  // (nbody x 3) COM velocity after the step's impulses [m/s]
  double *om_new;   // (nbody x 3) angular velocity after them, world [rad/s]
  double *R;        // (nbody x 9) rotations (row-major) at the step's start
  double *wrench;   // (nbody x 6) scratch for sim_collide's compliant wrenches (ignored)
  double *y_save;   // (nstate) state at the step's start, for retries
  double *imp;      // (nbody x 6) the step's contact impulses, added to io->impulse once
                    // the step is kept
  size_t nstate;
  // contacts of the last step or query (copies: the collider is overwritten)
  int ccap, nc;
  sim_contact *con;   // (ccap)
  int *frow;          // (ccap) first friction row of a contact, -1 without friction, -2
                      // sliding (instantaneous forces: its friction is -mu f_n along slip)
  double *slip;       // (ccap x 3) unit slip direction of b's point relative to a's (frow -2)
  double *mu;         // (ccap) friction coefficient of the contact's body pair
  contact_key *key;   // (ccap) keys of con
  contact_key *pkey;  // (ccap) keys of the previous Dantzig solve
  unsigned char *pclamp;  // (ccap) its clamped set
  int npkey;
  unsigned char *keep;    // (ccap) scratch of the contact reduction
  double *scr;            // (ccap) spare scratch
  double *rel;            // (ccap x 6) con's points in their bodies' frames (a's, b's)
  // the LCP, rows: nc normal, nf * d friction, nf lambda
  int rcap, nrow, nvel;  // capacity, rows, velocity rows (normal + friction)
  int rows_want;      // rows a step asked for past rcap (sim_rigid_reserve grows to them)
  int frictional;     // some collidable pair has mu > 0: Lemke's workspace is needed
  int *rcon;          // (rcap) contact of a velocity row
  double *G;          // (rcap x 12) row Jacobian on (v_A, w_A, v_B, w_B) (world)
  double *W;          // (rcap x 12) M^-1 G^T on the same slots (zero for non-free bodies)
  double *A;          // (rcap x rcap) column-major
  double *q, *z, *w;  // (rcap)
  double *dsc;        // (rcap) row and column scaling of the frictional LCP
  double scale;       // the s of the last build_lcp (step h [s], or 1)
  unsigned char *clamp;  // (rcap)
  sim_dantzig *dz;
  sim_lemke *lk;
  int no_friction;    // 1 while a step falls back to its frictionless LCP
  int sliding;        // contacts of the last build_lcp with frow -2 (A unsymmetric)
  char err[256];
};

// ---- capacities: set at sim_rigid_new (contacts: all the collider can report; LCP rows:
// what the model's pairs can ask for, up to SIM_RIGID_ROWS_FIRST) and grown only between
// steps (sim_rigid_reserve), so a step allocates nothing --------------------------------

static void free_rows(sim_rigid *r);
static void free_contacts(sim_rigid *r);

// the contact arrays for cap contacts (the collider's capacity: a step copies them all)
static int alloc_contacts(sim_rigid *r, int cap) {
  size_t c = cap > 0 ? (size_t)cap : 1;
  r->con = malloc(c * sizeof *r->con);
  r->frow = malloc(c * sizeof *r->frow);
  r->mu = malloc(c * sizeof *r->mu);
  r->key = malloc(c * sizeof *r->key);
  r->pkey = malloc(c * sizeof *r->pkey);
  r->pclamp = malloc(c);
  r->keep = malloc(c);
  r->scr = malloc(c * sizeof *r->scr);
  r->rel = malloc(c * 6 * sizeof *r->rel);
  r->slip = malloc(c * 3 * sizeof *r->slip);
  if (!r->con || !r->frow || !r->mu || !r->key || !r->pkey || !r->pclamp || !r->keep ||
      !r->scr || !r->rel || !r->slip) {
    snprintf(r->err, sizeof r->err, "rigid mode: out of memory for %d contacts", cap);
    free_contacts(r);
    return -1;
  }
  r->ccap = (int)c;
  return 0;
}

// LCP rows model m's contacts can ask for at once (frictional pairs keep at most 27
// contacts, each with 1 + d + 1 rows), up to SIM_RIGID_ROWS_FIRST; notes whether any pair
// has friction
static int rows_first(sim_rigid *r, const sim_model *m) {
  double rows = 0;
  for (int a = 0; a < m->nbody; a++) {
    for (int b = a + 1; b < m->nbody; b++) {
      int n = sim_contact_pair_capacity(m, a, b, 0);
      if (n == 0) continue;
      sim_contact_params cp;
      sim_pair_params(m, a, b, &cp);
      if (cp.mu > 0) r->frictional = 1;
      rows += cp.mu > 0 ? (double)(n < 27 ? n : 27) * (2 + m->friction_dirs) : n;
    }
  }
  return rows < 1 ? 1 : rows < SIM_RIGID_ROWS_FIRST ? (int)rows : SIM_RIGID_ROWS_FIRST;
}

// the LCP arrays and solvers for cap rows (what was there is dropped)
static int alloc_rows(sim_rigid *r, int cap) {
  free_rows(r);
  sim_dantzig_destroy(&r->dz);
  sim_lemke_destroy(&r->lk);
  size_t c = (size_t)cap;
  r->rcon = malloc(c * sizeof(int));
  r->G = malloc(c * 12 * sizeof(double));
  r->W = malloc(c * 12 * sizeof(double));
  r->A = malloc(c * c * sizeof(double));
  r->q = malloc(c * sizeof(double));
  r->z = malloc(c * sizeof(double));
  r->w = malloc(c * sizeof(double));
  r->dsc = malloc(c * sizeof(double));
  r->clamp = malloc(c);
  sim_dantzig_opts dzo = sim_dantzig_opts_default();
  dzo.verify_tol = SIM_RIGID_VERIFY_TOL;
  r->dz = sim_dantzig_new(cap, &dzo, NULL, 0);
  // frictionless scenes never build a frictional LCP (no friction rows, nothing slides)
  sim_lemke_opts lko = sim_lemke_opts_default();
  lko.verify_tol = SIM_RIGID_VERIFY_TOL;
  if (r->frictional) r->lk = sim_lemke_new(cap, &lko, NULL, 0);
  if (!r->rcon || !r->G || !r->W || !r->A || !r->q || !r->z || !r->w || !r->dsc || !r->clamp ||
      !r->dz || (r->frictional && !r->lk)) {
    free_rows(r);
    sim_dantzig_destroy(&r->dz);
    sim_lemke_destroy(&r->lk);
    snprintf(r->err, sizeof r->err, "rigid mode: out of memory for an LCP of %d rows", cap);
    return -1;
  }
  r->rcap = cap;
  return 0;
}

// A step's contacts fit (the collider never reports more than its capacity, which is ccap)
static int ensure_contacts(sim_rigid *r, int nc) {
  if (nc <= r->ccap) return 0;
  snprintf(r->err, sizeof r->err, "rigid mode: %d contacts, more than the capacity of %d", nc,
           r->ccap);
  return -2;
}

// A step's LCP fits: -2 (CCSIM_ELIMIT) past SIM_RIGID_ROWS_MAX or past the room reserved,
// which then grows to it before the next step (sim_rigid_reserve)
static int ensure_rows(sim_rigid *r, int n) {
  if (n > SIM_RIGID_ROWS_MAX) {
    snprintf(r->err, sizeof r->err,
             "rigid mode: the contact LCP would have %d rows (limit %d): too many contacts", n,
             SIM_RIGID_ROWS_MAX);
    return -2;
  }
  if (n <= r->rcap) return 0;
  if (n > r->rows_want) r->rows_want = n;
  snprintf(r->err, sizeof r->err,
           "rigid mode: the contact LCP needs %d rows, more than the %d reserved (sim_step grows "
           "to it for the next step; limit SIM_RIGID_ROWS_MAX = %d)",
           n, r->rcap, SIM_RIGID_ROWS_MAX);
  return -2;
}

sim_rigid *sim_rigid_new(const sim_model *m, char *err, size_t err_sz) {
  sim_rigid *r = calloc(1, sizeof *r);
  if (!r) {
    ccsim_set_err(err, err_sz, "rigid mode: out of memory");
    return NULL;
  }
  size_t nb = m->nbody > 0 ? (size_t)m->nbody : 1;
  r->nbody = m->nbody;
  r->nstate = (size_t)SIM_NQ * (size_t)m->nfree;
  r->u = calloc(nb * 6, sizeof(double));
  r->vel_new = calloc(nb * 3, sizeof(double));
  r->om_new = calloc(nb * 3, sizeof(double));
  r->R = calloc(nb * 9, sizeof(double));
  r->wrench = calloc(nb * 6, sizeof(double));
  r->y_save = calloc(r->nstate > 0 ? r->nstate : 1, sizeof(double));
  r->imp = calloc(nb * 6, sizeof(double));
  if (!r->u || !r->vel_new || !r->om_new || !r->R || !r->wrench || !r->y_save || !r->imp ||
      alloc_contacts(r, sim_contact_capacity(m, 0)) != 0 ||
      alloc_rows(r, rows_first(r, m)) != 0) {
    ccsim_set_err(err, err_sz, "%s", r->err[0] ? r->err : "rigid mode: out of memory");
    sim_rigid_destroy(&r);
    return NULL;
  }
  return r;
}

static void free_rows(sim_rigid *r) {
  free(r->rcon), free(r->G), free(r->W), free(r->A), free(r->q), free(r->z), free(r->w);
  free(r->dsc);
  r->dsc = NULL;
  free(r->clamp);
  r->rcon = NULL, r->G = r->W = r->A = r->q = r->z = r->w = NULL, r->clamp = NULL;
  r->rcap = 0;
}

static void free_contacts(sim_rigid *r) {
  free(r->con), free(r->frow), free(r->mu), free(r->key), free(r->pkey);
  free(r->pclamp), free(r->keep), free(r->scr), free(r->rel), free(r->slip);
  r->con = NULL, r->mu = r->scr = r->rel = r->slip = NULL, r->frow = NULL;
  r->key = r->pkey = NULL;
  r->pclamp = r->keep = NULL;
  r->ccap = r->nc = r->npkey = 0;
}

void sim_rigid_destroy(sim_rigid **pr) {
  if (!pr || !*pr) return;
  sim_rigid *r = *pr;
  free(r->u), free(r->vel_new), free(r->om_new), free(r->R), free(r->wrench), free(r->y_save);
  free(r->imp);
  free_rows(r);
  free_contacts(r);
  sim_dantzig_destroy(&r->dz);
  sim_lemke_destroy(&r->lk);
  free(r);
  *pr = NULL;
}

ccsim_status sim_rigid_reserve(sim_rigid *r) {
  if (r->rows_want <= r->rcap) return CCSIM_OK;
  int old = r->rcap, cap = old > 0 ? old : 1;
  while (cap < r->rows_want) cap = cap > SIM_RIGID_ROWS_MAX / 2 ? SIM_RIGID_ROWS_MAX : 2 * cap;
  r->rows_want = 0;
  if (alloc_rows(r, cap) == 0) return CCSIM_OK;
  // keep the room there was, so the session steps on as before
  char why[sizeof r->err];
  memcpy(why, r->err, sizeof why);
  if (old > 0 && alloc_rows(r, old) == 0) memcpy(r->err, why, sizeof why);
  return CCSIM_ENOMEM;
}

int sim_rigid_wants_room(const sim_rigid *r) { return r->rows_want > r->rcap; }

void sim_rigid_reset(sim_rigid *r) {
  if (r) r->npkey = 0;
}

void sim_rigid_bind_inputs(sim_rigid *r, const double *force, const double *torque) {
  r->force_in = force;
  r->torque_in = torque;
}

const char *sim_rigid_errmsg(const sim_rigid *r) { return r ? r->err : "no rigid workspace"; }

const sim_contact *sim_rigid_contacts(const sim_rigid *r, int *n) {
  *n = r->nc;
  return r->con;
}

// ---- dynamics ----------------------------------------------------------------------

// out = R I^-1 R^T a: the world-frame inverse inertia of body b applied to a
static void inv_inertia_world(const sim_model *m, const double R[9], int b, const double a[3],
                              double out[3]) {
  double t[3], s[3];
  geo_m3_tmulv(t, R, a);
  geo_m3_mulv(s, m->inertia_inv + 9 * b, t);
  geo_m3_mulv(out, R, s);
}

// w' with I (w' - w) + h w' x (I w') = h tau (body frame), by one Newton step from w: the
// implicit gyroscopic term keeps a tumbling body's energy from growing as explicit Euler
// would make it.
static void gyro_implicit(const sim_model *m, int b, const double w[3], const double tau[3],
                          double h, double out[3]) {
  const double *I = m->inertia + 9 * b;
  double Iw[3], f[3], J[9], Sw[9], SIw[9], SwI[9];
  geo_m3_mulv(Iw, I, w);
  geo_v3_cross(f, w, Iw);
  for (int j = 0; j < 3; j++) f[j] = h * (f[j] - tau[j]);
  // J = I + h ([w]x I - [I w]x)
  const double sw[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
  const double siw[9] = {0, -Iw[2], Iw[1], Iw[2], 0, -Iw[0], -Iw[1], Iw[0], 0};
  memcpy(Sw, sw, sizeof Sw);
  memcpy(SIw, siw, sizeof SIw);
  geo_m3_mul(SwI, Sw, I);
  for (int j = 0; j < 9; j++) J[j] = I[j] + h * (SwI[j] - SIw[j]);
  // out = w - J^-1 f (Cramer's rule on the 3 x 3)
  double c0[3] = {J[4] * J[8] - J[5] * J[7], J[5] * J[6] - J[3] * J[8], J[3] * J[7] - J[4] * J[6]};
  double det = J[0] * c0[0] + J[1] * c0[1] + J[2] * c0[2];
  if (!(fabs(det) > 0) || !isfinite(det)) {
    geo_v3_copy(out, w);
    return;
  }
  double inv[9] = {c0[0], J[2] * J[7] - J[1] * J[8], J[1] * J[5] - J[2] * J[4],
                   c0[1], J[0] * J[8] - J[2] * J[6], J[2] * J[3] - J[0] * J[5],
                   c0[2], J[1] * J[6] - J[0] * J[7], J[0] * J[4] - J[1] * J[3]};
  double dw[3];
  geo_m3_mulv(dw, inv, f);
  for (int j = 0; j < 3; j++) out[j] = w[j] - dw[j] / det;
}

// Per body into r->u: free bodies' COM velocity and angular velocity (world) after h of
// gravity, held inputs and gyroscopic torque without contacts (rates = 0: their
// accelerations instead, for Baraff's LCP); non-free bodies' motion as k gives it (rates:
// the centripetal acceleration of their COM).
static void free_motion(const sim_model *m, const sim_rigid_io *io, sim_rigid *r,
                        const sim_kinematics *k, double h, int rates) {
  const double *y = io->y;
  for (int b = 0; b < m->nbody; b++) {
    double *u = r->u + 6 * b, *R = r->R + 9 * b;
    geo_quat_to_mat(R, k->quat + 4 * b);
    int s = m->state_index[b];
    if (s < 0) {
      if (!rates) {
        geo_v3_copy(u, k->vel + 3 * b);
        geo_v3_copy(u + 3, k->omega + 3 * b);
      } else {
        double rc[3], wr[3];
        geo_v3_sub(rc, k->com + 3 * b, k->pos + 3 * b);
        geo_v3_cross(wr, k->omega + 3 * b, rc);
        geo_v3_cross(u, k->omega + 3 * b, wr);
        geo_v3_set(u + 3, 0, 0, 0);
      }
      continue;
    }
    const double *v = y + s + 7, *wb = y + s + 10, *I = m->inertia + 9 * b;
    double f[3] = {0, 0, 0}, tau[3] = {0, 0, 0};
    if (r->force_in) geo_v3_copy(f, r->force_in + 3 * b);
    if (r->torque_in) geo_v3_copy(tau, r->torque_in + 3 * b);
    double acc[3], taub[3], Iw[3], gyro[3], rhs[3], wdot[3];
    for (int j = 0; j < 3; j++) acc[j] = m->gravity[j] + f[j] / m->mass[b];
    // Euler's equations in the body frame: I wdot = R^T tau - w x (I w)
    geo_m3_tmulv(taub, R, tau);
    geo_m3_mulv(Iw, I, wb);
    geo_v3_cross(gyro, wb, Iw);
    geo_v3_sub(rhs, taub, gyro);
    geo_m3_mulv(wdot, m->inertia_inv + 9 * b, rhs);
    if (rates) {
      geo_v3_copy(u, acc);
      geo_m3_mulv(u + 3, R, wdot);  // d(R w)/dt = R (w x w) + R wdot = R wdot
    } else {
      double wf[3];
      geo_v3_madd(u, v, h, acc);
      gyro_implicit(m, b, wb, taub, h, wf);
      geo_m3_mulv(u + 3, R, wf);
    }
  }
}

// The tangential part of contact ct's relative motion (b's point's against a's) into out,
// from each body's linear and angular motion (lin + 3 b, ang + 3 b: velocities, or rates)
static void tangential_motion(const sim_kinematics *k, const sim_contact *ct, const double *lin,
                              const double *ang, size_t stride, double out[3]) {
  int body[2] = {ct->body_a, ct->body_b};
  const double *p[2] = {ct->pa, ct->pb};
  double v[2][3];
  for (int s = 0; s < 2; s++) {
    double rr[3], wr[3];
    geo_v3_sub(rr, p[s], k->com + 3 * body[s]);
    geo_v3_cross(wr, ang + stride * (size_t)body[s], rr);
    geo_v3_add(v[s], lin + stride * (size_t)body[s], wr);
  }
  double vr[3];
  geo_v3_sub(vr, v[1], v[0]);
  geo_v3_reject(out, vr, ct->normal);
}

// fill velocity row `row` of contact c along the world direction e
static void set_row(const sim_model *m, sim_rigid *r, const sim_kinematics *k, int row, int c,
                    const double e[3]) {
  const sim_contact *ct = &r->con[c];
  double *G = r->G + 12 * row, *W = r->W + 12 * row;
  int body[2] = {ct->body_a, ct->body_b};
  const double *p[2] = {ct->pa, ct->pb};
  for (int side = 0; side < 2; side++) {
    int b = body[side];
    double sgn = side == 0 ? -1.0 : 1.0, rr[3], rxe[3];
    geo_v3_sub(rr, p[side], k->com + 3 * b);
    geo_v3_cross(rxe, rr, e);
    geo_v3_scale(G + 6 * side, e, sgn);
    geo_v3_scale(G + 6 * side + 3, rxe, sgn);
    if (m->state_index[b] < 0) {
      memset(W + 6 * side, 0, 6 * sizeof(double));
      continue;
    }
    geo_v3_scale(W + 6 * side, G + 6 * side, 1.0 / m->mass[b]);
    inv_inertia_world(m, r->R + 9 * b, b, G + 6 * side + 3, W + 6 * side + 3);
  }
  r->rcon[row] = c;
}

static double dot6(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

// (G M^-1 G^T)(i, j): how a unit impulse along row j moves the points of row i apart
static double row_coupling(const sim_model *m, const sim_rigid *r, int i, int j) {
  const sim_contact *ci = &r->con[r->rcon[i]], *cj = &r->con[r->rcon[j]];
  int bi[2] = {ci->body_a, ci->body_b}, bj[2] = {cj->body_a, cj->body_b};
  const double *Gi = r->G + 12 * i, *Wj = r->W + 12 * j;
  double sum = 0;
  for (int si = 0; si < 2; si++) {
    if (m->state_index[bi[si]] < 0) continue;
    for (int sj = 0; sj < 2; sj++) {
      if (bi[si] == bj[sj]) sum += dot6(Gi + 6 * si, Wj + 6 * sj);
    }
  }
  return sum;
}

// The LCP of Tan et al. eq. 14 over r->con[0..nc): A (scaled by s: the step h, or 1 for
// accelerations), q = G u with u = r->u (free velocities or accelerations), E and mu scaled
// by s, A(i,i) *= 1 + eps on the velocity rows. Friction rows for contacts with mu > 0,
// except, with slide > 0 (instantaneous forces), contacts whose points slide past each
// other faster than slide [m/s]: their friction is Coulomb's -mu f_n along the slip, a
// known multiple of the normal force folded into its column (Baraff 1994, section 7), which
// makes A unsymmetric. Returns 0, or -1/-2 (no memory / too many rows; r->err says).
static int build_lcp(const sim_model *m, sim_rigid *r, const sim_kinematics *k, double s,
                     double eps, double slide) {
  int nc = r->nc, nd = m->friction_dirs, nf = 0, ns = 0;
  for (int c = 0; c < nc; c++) {
    const sim_contact *ct = &r->con[c];
    r->frow[c] = -1;
    if (!(r->mu[c] > 0) || r->no_friction) continue;
    double *t = r->slip + 3 * c;
    if (slide > 0) {
      // the points' velocities (k's, not r->u: that holds accelerations here)
      tangential_motion(k, ct, k->vel, k->omega, 3, t);
      if (geo_v3_norm(t) > slide) {
        geo_v3_normalize(t);
        r->frow[c] = -2;
        ns++;
        continue;
      }
    }
    r->frow[c] = 0;  // a pyramid, placed below
    nf++;
  }
  int nvel = nc + nf * nd, n = nvel + nf;
  int rc = ensure_rows(r, n + ns);  // the sliding contacts' slip rows after the LCP's
  if (rc) return rc;
  r->nrow = n, r->nvel = nvel, r->scale = s, r->sliding = ns;
  int fr = nc;
  for (int c = 0; c < nc; c++) {
    const sim_contact *ct = &r->con[c];
    set_row(m, r, k, c, c, ct->normal);
    if (r->frow[c] < 0) continue;
    // tangent basis: the first direction along the tangential relative motion before
    // contact forces, so that sliding along it meets the exact Coulomb bound
    double t1[3], t2[3];
    tangential_motion(k, ct, r->u, r->u + 3, 6, t1);
    if (geo_v3_norm(t1) > 1e-9) {
      geo_v3_normalize(t1);
    } else {
      geo_v3_any_perp(t1, ct->normal);  // no tangential motion: any basis
    }
    geo_v3_cross(t2, ct->normal, t1);
    r->frow[c] = fr;
    for (int j = 0; j < nd; j++) {
      double a = 2 * 3.14159265358979323846 * j / nd, e[3];
      for (int l = 0; l < 3; l++) e[l] = cos(a) * t1[l] + sin(a) * t2[l];
      set_row(m, r, k, fr + j, c, e);
    }
    fr += nd;
  }
  // velocity block: s G M^-1 G^T, symmetric
  double *A = r->A;
  for (int i = 0; i < nvel; i++) {
    for (int j = i; j < nvel; j++) {
      A[i + (size_t)j * n] = A[j + (size_t)i * n] = s * row_coupling(m, r, i, j);
    }
    A[i + (size_t)i * n] *= 1 + eps;
    const sim_contact *ci = &r->con[r->rcon[i]];
    const double *Gi = r->G + 12 * i;
    r->q[i] = dot6(Gi, r->u + 6 * ci->body_a) + dot6(Gi + 6, r->u + 6 * ci->body_b);
  }
  // a sliding contact's normal force f_n brings -mu f_n along its slip: its column gains
  // the response to that friction
  for (int c = 0, row = n; c < nc; c++) {
    if (r->frow[c] != -2) continue;
    set_row(m, r, k, row, c, r->slip + 3 * c);
    for (int i = 0; i < nvel; i++) {
      A[i + (size_t)c * n] -= r->mu[c] * s * row_coupling(m, r, i, row);
    }
    row++;
  }
  // friction cone rows and columns (E and mu scaled by s, Tan et al. section 5)
  for (int i = nvel; i < n; i++) {
    r->q[i] = 0;
    for (int j = 0; j < n; j++) A[i + (size_t)j * n] = A[j + (size_t)i * n] = 0;
  }
  int lam = nvel;
  for (int c = 0; c < nc; c++) {
    if (r->frow[c] < 0) continue;
    A[lam + (size_t)c * n] = r->mu[c] * s;
    for (int j = 0; j < nd; j++) {
      int f = r->frow[c] + j;
      A[lam + (size_t)f * n] = -s;
      A[f + (size_t)lam * n] = s;
    }
    lam++;
  }
  return 0;
}

// Equilibrate the frictional LCP in place: D A D z' + D q with unit diagonal on the velocity
// rows and the cone rows scaled so that mu and E become O(1); z = D z', w = w' / D. Lemke's
// pivoting and its verification then see O(1) numbers (redundant contacts fail far less).
static void equilibrate(sim_rigid *r) {
  int n = r->nrow;
  double *D = r->dsc;
  for (int i = 0; i < r->nvel; i++) {
    double a = r->A[i + (size_t)i * n];
    D[i] = a > 0 ? 1 / sqrt(a) : 1;
  }
  for (int c = 0, lam = r->nvel; c < r->nc; c++) {
    if (r->frow[c] < 0) continue;
    double a = r->A[c + (size_t)c * n];
    D[lam++] = a > 0 ? sqrt(a) / r->scale : 1;
  }
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) r->A[i + (size_t)j * n] *= D[i] * D[j];
    r->q[j] *= D[j];
  }
}

// Solve r's LCP with Dantzig (no friction rows) or Lemke. Returns the solver's status.
static sim_lcp_status solve_lcp(sim_rigid *r, sim_stats *st) {
  int n = r->nrow;
  sim_lcp_info info;
  memset(&info, 0, sizeof info);
  sim_lcp_status ls;
  if (n == 0) return SIM_LCP_SOLVED;
  if (r->nvel == r->nc && !r->sliding) {
    // warm start: the previous step's clamped set, matched by body pair and features
    int hint = 0;
    for (int i = 0; i < n; i++) {
      r->clamp[i] = 0;
      for (int c = 0; c < r->npkey; c++) {
        int j = (hint + c) % r->npkey;
        if (memcmp(&r->pkey[j], &r->key[i], sizeof(contact_key)) == 0) {
          r->clamp[i] = r->pclamp[j];
          hint = j + 1;
          break;
        }
      }
    }
    ls = sim_dantzig_solve(r->dz, n, r->A, r->q, r->z, r->w, r->clamp, r->clamp, &info);
    st->lcp_solver = SIM_LCP_SOLVER_DANTZIG;
    if (ls == SIM_LCP_SOLVED) {
      memcpy(r->pkey, r->key, (size_t)n * sizeof(contact_key));
      memcpy(r->pclamp, r->clamp, (size_t)n);
      r->npkey = n;
    } else {
      r->npkey = 0;
    }
  } else {
    if (!r->lk) return SIM_LCP_EINVAL;  // friction rows in a scene without friction: a bug
    equilibrate(r);
    const double *D = r->dsc;
    ls = sim_lemke_solve(r->lk, n, r->A, r->q, r->z, r->w, &info);
    for (int i = 0; i < n; i++) {
      r->z[i] *= D[i];
      r->w[i] /= D[i];
    }
    st->lcp_solver = SIM_LCP_SOLVER_LEMKE;
  }
  st->lcp_pivots += (uint64_t)info.pivots;
  return ls;
}

// Frictional body pairs with more than SIM_RIGID_PAIR_MAX contacts keep one per cell of a
// 3 x 3 x 3 grid of cubes over the bounding box of their witness points (on body_b): the
// deepest contact of each occupied cell, so the kept set spans the patch and always holds
// its most critical points. Contacts come grouped by body pair (the collider's order),
// which the compaction keeps.
static void reduce_frictional(sim_rigid *r) {
  int out = 0;
  for (int s = 0; s < r->nc;) {
    int e = s + 1;
    while (e < r->nc && r->con[e].body_a == r->con[s].body_a &&
           r->con[e].body_b == r->con[s].body_b) {
      e++;
    }
    int cnt = e - s, best[27];
    unsigned char *keep = r->keep + s;
    memset(keep, 1, (size_t)cnt);
    if (cnt > SIM_RIGID_PAIR_MAX && r->mu[s] > 0) {
      double lo[3], hi[3];
      geo_v3_copy(lo, r->con[s].pb);
      geo_v3_copy(hi, r->con[s].pb);
      for (int i = s + 1; i < e; i++) {
        for (int j = 0; j < 3; j++) {
          lo[j] = fmin(lo[j], r->con[i].pb[j]);
          hi[j] = fmax(hi[j], r->con[i].pb[j]);
        }
      }
      double size = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]) / 3;
      if (!(size > 0)) size = 1;
      for (int c = 0; c < 27; c++) best[c] = -1;
      for (int i = 0; i < cnt; i++) {
        int cell = 0;
        for (int j = 2; j >= 0; j--) {
          int x = (int)((r->con[s + i].pb[j] - lo[j]) / size);
          cell = 3 * cell + (x < 0 ? 0 : x > 2 ? 2 : x);
        }
        if (best[cell] < 0 || r->con[s + i].depth > r->con[s + best[cell]].depth) best[cell] = i;
      }
      memset(keep, 0, (size_t)cnt);
      for (int c = 0; c < 27; c++) {
        if (best[c] >= 0) keep[best[c]] = 1;
      }
    }
    for (int i = s; i < e; i++) {
      if (!keep[i - s]) continue;
      if (out != i) {
        r->con[out] = r->con[i];
        r->mu[out] = r->mu[i];
        r->key[out] = r->key[i];
      }
      out++;
    }
    s = e;
  }
  r->nc = out;
}

// Copy the collider's contacts into r (with their keys and friction coefficients).
static int take_contacts(const sim_model *m, const sim_rigid_io *io, sim_rigid *r,
                         double max_gap) {
  int n = 0;
  sim_collider *col = io->col;
  const sim_contact *c = col ? sim_collider_contacts(col, &n) : NULL;
  if (ensure_contacts(r, n) != 0) return -2;
  int nc = 0;
  for (int i = 0; i < n; i++) {
    sim_contact_params cp;
    sim_pair_params(m, c[i].body_a, c[i].body_b, &cp);
    double gap = (1 - SIM_RIGID_TARGET) * cp.standoff - c[i].depth;
    if (gap > max_gap * cp.standoff) continue;
    sim_contact *o = &r->con[nc];
    *o = c[i];
    o->force = o->dF_ddepth = o->dF_drate = 0;
    // the compliant law's friction state means nothing here: read_forces sets friction
    memset(o->friction, 0, sizeof o->friction);
    memset(o->stretch, 0, sizeof o->stretch);
    memset(o->trial, 0, sizeof o->trial);
    o->k_t = o->c_t = o->mu = o->cap = 0;
    o->anchor = -1;
    o->sliding = 0;
    r->mu[nc] = cp.mu;
    contact_key key = {o->body_a, o->body_b, o->fa.type, o->fa.id, o->fb.type, o->fb.id};
    r->key[nc] = key;
    nc++;
  }
  r->nc = nc;
  reduce_frictional(r);
  return 0;
}

// The step's contacts are found at its start and reported with the poses it reached: their
// points ride with their bodies (taken at the start, k there; placed at the end, k there).
// Else a sliding box's contact torque was off by (v h) x F.
static void contacts_to_bodies(sim_rigid *r, const sim_kinematics *k) {
  for (int c = 0; c < r->nc; c++) {
    const sim_contact *ct = &r->con[c];
    for (int s = 0; s < 2; s++) {
      int b = s ? ct->body_b : ct->body_a;
      double d[3];
      geo_v3_sub(d, s ? ct->pb : ct->pa, k->pos + 3 * b);
      geo_m3_tmulv(r->rel + 6 * c + 3 * s, r->R + 9 * b, d);
    }
  }
}

static void contacts_to_world(sim_rigid *r, const sim_kinematics *k) {
  for (int c = 0; c < r->nc; c++) {
    sim_contact *ct = &r->con[c];
    for (int s = 0; s < 2; s++) {
      int b = s ? ct->body_b : ct->body_a;
      double *p = s ? ct->pb : ct->pa;
      geo_quat_rotate(p, k->quat + 4 * b, r->rel + 6 * c + 3 * s);
      geo_v3_add(p, p, k->pos + 3 * b);
    }
  }
}

// contacts at time t and io's state into the collider; fills the geometry statistics
static ccsim_status collide(const sim_model *m, const sim_rigid_io *io, sim_rigid *r, double t,
                            sim_kinematics *k) {
  sim_motion_at(m, io->motion, t, io->y, k);
  sim_collider *col = io->col;
  if (!col) return CCSIM_OK;
  memset(r->wrench, 0, 6 * sizeof(double) * (size_t)m->nbody);
  ccsim_status s = sim_collide(m, col, k, r->wrench);
  sim_stats *st = io->stats;
  st->geometry_ns = sim_collider_geometry_ns(col);
  if (s != CCSIM_OK) {
    if (s == CCSIM_ESOLVER) st->penetrations++;
    snprintf(r->err, sizeof r->err, "rigid mode: %s", sim_collider_errmsg(col));
  }
  return s;
}

// Forces from the solution: normal force per contact and the friction vector on body_b.
static void read_forces(sim_rigid *r, const sim_model *m) {
  int nd = m->friction_dirs;
  for (int c = 0; c < r->nc; c++) {
    sim_contact *ct = &r->con[c];
    ct->force = r->z[c] > 0 ? r->z[c] : 0;
    geo_v3_set(ct->friction, 0, 0, 0);
    if (r->frow[c] == -2) {
      geo_v3_scale(ct->friction, r->slip + 3 * c, -r->mu[c] * ct->force);
      ct->mu = r->mu[c];
      ct->cap = r->mu[c] * ct->force;
      continue;
    }
    if (r->frow[c] < 0) continue;
    for (int j = 0; j < nd; j++) {
      int row = r->frow[c] + j;
      geo_v3_madd(ct->friction, ct->friction, r->z[row], r->G + 12 * row + 6);  // B holds +e
    }
    ct->mu = r->mu[c];
    ct->cap = r->mu[c] * ct->force;
  }
}

// The step's LCP over r->con (free motion in r->u): eq. 14 plus the gap term
// N^T v >= -(dist - target) / h (Anitescu-Potra; Hotz et al. eq. 6).
static int build_step(const sim_model *m, sim_rigid *r, const sim_kinematics *k, double h,
                      double eps) {
  int rc = build_lcp(m, r, k, h, eps, 0);
  if (rc) return rc;
  for (int c = 0; c < r->nc; c++) {
    sim_contact_params cp;
    sim_pair_params(m, r->con[c].body_a, r->con[c].body_b, &cp);
    r->q[c] += ((1 - SIM_RIGID_TARGET) * cp.standoff - r->con[c].depth) / h;
  }
  return 0;
}

ccsim_status sim_rigid_step_lcp(const sim_model *m, const sim_rigid_io *io, sim_rigid *r,
                                double t, double h, int *n, const double **M, const double **q) {
  *n = 0;
  *M = *q = NULL;
  if (!(h > 0) || !isfinite(h)) {
    snprintf(r->err, sizeof r->err, "rigid mode: step %g must be positive", h);
    return CCSIM_EINVAL;
  }
  sim_kinematics k;
  ccsim_status s = collide(m, io, r, t, &k);
  if (s != CCSIM_OK) return s;
  if (take_contacts(m, io, r, INFINITY) != 0) return CCSIM_ELIMIT;
  free_motion(m, io, r, &k, h, 0);
  int rc = build_step(m, r, &k, h, SIM_RIGID_EPS);
  // not on the step path: room for a larger LCP may grow here
  if (rc == -2 && r->rows_want > r->rcap && sim_rigid_reserve(r) == CCSIM_OK) {
    rc = build_step(m, r, &k, h, SIM_RIGID_EPS);
  }
  if (rc) return rc == -2 ? CCSIM_ELIMIT : CCSIM_ENOMEM;
  if (r->nvel > r->nc) equilibrate(r);
  *n = r->nrow, *M = r->A, *q = r->q;
  return CCSIM_OK;
}

// Build and solve the step's LCP over r->con with step h; the new velocities go to
// r->vel_new / r->om_new. Retries once with 1000 times the regularisation.
static ccsim_status step_lcp(const sim_model *m, const sim_rigid_io *io, sim_rigid *r,
                             const sim_kinematics *k, double h) {
  sim_stats *st = io->stats;
  free_motion(m, io, r, k, h, 0);
  double eps = SIM_RIGID_EPS;
  sim_lcp_status ls = SIM_LCP_SOLVED;
  r->no_friction = 0;
  for (int attempt = 0; attempt < 3; attempt++, eps *= 1e3) {
    if (attempt == 2) {
      // last resort for a frictional LCP: this step without friction (Dantzig), counted
      // as a failure in the statistics and explained in sim_rigid_errmsg
      if (r->nvel == r->nc) break;
      r->no_friction = 1;
      eps = SIM_RIGID_EPS;
    }
    int rc = build_step(m, r, k, h, eps);
    if (rc) {
      r->no_friction = 0;
      return rc == -2 ? CCSIM_ELIMIT : CCSIM_ENOMEM;
    }
    ls = solve_lcp(r, st);
    if (ls == SIM_LCP_SOLVED) break;
    st->lcp_failures++;
  }
  if (ls == SIM_LCP_SOLVED && r->no_friction) {
    snprintf(r->err, sizeof r->err, "rigid mode: a frictional LCP (%d contacts) had no verified "
             "solution; that step went without friction", r->nc);
  }
  r->no_friction = 0;
  if (ls != SIM_LCP_SOLVED) {
    snprintf(r->err, sizeof r->err, "rigid mode: the contact LCP (%d rows, %d contacts) has no "
             "verified solution: %s", r->nrow, r->nc, sim_lcp_status_str(ls));
    return CCSIM_ESOLVER;
  }
  read_forces(r, m);
  // new velocities: u_free + h M^-1 G^T z
  for (int b = 0; b < m->nbody; b++) {
    geo_v3_copy(r->vel_new + 3 * b, r->u + 6 * b);
    geo_v3_copy(r->om_new + 3 * b, r->u + 6 * b + 3);
  }
  for (int i = 0; i < r->nvel; i++) {
    double zi = r->z[i];
    if (zi == 0) continue;
    const sim_contact *ct = &r->con[r->rcon[i]];
    int body[2] = {ct->body_a, ct->body_b};
    for (int side = 0; side < 2; side++) {
      int b = body[side];
      if (m->state_index[b] < 0) continue;
      const double *W = r->W + 12 * i + 6 * side;
      geo_v3_madd(r->vel_new + 3 * b, r->vel_new + 3 * b, h * zi, W);
      geo_v3_madd(r->om_new + 3 * b, r->om_new + 3 * b, h * zi, W + 3);
    }
  }
  return CCSIM_OK;
}

// the step's contact impulses (force h, and about each body's reference origin at the
// step's start, where the contacts were found) into r->imp
static void step_impulses(const sim_model *m, sim_rigid *r, const sim_kinematics *k, double h) {
  memset(r->imp, 0, 6 * sizeof(double) * (size_t)m->nbody);
  for (int c = 0; c < r->nc; c++) {
    const sim_contact *ct = &r->con[c];
    if (ct->force <= 0) continue;
    double f[3];
    geo_v3_scale(f, ct->normal, ct->force);
    geo_v3_add(f, f, ct->friction);  // the force on B
    for (int s = 0; s < 2; s++) {
      int b = s ? ct->body_b : ct->body_a;
      double p[3], r_[3], t[3], *imp = r->imp + 6 * b, sg = s ? h : -h;
      geo_v3_sub(r_, s ? ct->pb : ct->pa, k->pos + 3 * b);
      geo_v3_cross(t, r_, f);
      geo_v3_scale(p, f, sg);
      geo_v3_add(imp, imp, p);
      geo_v3_madd(imp + 3, imp + 3, sg, t);
    }
  }
}

// positions and orientations with the new velocities (semi-implicit Euler); 0, or -1 when
// a body's new state is not finite
static int advance_positions(const sim_model *m, const sim_rigid_io *io, sim_rigid *r, double h) {
  double *y = io->y;
  int finite = 1;
  for (int b = 0; b < m->nbody; b++) {
    int s = m->state_index[b];
    if (s < 0) continue;
    double *p = y + s, *q = y + s + 3, *v = y + s + 7, *wb = y + s + 10;
    geo_v3_copy(v, r->vel_new + 3 * b);
    geo_m3_tmulv(wb, r->R + 9 * b, r->om_new + 3 * b);
    geo_v3_madd(p, p, h, v);
    // q += h/2 q (x) (0, w_body), then back to unit length
    double dq[4] = {-q[1] * wb[0] - q[2] * wb[1] - q[3] * wb[2],
                    q[0] * wb[0] + q[2] * wb[2] - q[3] * wb[1],
                    q[0] * wb[1] - q[1] * wb[2] + q[3] * wb[0],
                    q[0] * wb[2] + q[1] * wb[1] - q[2] * wb[0]};
    for (int j = 0; j < 4; j++) q[j] += 0.5 * h * dq[j];
    if (geo_quat_normalize(q) == 0) q[0] = 1;
    for (int j = 0; j < SIM_NQ; j++) finite &= isfinite(y[s + j]) != 0;
  }
  return finite ? 0 : -1;
}

// 1 when some contact of the collider's last query is closer than half the rest distance
static int too_close(const sim_model *m, const sim_collider *col) {
  if (!col) return 0;
  int n = 0;
  const sim_contact *c = sim_collider_contacts(col, &n);
  for (int i = 0; i < n; i++) {
    sim_contact_params cp;
    sim_pair_params(m, c[i].body_a, c[i].body_b, &cp);
    if (cp.standoff - c[i].depth < 0.5 * SIM_RIGID_TARGET * cp.standoff) return 1;
  }
  return 0;
}

ccsim_status sim_rigid_step(const sim_model *m, const sim_rigid_io *io, sim_rigid *r, double t0,
                            double t_out, double *t_reached) {
  *t_reached = t0;
  sim_stats *st = io->stats;
  double *y = io->y;
  sim_collider *col = io->col;
  sim_kinematics k;
  ccsim_status s = collide(m, io, r, t0, &k);
  if (s != CCSIM_OK) return s;
  double t = t0, h_cap = INFINITY;
  int touches = 0;
  while (t < t_out) {
    if (sim_progress_check(io->progress)) {
      snprintf(r->err, sizeof r->err, "stopped by the progress function");
      return CCSIM_ELIMIT;
    }
    // equal steps of at most rigid_dt that land on t_out
    double rem = t_out - t, nst = ceil(rem / m->rigid_dt - 1e-9);
    double h = rem / (nst < 1 ? 1 : nst);
    int last = 1;
    if (h > h_cap) h = h_cap, last = 0;
    if (take_contacts(m, io, r, INFINITY) != 0) return CCSIM_ELIMIT;
    if (r->nstate) memcpy(r->y_save, y, r->nstate * sizeof(double));
    // conservative advancement (Drumwright): with the new velocities, no pair outside
    // its standoff may come more than half-way in over the step; else shorten and re-solve
    for (int pass = 0; pass < BOUND_PASSES; pass++) {
      s = step_lcp(m, io, r, &k, h);
      if (s != CCSIM_OK) return s;
      if (!col) break;
      sim_kinematics kn = k;
      kn.vel = r->vel_new, kn.omega = r->om_new;
      double hb = sim_collider_time_bound(m, col, &kn, 0, h, 0);
      if (!(hb < h) || pass == BOUND_PASSES - 1) break;
      h = fmax(hb, 1e-6 * m->rigid_dt), last = 0;
    }
    contacts_to_bodies(r, &k);  // r->R: the step's start, as free_motion took it from k
    if (io->impulse) step_impulses(m, r, &k, h);
    double t_new = last && nst <= 1 ? t_out : t + h;
    if (!(t_new > t)) {
      // a step below the resolution of t: the loop would never end
      snprintf(r->err, sizeof r->err, "rigid mode: a step of %g s cannot advance time %.17g", h, t);
      return CCSIM_ESOLVER;
    }
    if (advance_positions(m, io, r, h) != 0) {
      // bounded inputs keep it finite; this keeps whatever else from reaching a reply or
      // a save, which a restore would refuse
      memcpy(y, r->y_save, r->nstate * sizeof(double));
      snprintf(r->err, sizeof r->err,
               "rigid mode: a step of %g s from t = %.9g made the state not finite", h, t);
      return CCSIM_ESOLVER;
    }
    s = collide(m, io, r, t_new, &k);
    if ((s == CCSIM_ESOLVER || (s == CCSIM_OK && too_close(m, col))) &&
        ++touches <= TOUCH_RETRIES) {
      // the step ended with bodies touching, or a pair that the step's LCP did not hold
      // (outside the standoff at its start) came more than half-way past the rest
      // distance: back to the step's start, a quarter of the step
      if (r->nstate) memcpy(y, r->y_save, r->nstate * sizeof(double));
      h_cap = 0.25 * h;
      s = collide(m, io, r, t, &k);
      if (s != CCSIM_OK) return s;
      continue;
    }
    if (s != CCSIM_OK) {
      if (r->nstate) memcpy(y, r->y_save, r->nstate * sizeof(double));
      return s;
    }
    t = t_new;
    *t_reached = t;
    for (size_t i = 0; io->impulse && i < 6 * (size_t)m->nbody; i++) io->impulse[i] += r->imp[i];
    h_cap = INFINITY;
    touches = 0;
    // statistics of the step
    uint32_t carrying = 0;
    double depth = 0;
    for (int c = 0; c < r->nc; c++) {
      carrying += r->con[c].force > 0;
      if (r->con[c].depth > depth) depth = r->con[c].depth;
    }
    st->steps++;
    st->contacts = carrying;
    st->max_depth = depth;
    st->last_step = h;
  }
  contacts_to_world(r, &k);  // k: the poses at t_out (the last step's collide)
  return CCSIM_OK;
}

ccsim_status sim_rigid_contact_forces(const sim_model *m, const sim_rigid_io *io, sim_rigid *r,
                                      double t, int *n) {
  if (n) *n = 0;
  sim_stats *st = io->stats;
  sim_kinematics k;
  ccsim_status s = collide(m, io, r, t, &k);
  if (s != CCSIM_OK) return s;
  // the contacts at the rigid model's rest distance (within 1 % of the standoff)
  if (take_contacts(m, io, r, 0.01) != 0) return CCSIM_ELIMIT;
  free_motion(m, io, r, &k, 0, 1);
  sim_lcp_status ls = SIM_LCP_SOLVED;
  // sliding contacts' friction known, then (when no solution is verified: Painleve's
  // paradox, where rigid Coulomb friction has none) every contact as if stuck; each with
  // the regularisation, then 1000 times it
  for (int attempt = 0; attempt < 4; attempt++) {
    double eps = attempt % 2 ? 1e3 * SIM_RIGID_EPS : SIM_RIGID_EPS;
    int rc = build_lcp(m, r, &k, 1.0, eps, attempt < 2 ? SIM_RIGID_SLIDE : 0);
    if (rc) return rc == -2 ? CCSIM_ELIMIT : CCSIM_ENOMEM;
    // Baraff: b adds the velocity-product terms w x (w x r) of the contact points (the
    // normal's own rotation contributes n' . v_rel, zero at resting contact)
    const double *y = io->y;
    for (int i = 0; i < r->nvel; i++) {
      const sim_contact *ct = &r->con[r->rcon[i]];
      int body[2] = {ct->body_a, ct->body_b};
      const double *p[2] = {ct->pa, ct->pb};
      for (int side = 0; side < 2; side++) {
        int b = body[side];
        double om[3], rr[3], wr[3], wwr[3];
        if (m->state_index[b] >= 0) {
          geo_m3_mulv(om, r->R + 9 * b, y + m->state_index[b] + 10);
        } else {
          geo_v3_copy(om, k.omega + 3 * b);
        }
        geo_v3_sub(rr, p[side], k.com + 3 * b);
        geo_v3_cross(wr, om, rr);
        geo_v3_cross(wwr, om, wr);
        r->q[i] += geo_v3_dot(r->G + 12 * i + 6 * side, wwr);
      }
    }
    ls = solve_lcp(r, st);
    if (ls == SIM_LCP_SOLVED) break;
    st->lcp_failures++;
    if (attempt == 1 && !r->sliding) break;  // nothing slid: the stuck LCP was this one
  }
  if (ls != SIM_LCP_SOLVED) {
    snprintf(r->err, sizeof r->err, "rigid mode: the contact-force LCP (%d rows) has no "
             "verified solution: %s", r->nrow, sim_lcp_status_str(ls));
    return CCSIM_ESOLVER;
  }
  read_forces(r, m);
  if (n) *n = r->nc;
  return CCSIM_OK;
}
