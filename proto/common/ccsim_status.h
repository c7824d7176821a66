// ccsim status codes: one list shared by the server core, the service, the wire and
// the client. The same numbers travel as ccsim.Error.code (see proto/ccsim.proto).
#ifndef CCSIM_STATUS_H
#define CCSIM_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#define CCSIM_STATUS_LIST(X)                                                   \
  X(CCSIM_OK,         0, "success")                                            \
  X(CCSIM_EINVAL,    -1, "invalid argument or malformed input")                \
  X(CCSIM_ENOMEM,    -2, "out of memory")                                      \
  X(CCSIM_ELIMIT,    -3, "request exceeds a configured limit")                 \
  X(CCSIM_ESOLVER,   -4, "integration failed; state kept at last good step")   \
  X(CCSIM_ENOTFOUND, -5, "unknown session or body")                            \
  X(CCSIM_EVERSION,  -6, "protocol version mismatch")                          \
  X(CCSIM_ENOTIMPL,  -7, "not implemented yet")                                \
  X(CCSIM_ESEQ,      -8, "step out of sequence")                               \
  X(CCSIM_EPERM,     -9, "not permitted for this client's role")               \
  X(CCSIM_ETIMEOUT, -10, "no reply in time")                                   \
  X(CCSIM_EIO,      -11, "transport or file error")                            \
  X(CCSIM_EPROTO,   -12, "malformed or undecodable message")                   \
  X(CCSIM_EEXPIRED, -13, "session expired or was closed")

typedef enum ccsim_status {
#define CCSIM_STATUS_ENUM(name, value, text) name = value,
  CCSIM_STATUS_LIST(CCSIM_STATUS_ENUM)
#undef CCSIM_STATUS_ENUM
} ccsim_status;

// Static description of a status code; never NULL, never to be freed.
const char *ccsim_status_str(int status);

// Symbolic name of a status code ("CCSIM_EINVAL"); never NULL, never to be freed.
const char *ccsim_status_name(int status);

// printf into a caller's error buffer; does nothing when err is NULL or err_sz is 0. The
// one error-formatting helper of everything but geometry (which depends on nothing of ours).
void ccsim_set_err(char *err, size_t err_sz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// ccsim_set_err for helpers that take their own arguments (a va_list the caller started).
void ccsim_vset_err(char *err, size_t err_sz, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
