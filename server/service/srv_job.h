// Jobs and reply blobs (srv_job.c): the leaves every service file uses.
#ifndef SRV_JOB_H
#define SRV_JOB_H

#include "srv_internal.h"

// r serialized into a new blob holding one reference; NULL when out of memory.
srv_blob *srv_blob_pack(const Ccsim__Reply *r);
// A copy of n bytes in a new blob holding one reference; NULL when out of memory.
srv_blob *srv_blob_copy(const uint8_t *data, size_t n);
// Drop a reference (the last one frees the blob) and set *b = NULL. NULL-safe.
void srv_blob_release(srv_blob **b);

// Free a job and everything it owns. NULL-safe.
void srv_job_free(srv_job *j);

#endif
