// Mass properties of a closed triangle mesh of uniform density: exact polyhedral integrals
// (divergence theorem: signed tetrahedra from a reference point near the mesh to each face,
// with the closed-form tetrahedron volume, first and second moments), accurate to rounding.
#ifndef GEO_MASS_H
#define GEO_MASS_H

#include <stddef.h>
#include "geo_mesh.h"

typedef struct geo_mass {
  double volume;      // [m^3]
  double mass;        // [kg] density * volume
  double com[3];      // [m] centre of mass, body frame
  double inertia[9];  // [kg m^2] about com, body axes, row-major, symmetric
} geo_mass;

// Requires m->closed (watertight, manifold, consistently oriented), positive volume
// (outward normals) and density finite and > 0 [kg/m^3]. Returns 0, or a negative value
// with a message in err (nullable) and *out untouched.
int geo_mass_properties(const geo_mesh *m, double density, geo_mass *out, char *err,
                        size_t err_sz);

// Eigen-decomposition of a symmetric 3 x 3 matrix A (row-major) by cyclic Jacobi rotations
// (Golub & Van Loan, Matrix Computations, sec. 8.5.2): eigenvalues in lam (unsorted) and
// the matching unit eigenvectors as the rows of V.
void geo_sym3_eig(const double A[9], double lam[3], double V[9]);

#endif
