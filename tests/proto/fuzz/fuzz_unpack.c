// libFuzzer target: ccsim_pb_unpack against protobuf_c_message_unpack (tests/proto/pb_diff.h)
// on any bytes, as every message type of the wire contract and of the test messages that
// hold every field type. The first byte picks the type. Run: fuzz_unpack -max_total_time=60
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pb_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) {
    return 0;
  }
  const ProtobufCMessageDescriptor *d = pb_diff_types[data[0] % PB_DIFF_NTYPES];
  ccsim_arena a;
  ccsim_arena_init(&a, 4096, 0);
  const char *why = pb_diff(d, &a, size - 1, data + 1);
  ccsim_arena_fini(&a);
  if (why) {
    fprintf(stderr, "%s: %s\n", d->name, why);
    abort();
  }
  return 0;
}
