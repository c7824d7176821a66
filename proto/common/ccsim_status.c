#include "ccsim_status.h"

#include <stdarg.h>
#include <stdio.h>

const char *ccsim_status_str(int status) {
  switch (status) {
#define CCSIM_STATUS_CASE(name, value, text) case value: return text;
    CCSIM_STATUS_LIST(CCSIM_STATUS_CASE)
#undef CCSIM_STATUS_CASE
  }
  return "unknown status";
}

const char *ccsim_status_name(int status) {
  switch (status) {
#define CCSIM_STATUS_CASE(name, value, text) case value: return #name;
    CCSIM_STATUS_LIST(CCSIM_STATUS_CASE)
#undef CCSIM_STATUS_CASE
  }
  return "CCSIM_UNKNOWN";
}

void ccsim_vset_err(char *err, size_t err_sz, const char *fmt, va_list ap) {
  if (err && err_sz > 0) {
    vsnprintf(err, err_sz, fmt, ap);
  }
}

void ccsim_set_err(char *err, size_t err_sz, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ccsim_vset_err(err, err_sz, fmt, ap);
  va_end(ap);
}
