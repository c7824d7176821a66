// `ccsim geom`: the geometry engine from the command line, for users and for checking
// against other engines.
//
//   ccsim geom proximity A B [--pose-a "x y z qw qx qy qz"] [--pose-b "..."]
//                            [--standoff D] [--repeat N] [--json]
//
// A and B are mesh files (.obj, .stl) or primitive specs:
//   box:SX,SY,SZ            full edge lengths [m]
//   sphere:R[,SLICES,STACKS]
//   cylinder:R,H[,SEGMENTS]
//   cone:R,H[,SEGMENTS[,RINGS]]
//   torus:R,r[,NMAJOR,NMINOR]
// Prints every witness pair closer than the standoff (after merging by feature identity),
// the pair counts before and after merging, the minimum distance and the query times.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geo_bvh.h"
#include "geo_mesh.h"
#include "geo_prim.h"
#include "cli.h"
#include "geo_query.h"
#include "ccsim_status.h"

// Entry point of `ccsim geom ...` (argv[0] == "geom"). Returns the process exit status:
// 0 success, 1 failure (bad mesh, query error), 2 usage error. Messages go to stderr.
int cli_geom_main(int argc, char **argv);

static void usage(FILE *f) {
  fprintf(f,
          "usage: ccsim geom proximity A B [--pose-a \"x y z qw qx qy qz\"] [--pose-b \"...\"]\n"
          "                              [--standoff D] [--repeat N] [--json]\n"
          "A, B: mesh file (.obj, .stl) or primitive spec:\n"
          "  box:SX,SY,SZ  sphere:R[,SLICES,STACKS]  cylinder:R,H[,SEGMENTS]\n"
          "  cone:R,H[,SEGMENTS[,RINGS]]  torus:R,r[,NMAJOR,NMINOR]\n"
          "Poses are body -> world, metres and a unit quaternion (w x y z); default identity.\n"
          "The standoff D [m] defaults to 0.001.\n");
}

// parse up to max comma-separated numbers after "name:"; returns the count or -1
static int parse_numbers(const char *s, double *out, int max) {
  int n = 0;
  const char *p = s;
  while (*p != '\0') {
    if (n == max) {
      return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno != 0 || !isfinite(v)) {
      return -1;
    }
    out[n++] = v;
    p = end;
    if (*p == ',') {
      p++;
      if (*p == '\0') {
        return -1;
      }
    } else if (*p != '\0') {
      return -1;
    }
  }
  return n;
}

static int as_int(double v, int *out) {
  if (v != (double)(int)v) {
    return -1;
  }
  *out = (int)v;
  return 0;
}

// a primitive spec or a mesh file
static geo_mesh *load_shape(const char *spec, char *err, size_t err_sz) {
  static const char *names[] = {"box:", "sphere:", "cylinder:", "cone:", "torus:"};
  for (int k = 0; k < 5; k++) {
    size_t len = strlen(names[k]);
    if (strncmp(spec, names[k], len) != 0) {
      continue;
    }
    double v[4];
    int n = parse_numbers(spec + len, v, 4), i1 = 0, i2 = 0;
    switch (k) {
    case 0:
      if (n != 3) {
        break;
      }
      return geo_mesh_box(v[0], v[1], v[2], err, err_sz);
    case 1:
      if (!(n == 1 || n == 3) || (n == 3 && (as_int(v[1], &i1) || as_int(v[2], &i2)))) {
        break;
      }
      return geo_mesh_sphere(v[0], i1, i2, err, err_sz);
    case 2:
      if (!(n == 2 || n == 3) || (n == 3 && as_int(v[2], &i1))) {
        break;
      }
      return geo_mesh_cylinder(v[0], v[1], i1, err, err_sz);
    case 3:
      if (n < 2 || (n >= 3 && as_int(v[2], &i1)) || (n == 4 && as_int(v[3], &i2))) {
        break;
      }
      return geo_mesh_cone(v[0], v[1], i1, i2, err, err_sz);
    default:
      if (!(n == 2 || n == 4) || (n == 4 && (as_int(v[2], &i1) || as_int(v[3], &i2)))) {
        break;
      }
      return geo_mesh_torus(v[0], v[1], i1, i2, err, err_sz);
    }
    ccsim_set_err(err, err_sz, "%s: bad primitive spec (see ccsim geom --help)", spec);
    return NULL;
  }
  return geo_mesh_load(spec, err, err_sz);
}

