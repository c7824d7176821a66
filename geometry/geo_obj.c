// Wavefront OBJ reader: v and f lines, everything else ignored. See geo_mesh.h.
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_err.h"
#include "geo_mesh.h"

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Token [*s, *e) within [p, end): returns 0 when none is left.
static int next_token(const char **p, const char *end, const char **s, const char **e) {
  const char *q = *p;
  while (q < end && is_space(*q)) q++;
  if (q >= end) return 0;
  *s = q;
  while (q < end && !is_space(*q)) q++;
  *e = q;
  *p = q;
  return 1;
}

// Whole token as a finite-or-not double in the C locale. 0 ok, -1 malformed.
static int parse_double(const char *s, const char *e, double *out) {
  char tmp[128];
  size_t n = (size_t)(e - s);
  if (n == 0 || n >= sizeof tmp) return -1;
  memcpy(tmp, s, n);
  tmp[n] = 0;
  char *end;
  *out = strtod(tmp, &end);
  return (end == tmp + n) ? 0 : -1;
}

// Leading integer of a face corner "i", "i/j", "i//k", "i/j/k". 0 ok, -1 malformed,
// -2 magnitude too large.
static int parse_corner(const char *s, const char *e, long long *out) {
  const char *q = s;
  int neg = 0;
  if (q < e && (*q == '-' || *q == '+')) neg = (*q++ == '-');
  if (q >= e || *q < '0' || *q > '9') return -1;
  long long v = 0;
  int big = 0;
  while (q < e && *q >= '0' && *q <= '9') {
    if (v < 100000000000LL) v = v * 10 + (*q - '0');
    else big = 1;
    q++;
  }
  if (q < e && *q != '/') return -1;
  for (; q < e; q++)
    if (!((*q >= '0' && *q <= '9') || *q == '/' || *q == '-' || *q == '+')) return -1;
  if (big) return -2;
  *out = neg ? -v : v;
  return 0;
}

static void tok_str(char *buf, size_t sz, const char *s, const char *e) {
  size_t n = (size_t)(e - s);
  if (n > 40) n = 40;
  memcpy(buf, s, n);
  buf[n] = 0;
  if ((size_t)(e - s) > n && sz > 45) strcat(buf, "...");
}

typedef struct obj_state {
  double *v;
  int nv, vcap;
  int *t, *tline;
  int nt, tcap;
} obj_state;

static int grow_v(obj_state *st) {
  if (st->nv < st->vcap) return 0;
  int nc = st->vcap ? st->vcap * 2 : 1024;
  if (nc > GEO_MESH_MAX_VERT) nc = GEO_MESH_MAX_VERT;
  double *nvp = realloc(st->v, (size_t)nc * 3 * sizeof *nvp);
  if (!nvp) return -1;
  st->v = nvp;
  st->vcap = nc;
  return 0;
}

static int grow_t(obj_state *st) {
  if (st->nt < st->tcap) return 0;
  int nc = st->tcap ? st->tcap * 2 : 1024;
  if (nc > GEO_MESH_MAX_TRI) nc = GEO_MESH_MAX_TRI;
  int *a = realloc(st->t, (size_t)nc * 3 * sizeof *a);
  if (!a) return -1;
  st->t = a;
  int *b = realloc(st->tline, (size_t)nc * sizeof *b);
  if (!b) return -1;
  st->tline = b;
  st->tcap = nc;
  return 0;
}

