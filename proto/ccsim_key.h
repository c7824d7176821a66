// CurveZMQ keys on disk, for the server and the client alike.
#ifndef CCSIM_KEY_H
#define CCSIM_KEY_H

#include <stddef.h>

// Read a Z85 key (40 characters, surrounding whitespace ignored) from the file at path
// into out (NUL-terminated). Returns 0, or -1 with a message naming the file in err.
int ccsim_read_key(const char *path, char out[41], char *err, size_t err_sz);

#endif
