// The service clock (srv_clock.c).
#ifndef SRV_CLOCK_H
#define SRV_CLOCK_H

#include "srv_internal.h"

// CLOCK_MONOTONIC [s].
double srv_now(void);

#endif
