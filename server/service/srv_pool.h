// The pool and the pacer (srv_pool.c).
#ifndef SRV_POOL_H
#define SRV_POOL_H

#include "srv_internal.h"

// Under mu: queue j behind its session's running job (returns 0), or in the ready queue
// (returns 1: call srv_pool_kick once mu is released, unless the caller is the leader).
int srv_enqueue_locked(srv *s, srv_job *j);

// Hand ready jobs to idle pool threads (takes mu). Call after queueing jobs from outside
// the pool (the pacer's ticks, the leader's saves).
void srv_pool_kick(srv *s);

// Leader: a ready job for the caller to run (caller owns it), or NULL and the caller keeps
// leading. A short job (recent jobs of its session under cfg.inline_us) the caller runs
// keeping the duty (duty->kept; passed on if the job runs long, see run_job); for any
// other the duty passes to an idle pool thread, or to none for a paced job when all are
// busy. emptied: the caller's last receive found the ROUTER empty (see srv_lead).
srv_job *srv_pool_take_over(srv *s, int emptied, srv_duty *duty);

// Start the workers and the pacer / stop and join them. Returns 0 or -1.
int srv_pool_start(srv *s, char *err, size_t err_sz);
void srv_pool_stop(srv *s);

// Set srv.pool.quit and tell the idle pool threads and the pacer to leave (takes mu).
void srv_pool_quit(srv *s);

// Run the calling thread as a pool member (a worker, or srv_run's own thread) until
// srv.pool.quit: lead when nobody does, else run ready jobs, else wait.
void srv_pool_serve(srv *s);

// After a job of ss ran (a pool thread or srv_handle): note its wall time cost [s] (< 0:
// not a request, or not timed), restart the idle clock at active (> 0: the controller's
// request ended then, its reply sent or held until then), put the session's next job in
// the ready queue (the caller's pool loop picks it up; nobody is woken), or mark the
// session idle and free it when it is dead. ss may be NULL (CreateSession). Takes mu.
// Returns 1 when it put a job in the ready queue.
int srv_session_done(srv *s, srv_session *ss, double cost, double active);
// When a finished job j leaves its session active (srv_session_done's active): 0 unless
// the controller sent it, else when its reply goes out. Read before j is delivered.
double srv_job_active_until(const srv_job *j);

// Run the calling thread SCHED_FIFO at cfg.rt_priority (no-op when 0); a refusal is
// reported once on stderr. Returns 0 or -1.
int srv_realtime_thread(srv *s);

// Send the lockstep replies held in srv.pool.delayed whose time has come (all: every one, at
// the stop) and let their sessions go on (srv_session_done); wake as for srv_send_job.
// Returns how many of those sessions' next jobs it made ready (nobody is woken for them).
// Takes mu.
int srv_send_held(srv *s, int all, void *wake);

// Free every job still queued or held (after the threads stopped).
void srv_pool_drain(srv *s);

// For tests, on a server without threads (srv_new; srv.threaded set by the test, so that
// srv_accept queues jobs): the pacer's round of free-running ticks at monotonic time now
// [s] instead of the wall clock's. A tick due is queued, behind its session's job if one
// is queued or running; one due while the session's tick before is still queued or running
// is skipped and counted as a miss. Returns when the next tick is due. Takes mu.
double srv_pool_fire_ticks(srv *s, double now);
// For tests, likewise: the next ready job (paced sessions' first) as a pool thread takes
// it, or NULL; the caller runs it (j->run), frees it and calls srv_session_done. Takes mu.
srv_job *srv_pool_take_ready(srv *s);

#endif
