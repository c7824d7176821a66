// Triangle meshes: validated, welded, with edge and vertex adjacency so every point of the
// surface can be named by its feature (vertex, edge or face id). Immutable once built;
// safe to share between threads.
//
// Conventions
// - Body frame, metres. Triangles are counter-clockwise seen from outside, so
//   (v1 - v0) x (v2 - v0) points outward.
// - Return codes: functions returning int give 0 on success and a negative value on error;
//   constructors return NULL. Either way a message goes to err (nullable, err_sz bytes,
//   always NUL-terminated, truncated if needed) in the form "SOURCE[:LINE]: reason" or
//   "SOURCE: triangle T: reason". No message string ever needs freeing.
//
// Validation (geo_mesh_new and every reader) rejects:
//   empty meshes (no vertices or no triangles); counts above the caps below; non-finite coordinates; |coordinate| > GEO_MESH_MAX_COORD;
//   out-of-range vertex indices; degenerate triangles (two corners on the same welded
//   vertex, or zero area: |(v1-v0)x(v2-v0)| <= GEO_MESH_DEGEN_REL * (longest side)^2, i.e.
//   collinear corners up to rounding); duplicate triangles (the same three welded
//   vertices in any order or orientation).
// It accepts, and reports through the fields below, open borders, non-manifold edges
// (more than two faces) and inconsistent orientation: such a mesh has closed == 0.
//
// Welding: vertices are merged when their coordinates are exactly equal (+0 and -0 are
// equal). No tolerance: exact welding is deterministic, never changes a coordinate and
// never collapses a small feature; the formats we read (STL with repeated vertices,
// OBJ with shared indices) produce exact duplicates. Vertices that no triangle uses are
// dropped. Welded vertex ids follow the order of first appearance in the input, so an
// input without duplicates or unused vertices keeps its vertex ids; triangle ids are
// always the input triangle order (fan-triangulated polygons in order for OBJ).
//
// Numbering, all deterministic:
// - edge ids in order of first appearance scanning tri[3t+k], t = 0.., k = 0..2;
// - edge_tri[2e] is the first triangle (lowest id) using edge e, edge_tri[2e+1] the second
//   (-1 on an open border); for a non-manifold edge, the two lowest triangle ids;
// - CSR lists (vert_tri, vert_edge) are sorted by increasing id.
#ifndef GEO_MESH_H
#define GEO_MESH_H

#include <stddef.h>

#define GEO_MESH_MAX_VERT 10000000   // cap on welded vertices (and OBJ "v" lines); the
                                     // input array of geo_mesh_new may hold up to
                                     // 3 * GEO_MESH_MAX_TRI (a triangle soup)
#define GEO_MESH_MAX_TRI 10000000    // cap on triangles (after fan triangulation)
#define GEO_MESH_MAX_COORD 1.0e6     // [m] cap on |coordinate|
#define GEO_MESH_DEGEN_REL 1.0e-12   // zero-area test, relative to the longest side squared
#define GEO_MESH_MAX_FILE (1u << 30) // [bytes] geo_mesh_load refuses larger files

typedef enum geo_feature_type { GEO_FEAT_VERTEX = 0, GEO_FEAT_EDGE = 1, GEO_FEAT_FACE = 2 } geo_feature_type;
typedef struct geo_feature { int type; int id; } geo_feature;   // id into vert / edge / tri

typedef struct geo_mesh {
  int nvert, ntri, nedge;
  double *vert;        // (nvert x 3) welded vertices, body frame [m]
  int *tri;            // (ntri x 3) vertex ids, counter-clockwise seen from outside
  double *tri_normal;  // (ntri x 3) unit normals (v1-v0)x(v2-v0)/|..|; outward when closed
  double *tri_area;    // (ntri) [m^2]
  int *edge;           // (nedge x 2) vertex ids, edge[2e] < edge[2e+1]
  int *edge_tri;       // (nedge x 2) the faces on each side; -1 on an open border
  int *tri_edge;       // (ntri x 3) edge id of side k = (tri[3t+k], tri[3t+(k+1)%3])
  int *vert_tri_start, *vert_tri;    // CSR: triangles around each vertex (nvert+1 starts)
  int *vert_edge_start, *vert_edge;  // CSR: edges around each vertex (nvert+1 starts)
  double aabb_min[3], aabb_max[3];   // [m] bounding box of the vertices
  int closed;          // 1 when every edge has exactly two faces that traverse it in
                       // opposite directions (watertight, manifold, consistently oriented)
  int n_border_edges;       // edges with one face
  int n_nonmanifold_edges;  // edges with more than two faces
  int n_misoriented_edges;  // two-face edges traversed in the same direction by both
  double volume;       // [m^3] signed volume enclosed (divergence theorem); meaningful when
                       // closed, and then negative when the mesh is inside out
  char source[128];    // where it came from ("file.obj", "box", ...), for messages
} geo_mesh;

