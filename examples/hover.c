// A controller stepping a remote plant through libccsim: it holds the ball of
// examples/sphere_drop.json at a height over the floor with a PID force, one Step per
// millisecond, as a robot controller closing its loop over the network would.
//
// usage: hover ENDPOINT [SCENE [HEIGHT [SECONDS]]]
//   ENDPOINT  a running ccsimd, e.g. tcp://127.0.0.1:5555
//   SCENE     default examples/sphere_drop.json (its body "ball" is controlled)
//   HEIGHT    of the ball's centre [m], default 0.2
//   SECONDS   of simulated time, default 3
// Prints the ball's height every 0.5 s and, last, its final height, the most contact pairs
// that carried force on it and CVODE's work summed over the run. Exit status 0, or 1 with
// the library's message.
#include <stdio.h>
#include <stdlib.h>

#include "ccsim_client.h"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: %s ENDPOINT [SCENE [HEIGHT [SECONDS]]]\n", argv[0]);
    return 2;
  }
  const char *endpoint = argv[1];
  const char *path = argc > 2 ? argv[2] : "examples/sphere_drop.json";
  double target = argc > 3 ? atof(argv[3]) : 0.2;
  double seconds = argc > 4 ? atof(argv[4]) : 3.0;
  const double dt = 0.001;

  char err[512];
  ccsim_scene *scene = ccsim_scene_load(path, err, sizeof err);
  if (!scene) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  ccsim_client *c = ccsim_client_new(endpoint, err, sizeof err);  // says Hello
  if (!c) {
    fprintf(stderr, "%s\n", err);
    ccsim_scene_destroy(&scene);
    return 1;
  }
  ccsim_session *s = ccsim_session_create(c, scene);
  int ball = s ? ccsim_session_body_index(s, "ball") : -1;
  if (!s || ball < 0) {
    fprintf(stderr, "%s\n", s ? "the scene has no body named \"ball\"" : ccsim_client_errmsg(c));
    ccsim_session_close(&s);
    ccsim_client_destroy(&c);
    ccsim_scene_destroy(&scene);
    return 1;
  }

  // The plant as the controller knows it: a 5 cm ball of water under 9.81 m/s^2. The
  // integral term takes up what the model misses (the server's ball is a faceted mesh,
  // a little lighter than the sphere).
  const double mass = 1000.0 * 4.0 / 3.0 * 3.14159265358979 * 0.05 * 0.05 * 0.05;
  const double wn = 10.0;  // closed-loop bandwidth [rad/s], critically damped
  const double kp = mass * wn * wn, kd = 2.0 * mass * wn, ki = 0.25 * mass * wn * wn * wn;
  double integral = 0.0;
  int most_contacts = 0, status = 0;
  unsigned long long cvode_steps = 0, rhs_evals = 0;  // the server's work, summed over steps
  long steps = (long)(seconds / dt + 0.5);
  for (long k = 0; k < steps; k++) {
    const ccsim_body_state *b = ccsim_session_bodies(s);  // the state after the last reply
    double e = target - b[ball].p[2];
    integral += e * dt;
    ccsim_input up = {.body = (uint32_t)ball,
                      .force = {0, 0, mass * 9.81 + kp * e - kd * b[ball].v[2] + ki * integral}};
    if (ccsim_session_step(s, dt, &up, 1) != CCSIM_OK) {  // the force holds for this step
      fprintf(stderr, "%s\n", ccsim_client_errmsg(c));
      status = 1;
      break;
    }
    cvode_steps += ccsim_session_stats(s)->steps;
    rhs_evals += ccsim_session_stats(s)->rhs_evals;
    b = ccsim_session_bodies(s);
    if (b[ball].contact_count > most_contacts) most_contacts = b[ball].contact_count;
    if ((k + 1) % 500 == 0) {
      printf("t = %.3f s  z = %.6f m\n", ccsim_session_time(s), b[ball].p[2]);
    }
  }
  if (status == 0) {
    printf("final: z = %.6f m (target %.6f m), at most %d contact pairs on the ball\n",
           ccsim_session_bodies(s)[ball].p[2], target, most_contacts);
    printf("CVODE: %llu steps, %llu right-hand sides over %ld requests\n", cvode_steps, rhs_evals,
           steps);
  }
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&scene);
  return status;
}
