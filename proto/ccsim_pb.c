#include "ccsim_pb.h"

#include <stdlib.h>
#include <string.h>

// The writer moves p down towards lo; full is set (and nothing more written) once a write
// does not fit.
typedef struct pbw {
  uint8_t *lo, *p;
  int full;
} pbw;

enum { WT_VARINT = 0, WT_64 = 1, WT_LEN = 2, WT_32 = 5 };

static int room(pbw *w, size_t n) {
  if ((size_t)(w->p - w->lo) < n) {
    w->full = 1;
    return 0;
  }
  return 1;
}

static void put_varint(pbw *w, uint64_t v) {
  unsigned n = 1;
  for (uint64_t t = v; t >= 0x80; t >>= 7) {
    n++;
  }
  if (!room(w, n)) {
    return;
  }
  w->p -= n;
  uint8_t *o = w->p;
  for (; v >= 0x80; v >>= 7) {
    *o++ = (uint8_t)(v | 0x80);
  }
  *o = (uint8_t)v;
}

static void put_bytes(pbw *w, const void *d, size_t n) {
  if (room(w, n) && n) {
    w->p -= n;
    memcpy(w->p, d, n);
  }
}

static void put_tag(pbw *w, uint32_t id, unsigned wire_type) {
  put_varint(w, ((uint64_t)id << 3) | wire_type);
}

static unsigned wire_type(ProtobufCType t) {
  switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
      return WT_64;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
      return WT_32;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
      return WT_LEN;
    default:
      return WT_VARINT;
  }
}

// bytes one element of a repeated field of type t takes in its array
static size_t elt_size(ProtobufCType t) {
  switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
      return 8;
    case PROTOBUF_C_TYPE_BOOL:
      return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
      return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
      return sizeof(ProtobufCBinaryData);
    default:
      return 4;
  }
}

static void put_message(pbw *w, const ProtobufCMessage *m);

// one value of field f at v, without its tag
static void put_value(pbw *w, const ProtobufCFieldDescriptor *f, const void *v) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_ENUM: {
      int32_t x;
      memcpy(&x, v, 4);
      put_varint(w, (uint64_t)(int64_t)x);  // negative: ten bytes, as int64
      break;
    }
    case PROTOBUF_C_TYPE_SINT32: {
      uint32_t x;
      memcpy(&x, v, 4);
      put_varint(w, (x << 1) ^ (uint32_t) - (x >> 31));
      break;
    }
    case PROTOBUF_C_TYPE_UINT32: {
      uint32_t x;
      memcpy(&x, v, 4);
      put_varint(w, x);
      break;
    }
    case PROTOBUF_C_TYPE_SINT64: {
      uint64_t x;
      memcpy(&x, v, 8);
      put_varint(w, (x << 1) ^ (uint64_t) - (x >> 63));
      break;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64: {
      uint64_t x;
      memcpy(&x, v, 8);
      put_varint(w, x);
      break;
    }
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
      put_bytes(w, v, 4);  // little-endian hosts only, as the wire is
      break;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
      put_bytes(w, v, 8);
      break;
    case PROTOBUF_C_TYPE_BOOL: {
      uint8_t b = *(const protobuf_c_boolean *)v ? 1 : 0;
      put_bytes(w, &b, 1);
      break;
    }
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(char *const *)v;
      size_t n = s ? strlen(s) : 0;  // NULL is written as "", as protobuf-c does
      put_bytes(w, s, n);
      put_varint(w, n);
      break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
      const ProtobufCBinaryData *bd = v;
      put_bytes(w, bd->data, bd->len);
      put_varint(w, bd->len);
      break;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
      const ProtobufCMessage *sub = *(ProtobufCMessage *const *)v;
      uint8_t *end = w->p;
      if (sub) {
        put_message(w, sub);
      }
      put_varint(w, (uint64_t)(end - w->p));
      break;
    }
  }
}

// a proto3 field without presence is left out when it holds its type's zero
static int zeroish(const ProtobufCFieldDescriptor *f, const void *v) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_BOOL:
      return *(const protobuf_c_boolean *)v == 0;
    case PROTOBUF_C_TYPE_FLOAT:
      return *(const float *)v == 0;
    case PROTOBUF_C_TYPE_DOUBLE:
      return *(const double *)v == 0;
    case PROTOBUF_C_TYPE_STRING: {
      const char *s = *(char *const *)v;
      return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES:
      return ((const ProtobufCBinaryData *)v)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE:
      return *(void *const *)v == NULL;
    default:
      return elt_size(f->type) == 8 ? *(const uint64_t *)v == 0 : *(const uint32_t *)v == 0;
  }
}

// whether field f of m is written, by its label and presence, as protobuf-c decides
static int present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const void *v) {
  const char *q = (const char *)m + f->quantifier_offset;
  int by_pointer = f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING;
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    if (*(const uint32_t *)q != f->id) {
      return 0;
    }
  } else if (f->label == PROTOBUF_C_LABEL_NONE) {
    return !zeroish(f, v);
  } else if (!by_pointer) {
    return *(const protobuf_c_boolean *)q;
  }
  if (by_pointer) {
    const void *ptr = *(void *const *)v;
    return ptr && ptr != f->default_value;
  }
  return 1;
}

static void put_message(pbw *w, const ProtobufCMessage *m) {
  // back to front: unknown fields last, fields by descending index, elements likewise
  for (size_t i = m->n_unknown_fields; i-- > 0 && !w->full;) {
    const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
    put_bytes(w, u->data, u->len);
    put_tag(w, u->tag, u->wire_type);
  }
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = d->n_fields; i-- > 0 && !w->full;) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const char *v = (const char *)m + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
      const char *arr = *(char *const *)v;
      size_t sz = elt_size(f->type);
      if (n == 0) {
        continue;
      }
      if (f->flags & PROTOBUF_C_FIELD_FLAG_PACKED) {
        uint8_t *end = w->p;
        for (size_t k = n; k-- > 0 && !w->full;) {
          put_value(w, f, arr + k * sz);
        }
        put_varint(w, (uint64_t)(end - w->p));
        put_tag(w, f->id, WT_LEN);
      } else {
        for (size_t k = n; k-- > 0 && !w->full;) {
          put_value(w, f, arr + k * sz);
          put_tag(w, f->id, wire_type(f->type));
        }
      }
    } else if (f->label == PROTOBUF_C_LABEL_REQUIRED || present(m, f, v)) {
      put_value(w, f, v);
      put_tag(w, f->id, wire_type(f->type));
    }
  }
}

size_t ccsim_pb_pack_tail(const ProtobufCMessage *m, uint8_t *buf, size_t cap) {
  pbw w = {buf, buf + cap, 0};
  put_message(&w, m);
  return w.full ? SIZE_MAX : (size_t)(buf + cap - w.p);
}

void *ccsim_pb_pack_new(const ProtobufCMessage *m, size_t head, size_t *len) {
  // most messages fit the stack; a bigger one is measured (a second walk) and written into
  // its own block
  uint8_t stack[4096];
  size_t n = ccsim_pb_pack_tail(m, stack, sizeof stack);
  int fits = n != SIZE_MAX;
  if (!fits) {
    n = protobuf_c_message_get_packed_size(m);
  }
  uint8_t *block = malloc(head + n + 1);  // + 1: malloc(0) may be NULL
  if (!block) {
    return NULL;
  }
  if (fits) {
    memcpy(block + head, stack + sizeof stack - n, n);
  } else {
    n = ccsim_pb_pack_tail(m, block + head, n);
  }
  *len = n;
  return block;
}
