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

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h = (h ^ p[i]) * 0x100000001b3u;
  }
  return h;
}

typedef struct fnv_buffer {
  ProtobufCBuffer base;  // first: protobuf-c hands back the pointer it was given
  uint64_t h;
} fnv_buffer;

static void fnv_append(ProtobufCBuffer *b, size_t n, const uint8_t *data) {
  fnv_buffer *f = (fnv_buffer *)b;
  f->h = fnv1a(f->h, data, n);
}

uint64_t ccsim_pb_digest(const ProtobufCMessage *m) {
  // most messages hashed here (a Step) fit the stack, packed in one walk; protobuf-c's
  // streaming pack sizes every sub-message again, but needs no buffer for a large scene
  uint8_t stack[1024];
  uint64_t h = 0xcbf29ce484222325u;
  size_t n = ccsim_pb_pack_tail(m, stack, sizeof stack);
  if (n != SIZE_MAX) {
    h = fnv1a(h, stack + sizeof stack - n, n);
  } else {
    fnv_buffer f = {{fnv_append}, h};
    protobuf_c_message_pack_to_buffer(m, &f.base);
    h = f.h;
  }
  return h ? h : 1;
}

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

// Per field type: its wire type, and the bytes one element takes in a repeated field's
// array. A table: these are asked for every field packed or parsed.
static const struct {
  uint8_t wire;
  uint8_t size;
} type_info[] = {
    [PROTOBUF_C_TYPE_INT32] = {WT_VARINT, 4},
    [PROTOBUF_C_TYPE_SINT32] = {WT_VARINT, 4},
    [PROTOBUF_C_TYPE_SFIXED32] = {WT_32, 4},
    [PROTOBUF_C_TYPE_INT64] = {WT_VARINT, 8},
    [PROTOBUF_C_TYPE_SINT64] = {WT_VARINT, 8},
    [PROTOBUF_C_TYPE_SFIXED64] = {WT_64, 8},
    [PROTOBUF_C_TYPE_UINT32] = {WT_VARINT, 4},
    [PROTOBUF_C_TYPE_FIXED32] = {WT_32, 4},
    [PROTOBUF_C_TYPE_UINT64] = {WT_VARINT, 8},
    [PROTOBUF_C_TYPE_FIXED64] = {WT_64, 8},
    [PROTOBUF_C_TYPE_FLOAT] = {WT_32, 4},
    [PROTOBUF_C_TYPE_DOUBLE] = {WT_64, 8},
    [PROTOBUF_C_TYPE_BOOL] = {WT_VARINT, sizeof(protobuf_c_boolean)},
    [PROTOBUF_C_TYPE_ENUM] = {WT_VARINT, 4},
    [PROTOBUF_C_TYPE_STRING] = {WT_LEN, sizeof(char *)},
    [PROTOBUF_C_TYPE_BYTES] = {WT_LEN, sizeof(ProtobufCBinaryData)},
    [PROTOBUF_C_TYPE_MESSAGE] = {WT_LEN, sizeof(ProtobufCMessage *)},
};

static unsigned wire_type(ProtobufCType t) {
  return type_info[t].wire;
}

static size_t elt_size(ProtobufCType t) {
  return type_info[t].size;
}

// a scalar: a type a packed field may hold
static int packable(ProtobufCType t) {
  return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES && t != PROTOBUF_C_TYPE_MESSAGE;
}

static void put_message(pbw *w, const ProtobufCMessage *m);

// n = 8 or 4 bytes from src to dst: two fixed-size copies, each a single move
static void copy_fixed(void *dst, const void *src, size_t n) {
  if (n == 8) {
    memcpy(dst, src, 8);
  } else {
    memcpy(dst, src, 4);
  }
}

