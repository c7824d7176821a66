#include "ccsim_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ccsim_open_regular(const char *path, int extra_flags, off_t *size, const char **why) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | extra_flags);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    // O_NOFOLLOW refuses a link with ELOOP, whose text speaks of too many links
    *why = fd < 0 && errno == ELOOP && (extra_flags & O_NOFOLLOW) ? "a symbolic link (not followed)"
                                                                  : strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    close(fd);
    return -2;
  }
  if (size) *size = st.st_size;
  return fd;
}

int ccsim_read_all(int fd, void *buf, size_t n, const char **why) {
  size_t off = 0;
  while (off < n) {
    ssize_t r = read(fd, (char *)buf + off, n - off);
    if (r < 0 && errno == EINTR) {
      continue;
    }
    if (r <= 0) {
      *why = r < 0 ? strerror(errno) : "shorter than its size (changed while read)";
      return -1;
    }
    off += (size_t)r;
  }
  return 0;
}
