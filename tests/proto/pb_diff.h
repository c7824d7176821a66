// ccsim_pb_unpack against protobuf_c_message_unpack on the same bytes, for test_pb.c and
// fuzz/fuzz_unpack.c: both refuse, or both accept and the two messages pack to the same
// bytes. Compared without a nesting limit (protobuf-c has none); with its limit,
// ccsim_pb_unpack gives that same message or refuses.
#ifndef CCSIM_PB_DIFF_H
#define CCSIM_PB_DIFF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccsim.pb-c.h"
#include "ccsim_arena.h"
#include "ccsim_pb.h"
#include "pb_types.pb-c.h"
#include "pb_types3.pb-c.h"

// The message types checked: the test messages that hold every field type, then the wire
// contract's outermost messages (through which every other is reached).
static const ProtobufCMessageDescriptor *const pb_diff_types[] = {
    &pbt__all__descriptor,
    &pbt3__plain__descriptor,
    &pbt__inner__descriptor,
    &pbt__short__descriptor,
    &ccsim__request__descriptor,
    &ccsim__reply__descriptor,
    &ccsim__stream_state__descriptor,
    &ccsim__checkpoint__descriptor,
    &ccsim__saved_session__descriptor,
};
#define PB_DIFF_NTYPES (sizeof pb_diff_types / sizeof *pb_diff_types)

// how deep m's message tree goes (m alone: 0)
static inline int pb_diff_depth(const ProtobufCMessage *m) {
  int deepest = 0;
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
      continue;
    }
    const char *v = (const char *)m + f->offset;
    size_t n = 1;
    ProtobufCMessage *const *subs = (ProtobufCMessage *const *)v;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      n = *(const size_t *)((const char *)m + f->quantifier_offset);
      subs = *(ProtobufCMessage *const *const *)v;
    } else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
               *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id) {
      continue;
    }
    for (size_t k = 0; k < n; k++) {
      if (subs[k] && subs[k] != f->default_value) {
        int dk = 1 + pb_diff_depth(subs[k]);
        deepest = dk > deepest ? dk : deepest;
      }
    }
  }
  return deepest;
}

// the bytes of m (NULL: none) packed by protobuf-c, into *out (malloc'd)
static inline size_t pb_diff_bytes(const ProtobufCMessage *m, uint8_t **out) {
  size_t n = m ? protobuf_c_message_get_packed_size(m) : 0;
  *out = malloc(n + 1);
  if (m && *out) {
    protobuf_c_message_pack(m, *out);
  }
  return n;
}

// NULL when both agree on data as a message of type d, else what differs (a static string).
// Ours reads a copy of exactly len bytes: under AddressSanitizer a read past the end is
// caught even where the caller's buffer goes on (a message cut short in place).
static inline const char *pb_diff(const ProtobufCMessageDescriptor *d, ccsim_arena *a, size_t len,
                                  const uint8_t *data) {
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    return "out of memory";
  }
  if (len) {
    memcpy(exact, data, len);
  }
  ProtobufCMessage *ref = protobuf_c_message_unpack(d, NULL, len, data);
  ProtobufCMessage *ours = ccsim_pb_unpack_nested(d, a, len, exact, 1 << 20);
  ProtobufCMessage *limited = ccsim_pb_unpack(d, a, len, exact);
  uint8_t *x = NULL, *y = NULL, *z = NULL;
  size_t nx = pb_diff_bytes(ref, &x), ny = pb_diff_bytes(ours, &y), nz = pb_diff_bytes(limited, &z);
  const char *why = NULL;
  if (!x || !y || !z) {
    why = "out of memory";
  } else if (!ref != !ours) {
    why = ref ? "protobuf-c accepts, ccsim_pb_unpack refuses"
              : "protobuf-c refuses, ccsim_pb_unpack accepts";
  } else if (nx != ny || memcmp(x, y, nx) != 0) {
    why = "the two messages differ";
  } else if (limited && (nz != ny || memcmp(z, y, ny) != 0)) {
    why = "with its nesting limit, ccsim_pb_unpack gives another message";
  }
  free(x);
  free(y);
  free(z);
  free(exact);
  if (ref) {
    protobuf_c_message_free_unpacked(ref, NULL);
  }
  return why;
}

#endif