// a fixed-width value of n = 8 or 4 bytes at v, as on the wire (little-endian hosts only)
static void put_fixed(pbw *w, const void *v, size_t n) {
  if (room(w, n)) {
    w->p -= n;
    copy_fixed(w->p, v, n);
  }
}

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
      put_fixed(w, v, 4);
      break;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
      put_fixed(w, v, 8);
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
    if (f->id < 16 && f->label == PROTOBUF_C_LABEL_OPTIONAL && packable(f->type) &&
        !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
      // the common field (the doubles of poses and twists, counters) written at once: the
      // bytes of the general path below, with a one-byte tag
      if (*(const protobuf_c_boolean *)((const char *)m + f->quantifier_offset)) {
        unsigned wt = wire_type(f->type);
        if (wt == WT_VARINT) {
          put_value(w, f, v);
        } else {
          put_fixed(w, v, wt == WT_64 ? 8 : 4);
        }
        if (room(w, 1)) {
          *--w->p = (uint8_t)(f->id << 3 | wt);
        }
      }
      continue;
    }
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
  // most messages fit the stack; a bigger one is measured by protobuf-c and written into
  // its own block (three walks in all, the first one cut short)
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
  } else if (ccsim_pb_pack_tail(m, block + head, n) != n) {
    // protobuf-c measured otherwise (it truncates lengths of 4 GiB and more): no message
    free(block);
    return NULL;
  }
  *len = n;
  return block;
}

// ---- unpacking ----------------------------------------------------------------------

// one field as protobuf-c's scan delimits it
typedef struct pbm {
  uint32_t tag;
  unsigned wire_type;
  const ProtobufCFieldDescriptor *f;  // NULL: not in the descriptor
  const uint8_t *data;                // after the tag, a length prefix included
  size_t len;                         // bytes at data
  size_t pref;                        // of them, the length prefix
} pbm;

// field number id of d (fields are sorted by number); *hint: where to look first
static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d, uint32_t id,
                                                  unsigned *hint) {
  if (*hint < d->n_fields && d->fields[*hint].id == id) {
    return &d->fields[(*hint)++];
  }
  unsigned lo = 0, hi = d->n_fields;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    if (d->fields[mid].id < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < d->n_fields && d->fields[lo].id == id) {
    *hint = lo + 1;
    return &d->fields[lo];
  }
  return NULL;
}

// bytes of the varint at p (n bytes left), 0 when none of its first 10 ends it
static size_t varint_len(size_t n, const uint8_t *p) {
  size_t max = n < 10 ? n : 10, i = 0;
  while (i < max && (p[i] & 0x80)) {
    i++;
  }
  return i == max ? 0 : i + 1;
}

// The next field at *at (rem bytes left) into m; 0 when malformed. protobuf-c's limits:
// a tag of at most 5 bytes and never field 0, a varint of at most 10, a length prefix of
// at most 5, no groups.
static int next_member(const ProtobufCMessageDescriptor *d, const uint8_t **at, size_t *rem,
                       unsigned *hint, pbm *m) {
  const uint8_t *p = *at;
  size_t n = *rem, used = 0;
  if ((p[0] & 0xf8) == 0) {
    return 0;
  }
  m->wire_type = p[0] & 7;
  uint32_t tag = (p[0] & 0x7f) >> 3;
  if (!(p[0] & 0x80)) {
    used = 1;
  } else {
    size_t max = n > 5 ? 5 : n;
    unsigned shift = 4;
    for (size_t i = 1; i < max && !used; i++) {
      tag |= (uint32_t)(p[i] & 0x7f) << shift;
      shift += 7;
      if (!(p[i] & 0x80)) {
        used = i + 1;
      }
    }
    if (!used) {
      return 0;
    }
  }
  m->tag = tag;
  m->f = d ? find_field(d, tag, hint) : NULL;
  p += used;
  n -= used;
  m->data = p;
  m->pref = 0;
  switch (m->wire_type) {
    case WT_VARINT:
      if (!(m->len = varint_len(n, p))) {
        return 0;
      }
      break;
    case WT_64:
    case WT_32:
      m->len = m->wire_type == WT_64 ? 8 : 4;
      if (n < m->len) {
        return 0;
      }
      break;
    case WT_LEN: {
      size_t max = n < 5 ? n : 5, val = 0, i = 0;
      for (; i < max; i++) {
        val |= (size_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
          break;
        }
      }
      if (i == max || val > n - (i + 1)) {
        return 0;
      }
      m->pref = i + 1;
      m->len = m->pref + val;
      break;
    }
    default:
      return 0;
  }
  *at = p + m->len;
  *rem = n - m->len;
  return 1;
}

