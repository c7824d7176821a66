// One-pass packing (proto/ccsim_pb.h) writes the bytes protobuf-c's own pack writes: random
// messages of every field type and label (tests/proto/pb_types*.proto) and of the whole wire
// contract, compared byte for byte; a buffer one byte short is refused at every size.
// Arena unpacking accepts and refuses what protobuf-c's unpack does, with the same result,
// on those messages and on damaged copies of them (pb_diff.h).
// ctest-label: unit
#include "ccsim_test.h"

#include <stdlib.h>
#include <string.h>

#include "ccsim_test_rng.h"
#include "pb_diff.h"

typedef struct gen {
  rng r;
  ccsim_arena *a;
  int big;  // allow long repeated fields and strings
} gen;

static uint64_t u64(gen *g) {
  uint64_t hi = (uint64_t)(urand(&g->r) * 4294967296.0),
           lo = (uint64_t)(urand(&g->r) * 4294967296.0);
  return hi << 32 | lo;
}

static int pick(gen *g, int n) {
  return (int)(urand(&g->r) * n);
}

// an integer of every encoded length: a random width, sometimes negated
static uint64_t any_int(gen *g) {
  int bits = pick(g, 65);
  uint64_t v = u64(g);
  v = bits == 64 ? v : v & ((1ull << bits) - 1);
  return pick(g, 4) == 0 ? (uint64_t)0 - v : v;
}

static size_t any_len(gen *g) {
  int k = pick(g, 10);
  return k < 7 ? (size_t)pick(g, 4) : (size_t)pick(g, g->big ? 400 : 40);
}

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

static ProtobufCMessage *random_message(gen *g, const ProtobufCMessageDescriptor *d, int depth);

// a random value of f's type at v; outside repeated fields strings and messages may be NULL
// (written as empty; protobuf-c's sizing does not take a NULL element)
static void random_value(gen *g, const ProtobufCFieldDescriptor *f, void *v, int depth) {
  switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
      if (f->label != PROTOBUF_C_LABEL_REPEATED && pick(g, 10) == 0) {
        *(char **)v = NULL;
        break;
      }
      size_t n = any_len(g);
      char *s = ccsim_arena_alloc(g->a, n + 1);
      for (size_t i = 0; i < n; i++) {
        s[i] = (char)('a' + pick(g, 26));
      }
      *(char **)v = s;
      break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
      ProtobufCBinaryData *bd = v;
      bd->len = any_len(g);
      bd->data = bd->len ? ccsim_arena_alloc(g->a, bd->len) : NULL;
      for (size_t i = 0; i < bd->len; i++) {
        bd->data[i] = (uint8_t)pick(g, 256);
      }
      break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
      *(ProtobufCMessage **)v =
          f->label == PROTOBUF_C_LABEL_REPEATED || (depth < 6 && pick(g, 8) != 0)
              ? random_message(g, f->descriptor, depth + 1)
              : NULL;
      break;
    case PROTOBUF_C_TYPE_BOOL:
      *(protobuf_c_boolean *)v = pick(g, 3) == 2 ? 7 : pick(g, 2);  // any nonzero is true
      break;
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
    default: {
      uint64_t x = any_int(g);
      memcpy(v, &x, elt_size(f->type));  // every bit pattern, NaNs included
      break;
    }
  }
}

