// CURVE keys, the ZAP handler and failed handshakes (srv_curve.c).
#ifndef SRV_CURVE_H
#define SRV_CURVE_H

#include "srv_internal.h"

// Load the server secret key and the allowed client keys; set CURVE options on sock and
// bind the ZAP handler. Returns 0 or -1 with a message.
int srv_curve_setup(srv *s, void *sock, char *err, size_t err_sz);

// Answer one pending ZAP request on s->zap (the leader). Returns 1 when one was
// answered, 0 when none was waiting.
int srv_zap_serve(srv *s);

// Watch sock's failed handshakes (which: 0 requests, 1 stream) for srv_handshake_drain.
// Returns 0, or -1 with a message.
int srv_handshake_monitor(srv *s, void *sock, int which, char *err, size_t err_sz);

// Say on stderr why clients' handshakes failed since the last call (the leader): a
// client without CURVE, a wrong server key or CURVE against a server without it
// otherwise leave no trace at the server.
void srv_handshake_drain(srv *s);

// Why the client whose ZAP User-Id (its public key in Z85, as srv_zap_serve names it) is
// user_id is no longer served (static text), or NULL while the allow list admits it (the
// leader). user_id NULL: refused.
const char *srv_curve_refusal(const srv *s, const char *user_id);

// Read the allow directory again if it changed, so that a key moved out stops being
// served between connections too (the leader, from its housekeeping).
void srv_curve_refresh(srv *s);

#endif
