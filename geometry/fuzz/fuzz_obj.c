// libFuzzer target for the OBJ reader: any input must give a valid mesh or NULL + message,
// never a crash, leak or undefined behaviour. A returned mesh is checked for the
// invariants the header promises (indices in range, finite unit normals, adjacency).
#include <stddef.h>
#include <stdint.h>

#include "fuzz_mesh_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[256];
  err[0] = 0;
  geo_mesh *m = geo_mesh_parse_obj((const char *)data, size, "fuzz.obj", err, sizeof err);
  check_parse(m, err, sizeof err);
  return 0;
}