static ProtobufCMessage *random_message(gen *g, const ProtobufCMessageDescriptor *d, int depth) {
  ProtobufCMessage *m = ccsim_arena_alloc(g->a, d->sizeof_message);
  d->message_init(m);
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    char *v = (char *)m + f->offset, *q = (char *)m + f->quantifier_offset;
    int ptr = f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      // messages nest: keep their trees small
      size_t n = f->type == PROTOBUF_C_TYPE_MESSAGE
                     ? (depth < 6 ? (size_t)pick(g, depth ? 3 : 40) : 0)
                 : depth > 3 ? (size_t)pick(g, 2)
                             : any_len(g),
             sz = elt_size(f->type);
      char *arr = n ? ccsim_arena_alloc(g->a, n * sz) : NULL;
      for (size_t k = 0; k < n; k++) {
        random_value(g, f, arr + k * sz, depth);
      }
      *(size_t *)q = n;
      *(char **)v = arr;
    } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      if (pick(g, 3) == 0) {  // a later member of the same oneof replaces an earlier one
        random_value(g, f, v, depth);
        *(uint32_t *)q = f->id;
      }
    } else if (f->label == PROTOBUF_C_LABEL_REQUIRED) {
      random_value(g, f, v, depth);
    } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
      int k = pick(g, 4);
      if (k == 0) {
        random_value(g, f, v, depth);  // a value without its has flag is not written
      } else if (k == 1 && ptr && f->default_value) {
        *(const void **)v = f->default_value;  // the default itself is not written
      } else if (k >= 2) {
        random_value(g, f, v, depth);
        if (!ptr) {
          *(protobuf_c_boolean *)q = 1;
        }
      }
    } else if (pick(g, 2)) {  // proto3 without presence: zero values are left out
      random_value(g, f, v, depth);
    }
  }
  if (pick(g, 5) == 0) {  // unknown fields are written back after the known ones
    size_t n = 1 + (size_t)pick(g, 2);
    m->unknown_fields = ccsim_arena_alloc(g->a, n * sizeof *m->unknown_fields);
    m->n_unknown_fields = n;
    for (size_t k = 0; k < n; k++) {
      ProtobufCMessageUnknownField *u = &m->unknown_fields[k];
      u->tag = 1000 + (uint32_t)pick(g, 100000);
      u->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
      u->len = 1 + (size_t)pick(g, 5);
      u->data = ccsim_arena_alloc(g->a, u->len);
      u->data[0] = (uint8_t)(u->len - 1);
    }
  }
  return m;
}

// m packed by both; they must agree to the byte
static void check_same(const ProtobufCMessage *m, unsigned long long seed) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *want = malloc(n + 1), *buf = malloc(n + 16);
  assert_non_null(want);
  assert_non_null(buf);
  assert_int_equal(protobuf_c_message_pack(m, want), n);
  memset(buf, 0xAB, n + 16);
  size_t got = ccsim_pb_pack_tail(m, buf, n + 16);
  if (got != n || memcmp(buf + 16, want, n) != 0) {
    size_t at = 0;
    while (at < n && got == n && buf[16 + at] == want[at]) {
      at++;
    }
    print_error("%s seed %llu: %zu bytes against protobuf-c's %zu, first difference at %zu\n",
                m->descriptor->name, seed, got, n, at);
    fail();
  }
  for (int i = 0; i < 16; i++) {
    assert_int_equal(buf[i], 0xAB);  // nothing written before the message
  }
  free(want);
  free(buf);
}

static void check_random(const ProtobufCMessageDescriptor *d, int count, int big) {
  ccsim_arena a;
  ccsim_arena_init(&a, 64 * 1024, 0);
  for (int i = 0; i < count; i++) {
    gen g = {{(unsigned long long)i * 7919 + 1}, &a, big};
    check_same(random_message(&g, d, 0), g.r.s);
    ccsim_arena_reset(&a);
  }
  ccsim_arena_fini(&a);
}

static void test_every_type_proto2(void **st) {
  (void)st;
  check_random(&pbt__all__descriptor, 3000, 1);
}

static void test_every_type_proto3(void **st) {
  (void)st;
  check_random(&pbt3__plain__descriptor, 3000, 1);
}

// edge values a random draw rarely meets, set by hand
static void test_edge_values(void **st) {
  (void)st;
  Pbt__All m = PBT__ALL__INIT;
  Pbt__Inner in = PBT__INNER__INIT;
  int32_t neg[] = {-1, INT32_MIN, INT32_MAX, 0};
  int64_t neg64[] = {-1, INT64_MIN, INT64_MAX, 0};
  m.r_message = &in;
  m.r_int32 = INT32_MIN;
  m.has_o_sint32 = m.has_o_sint64 = m.has_o_int64 = m.has_o_enum = 1;
  m.o_sint32 = INT32_MIN;
  m.o_sint64 = INT64_MIN;
  m.o_int64 = -1;
  m.o_enum = PBT__COLOUR__NEGATIVE;
  m.p_int32 = m.u_int32 = m.p_sint32 = neg;
  m.n_p_int32 = m.n_u_int32 = m.n_p_sint32 = 4;
  m.p_sint64 = m.p_int64 = neg64;
  m.n_p_sint64 = m.n_p_int64 = 4;
  m.has_high_id = 1;
  m.high_id = UINT32_MAX;
  check_same(&m.base, 0);
  // an empty message is zero bytes
  Pbt__Inner empty = PBT__INNER__INIT;
  uint8_t b[4];
  assert_int_equal(ccsim_pb_pack_tail(&empty.base, b, 0), 0);
  // a packed field whose length takes two bytes (more than 127)
  double many[40];
  for (int i = 0; i < 40; i++) {
    many[i] = i * 0.5;
  }
  m.p_double = many;
  m.n_p_double = 40;
  check_same(&m.base, 0);
}

