// Random bytes that must not be guessed (session ids, tokens, create keys), for the
// server and the client alike.
#ifndef CCSIM_RANDOM_H
#define CCSIM_RANDOM_H

#include <stddef.h>

// Fill buf with n bytes from the kernel's random generator. Returns 0, or -1 (errno set)
// when it has none.
int ccsim_random(void *buf, size_t n);

#endif
