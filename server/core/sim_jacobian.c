// The integrator's Newton Jacobian in blocks: per free body its own 13 x 13 block (exact
// rigid-body terms), per ordered pair of free bodies coupled by contacts a 6 x 13 block
// (contact springs with frozen witness points and normals), scattered into CVODE's dense
// matrix or KLU's CSC one. Blocks are allocated once; assembly allocates nothing (KLU's
// symbolic factorisation aside, when the contact graph changes).
#include <stdlib.h>
#include <string.h>

#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "geo_vec.h"
#include "sim_data_impl.h"

#define SIM_CROSS_PER_BODY 32  // Jacobian blocks coupling two bodies, per free body

int sim_jacobian_init(const sim_model *m, sim_data *d, int nfree) {
  (void)m;
  d->jcap = SIM_CROSS_PER_BODY * nfree;
  d->jself = calloc((size_t)nfree * SIM_NB, sizeof(double));
  d->jrow = calloc((size_t)d->jcap, sizeof(int));
  d->jcol = calloc((size_t)d->jcap, sizeof(int));
  d->jcross = calloc((size_t)d->jcap * 78, sizeof(double));
  d->jorder = calloc((size_t)d->jcap, sizeof(int));
  d->jstart = calloc((size_t)nfree + 1, sizeof(int));
  if (!d->jself || !d->jrow || !d->jcol || !d->jcross || !d->jorder || !d->jstart) return -1;
  return 0;
}

void sim_jacobian_fini(sim_data *d) {
  free(d->jself);
  free(d->jrow);
  free(d->jcol);
  free(d->jcross);
  free(d->jorder);
  free(d->jstart);
  free(d->jpat);
  d->jself = d->jcross = NULL;
  d->jrow = d->jcol = d->jorder = d->jstart = NULL;
  d->jpat = NULL;
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
    geo_v3_sub(r, wp[side], d->kin.x_com + 3 * b);
    const double *q = d->kin.x_quat + 4 * b;
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
  const double *qh = d->kin.x_quat + 4 * b, *cw = d->wrench + 6 * b;
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

// Analytic Jacobian of rhs at state y: rigid-body terms exactly, contact springs with
// frozen witness points and normals (above). A Newton Jacobian may be approximate: CVODE's
// error control never sees it.
void sim_jacobian_assemble(const sim_model *m, sim_data *d, const double *y, SUNMatrix J) {
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
}