static geo_mesh *parse(const char *buf, size_t len, const char *src, char *err, size_t err_sz) {
  obj_state st = {0};
  geo_mesh *m = NULL;
  const char *p = buf, *end = buf + len;
  int line = 0;
  int *corner = NULL;  // corners of the current face
  size_t ccap = 0;
  char tb[48];
  while (p < end) {
    line++;
    const char *le = memchr(p, '\n', (size_t)(end - p));
    if (!le) le = end;
    const char *hash = memchr(p, '#', (size_t)(le - p));
    const char *ce = hash ? hash : le;
    const char *q = p, *s, *e;
    p = (le < end) ? le + 1 : end;
    if (!next_token(&q, ce, &s, &e)) continue;
    if (e - s == 1 && *s == 'v') {
      double x[3];
      int k = 0;
      while (k < 3 && next_token(&q, ce, &s, &e)) {
        if (parse_double(s, e, &x[k]) != 0) {
          tok_str(tb, sizeof tb, s, e);
          geo_set_err(err, err_sz, "%s:%d: malformed number '%s' in vertex", src, line, tb);
          goto fail;
        }
        if (!isfinite(x[k])) {
          tok_str(tb, sizeof tb, s, e);
          geo_set_err(err, err_sz, "%s:%d: non-finite vertex coordinate '%s'", src, line, tb);
          goto fail;
        }
        if (fabs(x[k]) > GEO_MESH_MAX_COORD) {
          geo_set_err(err, err_sz, "%s:%d: vertex coordinate %g exceeds the cap |x| <= %g m", src,
                  line, x[k], GEO_MESH_MAX_COORD);
          goto fail;
        }
        k++;
      }
      if (k < 3) {
        geo_set_err(err, err_sz, "%s:%d: vertex needs 3 coordinates, got %d", src, line, k);
        goto fail;
      }
      if (st.nv >= GEO_MESH_MAX_VERT) {
        geo_set_err(err, err_sz, "%s:%d: too many vertices (cap %d)", src, line, GEO_MESH_MAX_VERT);
        goto fail;
      }
      if (grow_v(&st)) goto oom;
      memcpy(st.v + 3 * (size_t)st.nv, x, sizeof x);
      st.nv++;
    } else if (e - s == 1 && *s == 'f') {
      size_t nc = 0;
      while (next_token(&q, ce, &s, &e)) {
        long long idx = 0;
        int r = parse_corner(s, e, &idx);
        tok_str(tb, sizeof tb, s, e);
        if (r == -1) {
          geo_set_err(err, err_sz, "%s:%d: malformed face corner '%s'", src, line, tb);
          goto fail;
        }
        if (r == -2 || idx > GEO_MESH_MAX_VERT || idx < -(long long)GEO_MESH_MAX_VERT) {
          geo_set_err(err, err_sz, "%s:%d: vertex index %s out of range", src, line, tb);
          goto fail;
        }
        if (idx == 0) {
          geo_set_err(err, err_sz, "%s:%d: vertex index 0 is invalid (OBJ indices start at 1)", src,
                  line);
          goto fail;
        }
        long long v;
        if (idx < 0) {
          v = st.nv + idx;
          if (v < 0) {
            geo_set_err(err, err_sz,
                    "%s:%d: vertex index %lld out of range (only %d vertices defined so far)", src,
                    line, idx, st.nv);
            goto fail;
          }
        } else {
          v = idx - 1;  // checked against the final count after the last line
        }
        if (nc == ccap) {
          size_t ncap = ccap ? 2 * ccap : 16;
          int *a = realloc(corner, ncap * sizeof *a);
          if (!a) goto oom;
          corner = a;
          ccap = ncap;
        }
        corner[nc++] = (int)v;
      }
      if (nc < 3) {
        geo_set_err(err, err_sz, "%s:%d: face with %d vertices (need at least 3)", src, line, (int)nc);
        goto fail;
      }
      for (size_t i = 1; i + 1 < nc; i++) {
        if (st.nt >= GEO_MESH_MAX_TRI) {
          geo_set_err(err, err_sz, "%s:%d: too many triangles (cap %d)", src, line, GEO_MESH_MAX_TRI);
          goto fail;
        }
        if (grow_t(&st)) goto oom;
        st.t[3 * (size_t)st.nt] = corner[0];
        st.t[3 * (size_t)st.nt + 1] = corner[i];
        st.t[3 * (size_t)st.nt + 2] = corner[i + 1];
        st.tline[st.nt] = line;
        st.nt++;
      }
    }
    // every other statement is ignored
  }
  if (st.nv == 0) {
    geo_set_err(err, err_sz, "%s: empty mesh (no vertices)", src);
    goto fail;
  }
  if (st.nt == 0) {
    geo_set_err(err, err_sz, "%s: empty mesh (no faces)", src);
    goto fail;
  }
  for (int i = 0; i < 3 * st.nt; i++) {
    if (st.t[i] >= st.nv) {
      geo_set_err(err, err_sz, "%s:%d: vertex index %d out of range (the file defines %d vertices)",
              src, st.tline[i / 3], st.t[i] + 1, st.nv);
      goto fail;
    }
  }
  m = geo_mesh_new_lines(st.v, st.nv, st.t, st.nt, src, st.tline, err, err_sz);
  goto done;
oom:
  geo_set_err(err, err_sz, "%s:%d: out of memory", src, line);
fail:
done:
  free(corner);
  free(st.v);
  free(st.t);
  free(st.tline);
  return m;
}

geo_mesh *geo_mesh_parse_obj(const char *buf, size_t len, const char *name, char *err,
                             size_t err_sz) {
  const char *src = (name && name[0]) ? name : "obj";
  if (!buf && len) {
    geo_set_err(err, err_sz, "%s: no buffer", src);
    return NULL;
  }
  // Numbers are read in the C locale whatever the process locale (thread-local switch).
  locale_t cl = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = cl ? uselocale(cl) : (locale_t)0;
  geo_mesh *m = parse(buf ? buf : "", len, src, err, err_sz);
  if (cl) {
    uselocale(old);
    freelocale(cl);
  }
  return m;
}