static int parse_pose(const char *s, geo_pose *x) {
  double v[7];
  const char *p = s;
  for (int i = 0; i < 7; i++) {
    char *end;
    errno = 0;
    v[i] = strtod(p, &end);
    if (end == p || errno != 0 || !isfinite(v[i])) {
      return -1;
    }
    p = end;
  }
  while (*p == ' ' || *p == '\t') {
    p++;
  }
  if (*p != '\0') {
    return -1;
  }
  memcpy(x->p, v, 3 * sizeof *v);
  memcpy(x->q, v + 3, 4 * sizeof *v);
  return geo_pose_valid(x) ? 0 : -1;
}

// s as a JSON string literal
static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      printf("\\%c", c);
    } else if (c < 0x20) {
      printf("\\u%04x", c);
    } else {
      putchar(c);
    }
  }
  putchar('"');
}

static const char *feat_name(int type) {
  return type == GEO_FEAT_VERTEX ? "vertex" : (type == GEO_FEAT_EDGE ? "edge" : "face");
}

static int proximity(int argc, char **argv) {
  const char *spec[2] = {NULL, NULL};
  geo_pose x[2] = {geo_pose_identity(), geo_pose_identity()};
  double ds = 1e-3;
  int json = 0, repeat = 1;
  int npos = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if ((strcmp(a, "--pose-a") == 0 || strcmp(a, "--pose-b") == 0) && i + 1 < argc) {
      if (parse_pose(argv[++i], &x[a[7] == 'b']) != 0) {
        fprintf(stderr, "ccsim geom: %s: expected 7 finite numbers \"x y z qw qx qy qz\" with "
                        "a non-zero quaternion\n", a);
        return 2;
      }
    } else if (strcmp(a, "--standoff") == 0 && i + 1 < argc) {
      char *end;
      ds = strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !isfinite(ds) || ds < 0.0) {
        fprintf(stderr, "ccsim geom: --standoff: expected a finite distance >= 0 [m]\n");
        return 2;
      }
    } else if (strcmp(a, "--repeat") == 0 && i + 1 < argc) {
      char *end;
      long r = strtol(argv[++i], &end, 10);
      if (*end != '\0' || r < 1 || r > 1000000) {
        fprintf(stderr, "ccsim geom: --repeat: expected 1..1000000\n");
        return 2;
      }
      repeat = (int)r;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "ccsim geom: unknown or incomplete option %s\n", a);
      usage(stderr);
      return 2;
    } else if (npos < 2) {
      spec[npos++] = a;
    } else {
      fprintf(stderr, "ccsim geom: unexpected argument %s\n", a);
      return 2;
    }
  }
  if (npos != 2) {
    usage(stderr);
    return 2;
  }
  char err[512];
  int rc = 1;
  geo_mesh *m[2] = {NULL, NULL};
  geo_bvh *b[2] = {NULL, NULL};
  geo_query_ws *ws = NULL;
  geo_pair *out = NULL;
  for (int k = 0; k < 2; k++) {
    m[k] = load_shape(spec[k], err, sizeof err);
    if (m[k] == NULL) {
      fprintf(stderr, "ccsim geom: %s\n", err);
      goto done;
    }
    b[k] = geo_bvh_new(m[k], err, sizeof err);
    if (b[k] == NULL) {
      fprintf(stderr, "ccsim geom: %s\n", err);
      goto done;
    }
  }
  int cap = 1024, raw_cap = 65536;
  geo_prox_info info;
  double t_prox = 0.0, t_min = 0.0;
  for (;;) {
    geo_query_ws_destroy(&ws);
    free(out);
    ws = geo_query_ws_new(b[0], b[1], raw_cap, err, sizeof err);
    out = malloc((size_t)cap * sizeof *out);
    if (ws == NULL || out == NULL) {
      fprintf(stderr, "ccsim geom: out of memory\n");
      goto done;
    }
    int q = geo_proximity(b[0], &x[0], b[1], &x[1], ds, ws, NULL, out, cap, &info);
    if (q == GEO_QELIMIT) {
      // grow to the size the query reported (raw pairs first, then merged) and rerun
      if (info.n_raw > raw_cap) {
        raw_cap = info.n_raw;
        continue;
      }
      if (info.n > cap) {
        cap = info.n;
        continue;
      }
    }
    if (q != GEO_QOK) {
      fprintf(stderr, "ccsim geom: proximity query failed (%d)\n", q);
      goto done;
    }
    break;
  }
  // timing: best of `repeat` runs of each query
  geo_pair mp;
  for (int r = 0; r < repeat; r++) {
    double t0 = cli_now_s();
    geo_proximity(b[0], &x[0], b[1], &x[1], ds, ws, NULL, out, cap, &info);
    double t1 = cli_now_s();
    geo_min_distance(b[0], &x[0], b[1], &x[1], ws, NULL, &mp);
    double t2 = cli_now_s();
    if (r == 0 || t1 - t0 < t_prox) {
      t_prox = t1 - t0;
    }
    if (r == 0 || t2 - t1 < t_min) {
      t_min = t2 - t1;
    }
  }
  if (json) {
    printf("{\"a\":");
    json_str(m[0]->source);
    printf(",\"b\":");
    json_str(m[1]->source);
    printf(",\"standoff\":%.17g,\"pairs_raw\":%d,\"pairs\":%d,\"min_distance\":%.17g,"
           "\"proximity_seconds\":%.9g,\"min_distance_seconds\":%.9g,"
           "\"min_pair\":{\"tri_a\":%d,\"tri_b\":%d},\"witness\":[",
           ds, info.n_raw, info.n, mp.dist, t_prox, t_min, mp.tri_a, mp.tri_b);
    for (int i = 0; i < info.n; i++) {
      const geo_pair *p = &out[i];
      printf("%s\n{\"pa\":[%.17g,%.17g,%.17g],\"pb\":[%.17g,%.17g,%.17g],\"dist\":%.17g,"
             "\"normal\":[%.17g,%.17g,%.17g],\"fa\":{\"type\":\"%s\",\"id\":%d},"
             "\"fb\":{\"type\":\"%s\",\"id\":%d},\"tri_a\":%d,\"tri_b\":%d,\"touch\":%s,"
             "\"parallel\":%s}",
             i ? "," : "", p->pa[0], p->pa[1], p->pa[2], p->pb[0], p->pb[1], p->pb[2], p->dist,
             p->normal[0], p->normal[1], p->normal[2], feat_name(p->fa.type), p->fa.id,
             feat_name(p->fb.type), p->fb.id, p->tri_a, p->tri_b,
             (p->flags & GEO_PAIR_TOUCH) ? "true" : "false",
             (p->flags & GEO_PAIR_PARALLEL) ? "true" : "false");
    }
    printf("]}\n");
  } else {
    printf("A: %s (%d vertices, %d triangles)\nB: %s (%d vertices, %d triangles)\n",
           m[0]->source, m[0]->nvert, m[0]->ntri, m[1]->source, m[1]->nvert, m[1]->ntri);
    printf("standoff %.6g m: %d leaf pairs before merging, %d witness pairs after\n", ds,
           info.n_raw, info.n);
    printf("# fa       id   fb       id      dist [m]          pa (world) [m]                  "
           "            pb (world) [m]                              normal (A to B)\n");
    for (int i = 0; i < info.n; i++) {
      const geo_pair *p = &out[i];
      printf("%-6s %6d  %-6s %6d  %.9e  %+.9e %+.9e %+.9e  %+.9e %+.9e %+.9e  %+.6f %+.6f "
             "%+.6f%s%s\n",
             feat_name(p->fa.type), p->fa.id, feat_name(p->fb.type), p->fb.id, p->dist,
             p->pa[0], p->pa[1], p->pa[2], p->pb[0], p->pb[1], p->pb[2], p->normal[0],
             p->normal[1], p->normal[2], (p->flags & GEO_PAIR_TOUCH) ? " touch" : "",
             (p->flags & GEO_PAIR_PARALLEL) ? " parallel" : "");
    }
    printf("minimum distance %.12e m (triangles %d, %d)\n", mp.dist, mp.tri_a, mp.tri_b);
    printf("query time: proximity %.1f us, minimum distance %.1f us (best of %d)\n",
           1e6 * t_prox, 1e6 * t_min, repeat);
  }
  rc = 0;
done:
  free(out);
  geo_query_ws_destroy(&ws);
  for (int k = 0; k < 2; k++) {
    geo_bvh_destroy(&b[k]);
    geo_mesh_destroy(&m[k]);
  }
  return rc;
}

int cli_geom_main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "proximity") == 0) {
    return proximity(argc, argv);
  }
  fprintf(stderr, "ccsim geom: unknown command %s\n", argv[1]);
  usage(stderr);
  return 2;
}