static int packed_on_wire(const pbm *m) {
  return m->wire_type == WT_LEN &&
         ((m->f->flags & PROTOBUF_C_FIELD_FLAG_PACKED) || packable(m->f->type));
}

// elements a packed field of type t holds in n bytes at p, as protobuf-c counts them
// (varints: bytes ending one); 0 when the bytes cannot be such a field
static int count_packed(ProtobufCType t, size_t n, const uint8_t *p, size_t *count) {
  unsigned wt = wire_type(t);
  if (wt == WT_64 || wt == WT_32) {
    size_t w = wt == WT_64 ? 8 : 4;
    *count = n / w;
    return n % w == 0;
  }
  if (t == PROTOBUF_C_TYPE_BOOL) {
    *count = n;  // room for one per byte; parsing counts the varints
    return 1;
  }
  *count = 0;
  for (size_t i = 0; i < n; i++) {
    *count += !(p[i] & 0x80);
  }
  return 1;
}

static uint64_t varint_value(size_t n, const uint8_t *p) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
  }
  return v;
}

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, ccsim_arena *a, size_t len,
                                const uint8_t *data, int levels);
static int merge(ProtobufCMessage *earlier, ProtobufCMessage *later, ccsim_arena *a);

// a scalar of type t from n bytes at p (wire type checked by the caller)
static void scalar_value(ProtobufCType t, size_t n, const uint8_t *p, void *v) {
  switch (t) {
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_UINT32: {
      uint32_t x = (uint32_t)varint_value(n, p);
      memcpy(v, &x, 4);
      break;
    }
    case PROTOBUF_C_TYPE_SINT32: {
      uint32_t x = (uint32_t)varint_value(n, p);
      x = (x >> 1) ^ (uint32_t) - (x & 1);
      memcpy(v, &x, 4);
      break;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64: {
      uint64_t x = varint_value(n, p);
      memcpy(v, &x, 8);
      break;
    }
    case PROTOBUF_C_TYPE_SINT64: {
      uint64_t x = varint_value(n, p);
      x = (x >> 1) ^ (uint64_t) - (x & 1);
      memcpy(v, &x, 8);
      break;
    }
    case PROTOBUF_C_TYPE_BOOL: {
      protobuf_c_boolean b = 0;  // protobuf-c: any byte with a low bit set, whatever the wire
      for (size_t i = 0; i < n; i++) {
        b |= (p[i] & 0x7f) != 0;
      }
      *(protobuf_c_boolean *)v = b;
      break;
    }
    default:
      copy_fixed(v, p, wire_type(t) == WT_64 ? 8 : 4);
      break;
  }
}

// one value of m's field into v; clear: a singular field seen before is replaced (a
// message merged) rather than filled fresh; levels: how much deeper sub-messages may nest
static int parse_value(const pbm *m, void *v, int clear, ccsim_arena *a, int levels) {
  const ProtobufCFieldDescriptor *f = m->f;
  if (f->type != PROTOBUF_C_TYPE_BOOL && m->wire_type != wire_type(f->type)) {
    return 0;
  }
  const uint8_t *body = m->data + m->pref;
  size_t n = m->len - m->pref;
  switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
      char *s = ccsim_arena_alloc(a, n + 1);  // zeroed: NUL-terminated
      if (!s) {
        return 0;
      }
      memcpy(s, body, n);
      *(char **)v = s;
      return 1;
    }
    case PROTOBUF_C_TYPE_BYTES: {
      ProtobufCBinaryData *bd = v;
      bd->data = NULL;
      if (n) {
        if (!(bd->data = ccsim_arena_alloc(a, n))) {
          return 0;
        }
        memcpy(bd->data, body, n);
      }
      bd->len = n;
      return 1;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
      ProtobufCMessage **pm = v, *sub = unpack(f->descriptor, a, n, body, levels - 1);
      int ok = sub != NULL;
      if (ok && clear && *pm && *pm != f->default_value) {
        ok = merge(*pm, sub, a);  // the later occurrence wins where it says something
      }
      *pm = sub;
      return ok;
    }
    default:
      scalar_value(f->type, m->len, m->data, v);
      return 1;
  }
}

