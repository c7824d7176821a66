// Reading a mesh file or a file's bytes: the dispatcher over the OBJ and STL readers
// (geo_obj.c, geo_stl.c),
// which build their meshes with geo_mesh_new_lines; kept apart from geo_mesh.c so calls go
// one way, file -> reader -> mesh.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geo_err.h"
#include "geo_mesh.h"

static int ends_with_ci(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  if (n < k) return 0;
  for (size_t i = 0; i < k; i++) {
    char a = s[n - k + i], b = suf[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (a != b) return 0;
  }
  return 1;
}

geo_mesh *geo_mesh_load(const char *path, char *err, size_t err_sz) {
  if (!path || !path[0]) {
    geo_set_err(err, err_sz, "geo_mesh_load: no path given");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    geo_set_err(err, err_sz, "%s: cannot open", path);
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    geo_set_err(err, err_sz, "%s: out of memory", path);
    return NULL;
  }
  for (;;) {
    if (len == cap) {
      if (cap > GEO_MESH_MAX_FILE) {  // read GEO_MESH_MAX_FILE + 1 bytes: too large
        free(buf);
        fclose(f);
        geo_set_err(err, err_sz, "%s: file larger than the cap of %u bytes", path,
                (unsigned)GEO_MESH_MAX_FILE);
        return NULL;
      }
      size_t ncap = cap * 2;
      if (ncap > (size_t)GEO_MESH_MAX_FILE + 1) ncap = (size_t)GEO_MESH_MAX_FILE + 1;
      unsigned char *nb = realloc(buf, ncap);
      if (!nb) {
        free(buf);
        fclose(f);
        geo_set_err(err, err_sz, "%s: out of memory reading the file", path);
        return NULL;
      }
      buf = nb;
      cap = ncap;
    }
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (r == 0) break;
  }
  int rerr = ferror(f);
  fclose(f);
  if (rerr) {
    free(buf);
    geo_set_err(err, err_sz, "%s: read error", path);
    return NULL;
  }
  if (len > GEO_MESH_MAX_FILE) {
    free(buf);
    geo_set_err(err, err_sz, "%s: file larger than the cap of %u bytes", path,
            (unsigned)GEO_MESH_MAX_FILE);
    return NULL;
  }
  geo_mesh *m = geo_mesh_parse(buf, len, path, err, err_sz);
  free(buf);
  return m;
}

// 1 when buf holds STL: by name's extension, else by content as geo_mesh_load documents
static int is_stl_file(const unsigned char *buf, size_t len, const char *name) {
  if (name && ends_with_ci(name, ".stl")) return 1;
  if (name && ends_with_ci(name, ".obj")) return 0;
  // content: binary STL if the length matches its declared count, ascii STL if it starts
  // with "solid" and has a "facet", else OBJ
  if (len >= 84) {
    uint32_t n = (uint32_t)buf[80] | (uint32_t)buf[81] << 8 | (uint32_t)buf[82] << 16 |
                 (uint32_t)buf[83] << 24;
    if ((uint64_t)len == 84 + 50 * (uint64_t)n) return 1;
  }
  size_t i = 0;
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')) i++;
  if (len - i >= 5 && memcmp(buf + i, "solid", 5) == 0) {
    size_t lim = len < 4096 ? len : 4096;
    for (size_t j = i; j + 5 <= lim; j++) {
      if (memcmp(buf + j, "facet", 5) == 0) return 1;
    }
  }
  return 0;
}

geo_mesh *geo_mesh_parse(const unsigned char *buf, size_t len, const char *name, char *err,
                         size_t err_sz) {
  if (len > GEO_MESH_MAX_FILE) {
    geo_set_err(err, err_sz, "%s: file larger than the cap of %u bytes", name ? name : "mesh",
            (unsigned)GEO_MESH_MAX_FILE);
    return NULL;
  }
  if (is_stl_file(buf, len, name)) return geo_mesh_parse_stl(buf, len, name, err, err_sz);
  return geo_mesh_parse_obj((const char *)buf, len, name, err, err_sz);
}

static int is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

long long geo_mesh_file_triangles(const unsigned char *buf, size_t len, const char *name) {
  int stl = is_stl_file(buf, len, name);
  if (stl && len >= 84) {
    uint32_t n = (uint32_t)buf[80] | (uint32_t)buf[81] << 8 | (uint32_t)buf[82] << 16 |
                 (uint32_t)buf[83] << 24;
    if ((uint64_t)len == 84 + 50 * (uint64_t)n) return (long long)n;
  }
  // text: a line's first token "facet" (ascii STL) is one triangle; "f" (OBJ) is its
  // corners less two, as the reader fans it (comments after # do not count)
  long long nt = 0;
  const unsigned char *p = buf, *end = buf + len;
  while (p < end) {
    const unsigned char *le = memchr(p, '\n', (size_t)(end - p));
    if (!le) le = end;
    const unsigned char *q = p;
    p = le < end ? le + 1 : end;
    while (q < le && is_space(*q)) q++;
    if (stl) {
      nt += le - q >= 6 && memcmp(q, "facet", 5) == 0 && is_space(q[5]);
      continue;
    }
    if (le - q < 2 || q[0] != 'f' || !is_space(q[1])) continue;
    long long corners = 0;
    for (q++; q < le && *q != '#';) {
      while (q < le && is_space(*q)) q++;
      if (q == le || *q == '#') break;
      corners++;
      while (q < le && !is_space(*q) && *q != '#') q++;
    }
    nt += corners > 2 ? corners - 2 : 0;
  }
  return nt;
}
