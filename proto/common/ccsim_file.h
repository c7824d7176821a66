// Opening files that must be regular files: a FIFO or device put where a key or a saved
// session should be must neither hang the caller nor be read as one.
#ifndef CCSIM_FILE_H
#define CCSIM_FILE_H

#include <sys/types.h>

// Open path read-only (plus extra open flags, e.g. O_NOFOLLOW) without blocking, and check
// it is a regular file. Returns the descriptor (the caller closes it) with its size in
// *size (nullable); else -1 when it cannot be opened (*why: strerror's text) or -2 when it
// is not a regular file (*why: "not a regular file").
int ccsim_open_regular(const char *path, int extra_flags, off_t *size, const char **why);

// Read n bytes of fd into buf (caller owns both), retrying interrupted reads. Returns 0, or
// -1 with *why set (a read error's text, or "shorter than its size (changed while read)").
int ccsim_read_all(int fd, void *buf, size_t n, const char **why);

#endif
