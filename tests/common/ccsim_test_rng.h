// A small deterministic generator for tests and benchmarks (splitmix64), so every failure
// is reproducible from its seed: rng r = {seed}; urand(&r) in [0, 1), nrand(&r) ~ N(0, 1).
#ifndef CCSIM_TEST_RNG_H
#define CCSIM_TEST_RNG_H

#include <math.h>

typedef struct rng {
  unsigned long long s;
} rng;

static inline double urand(rng *r) {
  unsigned long long z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static inline double nrand(rng *r) {
  double u = urand(r), v = urand(r);
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

#endif
