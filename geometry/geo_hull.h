// Convex hull of a 3D point set (quickhull, Barber, Dobkin & Huhdanpaa 1996), stored as one
// compact, immutable, relocatable block: vertices, triangular faces with planes and face
// adjacency, edges, and per-vertex adjacency (CSR) for hill-climbing support mappings.
//
// Robustness: every visibility decision is an exact orientation sign (floating point with
// Shewchuk's error bound, exact expansion arithmetic when uncertain), so by exact signs no
// input point lies outside any face however coplanar, duplicated or noisy the input; a
// point on a face counts as inside; output planes are computed in extended precision. A
// final pass rebuilds the hull without vertices that are exactly in a flat region or on a
// straight edge (grids, boxes with points on their sides), so h->nvert counts true corners.
// Coplanar faces stay separate triangles (a flat square side is two faces).
// Coplanar input (all points within 4 tol of one plane; tol then grows by that thickness)
// gives a FLAT hull (h->flat = 1): the 2D convex polygon stored as a closed double-sided
// surface, a fan of triangles facing +n and a fan facing -n (V - E + F = 2 still holds).
// Collinear or coincident input (fewer than three affinely independent points) is an
// error: NULL with a message.
//
// Packing many hulls: build each with geo_hull_new, then geo_hull_copy into one block of
// caller storage (sizes from h->bytes, 8-byte aligned offsets) and destroy the temporaries.
// A hull is read-only after construction; any number of threads may read it.
#ifndef GEO_HULL_H
#define GEO_HULL_H

#include <stddef.h>

typedef struct geo_hull geo_hull;

// Face k of a hull has vertices face[3k..3k+2], counter-clockwise seen from outside; its
// edge j joins face[3k+j] to face[3k+(j+1)%3] and borders face fadj[3k+j].
struct geo_hull {
  int nvert;        // number of hull vertices
  int nface;        // number of triangular faces
  int nedge;        // number of undirected edges (nvert - nedge + nface = 2)
  int flat;         // 1 when the input was coplanar (double-sided polygon), else 0
  double tol;       // plane tolerance [m]: n . p - d <= tol for every input p, evaluated in
                    // double (16 DBL_EPSILON x the sum of the coordinate magnitudes; the
                    // worst seen on adversarial near-flat clouds is 0.8 of it)
  double center[3]; // mean of the hull vertices [m] (an interior point)
  double radius;    // max distance of a vertex from center [m] (bounding sphere)
  double *vert;     // vertex coordinates [m] (nvert x 3); borrowed, in this block
  int *src;         // index of each vertex in the input point array (nvert), increasing
  int *face;        // face vertex ids (nface x 3)
  int *fadj;        // face across each face edge (nface x 3)
  int *fedge;       // edge id of each face edge (nface x 3)
  double *plane;    // unit outward normal and offset (nface x 4): n . x <= d inside
  int *edge;        // edge endpoints, lower id first (nedge x 2)
  int *vadj_start;  // CSR row starts of vertex adjacency (nvert + 1)
  int *vadj;        // neighbour vertex ids, counter-clockwise about the outward normal
                    // (2 nedge)
  int *vadj_face;   // face to the left of directed edge v -> vadj[k] (2 nedge)
  int *vadj_edge;   // edge id of v -> vadj[k] (2 nedge)
  size_t bytes;     // size of the whole block [bytes] (for geo_hull_copy)
};

// Hull of n points pts (n x 3) [m]. Returns a new hull the caller owns (free with
// geo_hull_destroy), or NULL with a message in err (nullable) for n < 3, non-finite
// coordinates, collinear/coincident input, out of memory or a numerical failure.
geo_hull *geo_hull_new(const double *pts, int n, char *err, size_t err_sz);

// Hull of the n points pts[3 idx[i] ..] (e.g. the vertices of a mesh patch by id); as
// geo_hull_new, but h->src holds the ids idx[i] of the hull vertices (ascending in i, not
// necessarily in id). Ids are not range-checked: the caller validates them.
geo_hull *geo_hull_new_indexed(const double *pts, const int *idx, int n, char *err,
                               size_t err_sz);

// Free *h and set *h = NULL. NULL-safe. Not for hulls placed by geo_hull_copy.
void geo_hull_destroy(geo_hull **h);

// Copy h into caller storage mem of at least h->bytes bytes, 8-byte aligned; returns the
// copy (pointing into mem; caller owns mem, nothing to free) or NULL if bytes is too small.
geo_hull *geo_hull_copy(const geo_hull *h, void *mem, size_t bytes);

// Index of the hull vertex maximising dir . x by exhaustive search. Thread-safe.
int geo_hull_support_brute(const geo_hull *h, const double dir[3]);

// Index of the hull vertex maximising dir . x by steepest ascent on the vertex adjacency,
// starting at vertex start (clamped into range). Allocation-free, thread-safe.
int geo_hull_support_climb(const geo_hull *h, const double dir[3], int start);

// Signed distance of point p to the hull's boundary planes: max over faces of n . p - d
// (<= 0 inside). For a flat hull only the two polygon sides are measured. Thread-safe.
double geo_hull_plane_dist(const geo_hull *h, const double p[3]);

#endif