// room for k more elements of sz bytes after the n in *arr; NULL when out of memory. An
// array of n elements has room for the power of two at or above n (0 for none): full, it
// moves to twice the room, so appending one by one costs amortised O(1). Every repeated
// field's array comes from here (parsing and merging alike), so the rule always holds.
static char *grow(ccsim_arena *a, char **arr, size_t n, size_t k, size_t sz) {
  size_t room = 0;
  while (room < n) {
    room = room ? 2 * room : 1;
  }
  if (n + k > room) {
    size_t bigger = room ? room : 1;
    while (bigger < n + k) {
      if (bigger > SIZE_MAX / 2 / sz) {
        return NULL;
      }
      bigger *= 2;
    }
    char *moved = ccsim_arena_alloc(a, bigger * sz);
    if (!moved) {
      return NULL;
    }
    if (n) {
      memcpy(moved, *arr, n * sz);
    }
    *arr = moved;
  }
  return *arr + n * sz;
}

// a packed field's elements appended to the array at v counted by *n
static int parse_packed(const pbm *m, char **v, size_t *n, ccsim_arena *a) {
  ProtobufCType t = m->f->type;
  const uint8_t *p = m->data + m->pref;
  size_t rem = m->len - m->pref, sz = elt_size(t), most;
  if (!count_packed(t, rem, p, &most)) {
    return 0;
  }
  if (rem == 0) {
    return 1;
  }
  if (most == 0) {
    return 0;  // varint bytes none of which ends one
  }
  char *to = grow(a, v, *n, most, sz);
  if (!to) {
    return 0;
  }
  if (wire_type(t) != WT_VARINT) {
    memcpy(to, p, rem);
    *n += most;
    return 1;
  }
  while (rem > 0) {
    size_t k = varint_len(rem, p);
    if (!k) {
      return 0;
    }
    scalar_value(t, k, p, to);  // a bool too is a varint here (protobuf-c 1.4.1)
    to += sz;
    (*n)++;
    p += k;
    rem -= k;
  }
  return 1;
}

// Bytes after the tag of the value of field f at p (n bytes left) on wire type wt when the
// fast path takes it: a scalar on its own wire type, whole, or a sub-message whose length
// prefix is one byte (under 128); else 0, and the general path parses (or refuses) it.
static size_t in_place_len(const ProtobufCFieldDescriptor *f, unsigned wt, size_t n,
                           const uint8_t *p) {
  if (wire_type(f->type) != wt) {
    return 0;
  }
  if (wt == WT_LEN) {
    return f->type == PROTOBUF_C_TYPE_MESSAGE && n > 0 && p[0] < 0x80 && p[0] < n ? 1 + p[0] : 0;
  }
  size_t w = wt == WT_VARINT ? varint_len(n, p) : wt == WT_64 ? 8 : 4;
  return w <= n ? w : 0;
}

