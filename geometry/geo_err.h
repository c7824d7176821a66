// The geometry library's error messages: every constructor and reader that can fail fills a
// caller's (err, err_sz) buffer through this one helper.
#ifndef GEO_ERR_H
#define GEO_ERR_H

#include <stddef.h>

// printf into err[0, err_sz) (truncated, always terminated); err NULL or err_sz 0: nothing.
void geo_set_err(char *err, size_t err_sz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