// Validate, weld, build adjacency; copies the input (vert: nvert x 3 doubles, tri: ntri x 3
// ids, both borrowed for the call). source names the mesh in messages (nullable).
// Returns a new mesh (caller owns; free with geo_mesh_destroy) or NULL + message.
geo_mesh *geo_mesh_new(const double *vert, int nvert, const int *tri, int ntri,
                       const char *source, char *err, size_t err_sz);
// As geo_mesh_new, for readers: tri_line (ntri ints, nullable) gives the source line of
// each triangle, so messages read "source:LINE: triangle T: reason".
geo_mesh *geo_mesh_new_lines(const double *vert, int nvert, const int *tri, int ntri,
                             const char *source, const int *tri_line, char *err,
                             size_t err_sz);
// Free and set *m = NULL. NULL-safe.
void geo_mesh_destroy(geo_mesh **m);

// Read a file: .obj or .stl by extension (case-insensitive); otherwise by content
// (binary STL if the size matches its triangle count, "solid" + "facet" -> ascii STL, else
// OBJ). Files larger than GEO_MESH_MAX_FILE are refused.
geo_mesh *geo_mesh_load(const char *path, char *err, size_t err_sz);

// A file's contents (buf[0, len), borrowed) read as geo_mesh_load reads a file: OBJ or STL
// by name's extension (nullable), else by content. Messages name name and line.
geo_mesh *geo_mesh_parse(const unsigned char *buf, size_t len, const char *name, char *err,
                         size_t err_sz);

// The triangles geo_mesh_parse would read from buf, counted without parsing numbers or
// allocating (a binary STL's declared count; "facet" lines; OBJ faces fanned): for limits
// checked before a mesh is built. Malformed content counts what it has; the parse refuses it.
long long geo_mesh_file_triangles(const unsigned char *buf, size_t len, const char *name);

// Wavefront OBJ from memory (buf need not be NUL-terminated). Reads "v x y z [w|r g b]" and
// "f" lines; face corners may be "v", "v/vt", "v//vn" or "v/vt/vn"; negative indices count
// back from the last vertex read; polygons are fan-triangulated (v0, vi, vi+1). Comments
// (#), blank lines, CRLF and every other statement (vt, vn, g, o, s, usemtl, mtllib, l, p,
// ...) are ignored. Numbers are read in the C locale whatever the process locale.
// name labels messages ("name:LINE: reason").
geo_mesh *geo_mesh_parse_obj(const char *buf, size_t len, const char *name, char *err,
                             size_t err_sz);
// STL, ascii or binary. Binary when len == 84 + 50 * declared count (the declared count is
// checked against the length before anything is allocated), else ascii if it starts
// with "solid", else an error. Facet normals in the file are ignored (recomputed from the
// vertex order). Messages: "name: triangle T: reason" (binary), "name:LINE: reason" (ascii).
geo_mesh *geo_mesh_parse_stl(const unsigned char *buf, size_t len, const char *name,
                             char *err, size_t err_sz);

// 0 when m bounds a solid: closed (see the field) with positive volume, so its triangles are
// counter-clockwise seen from outside, as contact and mass properties assume. Else a
// negative value and a message in err (nullable) naming the first problem found, in this
// order (ids are the welded mesh's, from 0, with positions): open borders (a few border
// edges and how many), edges with more than two faces, a triangle wound against its
// neighbour (the one with the most such edges: a single flipped triangle is named), inside
// out (negative volume; fix: reverse every triangle's winding). Allocates nedge ints of
// scratch; out of memory is reported as such. m is borrowed for the call.
int geo_mesh_check_solid(const geo_mesh *m, char *err, size_t err_sz);

#define GEO_MESH_DESCEND_TOL 1e-9  // cosine allowance of geo_mesh_descends for rounding

// 1 when some direction along m's surface away from feature f (an edge leaving a vertex,
// the inward direction of a face beside an edge) makes an acute angle with d, body frame,
// beyond a rounding allowance; else 0 (always 0 for a face or d = 0). With d pointing from
// a witness point on f to the other body's witness point, 1 says the surface comes closer
// just off f: the pair is not a closest point of m's surface, only of one triangle.
// m and d are borrowed for the call; f must be a feature of m (not checked). Pure.
int geo_mesh_descends(const geo_mesh *m, geo_feature f, const double d[3]);

#endif
