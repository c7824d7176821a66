// STL reader, ascii and binary. See geo_mesh.h.
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_err.h"
#include "geo_mesh.h"

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float lef32(const unsigned char *p) {
  uint32_t u = le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static geo_mesh *parse_binary(const unsigned char *buf, size_t len, uint32_t n, const char *src,
                              char *err, size_t err_sz) {
  (void)len;  // the caller checked len == 84 + 50 n
  if (n == 0) {
    geo_set_err(err, err_sz, "%s: empty mesh (binary STL with 0 triangles)", src);
    return NULL;
  }
  if (n > GEO_MESH_MAX_TRI) {
    geo_set_err(err, err_sz, "%s: too many triangles (%u > cap %d)", src, n, GEO_MESH_MAX_TRI);
    return NULL;
  }
  double *v = malloc((size_t)n * 9 * sizeof *v);
  int *t = malloc((size_t)n * 3 * sizeof *t);
  geo_mesh *m = NULL;
  if (!v || !t) {
    geo_set_err(err, err_sz, "%s: out of memory (%u triangles)", src, n);
    goto done;
  }
  for (uint32_t i = 0; i < n; i++) {
    const unsigned char *rec = buf + 84 + 50 * (size_t)i + 12;  // skip the normal
    for (int k = 0; k < 9; k++) {
      double x = lef32(rec + 4 * k);
      if (!isfinite(x)) {
        geo_set_err(err, err_sz, "%s: triangle %u: non-finite coordinate (corner %d, %c = %g)", src,
                i, k / 3, "xyz"[k % 3], x);
        goto done;
      }
      if (fabs(x) > GEO_MESH_MAX_COORD) {
        geo_set_err(err, err_sz,
                "%s: triangle %u: coordinate %g (corner %d, %c) exceeds the cap |x| <= %g m", src,
                i, x, k / 3, "xyz"[k % 3], GEO_MESH_MAX_COORD);
        goto done;
      }
      v[9 * (size_t)i + k] = x;
    }
    for (int k = 0; k < 3; k++) t[3 * (size_t)i + k] = (int)(3 * i + (uint32_t)k);
  }
  m = geo_mesh_new_lines(v, (int)(3 * n), t, (int)n, src, NULL, err, err_sz);
done:
  free(v);
  free(t);
  return m;
}

// --- ascii ---------------------------------------------------------------------------

typedef struct lexer {
  const char *p, *end;
  int line;  // line of the current position
  const char *s, *e;
  int tline;  // line of the last token
} lexer;

static int is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int lex(lexer *L) {
  while (L->p < L->end && is_ws(*L->p)) {
    if (*L->p == '\n') L->line++;
    L->p++;
  }
  if (L->p >= L->end) return 0;
  L->s = L->p;
  L->tline = L->line;
  while (L->p < L->end && !is_ws(*L->p)) L->p++;
  L->e = L->p;
  return 1;
}

static void skip_line(lexer *L) {
  while (L->p < L->end && *L->p != '\n') L->p++;
}

static int tok_is(const lexer *L, const char *kw) {  // case-insensitive keyword
  size_t n = strlen(kw);
  if ((size_t)(L->e - L->s) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = L->s[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != kw[i]) return 0;
  }
  return 1;
}

static void tok_str(char *buf, const lexer *L) {  // buf >= 48 bytes
  size_t n = (size_t)(L->e - L->s);
  size_t k = n > 40 ? 40 : n;
  for (size_t i = 0; i < k; i++) {
    unsigned char c = (unsigned char)L->s[i];
    buf[i] = (c >= 32 && c < 127) ? (char)c : '?';
  }
  buf[k] = 0;
  if (n > k) strcat(buf, "...");
}

static int tok_double(const lexer *L, double *out) {
  char tmp[128];
  size_t n = (size_t)(L->e - L->s);
  if (n == 0 || n >= sizeof tmp) return -1;
  memcpy(tmp, L->s, n);
  tmp[n] = 0;
  char *end;
  *out = strtod(tmp, &end);
  return end == tmp + n ? 0 : -1;
}

typedef struct ascii_out {
  double *v;
  int *t, *tline;
  int nt, cap;
} ascii_out;

// Next token must be kw. 0 ok, -1 error (message set).
static int expect(lexer *L, const char *kw, const char *src, char *err, size_t err_sz) {
  if (!lex(L)) {
    geo_set_err(err, err_sz, "%s:%d: unexpected end of file, expected '%s'", src, L->line, kw);
    return -1;
  }
  if (!tok_is(L, kw)) {
    char tb[48];
    tok_str(tb, L);
    geo_set_err(err, err_sz, "%s:%d: expected '%s', got '%s'", src, L->tline, kw, tb);
    return -1;
  }
  return 0;
}

static int number(lexer *L, double *x, const char *what, const char *src, char *err,
                  size_t err_sz) {
  char tb[48];
  if (!lex(L)) {
    geo_set_err(err, err_sz, "%s:%d: unexpected end of file in %s", src, L->line, what);
    return -1;
  }
  if (tok_double(L, x) != 0) {
    tok_str(tb, L);
    geo_set_err(err, err_sz, "%s:%d: malformed number '%s' in %s", src, L->tline, tb, what);
    return -1;
  }
  return 0;
}

static geo_mesh *parse_ascii(const unsigned char *buf, size_t len, const char *src, char *err,
                             size_t err_sz) {
  lexer L = {(const char *)buf, (const char *)buf + len, 1, NULL, NULL, 1};
  ascii_out o = {0};
  geo_mesh *m = NULL;
  char tb[48];
  if (expect(&L, "solid", src, err, err_sz)) goto done;
  skip_line(&L);  // the solid's name
  for (;;) {
    if (!lex(&L)) break;  // a missing final "endsolid" is tolerated
    if (tok_is(&L, "endsolid")) {
      skip_line(&L);
      if (!lex(&L)) break;
      if (!tok_is(&L, "solid")) {
        tok_str(tb, &L);
        geo_set_err(err, err_sz, "%s:%d: expected 'solid' or end of file after 'endsolid', got '%s'",
                src, L.tline, tb);
        goto done;
      }
      skip_line(&L);
      continue;
    }
    if (!tok_is(&L, "facet")) {
      tok_str(tb, &L);
      geo_set_err(err, err_sz, "%s:%d: expected 'facet' or 'endsolid', got '%s'", src, L.tline, tb);
      goto done;
    }
    int fline = L.tline;
    double x;
    if (expect(&L, "normal", src, err, err_sz)) goto done;
    for (int k = 0; k < 3; k++)  // read and ignored: the normal is recomputed
      if (number(&L, &x, "facet normal", src, err, err_sz)) goto done;
    if (expect(&L, "outer", src, err, err_sz) || expect(&L, "loop", src, err, err_sz)) goto done;
    if (o.nt >= GEO_MESH_MAX_TRI) {
      geo_set_err(err, err_sz, "%s:%d: too many triangles (cap %d)", src, fline, GEO_MESH_MAX_TRI);
      goto done;
    }
    if (o.nt == o.cap) {
      int nc = o.cap ? 2 * o.cap : 1024;
      if (nc > GEO_MESH_MAX_TRI) nc = GEO_MESH_MAX_TRI;
      double *nv = realloc(o.v, (size_t)nc * 9 * sizeof *nv);
      if (nv) o.v = nv;
      int *nt = realloc(o.t, (size_t)nc * 3 * sizeof *nt);
      if (nt) o.t = nt;
      int *nl = realloc(o.tline, (size_t)nc * sizeof *nl);
      if (nl) o.tline = nl;
      if (!nv || !nt || !nl) {
        geo_set_err(err, err_sz, "%s:%d: out of memory", src, fline);
        goto done;
      }
      o.cap = nc;
    }
    for (int c = 0; c < 3; c++) {
      if (expect(&L, "vertex", src, err, err_sz)) goto done;
      for (int k = 0; k < 3; k++) {
        if (number(&L, &x, "vertex", src, err, err_sz)) goto done;
        if (!isfinite(x)) {
          tok_str(tb, &L);
          geo_set_err(err, err_sz, "%s:%d: non-finite vertex coordinate '%s'", src, L.tline, tb);
          goto done;
        }
        if (fabs(x) > GEO_MESH_MAX_COORD) {
          geo_set_err(err, err_sz, "%s:%d: vertex coordinate %g exceeds the cap |x| <= %g m", src,
                  L.tline, x, GEO_MESH_MAX_COORD);
          goto done;
        }
        o.v[9 * (size_t)o.nt + 3 * c + k] = x;
      }
      o.t[3 * (size_t)o.nt + c] = 3 * o.nt + c;
    }
    if (expect(&L, "endloop", src, err, err_sz) || expect(&L, "endfacet", src, err, err_sz))
      goto done;
    o.tline[o.nt] = fline;
    o.nt++;
  }
  if (o.nt == 0) {
    geo_set_err(err, err_sz, "%s: empty mesh (ascii STL with no facets)", src);
    goto done;
  }
  m = geo_mesh_new_lines(o.v, 3 * o.nt, o.t, o.nt, src, o.tline, err, err_sz);
done:
  free(o.v);
  free(o.t);
  free(o.tline);
  return m;
}

geo_mesh *geo_mesh_parse_stl(const unsigned char *buf, size_t len, const char *name,
                             char *err, size_t err_sz) {
  const char *src = (name && name[0]) ? name : "stl";
  if (!buf || len == 0) {
    geo_set_err(err, err_sz, "%s: empty file", src);
    return NULL;
  }
  if (len >= 84) {
    uint32_t n = le32(buf + 80);
    if ((uint64_t)len == 84 + 50 * (uint64_t)n) return parse_binary(buf, len, n, src, err, err_sz);
  }
  size_t i = 0;
  while (i < len && is_ws((char)buf[i])) i++;
  int ascii = len - i >= 5;
  for (size_t k = 0; ascii && k < 5; k++) {
    char c = (char)buf[i + k];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != "solid"[k]) ascii = 0;
  }
  if (ascii && len >= 84 && memchr(buf, 0, len)) ascii = 0;  // binary with a "solid" header
  if (ascii) {
    locale_t cl = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = cl ? uselocale(cl) : (locale_t)0;
    geo_mesh *m = parse_ascii(buf, len, src, err, err_sz);
    if (cl) {
      uselocale(old);
      freelocale(cl);
    }
    return m;
  }
  if (len >= 84) {
    uint32_t n = le32(buf + 80);
    geo_set_err(err, err_sz,
            "%s: binary STL declares %u triangles, which needs %llu bytes, but the file has %zu "
            "bytes",
            src, n, (unsigned long long)(84 + 50 * (uint64_t)n), len);
  } else {
    geo_set_err(err, err_sz,
            "%s: not an STL file (%zu bytes: too short for binary, no 'solid' header for ascii)",
            src, len);
  }
  return NULL;
}
