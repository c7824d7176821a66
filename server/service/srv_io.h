// Sending replies and the I/O duty (srv.c), as the pool reaches them through srv.pool_ops.
#ifndef SRV_IO_H
#define SRV_IO_H

#include "srv_internal.h"

// Send j's reply to its client and publish its stream message, then free j (any thread;
// takes sock.mu). wake: the calling thread's PUSH to the leader's wake socket (see
// srv_wake_open), NULL while the caller holds the I/O duty itself.
void srv_send_job(srv *s, srv_job *j, void *wake);

// A PUSH socket for the calling pool or pacer thread to wake the leader (caller closes
// it), or NULL.
void *srv_wake_open(srv *s);

// The I/O duty, for the pool thread that took srv.pool.leader: serve requests, the ZAP handler
// and the housekeeping until srv_pool_take_over hands it a job (returned, caller owns it;
// srv.pool.leader passed on, or kept as *duty says) or the service stops (NULL; srv.pool.quit set).
// poll_first: the previous leader's last receive found the ROUTER empty (io_sleeping set),
// so waiting comes first, not another receive.
srv_job *srv_lead(srv *s, int poll_first, srv_duty *duty);

#endif
