// Triangle meshes: validation, exact welding, edge and vertex adjacency (files are read
// by geo_mesh_load.c, which hands the OBJ and STL readers' arrays to geo_mesh_new_lines).
#include "geo_err.h"
#include "geo_mesh.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_vec.h"

// "source:LINE: triangle T" or "source: triangle T"
static void tri_label(char *buf, size_t sz, const char *src, const int *tri_line, int t) {
  if (tri_line && tri_line[t] > 0)
    snprintf(buf, sz, "%s:%d: triangle %d", src, tri_line[t], t);
  else
    snprintf(buf, sz, "%s: triangle %d", src, t);
}

static uint64_t mix64(uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static uint64_t dbl_bits(double d) {
  d += 0.0;  // -0 -> +0 so that they weld
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static size_t table_cap(size_t n) {
  size_t c = 16;
  while (c < 2 * n) c <<= 1;
  return c;
}

void geo_mesh_destroy(geo_mesh **pm) {
  if (!pm || !*pm) return;
  geo_mesh *m = *pm;
  free(m->vert);
  free(m->tri);
  free(m->tri_normal);
  free(m->tri_area);
  free(m->edge);
  free(m->edge_tri);
  free(m->tri_edge);
  free(m->vert_tri_start);
  free(m->vert_tri);
  free(m->vert_edge_start);
  free(m->vert_edge);
  free(m);
  *pm = NULL;
}

geo_mesh *geo_mesh_new(const double *vert, int nvert, const int *tri, int ntri,
                       const char *source, char *err, size_t err_sz) {
  return geo_mesh_new_lines(vert, nvert, tri, ntri, source, NULL, err, err_sz);
}

geo_mesh *geo_mesh_new_lines(const double *vert, int nvert, const int *tri, int ntri,
                             const char *source, const int *tri_line, char *err,
                             size_t err_sz) {
  const char *src = (source && source[0]) ? source : "mesh";
  char lab[200];
  if (nvert <= 0 || !vert) {
    geo_set_err(err, err_sz, "%s: empty mesh (no vertices)", src);
    return NULL;
  }
  if (ntri <= 0 || !tri) {
    geo_set_err(err, err_sz, "%s: empty mesh (no triangles)", src);
    return NULL;
  }
  if (nvert > 3 * GEO_MESH_MAX_TRI) {  // a triangle soup has 3 per triangle
    geo_set_err(err, err_sz, "%s: too many vertices (%d > cap %d)", src, nvert, 3 * GEO_MESH_MAX_TRI);
    return NULL;
  }
  if (ntri > GEO_MESH_MAX_TRI) {
    geo_set_err(err, err_sz, "%s: too many triangles (%d > cap %d)", src, ntri, GEO_MESH_MAX_TRI);
    return NULL;
  }
  for (int i = 0; i < nvert; i++) {
    for (int k = 0; k < 3; k++) {
      double x = vert[3 * i + k];
      if (!isfinite(x)) {
        geo_set_err(err, err_sz, "%s: vertex %d: non-finite coordinate %c = %g", src, i, "xyz"[k], x);
        return NULL;
      }
      if (fabs(x) > GEO_MESH_MAX_COORD) {
        geo_set_err(err, err_sz, "%s: vertex %d: coordinate %c = %g exceeds the cap |x| <= %g m", src,
                i, "xyz"[k], x, GEO_MESH_MAX_COORD);
        return NULL;
      }
    }
  }
  for (int t = 0; t < ntri; t++) {
    for (int k = 0; k < 3; k++) {
      int v = tri[3 * t + k];
      if (v < 0 || v >= nvert) {
        tri_label(lab, sizeof lab, src, tri_line, t);
        geo_set_err(err, err_sz, "%s: vertex index %d out of range [0, %d)", lab, v, nvert);
        return NULL;
      }
    }
  }

  geo_mesh *m = calloc(1, sizeof *m);
  int *map = malloc((size_t)nvert * sizeof *map);
  char *used = calloc((size_t)nvert, 1);
  size_t vcap = table_cap((size_t)nvert);
  int *vtab = malloc(vcap * sizeof *vtab);
  if (!m || !map || !used || !vtab) goto oom;
  snprintf(m->source, sizeof m->source, "%s", src);
  m->closed = 0;

  // --- weld: exact coordinate equality, order of first appearance among used vertices
  for (int i = 0; i < 3 * ntri; i++) used[tri[i]] = 1;
  for (size_t i = 0; i < vcap; i++) vtab[i] = -1;
  int nw = 0;
  int *first = malloc((size_t)nvert * sizeof *first);  // welded id -> first input vertex
  if (!first) goto oom;
  for (int i = 0; i < nvert; i++) {
    map[i] = -1;
    if (!used[i]) continue;
    const double *p = vert + 3 * i;
    uint64_t b0 = dbl_bits(p[0]), b1 = dbl_bits(p[1]), b2 = dbl_bits(p[2]);
    uint64_t h = mix64(b0 ^ mix64(b1 ^ mix64(b2)));
    size_t s = (size_t)h & (vcap - 1);
    while (vtab[s] >= 0) {
      const double *q = vert + 3 * first[vtab[s]];
      if (dbl_bits(q[0]) == b0 && dbl_bits(q[1]) == b1 && dbl_bits(q[2]) == b2) break;
      s = (s + 1) & (vcap - 1);
    }
    if (vtab[s] < 0) {
      vtab[s] = nw;
      first[nw++] = i;
    }
    map[i] = vtab[s];
  }
  free(vtab);
  vtab = NULL;
  free(used);
  used = NULL;
  if (nw > GEO_MESH_MAX_VERT) {
    free(first);
    geo_set_err(err, err_sz, "%s: too many vertices after welding (%d > cap %d)", src, nw,
            GEO_MESH_MAX_VERT);
    goto fail;
  }
  m->nvert = nw;
  m->ntri = ntri;
  m->vert = malloc((size_t)nw * 3 * sizeof *m->vert);
  m->tri = malloc((size_t)ntri * 3 * sizeof *m->tri);
  m->tri_normal = malloc((size_t)ntri * 3 * sizeof *m->tri_normal);
  m->tri_area = malloc((size_t)ntri * sizeof *m->tri_area);
  if (!m->vert || !m->tri || !m->tri_normal || !m->tri_area) {
    free(first);
    goto oom;
  }
  for (int w = 0; w < nw; w++)
    for (int k = 0; k < 3; k++) m->vert[3 * w + k] = vert[3 * first[w] + k] + 0.0;
  free(first);

  // --- triangles: degenerate and zero-area
  for (int t = 0; t < ntri; t++) {
    int a = map[tri[3 * t]], b = map[tri[3 * t + 1]], c = map[tri[3 * t + 2]];
    m->tri[3 * t] = a;
    m->tri[3 * t + 1] = b;
    m->tri[3 * t + 2] = c;
    if (a == b || b == c || a == c) {
      int k = 0, l = 2;  // a == c
      if (a == b) k = 0, l = 1;
      else if (b == c) k = 1, l = 2;
      int ik = tri[3 * t + k], il = tri[3 * t + l];
      tri_label(lab, sizeof lab, src, tri_line, t);
      if (ik == il)
        geo_set_err(err, err_sz, "%s: degenerate triangle: corners %d and %d are the same vertex %d",
                lab, k, l, ik);
      else
        geo_set_err(err, err_sz,
                "%s: degenerate triangle: corners %d and %d (vertices %d and %d) are at the same "
                "point (%g, %g, %g)",
                lab, k, l, ik, il, vert[3 * ik], vert[3 * ik + 1], vert[3 * ik + 2]);
      goto fail;
    }
    const double *p0 = m->vert + 3 * a, *p1 = m->vert + 3 * b, *p2 = m->vert + 3 * c;
    double e1[3], e2[3], e3[3], n[3];
    for (int k = 0; k < 3; k++) {
      e1[k] = p1[k] - p0[k];
      e2[k] = p2[k] - p0[k];
      e3[k] = p2[k] - p1[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
    double l3 = e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2];
    double lmax = fmax(l1, fmax(l2, l3));
    if (!(nn > GEO_MESH_DEGEN_REL * lmax) || !(nn > 0.0)) {
      tri_label(lab, sizeof lab, src, tri_line, t);
      geo_set_err(err, err_sz,
              "%s: degenerate triangle: zero area (collinear corners, |cross| = %g, longest side "
              "%g)",
              lab, nn, sqrt(lmax));
      goto fail;
    }
    m->tri_area[t] = 0.5 * nn;
    for (int k = 0; k < 3; k++) m->tri_normal[3 * t + k] = n[k] / nn;
  }

  // --- duplicate triangles (same vertex set, any order)
  {
    size_t tcap = table_cap((size_t)ntri);
    int *ttab = malloc(tcap * sizeof *ttab);
    if (!ttab) goto oom;
    for (size_t i = 0; i < tcap; i++) ttab[i] = -1;
    for (int t = 0; t < ntri; t++) {
      int s3[3] = {m->tri[3 * t], m->tri[3 * t + 1], m->tri[3 * t + 2]};
      int tmp;
      if (s3[0] > s3[1]) tmp = s3[0], s3[0] = s3[1], s3[1] = tmp;
      if (s3[1] > s3[2]) tmp = s3[1], s3[1] = s3[2], s3[2] = tmp;
      if (s3[0] > s3[1]) tmp = s3[0], s3[0] = s3[1], s3[1] = tmp;
      uint64_t h = mix64((uint64_t)s3[0] ^ mix64((uint64_t)s3[1] ^ mix64((uint64_t)s3[2])));
      size_t s = (size_t)h & (tcap - 1);
      int dup = -1;
      while (ttab[s] >= 0) {
        const int *u = m->tri + 3 * ttab[s];
        int match = 1;
        for (int k = 0; k < 3; k++)
          if (u[0] != s3[k] && u[1] != s3[k] && u[2] != s3[k]) match = 0;
        if (match) {
          dup = ttab[s];
          break;
        }
        s = (s + 1) & (tcap - 1);
      }
      if (dup >= 0) {
        free(ttab);
        tri_label(lab, sizeof lab, src, tri_line, t);
        if (tri_line && tri_line[dup] > 0)
          geo_set_err(err, err_sz, "%s: duplicate triangle: same vertices as triangle %d (line %d)",
                  lab, dup, tri_line[dup]);
        else
          geo_set_err(err, err_sz, "%s: duplicate triangle: same vertices as triangle %d", lab, dup);
        goto fail;
      }
      ttab[s] = t;
    }
    free(ttab);
  }

  // --- edges
  {
    size_t ecap = table_cap((size_t)ntri * 3);
    int *etab = malloc(ecap * sizeof *etab);
    int *ecount = NULL;
    m->tri_edge = malloc((size_t)ntri * 3 * sizeof *m->tri_edge);
    // at most 3 ntri edges; shrink afterwards
    m->edge = malloc((size_t)ntri * 6 * sizeof *m->edge);
    m->edge_tri = malloc((size_t)ntri * 6 * sizeof *m->edge_tri);
    ecount = calloc((size_t)ntri * 3, sizeof *ecount);
    int *edir = malloc((size_t)ntri * 3 * sizeof *edir);  // direction of the first face
    if (!etab || !m->tri_edge || !m->edge || !m->edge_tri || !ecount || !edir) {
      free(etab);
      free(ecount);
      free(edir);
      goto oom;
    }
    for (size_t i = 0; i < ecap; i++) etab[i] = -1;
    int ne = 0;
    for (int t = 0; t < ntri; t++) {
      for (int k = 0; k < 3; k++) {
        int a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
        int lo = a < b ? a : b, hi = a < b ? b : a;
        uint64_t h = mix64(((uint64_t)(uint32_t)lo << 32) | (uint32_t)hi);
        size_t s = (size_t)h & (ecap - 1);
        while (etab[s] >= 0) {
          int e = etab[s];
          if (m->edge[2 * e] == lo && m->edge[2 * e + 1] == hi) break;
          s = (s + 1) & (ecap - 1);
        }
        int e = etab[s];
        int dir = (a < b) ? 1 : 0;
        if (e < 0) {
          e = ne++;
          etab[s] = e;
          m->edge[2 * e] = lo;
          m->edge[2 * e + 1] = hi;
          m->edge_tri[2 * e] = t;
          m->edge_tri[2 * e + 1] = -1;
          edir[e] = dir;
        } else {
          if (ecount[e] == 1) {
            m->edge_tri[2 * e + 1] = t;
            if (edir[e] == dir) edir[e] = 2;  // both faces run the same way
          }
        }
        ecount[e]++;
        m->tri_edge[3 * t + k] = e;
      }
    }
    free(etab);
    m->nedge = ne;
    int nb = 0, nnm = 0, nmis = 0;
    for (int e = 0; e < ne; e++) {
      if (ecount[e] == 1) nb++;
      else if (ecount[e] > 2) nnm++;
      else if (edir[e] == 2) nmis++;
    }
    free(ecount);
    free(edir);
    m->n_border_edges = nb;
    m->n_nonmanifold_edges = nnm;
    m->n_misoriented_edges = nmis;
    m->closed = (nb == 0 && nnm == 0 && nmis == 0);
    int *pe = realloc(m->edge, (size_t)ne * 2 * sizeof *m->edge);
    if (pe) m->edge = pe;
    pe = realloc(m->edge_tri, (size_t)ne * 2 * sizeof *m->edge_tri);
    if (pe) m->edge_tri = pe;
  }

  // --- vertex CSR (sorted by id because we fill in increasing id order)
  m->vert_tri_start = calloc((size_t)nw + 1, sizeof(int));
  m->vert_tri = malloc((size_t)ntri * 3 * sizeof(int));
  m->vert_edge_start = calloc((size_t)nw + 1, sizeof(int));
  m->vert_edge = malloc((size_t)m->nedge * 2 * sizeof(int));
  int *fill = malloc(((size_t)nw + 1) * sizeof(int));
  if (!m->vert_tri_start || !m->vert_tri || !m->vert_edge_start || !m->vert_edge || !fill) {
    free(fill);
    goto oom;
  }
  for (int i = 0; i < 3 * ntri; i++) m->vert_tri_start[m->tri[i] + 1]++;
  for (int v = 0; v < nw; v++) m->vert_tri_start[v + 1] += m->vert_tri_start[v];
  memcpy(fill, m->vert_tri_start, (size_t)nw * sizeof(int));
  for (int t = 0; t < ntri; t++)
    for (int k = 0; k < 3; k++) m->vert_tri[fill[m->tri[3 * t + k]]++] = t;
  for (int i = 0; i < 2 * m->nedge; i++) m->vert_edge_start[m->edge[i] + 1]++;
  for (int v = 0; v < nw; v++) m->vert_edge_start[v + 1] += m->vert_edge_start[v];
  memcpy(fill, m->vert_edge_start, (size_t)nw * sizeof(int));
  for (int e = 0; e < m->nedge; e++)
    for (int k = 0; k < 2; k++) m->vert_edge[fill[m->edge[2 * e + k]]++] = e;
  free(fill);

  for (int k = 0; k < 3; k++) m->aabb_min[k] = m->aabb_max[k] = m->vert[k];
  for (int v = 1; v < nw; v++)
    for (int k = 0; k < 3; k++) {
      double x = m->vert[3 * v + k];
      if (x < m->aabb_min[k]) m->aabb_min[k] = x;
      if (x > m->aabb_max[k]) m->aabb_max[k] = x;
    }
  // signed volume: tetrahedra from the box centre to each face, so they stay small
  {
    double ref[3], vol = 0.0;
    for (int k = 0; k < 3; k++) ref[k] = 0.5 * (m->aabb_min[k] + m->aabb_max[k]);
    for (int t = 0; t < ntri; t++) {
      double a[3], b[3], c[3];
      geo_v3_sub(a, m->vert + 3 * m->tri[3 * t], ref);
      geo_v3_sub(b, m->vert + 3 * m->tri[3 * t + 1], ref);
      geo_v3_sub(c, m->vert + 3 * m->tri[3 * t + 2], ref);
      double bc[3];
      geo_v3_cross(bc, b, c);
      vol += geo_v3_dot(a, bc);
    }
    m->volume = vol / 6.0;
  }
  free(map);
  return m;

oom:
  geo_set_err(err, err_sz, "%s: out of memory (%d vertices, %d triangles)", src, nvert, ntri);
fail:
  free(map);
  free(used);
  free(vtab);
  geo_mesh_destroy(&m);
  return NULL;
}

// 1 when triangle t runs its side k from the edge's lower vertex id to the higher
static int side_up(const geo_mesh *m, int t, int k) {
  return m->tri[3 * t + k] < m->tri[3 * t + (k + 1) % 3];
}

int geo_mesh_check_solid(const geo_mesh *m, char *err, size_t err_sz) {
  if (!m) {
    geo_set_err(err, err_sz, "geo_mesh_check_solid: NULL mesh");
    return -1;
  }
  if (m->closed && m->volume > 0.0) {
    return 0;
  }
  const char *src = m->source;
  if (m->n_border_edges > 0) {
    // a few border edges by their vertices, in edge order
    char list[400] = "";
    size_t len = 0;
    int shown = 0;
    for (int e = 0; e < m->nedge && shown < 3; e++) {
      if (m->edge_tri[2 * e + 1] >= 0) continue;
      const double *a = m->vert + 3 * m->edge[2 * e], *b = m->vert + 3 * m->edge[2 * e + 1];
      int w = snprintf(list + len, sizeof list - len, "%s%d-%d (%g, %g, %g)-(%g, %g, %g)",
                       shown ? ", " : "", m->edge[2 * e], m->edge[2 * e + 1], a[0], a[1], a[2],
                       b[0], b[1], b[2]);
      if (w < 0 || (size_t)w >= sizeof list - len) break;
      len += (size_t)w;
      shown++;
    }
    geo_set_err(err, err_sz,
            "%s: open mesh: %d edge%s used by one triangle only (holes), e.g. vertices %s%s; a "
            "closed surface has two triangles on every edge",
            src, m->n_border_edges, m->n_border_edges == 1 ? "" : "s", list,
            m->n_border_edges > shown ? ", ..." : "");
    return -1;
  }
  if (m->n_nonmanifold_edges > 0 || m->n_misoriented_edges > 0) {
    int *cnt = calloc((size_t)m->nedge, sizeof *cnt);
    if (!cnt) {
      geo_set_err(err, err_sz, "%s: out of memory checking the surface", src);
      return -1;
    }
    for (int i = 0; i < 3 * m->ntri; i++) cnt[m->tri_edge[i]]++;
    for (int e = 0; e < m->nedge; e++) {
      if (cnt[e] > 2) {
        geo_set_err(err, err_sz,
                "%s: the edge between vertices %d and %d is shared by %d triangles (%d such "
                "edges): a solid's surface has exactly two at every edge",
                src, m->edge[2 * e], m->edge[2 * e + 1], cnt[e], m->n_nonmanifold_edges);
        free(cnt);
        return -1;
      }
    }
    // the triangle with the most sides run the same way as its neighbour's: with one
    // flipped triangle that is the flipped one (three sides against one of each neighbour)
    int best = -1, best_n = 0, best_k = 0;
    for (int t = 0; t < m->ntri; t++) {
      int nmis = 0, first_k = -1;
      for (int k = 0; k < 3; k++) {
        int e = m->tri_edge[3 * t + k];
        int o = m->edge_tri[2 * e] == t ? m->edge_tri[2 * e + 1] : m->edge_tri[2 * e];
        int ko = 0;
        while (ko < 3 && m->tri_edge[3 * o + ko] != e) ko++;
        if (ko < 3 && side_up(m, t, k) == side_up(m, o, ko)) {
          nmis++;
          if (first_k < 0) first_k = k;
        }
      }
      if (nmis > best_n) best = t, best_n = nmis, best_k = first_k;
    }
    free(cnt);
    if (best >= 0) {
      int e = m->tri_edge[3 * best + best_k];
      int o = m->edge_tri[2 * e] == best ? m->edge_tri[2 * e + 1] : m->edge_tri[2 * e];
      int va = m->tri[3 * best + best_k], vb = m->tri[3 * best + (best_k + 1) % 3];
      const double *pa = m->vert + 3 * va, *pb = m->vert + 3 * vb;
      geo_set_err(err, err_sz,
              "%s: triangle %d is wound against its neighbour %d: both run their shared edge "
              "from vertex %d (%g, %g, %g) to vertex %d (%g, %g, %g) the same way (%d such "
              "edge%s); reverse triangle %d's winding (swap two of its corners) if it is the "
              "odd one out",
              src, best, o, va, pa[0], pa[1], pa[2], vb, pb[0], pb[1], pb[2],
              m->n_misoriented_edges, m->n_misoriented_edges == 1 ? "" : "s", best);
      return -1;
    }
  }
  geo_set_err(err, err_sz,
          "%s: inside out: signed volume %g m^3 is not positive, so its triangles are wound "
          "clockwise seen from outside (normals point inward); reverse the winding (swap two "
          "corners of every triangle)",
          src, m->volume);
  return -1;
}

// A witness point on a vertex or an edge can be the closest point of one triangle without
// being a closest point of the surface: a vertex hovering over the middle of triangle F1
// of a flat grid is also closest to F1's neighbour F2 at the edge they share. Seen from
// that edge, the inward direction of F1 leads towards the vertex; seen from a true
// closest point, no direction along the surface does (a face's only such direction is
// its normal).
int geo_mesh_descends(const geo_mesh *m, geo_feature f, const double d[3]) {
  double dn = geo_v3_norm(d);
  if (!(dn > 0.0)) {
    return 0;  // touching: no direction to go
  }
  if (f.type == GEO_FEAT_VERTEX) {
    const double *v = m->vert + 3 * f.id;
    for (int k = m->vert_edge_start[f.id]; k < m->vert_edge_start[f.id + 1]; k++) {
      const int *e = m->edge + 2 * m->vert_edge[k];
      const double *u = m->vert + 3 * (e[0] == f.id ? e[1] : e[0]);
      double t[3];
      geo_v3_sub(t, u, v);
      if (geo_v3_dot(t, d) > GEO_MESH_DESCEND_TOL * dn * geo_v3_norm(t)) {
        return 1;
      }
    }
  } else if (f.type == GEO_FEAT_EDGE) {
    const int *e = m->edge + 2 * f.id;
    const double *a = m->vert + 3 * e[0], *b = m->vert + 3 * e[1];
    double ab[3];
    geo_v3_sub(ab, b, a);
    double l2 = geo_v3_norm2(ab);
    for (int s = 0; s < 2; s++) {
      int t = m->edge_tri[2 * f.id + s];
      if (t < 0) {
        continue;  // open border
      }
      const int *c = m->tri + 3 * t;
      int w = c[0] != e[0] && c[0] != e[1] ? c[0] : c[1] != e[0] && c[1] != e[1] ? c[1] : c[2];
      // the face's inward direction: its third corner minus that corner's foot on the edge
      const double *x = m->vert + 3 * w;
      double aw[3], in[3];
      geo_v3_sub(aw, x, a);
      geo_v3_madd(in, aw, -(geo_v3_dot(aw, ab) / l2), ab);
      if (geo_v3_dot(in, d) > GEO_MESH_DESCEND_TOL * dn * geo_v3_norm(in)) {
        return 1;
      }
    }
  }
  return 0;
}
