// Scenes built with the core's API for tests and benchmarks (no cmocka here, so the
// benchmark programs can share them).
#ifndef CCSIM_TEST_SCENES_H
#define CCSIM_TEST_SCENES_H

#include <string.h>

#include "sim_model.h"

// A fixed 1 m x 1 m x 0.1 m "floor" whose top face is z = 0, and a 1 kg "box"
// 0.1 x 0.1 x 0.05 m above its centre, its bottom face gap [m] above the floor.
static inline void test_box_on_floor(sim_body_desc b[2], double gap) {
  memset(b, 0, 2 * sizeof *b);
  b[0].name = "floor";
  b[0].type = SIM_BODY_FIXED;
  b[0].shape.type = SIM_SHAPE_BOX;
  b[0].shape.size[0] = 1, b[0].shape.size[1] = 1, b[0].shape.size[2] = 0.1;
  b[0].pos[2] = -0.05, b[0].quat[0] = 1;
  b[1].name = "box";
  b[1].mass = 1;
  b[1].shape.type = SIM_SHAPE_BOX;
  b[1].shape.size[0] = 0.1, b[1].shape.size[1] = 0.1, b[1].shape.size[2] = 0.05;
  b[1].pos[2] = 0.025 + gap, b[1].quat[0] = 1;
}

#endif
