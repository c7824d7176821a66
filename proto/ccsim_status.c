#include "ccsim_status.h"

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