static void test_every_message_type(void **st) {
  (void)st;
  for (size_t i = 0; i < PB_DIFF_NTYPES; i++) {
    check_random(pb_diff_types[i], 600, 0);
  }
}

// every buffer short of the size is refused; the exact size fits
static void test_short_buffer(void **st) {
  (void)st;
  ccsim_arena a;
  ccsim_arena_init(&a, 64 * 1024, 0);
  for (int i = 0; i < 20; i++) {
    gen g = {{(unsigned long long)i + 99}, &a, 0};
    ProtobufCMessage *m = random_message(&g, &pbt__all__descriptor, 0);
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n + 1);
    assert_non_null(buf);
    for (size_t cap = 0; cap < n; cap++) {
      assert_true(ccsim_pb_pack_tail(m, buf + n - cap, cap) == SIZE_MAX);
    }
    assert_int_equal(ccsim_pb_pack_tail(m, buf, n), n);
    free(buf);
    ccsim_arena_reset(&a);
  }
  ccsim_arena_fini(&a);
}

// ccsim_pb_digest is FNV-1a of protobuf-c's bytes, for messages hashed on the stack and
// for those past it, hashed as protobuf-c streams them; one changed field changes it
static void test_digest(void **st) {
  (void)st;
  ccsim_arena a;
  ccsim_arena_init(&a, 64 * 1024, 0);
  int small = 0, large = 0;
  for (int i = 0; i < 300; i++) {
    // ccsim's own messages, mostly small, and the every-type message, mostly large
    const ProtobufCMessageDescriptor *d =
        i % 2 ? &pbt__all__descriptor : pb_diff_types[(size_t)i / 2 % PB_DIFF_NTYPES];
    gen g = {{(unsigned long long)i + 11}, &a, 0};
    ProtobufCMessage *m = random_message(&g, d, 0);
    size_t n = protobuf_c_message_get_packed_size(m);
    small += n <= 1024;
    large += n > 1024;
    uint8_t *bytes = malloc(n + 1);
    assert_non_null(bytes);
    protobuf_c_message_pack(m, bytes);
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t k = 0; k < n; k++) {
      h = (h ^ bytes[k]) * 0x100000001b3u;
    }
    assert_true(ccsim_pb_digest(m) == (h ? h : 1));
    free(bytes);
    if (d == &pbt__all__descriptor) {
      Pbt__All *all = (Pbt__All *)m;
      all->has_high_id = 1;
      all->high_id ^= 1;
      assert_true(ccsim_pb_digest(m) != (h ? h : 1));
    }
    ccsim_arena_reset(&a);
  }
  print_message("digests: %d messages on the stack, %d streamed\n", small, large);
  assert_true(small > 0 && large > 0);
  ccsim_arena_fini(&a);
}

// ccsim_pb_pack_new leaves head bytes before the message, for small and large messages
static void test_pack_new(void **st) {
  (void)st;
  ccsim_arena a;
  ccsim_arena_init(&a, 64 * 1024, 0);
  int saw_large = 0;
  for (int i = 0; i < 200; i++) {
    gen g = {{(unsigned long long)i + 5}, &a, 1};
    ProtobufCMessage *m = random_message(&g, &pbt__all__descriptor, 0);
    size_t n = protobuf_c_message_get_packed_size(m), len = 0;
    saw_large |= n > 4096;  // past the stack buffer: measured, then written in place
    uint8_t *want = malloc(n + 1);
    assert_non_null(want);
    protobuf_c_message_pack(m, want);
    uint8_t *block = ccsim_pb_pack_new(m, 24, &len);
    assert_non_null(block);
    assert_int_equal(len, n);
    assert_memory_equal(block + 24, want, n);
    free(block);
    free(want);
    ccsim_arena_reset(&a);
  }
  assert_true(saw_large);
  ccsim_arena_fini(&a);
}