// a singular field (at index idx of its descriptor's fields) parsed into msg: a required
// one is counted as met, an optional one gets its has flag
static void mark_present(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, unsigned idx,
                         uint64_t *seen) {
  if (f->label == PROTOBUF_C_LABEL_REQUIRED) {
    seen[idx / 64] |= 1ull << (idx % 64);
  } else if (f->quantifier_offset) {
    *(protobuf_c_boolean *)((char *)msg + f->quantifier_offset) = 1;
  }
}

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, ccsim_arena *a, size_t len,
                                const uint8_t *data, int levels) {
  if (levels < 0) {
    return NULL;
  }
  ProtobufCMessage *msg = ccsim_arena_alloc(a, d->sizeof_message);
  if (!msg) {
    return NULL;
  }
  d->message_init(msg);
  // one pass: protobuf-c delimits every field before it parses any, which refuses the
  // same inputs (any malformed field refuses the whole)
  uint64_t seen_small[4] = {0};  // required fields met
  uint64_t *seen = d->n_fields <= 256 ? seen_small : ccsim_arena_alloc(a, (d->n_fields + 63) / 8);
  if (!seen) {
    return NULL;
  }
  const uint8_t *at = data;
  size_t rem = len;
  unsigned hint = 0;
  while (rem > 0) {
    // The common fields first, delimited in place: a one-byte tag naming the descriptor's
    // field after the last one found, singular and outside a oneof, holding a scalar or a
    // sub-message of less than 128 bytes (a pose, a twist, their vectors). They are parsed as the
    // general path below parses them, without its delimiting and field lookup: a reply's decoding
    // takes two thirds of the instructions.
    uint8_t t0 = *at;
    const ProtobufCFieldDescriptor *f = hint < d->n_fields ? &d->fields[hint] : NULL;
    if (t0 < 0x80 && f && f->id == (uint32_t)t0 >> 3 && f->label != PROTOBUF_C_LABEL_REPEATED &&
        !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
      size_t w = in_place_len(f, t0 & 7, rem - 1, at + 1);
      if (w) {
        void *v = (char *)msg + f->offset;
        if ((t0 & 7) == WT_LEN) {
          pbm m = {(uint32_t)t0 >> 3, WT_LEN, f, at + 1, w, 1};
          if (!parse_value(&m, v, 1, a, levels)) {
            return NULL;
          }
        } else if ((t0 & 7) == WT_VARINT) {
          scalar_value(f->type, w, at + 1, v);
        } else {
          copy_fixed(v, at + 1, w);  // as on the wire, little-endian
        }
        mark_present(msg, f, hint, seen);
        hint++;
        at += 1 + w;
        rem -= 1 + w;
        continue;
      }
    }
    pbm m;
    if (!next_member(d, &at, &rem, &hint, &m)) {
      return NULL;
    }
    f = m.f;
    if (!f) {
      ProtobufCMessageUnknownField *u = (ProtobufCMessageUnknownField *)grow(
          a, (char **)&msg->unknown_fields, msg->n_unknown_fields, 1, sizeof *u);
      if (!u || !(u->data = ccsim_arena_alloc(a, m.len))) {
        return NULL;
      }
      u->tag = m.tag;
      u->wire_type = (ProtobufCWireType)m.wire_type;
      u->len = m.len;
      memcpy(u->data, m.data, m.len);
      msg->n_unknown_fields++;
      continue;
    }
    char *v = (char *)msg + f->offset, *q = (char *)msg + f->quantifier_offset;
    int ok;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t *n = (size_t *)q;
      if (packed_on_wire(&m)) {
        ok = parse_packed(&m, (char **)v, n, a);
      } else {
        char *to = grow(a, (char **)v, *n, 1, elt_size(f->type));
        ok = to && parse_value(&m, to, 0, a, levels);
        *n += ok;
      }
    } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      uint32_t *which = (uint32_t *)q;
      if (*which != 0) {
        // another member (or this one) came before: it is dropped, not merged
        unsigned h = 0;
        const ProtobufCFieldDescriptor *old = find_field(d, *which, &h);
        memset(v, 0, old ? elt_size(old->type) : 0);
      }
      ok = parse_value(&m, v, 1, a, levels);
      if (ok) {
        *which = m.tag;
      }
    } else {
      ok = parse_value(&m, v, 1, a, levels);
      if (ok) {
        mark_present(msg, f, (unsigned)(f - d->fields), seen);
      }
    }
    if (!ok) {
      return NULL;
    }
  }
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->label == PROTOBUF_C_LABEL_REQUIRED && !f->default_value &&
        !(seen[i / 64] >> (i % 64) & 1)) {
      return NULL;
    }
  }
  return msg;
}

