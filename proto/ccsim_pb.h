// Serializing and parsing protobuf-c messages with less work than protobuf-c's own.
// Packing: protobuf-c needs the size before it packs (get_packed_size walks the whole tree,
// then pack walks it again); writing back to front learns each sub-message's length after
// writing it, so one walk does. The bytes are the ones protobuf_c_message_pack writes,
// field for field (tests/proto checks every type). Unpacking: into an arena, so nothing is
// freed piece by piece, with protobuf_c_message_unpack's results and refusals (tests/proto
// and the fuzz target tests/proto/fuzz/fuzz_unpack compare the two).
#ifndef CCSIM_PB_H
#define CCSIM_PB_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "ccsim_arena.h"
#include "ccsim_limits.h"

// m serialized into the end of buf[0, cap): returns its size n, the bytes being
// buf[cap - n, cap), or SIZE_MAX when they do not fit (buf's contents are then undefined).
size_t ccsim_pb_pack_tail(const ProtobufCMessage *m, uint8_t *buf, size_t cap);

// m serialized into a new malloc'd block of head + *len bytes, the message at offset head
// (the caller owns the block, head bytes left for its own header); NULL when out of memory.
void *ccsim_pb_pack_new(const ProtobufCMessage *m, size_t head, size_t *len);

// FNV-1a (64 bit) of m's serialized bytes, never 0: equal messages, as a retry resends
// them, give equal digests. Needs no memory (large messages are hashed as they are packed).
uint64_t ccsim_pb_digest(const ProtobufCMessage *m);

// The most room a message of len bytes from a peer may take decoded: 16 bytes per byte
// and 64 KiB. A 2-byte empty sub-message decodes to a struct of tens of bytes (an empty
// Body 87 times its size), so without a bound a peer could make us hold gigabytes; real
// messages take 3 to 5 bytes per byte, and small ones fit the 64 KiB.
size_t ccsim_pb_decoded_max(size_t len);

// data parsed as a message of type d, every piece of it allocated in a (the caller's: it
// lives until a is reset); NULL when protobuf_c_message_unpack would refuse it too, when a
// runs out, or past CCSIM_PB_MAX_DEPTH nested messages.
ProtobufCMessage *ccsim_pb_unpack(const ProtobufCMessageDescriptor *d, ccsim_arena *a, size_t len,
                                  const uint8_t *data);

// A copy of m owned by protobuf-c's allocator (freed with protobuf_c_message_free_unpacked),
// for keeping part of a message that lives in an arena. NULL when out of memory, or with
// *unparsable set when m's bytes do not parse back (or memory ran out only then):
// protobuf-c reads an unknown field numbered 0 written in two bytes ("80 00"), writes it
// back in one byte and then refuses it.
ProtobufCMessage *ccsim_pb_copy(const ProtobufCMessage *m, int *unparsable);

// The varint field number `field` at the top level of a message's bytes, read without
// parsing the rest (which may be malformed or too big to parse): 1 and *value when found
// before the first malformed field, else 0.
int ccsim_pb_peek_varint(size_t len, const uint8_t *data, uint32_t field, uint64_t *value);


// ccsim_pb_unpack with another nesting limit (for comparing with protobuf-c on nesting it
// follows further).
ProtobufCMessage *ccsim_pb_unpack_nested(const ProtobufCMessageDescriptor *d, ccsim_arena *a,
                                         size_t len, const uint8_t *data, int max_depth);

#endif
