#include "geo_err.h"

#include <stdarg.h>
#include <stdio.h>

void geo_set_err(char *err, size_t err_sz, const char *fmt, ...) {
  if (!err || err_sz == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_sz, fmt, ap);
  va_end(ap);
}