// protobuf-c's merge of two occurrences of one singular message field: later keeps what it
// has, takes from earlier what it lacks, repeated fields are earlier's then later's
static int merge(ProtobufCMessage *earlier, ProtobufCMessage *later, ccsim_arena *a) {
  const ProtobufCMessageDescriptor *d = later->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t *ne = (size_t *)((char *)earlier + f->quantifier_offset);
      size_t *nl = (size_t *)((char *)later + f->quantifier_offset);
      char **pe = (char **)((char *)earlier + f->offset),
           **pl = (char **)((char *)later + f->offset);
      if (*ne == 0) {
        continue;
      }
      if (*nl > 0) {
        // appended to earlier's array, which doubles: a field given N times costs O(N),
        // where a fresh array per merge would cost O(N^2) (protobuf-c frees as it goes)
        size_t sz = elt_size(f->type);
        char *to = grow(a, pe, *ne, *nl, sz);
        if (!to) {
          return 0;
        }
        memcpy(to, *pl, *nl * sz);
        *pl = *pe;
        *nl += *ne;
      } else {
        *pl = *pe;
        *nl = *ne;
      }
      *ne = 0;
      *pe = NULL;
      continue;
    }
    if (f->label != PROTOBUF_C_LABEL_OPTIONAL && f->label != PROTOBUF_C_LABEL_NONE) {
      continue;
    }
    uint32_t *qe = (uint32_t *)((char *)earlier + f->quantifier_offset);
    uint32_t *ql = (uint32_t *)((char *)later + f->quantifier_offset);
    const ProtobufCFieldDescriptor *fld = f;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      if (*ql != 0) {
        continue;
      }
      unsigned h = 0;
      if (!(fld = find_field(d, *qe, &h))) {
        return 0;  // as protobuf-c: neither occurrence chose a member
      }
    }
    char *ve = (char *)earlier + fld->offset, *vl = (char *)later + fld->offset;
    int take = 0;
    switch (fld->type) {
      case PROTOBUF_C_TYPE_MESSAGE: {
        ProtobufCMessage *me = *(ProtobufCMessage **)ve, *ml = *(ProtobufCMessage **)vl;
        if (me && ml && !merge(me, ml, a)) {
          return 0;
        }
        take = me && !ml;
        break;
      }
      case PROTOBUF_C_TYPE_BYTES: {
        const uint8_t *de = ((ProtobufCBinaryData *)ve)->data,
                      *dl = ((ProtobufCBinaryData *)vl)->data;
        const ProtobufCBinaryData *def = fld->default_value;
        take = de && (!def || de != def->data) && (!dl || (def && dl == def->data));
        break;
      }
      case PROTOBUF_C_TYPE_STRING: {
        const char *se = *(char **)ve, *sl = *(char **)vl;
        take = se != fld->default_value && sl == fld->default_value;
        break;
      }
      default:
        take = *qe != 0 && *ql == 0;  // the has flag (or the oneof's case)
        break;
    }
    if (take) {
      size_t sz = elt_size(fld->type);
      memcpy(vl, ve, sz);
      memset(ve, 0, sz);
      if (fld->quantifier_offset) {
        *ql = *qe;
        *qe = 0;
      }
    }
  }
  return 1;
}

size_t ccsim_pb_decoded_max(size_t len) {
  const size_t slack = (size_t)64 << 10;
  return len > (SIZE_MAX - slack) / 16 ? SIZE_MAX : 16 * len + slack;
}

ProtobufCMessage *ccsim_pb_unpack(const ProtobufCMessageDescriptor *d, ccsim_arena *a, size_t len,
                                  const uint8_t *data) {
  return unpack(d, a, len, data, CCSIM_PB_MAX_DEPTH);
}

ProtobufCMessage *ccsim_pb_unpack_nested(const ProtobufCMessageDescriptor *d, ccsim_arena *a,
                                         size_t len, const uint8_t *data, int max_depth) {
  return unpack(d, a, len, data, max_depth);
}

ProtobufCMessage *ccsim_pb_copy(const ProtobufCMessage *m, int *unparsable) {
  size_t n = 0;
  uint8_t *bytes = ccsim_pb_pack_new(m, 0, &n);
  ProtobufCMessage *c = bytes ? protobuf_c_message_unpack(m->descriptor, NULL, n, bytes) : NULL;
  *unparsable = bytes && !c;  // memory runs out in the packing first, as a rule
  free(bytes);
  return c;
}

int ccsim_pb_peek_varint(size_t len, const uint8_t *data, uint32_t field, uint64_t *value) {
  const uint8_t *at = data;
  size_t rem = len;
  unsigned hint = 0;
  int found = 0;
  pbm m;
  while (rem > 0 && next_member(NULL, &at, &rem, &hint, &m)) {
    if (m.tag == field && m.wire_type == WT_VARINT) {
      *value = varint_value(m.len, m.data);  // the last one counts, as in a parse
      found = 1;
    }
  }
  return found;
}
