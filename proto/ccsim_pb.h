// Serializing protobuf-c messages in one pass. protobuf-c needs the size before it packs
// (get_packed_size walks the whole tree, then pack walks it again); writing back to front
// learns each sub-message's length after writing it, so one walk does. The bytes are the
// ones protobuf_c_message_pack writes, field for field (tests/proto checks every type).
#ifndef CCSIM_PB_H
#define CCSIM_PB_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

// m serialized into the end of buf[0, cap): returns its size n, the bytes being
// buf[cap - n, cap), or SIZE_MAX when they do not fit (buf's contents are then undefined).
size_t ccsim_pb_pack_tail(const ProtobufCMessage *m, uint8_t *buf, size_t cap);

// m serialized into a new malloc'd block of head + *len bytes, the message at offset head
// (the caller owns the block, head bytes left for its own header); NULL when out of memory.
void *ccsim_pb_pack_new(const ProtobufCMessage *m, size_t head, size_t *len);

#endif