// m packed, then damaged copies: a byte changed, cut short, a byte inserted (and with
// every_cut and at most 512 bytes, cut short at every length); both unpackers must agree
// on each
static void check_unpack(const ProtobufCMessage *m, gen *g, ccsim_arena *rx, int every_cut) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n + 2);
  assert_non_null(buf);
  protobuf_c_message_pack(m, buf);
  for (int k = 0; k < 12; k++) {
    size_t len = n;
    if (k > 0 && n > 0) {
      size_t at = (size_t)pick(g, (int)n);
      int how = pick(g, 3);
      if (how == 0) {
        buf[at] = (uint8_t)pick(g, 256);
      } else if (how == 1) {
        len = at;
      } else {
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = (uint8_t)pick(g, 256);
        len = n + 1;
      }
    }
    const char *why = pb_diff(m->descriptor, rx, len, buf);
    if (why) {
      print_error("%s, %zu bytes, damage %d: %s\n", m->descriptor->name, len, k, why);
      for (size_t i = 0; i < len; i++) {
        print_error("%02x%s", buf[i], i + 1 < len ? " " : "\n");
      }
      fail();
    }
    ccsim_arena_reset(rx);
    protobuf_c_message_pack(m, buf);  // undamaged again for the next copy
  }
  for (size_t len = 0; every_cut && n <= 512 && len < n; len++) {
    // each cut ends inside some field: its delimiting must not read past the end
    const char *why = pb_diff(m->descriptor, rx, len, buf);
    if (why) {
      print_error("%s cut to %zu of %zu bytes: %s\n", m->descriptor->name, len, n, why);
      fail();
    }
    ccsim_arena_reset(rx);
  }
  free(buf);
}

static void test_unpack_same(void **st) {
  (void)st;
  ccsim_arena a, rx;
  ccsim_arena_init(&a, 64 * 1024, 0);
  ccsim_arena_init(&rx, 4096, 0);
  for (size_t t = 0; t < PB_DIFF_NTYPES; t++) {
    for (int i = 0; i < 300; i++) {
      gen g = {{(unsigned long long)i * 31 + t}, &a, 0};
      check_unpack(random_message(&g, pb_diff_types[t], 0), &g, &rx, i < 40);
      ccsim_arena_reset(&a);
    }
  }
  ccsim_arena_fini(&a);
  ccsim_arena_fini(&rx);
}

// pbt.All's required fields (r_int32 5, r_string "", r_message {}, r_bytes ""), appended to
// hand-made encodings of the others
static const uint8_t req[] = {0xa0, 0x01, 0x05, 0xaa, 0x01, 0x00,
                              0xb2, 0x01, 0x00, 0xba, 0x01, 0x00};

