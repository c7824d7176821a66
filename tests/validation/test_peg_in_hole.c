// ctest-label: validation
// ctest-timeout: 600
// A kinematic peg driven at constant speed into a free block's chamfered hole
// (examples/peg_in_hole.json, 3 mm off the bore's axis): the chamfer pushes the block over,
// the peg slides in, and the wrench the peg feels on the chamfer points up and back
// towards the bore's axis (-x) when the peg first meets the chamfer.
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "ccsim_scene_msg.h"
#include "sim_data.h"
#include "wire.h"

static void test_peg_slides_in(void **state) {
  (void)state;
  const char *src = getenv("CCSIM_SOURCE_DIR");
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/examples/peg_in_hole.json", src ? src : ".");
  ccsim_scene *sc = ccsim_scene_load(path, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  sim_model *m = wire_scene_compile(ccsim_scene_message(sc), err, sizeof err);
  sim_data *d = m ? sim_data_new(m, err, sizeof err) : NULL;
  if (!d) print_error("%s\n", err);
  assert_non_null(d);
  int block = sim_model_body(m, "block"), peg = sim_model_body(m, "peg");
  double b0[3], p0[3], p[3], f[3], tq[3], fpeak[3] = {0, 0, 0}, ffirst[3] = {0, 0, 0};
  double tfirst = -1;
  sim_get_body(m, d, block, b0, NULL, NULL, NULL);
  sim_get_body(m, d, peg, p0, NULL, NULL, NULL);
  double t = 0;
  while (t < 0.5 - 1e-9) {
    t += 0.002;
    if (sim_step(m, d, t) != CCSIM_OK) print_error("%s\n", sim_data_errmsg(d));
    assert_double_near(sim_data_time(d), t, 1e-12);
    assert_int_equal(sim_eval_contacts(m, d), CCSIM_OK);
    int n = 0;
    sim_data_body_contact(m, d, peg, f, tq, &n);
    if (f[0] * f[0] + f[2] * f[2] > fpeak[0] * fpeak[0] + fpeak[2] * fpeak[2]) {
      memcpy(fpeak, f, sizeof f);
    }
    // the first clear push: the peg's rim meeting the chamfer
    if (tfirst < 0 && f[0] * f[0] + f[1] * f[1] + f[2] * f[2] > 0.01) {
      memcpy(ffirst, f, sizeof f);
      tfirst = t;
    }
  }
  double b1[3];
  sim_get_body(m, d, block, b1, NULL, NULL, NULL);
  sim_get_body(m, d, peg, p, NULL, NULL, NULL);
  double peg_bottom = p[2] - 0.03, block_top = b1[2] + 0.03;
  print_message("peg: descended %.4f m, bottom %.4f m below the block's top; block moved "
                "%.5f m in x; first push at t = %.3f s (%.3f, %.3f, %.3f) N; largest wrench "
                "(%.3f, %.3f, %.3f) N\n",
                p0[2] - p[2], block_top - peg_bottom, b1[0] - b0[0], tfirst, ffirst[0],
                ffirst[1], ffirst[2], fpeak[0], fpeak[1], fpeak[2]);
  // kinematic: exactly the commanded motion
  assert_double_near(p0[2] - p[2], 0.05 * 0.5, 1e-9);
  assert_double_near(p[0], p0[0], 1e-12);
  // it went in: 15 mm or more below the top, and the block made room (clearance 0.5 mm)
  assert_true(block_top - peg_bottom > 0.015);
  assert_true(b1[0] - b0[0] > 0.003 - 0.0005 - 0.0002);
  // the chamfer (on the +x side of the bore) pushed the peg up and back towards the bore's
  // axis, equally at 45 degrees; later pushes come from the block sliding to and fro
  assert_true(tfirst > 0);
  assert_true(ffirst[2] > 0);
  assert_true(ffirst[0] < 0);
  assert_double_rel(-ffirst[0], ffirst[2], 0.2, 0);
  sim_data_destroy(&d);
  sim_model_destroy(&m);
  ccsim_scene_destroy(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_peg_slides_in),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
