// Jobs and the shared reply blobs they carry: what every part of the service hands to
// another (the I/O duty to the pool, a job to its session's store), with nothing to call.
#include <stdlib.h>
#include <string.h>

#include "ccsim_pb.h"
#include "srv_job.h"

void srv_job_free(srv_job *j) {
  if (!j) {
    return;
  }
  ccsim_arena_fini(&j->rq_arena);
  free(j->ident);
  free(j->reply);
  free(j->pub);
  free(j);
}

// b (NULL: out of memory) holding n bytes, with its one reference
static srv_blob *blob_init(srv_blob *b, size_t n) {
  if (b) {
    atomic_init(&b->refs, 1);
    b->len = n;
  }
  return b;
}

srv_blob *srv_blob_pack(const Ccsim__Reply *r) {
  size_t n = 0;
  srv_blob *b = ccsim_pb_pack_new(&r->base, offsetof(srv_blob, data), &n);
  return blob_init(b, n);
}

srv_blob *srv_blob_copy(const uint8_t *data, size_t n) {
  srv_blob *b = blob_init(malloc(sizeof(srv_blob) + (n ? n : 1)), n);
  if (b) {
    memcpy(b->data, data, n);
  }
  return b;
}

void srv_blob_release(srv_blob **b) {
  if (*b && atomic_fetch_sub(&(*b)->refs, 1) == 1) {
    free(*b);
  }
  *b = NULL;
}
