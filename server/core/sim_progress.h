// The caller's progress function (sim_set_progress) as the steppers see it: asked at every
// contact evaluation and stretch of integration, it may stop the current step. Header-only,
// so every stepper asks it without calling back into the file that holds the session.
#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H

typedef struct sim_progress {
  int (*fn)(void *arg);  // the caller's function (NULL: none); nonzero stops the step
  void *arg;             // the caller's; passed to fn
  int stopped;           // fn asked the current step to stop (cleared when a step begins)
} sim_progress;

// Ask fn (once stopped, no more); nonzero once the current step was asked to stop.
static inline int sim_progress_check(sim_progress *p) {
  if (!p) return 0;
  if (!p->stopped && p->fn && p->fn(p->arg) != 0) p->stopped = 1;
  return p->stopped;
}

#endif
