// CurveZMQ keys on disk, and what a socket's handshakes say, for the server and the
// client alike.
#ifndef CCSIM_KEY_H
#define CCSIM_KEY_H

#include <stddef.h>
#include <stdint.h>

// Read a Z85 key (40 characters, surrounding whitespace ignored) from the file at path
// into out (NUL-terminated). Returns 0, or -1 with a message naming the file in err.
int ccsim_read_key(const char *path, char out[41], char *err, size_t err_sz);

// Watch sock's events (ZMQ_EVENT_* mask) through ep, an inproc endpoint new to zctx:
// returns the PAIR that receives them (caller closes it; linger 0), or NULL (errno from
// ZeroMQ).
void *ccsim_monitor_open(void *zctx, void *sock, const char *ep, int events);

// The security mechanism ("NULL", "CURVE", ...) a ZeroMQ peer at endpoint (tcp:// only)
// greets with, into mech: 1, or 0 when none came within timeout_ms (nothing listening, a
// relay with nothing behind it, not ZeroMQ, another transport). It sends the start of a
// greeting and hangs up once it has the peer's: no mechanism is ever spoken.
int ccsim_zmtp_mechanism(const char *endpoint, int timeout_ms, char mech[21]);

// Take the next event a socket monitor holds (mon: a PAIR connected to the endpoint given
// to zmq_socket_monitor; NULL: none), without waiting: 1 with its ZMQ_EVENT_* id and its
// value, or 0 when none is there.
int ccsim_monitor_next(void *mon, uint16_t *id, uint32_t *value);

// Let sock bind or connect to ep over IPv6 when ep names an IPv6 address (tcp://[::1]:P):
// ZeroMQ sockets are IPv4-only by default, and such an endpoint fails ("No such device").
// Other endpoints keep the default (a host name then resolves to IPv4 alone). 0 or -1.
int ccsim_zmq_ipv6_for(void *sock, const char *ep);

#endif
