// Dispatch (srv_dispatch.c): requests to replies through the request table.
#ifndef SRV_DISPATCH_H
#define SRV_DISPATCH_H

#include "srv_internal.h"

// Decode and route one request (the leader or srv_handle). Either j->reply is filled
// (returns 1) or the job was queued for the pool (threaded; nobody is woken: the leader
// decides who runs it) / is ready for its j->run (not threaded) (returns 0). Takes
// srv.mu itself.
int srv_accept(srv *s, srv_job *j, const uint8_t *req, size_t len);

// Answer the request req (len bytes, not decoded) with the error code and message in
// j->reply, as srv_accept answers what it refuses undecoded (the request_id echoed).
void srv_refuse(srv *s, srv_job *j, const uint8_t *req, size_t len, int code, const char *msg);

// Run functions of the jobs queued from outside dispatch: a free-running tick (the
// pacer's) and a --state-dir save (the housekeeping's).
void srv_run_tick(srv *s, srv_job *j, ccsim_arena *a);
void srv_run_save(srv *s, srv_job *j, ccsim_arena *a);

// Under mu: ServerInfo's counts, limits and deadline totals into si (pieces in a).
void srv_fill_server_info(srv *s, Ccsim__ServerInfoReply *si, ccsim_arena *a);

#endif
