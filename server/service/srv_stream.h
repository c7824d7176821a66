// The state stream's subscriptions and publishing (srv_stream.c).
#ifndef SRV_STREAM_H
#define SRV_STREAM_H

#include "srv_internal.h"

// 1 when a stream subscriber's topic covers session id (takes stream.mu).
int srv_stream_watched(srv *s, const char *id);

// Under sock.mu: take the XPUB's (un)subscriptions until none is left (re-arms pub_fd).
void srv_stream_drain_locked(srv *s);

// Under sock.mu: publish msg under topic (no-op without a stream), draining subscriptions
// about once a millisecond.
void srv_stream_publish_locked(srv *s, const char *topic, const uint8_t *msg, size_t len);

#endif