// hand-made encodings a random message does not produce: a field twice (a sub-message
// merged, a oneof member replaced), a packed field sent unpacked, a bool on another wire
static void test_unpack_edge_encodings(void **st) {
  (void)st;
  static const struct {
    int ok;  // whether protobuf-c accepts it
    size_t n;
    uint8_t b[24];
  } cases[] = {
      // o_message {a: 1} then o_message {s: "x"}: merged into {a: 1, s: "x"}
      {1, 11, {0x8a, 0x01, 0x02, 0x08, 0x01, 0x8a, 0x01, 0x03, 0x12, 0x01, 0x78}},
      // o_message {children: {}} then {children: {}, a: 2}: both children, a = 2
      {1, 12, {0x8a, 0x01, 0x02, 0x1a, 0x00, 0x8a, 0x01, 0x04, 0x1a, 0x00, 0x08, 0x02}},
      // o_message {children: {}} then {a: 3}: the child kept
      {1, 10, {0x8a, 0x01, 0x02, 0x1a, 0x00, 0x8a, 0x01, 0x02, 0x08, 0x03}},
      // o_message {next: {a: 1}} then {next: {s: "x"}}: merged a level down
      {1,
       15,
       {0x8a, 0x01, 0x04, 0x22, 0x02, 0x08, 0x01, 0x8a, 0x01, 0x05, 0x22, 0x03, 0x12, 0x01, 0x78}},
      // o_message {next: {a: 1}} then {a: 2}: next kept
      {1, 12, {0x8a, 0x01, 0x04, 0x22, 0x02, 0x08, 0x01, 0x8a, 0x01, 0x02, 0x08, 0x02}},
      // o_picky {x: 1} then {a: 2}: the oneof member kept; {x: 1} then {y: "z"}: replaced
      {1, 10, {0xc2, 0x01, 0x02, 0x28, 0x01, 0xc2, 0x01, 0x02, 0x08, 0x02}},
      {1, 11, {0xc2, 0x01, 0x02, 0x28, 0x01, 0xc2, 0x01, 0x03, 0x32, 0x01, 0x7a}},
      // o_picky {a: 1} then {a: 2}, neither choosing the oneof: protobuf-c refuses
      {0, 10, {0xc2, 0x01, 0x02, 0x08, 0x01, 0xc2, 0x01, 0x02, 0x08, 0x02}},
      // c_message {a: 1} then c_string "y": the oneof takes the string
      {1, 9, {0xc2, 0x04, 0x02, 0x08, 0x01, 0xba, 0x04, 0x01, 0x79}},
      // c_message {a: 1} then c_message {s: "x"}: replaced, not merged
      {1, 11, {0xc2, 0x04, 0x02, 0x08, 0x01, 0xc2, 0x04, 0x03, 0x12, 0x01, 0x78}},
      // u_int32 given packed, p_int32 given one by one
      {1, 5, {0xf2, 0x01, 0x02, 0x01, 0x02}},
      {1, 6, {0x90, 0x03, 0x05, 0x90, 0x03, 0x06}},
      // o_bool as a 64-bit field (no low bit set: false), as a length-delimited one
      {1, 9, {0x69, 0, 0, 0, 0, 0, 0, 0, 0x80}},
      {1, 4, {0x6a, 0x02, 0x00, 0x01}},
      // o_bool on 64 and 32 bits right after o_double, where the in-order fast path looks:
      // true (a low bit set in the fifth and third byte)
      {1, 18, {0x61, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x69, 0, 0, 0, 0, 0x01, 0, 0, 0}},
      {1, 14, {0x61, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x6d, 0, 0, 0x01, 0}},
      // a packed bool holding 2 (true), one of two bytes; a varint of eleven bytes; field
      // number 0; a group
      {1, 4, {0xf2, 0x03, 0x01, 0x02}},
      {1, 6, {0xf2, 0x03, 0x03, 0x80, 0x01, 0x00}},
      {0, 12, {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
      {0, 2, {0x00, 0x01}},
      {0, 2, {0x0b, 0x0c}},
  };
  ccsim_arena rx;
  ccsim_arena_init(&rx, 4096, 0);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    // with the required fields after it
    uint8_t buf[64];
    memcpy(buf, cases[i].b, cases[i].n);
    memcpy(buf + cases[i].n, req, sizeof req);
    ProtobufCMessage *ref =
        protobuf_c_message_unpack(&pbt__all__descriptor, NULL, cases[i].n + sizeof req, buf);
    if (!ref != !cases[i].ok) {
      print_error("case %zu: protobuf-c %s it\n", i, ref ? "accepts" : "refuses");
      fail();
    }
    protobuf_c_message_free_unpacked(ref, NULL);
    const char *why = pb_diff(&pbt__all__descriptor, &rx, cases[i].n + sizeof req, buf);
    if (why) {
      print_error("case %zu: %s\n", i, why);
      fail();
    }
    ccsim_arena_reset(&rx);
  }
  ccsim_arena_fini(&rx);
}

// nesting past CCSIM_PB_MAX_DEPTH is refused (protobuf-c would follow it down the stack)
static void test_unpack_depth(void **st) {
  (void)st;
  ccsim_arena rx;
  ccsim_arena_init(&rx, 4096, 0);
  for (int depth = CCSIM_PB_MAX_DEPTH - 2; depth <= CCSIM_PB_MAX_DEPTH + 2; depth++) {
    // Inner { children { children { ... } } }: depth nested messages
    Pbt__Inner *nodes = calloc((size_t)depth + 1, sizeof *nodes);
    Pbt__Inner **links = calloc((size_t)depth + 1, sizeof *links);
    assert_non_null(nodes);
    assert_non_null(links);
    for (int k = 0; k <= depth; k++) {
      pbt__inner__init(&nodes[k]);
      links[k] = &nodes[k];
      if (k > 0) {
        nodes[k - 1].n_children = 1;
        nodes[k - 1].children = &links[k];
      }
    }
    size_t len = protobuf_c_message_get_packed_size(&nodes[0].base);
    uint8_t *bytes = malloc(len + 1);
    assert_non_null(bytes);
    protobuf_c_message_pack(&nodes[0].base, bytes);
    ProtobufCMessage *m = ccsim_pb_unpack(&pbt__inner__descriptor, &rx, len, bytes);
    if (depth <= CCSIM_PB_MAX_DEPTH) {
      assert_non_null(m);
      assert_int_equal(pb_diff_depth(m), depth);
    } else {
      assert_null(m);
    }
    assert_null(pb_diff(&pbt__inner__descriptor, &rx, len, bytes));
    // the deep chain as All.c_message, then replaced by c_string "y": protobuf-c's tree is
    // shallow, but the nesting on the wire is what the limit looks at
    Pbt__All outer = PBT__ALL__INIT;
    Pbt__Inner empty = PBT__INNER__INIT;
    outer.r_string = "";
    outer.r_message = &empty;
    outer.choice_case = PBT__ALL__CHOICE_C_MESSAGE;
    outer.c_message = &nodes[0];
    static const uint8_t then_string[] = {0xba, 0x04, 0x01, 0x79};
    size_t alen = protobuf_c_message_get_packed_size(&outer.base);
    uint8_t *all = malloc(alen + sizeof then_string);
    assert_non_null(all);
    protobuf_c_message_pack(&outer.base, all);
    memcpy(all + alen, then_string, sizeof then_string);
    alen += sizeof then_string;
    assert_null(pb_diff(&pbt__all__descriptor, &rx, alen, all));
    Pbt__All *top = (Pbt__All *)ccsim_pb_unpack_nested(&pbt__all__descriptor, &rx, alen, all, 1000);
    assert_non_null(top);
    assert_int_equal(top->choice_case, PBT__ALL__CHOICE_C_STRING);
    if (depth + 1 > CCSIM_PB_MAX_DEPTH) {
      assert_null(ccsim_pb_unpack(&pbt__all__descriptor, &rx, alen, all));
    }
    free(all);
    ccsim_arena_reset(&rx);
    free(bytes);
    free(nodes);
    free(links);
  }
  ccsim_arena_fini(&rx);
}

// a sub-message given N times is merged in O(N) memory: protobuf-c frees each earlier
// copy, the arena cannot, so merged arrays must grow in place (they once took O(N^2))
static void test_unpack_merge_linear(void **st) {
  (void)st;
  enum { N = 20000 };
  static const uint8_t dup[] = {0x8a, 0x01, 0x02, 0x1a, 0x00};  // o_message {children {}}
  size_t n = N * sizeof dup + sizeof req;
  uint8_t *buf = malloc(n);
  assert_non_null(buf);
  for (int k = 0; k < N; k++) {
    memcpy(buf + k * sizeof dup, dup, sizeof dup);
  }
  memcpy(buf + N * sizeof dup, req, sizeof req);
  ccsim_arena rx;
  ccsim_arena_init(&rx, 64 * 1024, 0);
  Pbt__All *m = (Pbt__All *)ccsim_pb_unpack(&pbt__all__descriptor, &rx, n, buf);
  assert_non_null(m);
  assert_non_null(m->o_message);
  assert_int_equal(m->o_message->n_children, N);
  assert_true(rx.total < 400 * (size_t)N);  // quadratic: 4 N^2 bytes of arrays alone
  assert_null(pb_diff(&pbt__all__descriptor, &rx, n, buf));
  ccsim_arena_fini(&rx);
  free(buf);
}

// ccsim_pb_copy: protobuf-c's own tree, equal to the original; an unknown field numbered 0
// in two bytes (read by both decoders) cannot be written back and is reported so
static void test_copy(void **st) {
  (void)st;
  ccsim_arena a;
  ccsim_arena_init(&a, 64 * 1024, 0);
  for (int i = 0; i < 50; i++) {
    gen g = {{(unsigned long long)i + 300}, &a, 0};
    ProtobufCMessage *m = random_message(&g, &ccsim__scene__descriptor, 0);
    int unparsable = 1;
    ProtobufCMessage *c = ccsim_pb_copy(m, &unparsable);
    assert_non_null(c);
    assert_int_equal(unparsable, 0);
    uint8_t *x = NULL, *y = NULL;
    size_t nx = pb_diff_bytes(m, &x), ny = pb_diff_bytes(c, &y);
    assert_int_equal(nx, ny);
    assert_memory_equal(x, y, nx);
    free(x);
    free(y);
    protobuf_c_message_free_unpacked(c, NULL);
    ccsim_arena_reset(&a);
  }
  static const uint8_t zero_field[] = {0x80, 0x00, 0x00};
  ProtobufCMessage *m =
      ccsim_pb_unpack(&ccsim__scene__descriptor, &a, sizeof zero_field, zero_field);
  assert_non_null(m);
  int unparsable = 0;
  assert_null(ccsim_pb_copy(m, &unparsable));
  assert_int_equal(unparsable, 1);
  ccsim_arena_fini(&a);
}

// ccsim_pb_peek_varint reads a top-level varint up to the first malformed field
static void test_peek_varint(void **st) {
  (void)st;
  uint64_t v = 0;
  static const uint8_t twice[] = {0x08, 0x05, 0x12, 0x01, 0x41, 0x08, 0xac, 0x02};
  assert_int_equal(ccsim_pb_peek_varint(sizeof twice, twice, 1, &v), 1);
  assert_int_equal(v, 300);  // the last one, as a parse takes it
  static const uint8_t then_junk[] = {0x08, 0x07, 0x00, 0x00, 0xff};
  assert_int_equal(ccsim_pb_peek_varint(sizeof then_junk, then_junk, 1, &v), 1);
  assert_int_equal(v, 7);
  static const uint8_t junk_first[] = {0x00, 0x08, 0x07};
  assert_int_equal(ccsim_pb_peek_varint(sizeof junk_first, junk_first, 1, &v), 0);
  static const uint8_t other_wire[] = {0x09, 1, 2, 3, 4, 5, 6, 7, 8};  // field 1, 64-bit
  assert_int_equal(ccsim_pb_peek_varint(sizeof other_wire, other_wire, 1, &v), 0);
}

// an arena that runs out gives NULL, not a half-built message
static void test_unpack_arena_limit(void **st) {
  (void)st;
  ccsim_arena a, rx;
  ccsim_arena_init(&a, 64 * 1024, 0);
  gen g = {{7}, &a, 1};
  ProtobufCMessage *m = random_message(&g, &pbt__all__descriptor, 0);
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n);
  assert_non_null(buf);
  protobuf_c_message_pack(m, buf);
  ccsim_arena_init(&rx, 256, 1024);
  assert_null(ccsim_pb_unpack(&pbt__all__descriptor, &rx, n, buf));
  assert_true(rx.over_limit);  // told apart from a malformed message and from no memory
  assert_false(rx.out_of_memory);
  ccsim_arena_reset(&rx);
  assert_false(rx.over_limit);
  ccsim_arena_fini(&rx);
  ccsim_arena_init(&rx, 256, 0);
  assert_non_null(ccsim_pb_unpack(&pbt__all__descriptor, &rx, n, buf));
  assert_false(rx.over_limit || rx.out_of_memory);
  // a block no malloc can give (past the address space): out of memory, not over a limit
  assert_null(ccsim_arena_alloc(&rx, (size_t)1 << 50));
  assert_true(rx.out_of_memory);
  assert_false(rx.over_limit);
  ccsim_arena_reset(&rx);
  assert_false(rx.out_of_memory);
  ccsim_arena_fini(&rx);
  free(buf);
  ccsim_arena_fini(&a);
}

// Under AddressSanitizer, a malloc no memory can satisfy returns NULL as glibc's does
// (test_unpack_arena_limit asks for one) instead of stopping the program.
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1";
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type_proto2),   cmocka_unit_test(test_every_type_proto3),
      cmocka_unit_test(test_edge_values),         cmocka_unit_test(test_every_message_type),
      cmocka_unit_test(test_short_buffer),        cmocka_unit_test(test_pack_new),
      cmocka_unit_test(test_unpack_same),         cmocka_unit_test(test_unpack_edge_encodings),
      cmocka_unit_test(test_unpack_depth),        cmocka_unit_test(test_unpack_arena_limit),
      cmocka_unit_test(test_unpack_merge_linear), cmocka_unit_test(test_copy),
      cmocka_unit_test(test_peek_varint),         cmocka_unit_test(test_digest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
