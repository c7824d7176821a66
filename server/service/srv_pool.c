// The pool and the pacer: pool threads take turns at the I/O duty (leader and followers)
// and run one job of a session at a time, in arrival order, in parallel across sessions;
// the pacer holds lockstep replies until their wall-clock time and fires free-running
// ticks. It runs a job through job->run and calls up only through srv.pool_ops, so it
// knows nothing of dispatch or the sockets.
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <zmq.h>

#include "srv_clock.h"
#include "srv_job.h"
#include "srv_pool.h"
#include "srv_store.h"

static int job_paced(const srv_job *j) {
  return j->ss && j->ss->pace.mode != CCSIM__PACING_MODE__PACING_NONE;
}

// paced sessions have deadlines: their jobs go ahead of the others
static void ready_push(srv *s, srv_job *j) {
  atomic_fetch_add(&s->pool.nready, 1);
  j->next = NULL;
  int paced = job_paced(j);
  srv_job **head = paced ? &s->pool.phead : &s->pool.rhead,
          **tail = paced ? &s->pool.ptail : &s->pool.rtail;
  if (*tail) {
    (*tail)->next = j;
  } else {
    *head = j;
  }
  *tail = j;
}

// A job the I/O duty holder runs itself: a request of a session whose recent jobs were all
// shorter than inline_us. Requests arriving meanwhile wait less than a hand-off to another
// thread would cost (a futex wake and a context switch, about 10-20 us of CPU here); the
// first request of a session (cost unknown), creations, ticks and saves are handed off.
static int job_inline(const srv *s, const srv_job *j) {
  return s->cfg.inline_us > 0 && j->kind == SRV_JOB_REQUEST && j->ss && j->ss->sched.cost >= 0 &&
         j->ss->sched.cost < 1e-6 * s->cfg.inline_us;
}

// How long the duty holder may run a job itself before the duty is passed on: a job
// predicted short that runs this long is not short, and requests wait behind it
static double inline_watch(const srv *s) {
  double w = 4e-6 * s->cfg.inline_us;
  return w > 0.5e-3 ? w : 0.5e-3;
}

// A Step the duty holder runs itself watches its own time: sim_step calls step_watch at
// every contact evaluation (each right-hand side, the reply's contacts), Jacobian,
// stretch and rigid step, and past the watch it passes the duty on as the pacer would. The pacer,
// which had to wake every watch while such steps ran (a wake-up and two context switches, about 7
// us of CPU per round trip at one client), then only keeps a tenfold watch: for one evaluation that
// runs long by itself.
#define SRV_PACER_WATCH_STEP 10.0

static int job_steps(const srv_job *j) {
  return j->req && j->req->steps;
}

static srv_job *ready_pop(srv *s) {
  srv_job **head = s->pool.phead ? &s->pool.phead : &s->pool.rhead;
  srv_job **tail = s->pool.phead ? &s->pool.ptail : &s->pool.rtail;
  srv_job *j = *head;
  if (j) {
    atomic_fetch_sub(&s->pool.nready, 1);
    *head = j->next;
    if (!*head) {
      *tail = NULL;
    }
  }
  return j;
}

int srv_enqueue_locked(srv *s, srv_job *j) {
  srv_session *ss = j->ss;
  j->next = NULL;
  if (ss && ss->sched.busy) {
    if (ss->sched.qtail) {
      ss->sched.qtail->next = j;
    } else {
      ss->sched.qhead = j;
    }
    ss->sched.qtail = j;
    return 0;
  }
  if (ss) {
    ss->sched.busy = 1;
  }
  ready_push(s, j);
  return 1;
}

// under mu: ready jobs to idle members while there are both; returns how many members
// got one (in post, at most max), to be posted once mu is released
static int assign_locked(srv *s, srv_member **post, int max) {
  int n = 0;
  while (n < max && s->pool.idle && (s->pool.phead || s->pool.rhead)) {
    srv_member *m = s->pool.idle;
    s->pool.idle = m->next;
    m->job = ready_pop(s);
    post[n++] = m;
  }
  return n;
}

static void post_all(srv_member **post, int n) {
  for (int k = 0; k < n; k++) {
    sem_post(&post[k]->go);
  }
}

void srv_pool_kick(srv *s) {
  srv_member *post[16];
  int n;
  do {
    pthread_mutex_lock(&s->mu);
    n = assign_locked(s, post, 16);
    pthread_mutex_unlock(&s->mu);
    post_all(post, n);
  } while (n == 16);
}

void srv_pool_quit(srv *s) {
  pthread_mutex_lock(&s->mu);
  s->pool.quit = 1;
  srv_member *m = s->pool.idle;
  s->pool.idle = NULL;
  pthread_cond_broadcast(&s->pool.pace_cv);
  pthread_mutex_unlock(&s->mu);
  // a posted member with no task looks at quit; the list is unlinked first because a
  // member may return (and its struct go away) as soon as it is posted
  while (m) {
    srv_member *nx = m->next;
    sem_post(&m->go);
    m = nx;
  }
}

double srv_job_active_until(const srv_job *j) {
  if (j->kind != SRV_JOB_REQUEST || !j->controller) return 0;
  double now = srv_now();
  return j->send_at > now ? j->send_at : now;
}

int srv_session_done(srv *s, srv_session *ss, double cost, double active) {
  if (!ss) {
    return 0;
  }
  int free_it = 0, pushed = 0;
  pthread_mutex_lock(&s->mu);
  if (active > ss->sched.last_active) {
    // a request that ran longer than the idle timeout (or a reply held that long) must
    // not leave its session expired the moment it is done
    ss->sched.last_active = active;
  }
  if (cost >= 0) {
    // a decaying maximum: one long job keeps the session off the duty holder for a few
    // jobs, so a session alternating short and long jobs is not run inline
    ss->sched.cost = cost > 0.5 * ss->sched.cost ? cost : 0.5 * ss->sched.cost;
  }
  if (ss->sched.qhead) {
    srv_job *j = ss->sched.qhead;
    ss->sched.qhead = j->next;
    if (!ss->sched.qhead) {
      ss->sched.qtail = NULL;
    }
    ready_push(s, j);
    pushed = 1;
  } else {
    ss->sched.busy = 0;
    free_it = ss->sched.dead;
  }
  pthread_mutex_unlock(&s->mu);
  if (free_it) {
    srv_session_free(&ss);
  }
  return pushed;
}

srv_job *srv_pool_take_over(srv *s, int emptied, srv_duty *duty) {
  srv_job *j = NULL;
  srv_member *post[16];
  int n = 0, wake_pacer = 0;
  duty->kept = 0;
  pthread_mutex_lock(&s->mu);
  srv_job *head = s->pool.phead ? s->pool.phead : s->pool.rhead;
  if (head && !s->pool.quit && job_inline(s, head)) {
    // a short job: run it ourselves and keep the duty; the jobs behind it wait for our
    // next turn (or for a thread that finishes its job) instead of costing a wake-up each
    j = ready_pop(s);
    double now = srv_now();
    s->pool.inline_since = now;
    s->pool.inline_jobs++;
    duty->kept = 1;
    duty->gen = s->pool.duty_gen;
    duty->watched = job_steps(j);
    s->pool.pacer_watch = inline_watch(s) * (duty->watched ? SRV_PACER_WATCH_STEP : 1.0);
    // the pacer is the watchdog: when it sleeps past the watch, it must look sooner
    wake_pacer = s->pool.pacer_wake > now + s->pool.pacer_watch;
  } else if (s->pool.idle && head) {
    j = ready_pop(s);
    srv_member *m = s->pool.idle;
    s->pool.idle = m->next;
    m->lead = emptied ? 2 : 1;
    post[n++] = m;
    n += assign_locked(s, post + 1, 15);  // jobs still waiting go to the other idle ones
  } else if (s->pool.phead) {
    // a paced step has a deadline and every other thread is busy: we run it, and the
    // first thread to finish its job takes the I/O duty (the pool loop leads first), so
    // other requests wait at most one paced step, never for an unpaced one to end
    j = ready_pop(s);
    s->pool.leader = 0;
  }
  pthread_mutex_unlock(&s->mu);
  if (wake_pacer) {
    pthread_cond_signal(&s->pool.pace_cv);
  }
  post_all(post, n);
  return j;
}

// under mu, the pacer or a Step's own watch: the duty holder has run a job itself for
// longer than the watch; give the duty to an idle thread (returned, to be posted once mu
// is released), or let the first thread to finish its job take it
static srv_member *take_duty_locked(srv *s) {
  s->pool.duty_gen++;
  s->pool.inline_since = 0;
  srv_member *m = s->pool.idle;
  if (m) {
    s->pool.idle = m->next;
    m->lead = 1;
    m->job = NULL;
  } else {
    s->pool.leader = 0;
  }
  return m;
}

int srv_realtime_thread(srv *s) {
  if (s->cfg.rt_priority <= 0) {
    return 0;
  }
  struct sched_param sp = {.sched_priority = s->cfg.rt_priority};
  int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  if (rc != 0 && s->cfg.verbose) {
    fprintf(stderr, "ccsimd: warning: no real-time priority (SCHED_FIFO %d) for a thread\n",
            s->cfg.rt_priority);
  }
  return rc == 0 ? 0 : -1;
}

typedef struct step_watch_arg {
  srv *s;
  srv_job *j;      // the job whose physics is watched
  unsigned gen;    // the duty's generation when the step began
  double until;    // monotonic [s]: pass the duty on from here (0: not run by the holder)
  double stop_at;  // monotonic [s]: stop the physics from here (0: never)
  double stop_seen;  // monotonic [s]: when it first saw the server stopping (0: not yet)
  int done;        // the duty was passed on
} step_watch_arg;

// sim_step's progress call: past the server's time per request, or SRV_STOP_GRACE after
// the server began to stop, stop the physics; during a Step run by the duty holder, past
// the watch, pass the duty on (unless the pacer did)
static int step_watch(void *arg) {
  step_watch_arg *w = arg;
  double now = srv_now();
  if (w->stop_at > 0 && now > w->stop_at) {
    w->j->stopped = SRV_STOPPED_LIMIT;
    return 1;
  }
  if (atomic_load_explicit(&w->s->stop, memory_order_relaxed)) {
    if (w->stop_seen == 0) {
      w->stop_seen = now;
    } else if (now > w->stop_seen + SRV_STOP_GRACE) {
      w->j->stopped = SRV_STOPPED_SHUTDOWN;
      return 1;
    }
  }
  if (w->until == 0 || w->done || now < w->until) {
    return 0;
  }
  w->done = 1;
  srv *s = w->s;
  srv_member *m = NULL;
  pthread_mutex_lock(&s->mu);
  if (s->pool.inline_since > 0 && s->pool.duty_gen == w->gen) {
    m = take_duty_locked(s);
    s->pool.step_passes++;
  }
  pthread_mutex_unlock(&s->mu);
  if (m) {
    sem_post(&m->go);
  }
  return 0;  // the step goes on, on this thread
}

// run j on the calling pool thread and deliver its reply (now, or held by the pacer);
// duty: the I/O duty's state when the thread kept it to run j itself, else NULL
static void run_job(srv *s, srv_job *j, void *wake, ccsim_arena *a, const srv_duty *duty) {
  ccsim_arena_reset(a);
  double t0 = srv_now();
  step_watch_arg w = {.s = s, .j = j};
  sim_data *watched = NULL;
  if (j->ss && j->ss->d) {
    if (duty && duty->kept && duty->watched) {
      w.gen = duty->gen;
      w.until = t0 + inline_watch(s);
    }
    w.stop_at = s->cfg.max_step_seconds > 0 ? t0 + s->cfg.max_step_seconds : 0;
    watched = j->ss->d;  // always: a stopping server must not wait out a long step
    sim_set_progress(watched, step_watch, &w);
  }
  j->run(s, j, a);
  if (watched) {
    sim_set_progress(watched, NULL, NULL);
  }
  double cost = j->kind == SRV_JOB_REQUEST ? srv_now() - t0 : -1;
  srv_session *ss = j->ss;
  // deliver before starting the session's next job, so replies and stream messages of
  // one session leave in order: a held reply keeps its session busy until it is sent
  // (srv_send_held lets it go on)
  if (j->send_at > srv_now()) {
    j->cost = cost;
    double until = srv_job_active_until(j);
    pthread_mutex_lock(&s->mu);
    if (ss && until > ss->sched.last_active) {
      ss->sched.last_active = until;  // its controller is waiting, not idle, until then
    }
    srv_job **p = &s->pool.delayed;
    while (*p && (*p)->send_at <= j->send_at) {
      p = &(*p)->next;
    }
    j->next = *p;
    *p = j;
    pthread_cond_signal(&s->pool.pace_cv);
    pthread_mutex_unlock(&s->mu);
    return;
  }
  double active = srv_job_active_until(j);
  s->pool_ops.send(s, j, wake);
  srv_session_done(s, ss, cost, active);
}

void srv_pool_serve(srv *s) {
  void *wake = s->pool_ops.wake_open(s);
  ccsim_arena a;
  ccsim_arena_init(&a, 64 * 1024, 0);
  srv_member me;
  sem_init(&me.go, 0, 0);
  srv_duty duty = {0, 0, 0};
  pthread_mutex_lock(&s->mu);
  while (!s->pool.quit) {
    srv_job *j = NULL;
    int lead = 0;
    if (duty.kept) {
      // we ran a job while holding the I/O duty: it is still ours unless the watchdog
      // passed it on meanwhile
      lead = duty.gen == s->pool.duty_gen;
      if (lead) {
        s->pool.inline_since = 0;
      }
      duty.kept = 0;
    }
    if (lead) {
      pthread_mutex_unlock(&s->mu);
    } else if (!s->pool.leader) {
      // the I/O duty first: a request must never wait while a thread could take it
      s->pool.leader = lead = 1;
      pthread_mutex_unlock(&s->mu);
    } else if (s->pool.phead || s->pool.rhead) {
      j = ready_pop(s);
      pthread_mutex_unlock(&s->mu);
    } else {
      // idle until someone hands us a task (or quit); they unlink us from the list. With
      // spin_us, look for the post a while first: a post before sem_wait sleeps costs the
      // giver no futex wake-up and us no context switch
      me.lead = 0;
      me.job = NULL;
      me.next = s->pool.idle;
      s->pool.idle = &me;
      pthread_mutex_unlock(&s->mu);
      int got = 0;
      if (s->cfg.spin_us > 0) {
        double until = srv_now() + 1e-6 * s->cfg.spin_us;
        for (int k = 1; !(got = sem_trywait(&me.go) == 0); k++) {
          if ((k & 15) == 0 && srv_now() > until) {
            break;
          }
        }
      }
      while (!got && !(got = sem_wait(&me.go) == 0) && errno == EINTR) {
      }
      // the task is ours without the mutex: its giver set it before posting
      lead = me.lead;
      j = me.job;
    }
    if (lead) {
      j = s->pool_ops.lead(s, lead == 2, &duty);
    }
    if (j) {
      run_job(s, j, wake, &a, &duty);
      if (s->cfg.rt_priority > 0) {
        // SCHED_FIFO threads of one priority do not preempt each other: without a turn
        // given here, pool threads taking job after job would hold every core while the
        // ZeroMQ I/O threads and the next I/O duty holder, which carry a paced session's
        // reply and next request, wait for one
        sched_yield();
      }
    }
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  sem_destroy(&me.go);
  ccsim_arena_fini(&a);
  if (wake) {
    zmq_close(wake);
  }
}

static void *worker_main(void *arg) {
  srv *s = arg;
  prctl(PR_SET_NAME, "ccsim-worker", 0, 0, 0);  // tells the threads apart in top and perf
  srv_realtime_thread(s);
  srv_pool_serve(s);
  return NULL;
}

// under mu: n ticks of free-running ss that never run (the tick before was still queued or
// running, or the server fell behind): paced steps whose states are never published, so
// misses. Their lateness is not known; the next tick covers their time and shows its own.
static void skip_ticks_locked(srv *s, srv_session *ss, uint64_t n) {
  srv_deadline *d[2] = {&ss->view.dl, &s->store.dl};
  for (int k = 0; k < 2; k++) {
    d[k]->paced += n;
    d[k]->misses += n;
  }
}

// free-running sessions: queue a tick for every session whose time has come; *nwake
// counts the ticks that went to the ready queue
static double fire_ticks_locked(srv *s, double now, double next, int *nwake) {
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    srv_session *ss = s->store.tab[i];
    if (!ss || ss->sched.dead || ss->pace.mode != CCSIM__PACING_MODE__PACING_FREE_RUNNING) {
      continue;
    }
    if (ss->sched.next_tick == 0) {
      ss->sched.next_tick = now;
    }
    if (ss->sched.next_tick <= now) {
      double due = ss->sched.next_tick;
      // a tick waits behind the session's running job (a Step setting inputs, a save);
      // while the tick before is still queued or running, this one is skipped
      srv_job *j = ss->sched.tick_queued ? NULL : calloc(1, sizeof *j);
      if (j) {
        j->kind = SRV_JOB_TICK;
        j->run = s->pool_ops.tick;
        j->ss = ss;
        j->arrived = due;
        ss->sched.tick_queued = 1;
        *nwake += srv_enqueue_locked(s, j);
      } else {
        skip_ticks_locked(s, ss, 1);  // the next tick catches up with the wall clock
      }
      ss->sched.next_tick += ss->pace.period;
      if (ss->sched.next_tick < now - ss->pace.period) {
        // far behind: do not queue a burst; the ticks jumped over are skipped
        double resume = now + ss->pace.period;
        skip_ticks_locked(s, ss, (uint64_t)((resume - ss->sched.next_tick) / ss->pace.period));
        ss->sched.next_tick = resume;
      }
    }
    if (ss->sched.next_tick < next) {
      next = ss->sched.next_tick;
    }
  }
  return next;
}

double srv_pool_fire_ticks(srv *s, double now) {
  int nwake = 0;
  pthread_mutex_lock(&s->mu);
  double next = fire_ticks_locked(s, now, now + 0.1, &nwake);
  pthread_mutex_unlock(&s->mu);
  return next;
}

srv_job *srv_pool_take_ready(srv *s) {
  pthread_mutex_lock(&s->mu);
  srv_job *j = ready_pop(s);
  pthread_mutex_unlock(&s->mu);
  return j;
}

int srv_send_held(srv *s, int all, void *wake) {
  int pushed = 0;
  pthread_mutex_lock(&s->mu);
  while (s->pool.delayed && (all || s->pool.delayed->send_at <= srv_now())) {
    srv_job *j = s->pool.delayed;
    s->pool.delayed = j->next;
    pthread_mutex_unlock(&s->mu);
    srv_session *ss = j->ss;
    double cost = j->cost, active = srv_job_active_until(j), due = j->send_at;
    s->pool_ops.send(s, j, wake);
    // how late the reply went out: the step was on time, its release may not be (the
    // pacer's wake-up, the socket's lock); not a miss, but the client sees it
    double delay = srv_now() - due;
    if (!all) {
      pthread_mutex_lock(&s->mu);
      if (delay > ss->view.dl.worst_release) ss->view.dl.worst_release = delay;
      if (delay > s->store.dl.worst_release) s->store.dl.worst_release = delay;
      pthread_mutex_unlock(&s->mu);
    }
    pushed += srv_session_done(s, ss, cost, active);
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return pushed;
}

static void *pacer_main(void *arg) {
  srv *s = arg;
  prctl(PR_SET_NAME, "ccsim-pacer", 0, 0, 0);
  srv_realtime_thread(s);
  // held replies are due at an exact time: the default timer slack lets the kernel wake
  // a normal-priority thread up to 50 us late
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  void *wake = s->pool_ops.wake_open(s);
  uint64_t seen_inline = 0;
  pthread_mutex_lock(&s->mu);
  while (!s->pool.quit) {
    int nwake = 0;
    if (s->pool.delayed && s->pool.delayed->send_at <= srv_now()) {
      pthread_mutex_unlock(&s->mu);
      nwake = srv_send_held(s, 0, wake);  // their sessions' next jobs, queued meanwhile
      pthread_mutex_lock(&s->mu);
    }
    double now = srv_now();
    double next = fire_ticks_locked(s, now, now + 0.1, &nwake);
    if (nwake > 0) {
      pthread_mutex_unlock(&s->mu);
      srv_pool_kick(s);
      pthread_mutex_lock(&s->mu);
      if (s->pool.phead && s->pool.leader) {
        // no thread was idle: the duty holder runs paced jobs itself
        // (srv_pool_take_over), but a sleeping one looks only at its poll's timeout
        pthread_mutex_unlock(&s->mu);
        zmq_send(wake, "", 0, ZMQ_DONTWAIT);  // a full pipe means a wake-up is pending already
        pthread_mutex_lock(&s->mu);
      }
      now = srv_now();
    }
    if (s->pool.delayed && s->pool.delayed->send_at < next) {
      next = s->pool.delayed->send_at;
    }
    // the watchdog: while the duty holder runs jobs itself, look at least once a watch
    // whether one of them runs past it (then requests wait behind it: pass the duty on)
    double watch = s->pool.pacer_watch > 0 ? s->pool.pacer_watch : inline_watch(s);
    if (s->pool.inline_since > 0 && s->pool.inline_since + watch <= now) {
      srv_member *m = take_duty_locked(s);
      if (m) {
        pthread_mutex_unlock(&s->mu);
        sem_post(&m->go);
        pthread_mutex_lock(&s->mu);
      }
      continue;
    }
    if (s->pool.inline_since > 0 || s->pool.inline_jobs != seen_inline) {
      seen_inline = s->pool.inline_jobs;
      double due = (s->pool.inline_since > 0 ? s->pool.inline_since : now) + watch;
      if (due < next) {
        next = due;
      }
    }
    if (next > now) {
      s->pool.pacer_wake = next;
      struct timespec ts;
      ts.tv_sec = (time_t)next;
      ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&s->pool.pace_cv, &s->mu, &ts);
      s->pool.pacer_wake = 0;
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (wake) {
    zmq_close(wake);
  }
  return NULL;
}

int srv_pool_start(srv *s, char *err, size_t err_sz) {
  int n = s->cfg.workers;
  if (n <= 0) {
    // twice the cores, at least 4: a few sessions in long steps leave threads for the rest
    // (the OS time-slices between them); idle workers only sleep
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n = cores > 2 ? 2 * (int)cores : 4;
  }
  s->threads.nworkers = n;
  s->threads.workers = calloc((size_t)n, sizeof *s->threads.workers);
  if (!s->threads.workers) {
    ccsim_set_err(err, err_sz, "out of memory");
    return -1;
  }
  pthread_mutex_lock(&s->mu);
  s->pool.quit = 0;
  s->pool.leader = 0;
  s->pool.idle = NULL;
  pthread_mutex_unlock(&s->mu);
  s->threaded = 1;  // before any pool thread leads: srv_accept queues jobs from then on
  for (int i = 0; i < n; i++) {
    if (pthread_create(&s->threads.workers[i], NULL, worker_main, s) != 0) {
      ccsim_set_err(err, err_sz, "cannot start worker thread %d", i);
      srv_pool_stop(s);
      return -1;
    }
    s->threads.nworkers_started++;
  }
  if (pthread_create(&s->threads.pacer, NULL, pacer_main, s) != 0) {
    ccsim_set_err(err, err_sz, "cannot start the pacer thread");
    srv_pool_stop(s);
    return -1;
  }
  s->threads.pacer_started = 1;
  return 0;
}

void srv_pool_stop(srv *s) {
  atomic_store(&s->stop, 1);  // a worker holding the I/O duty leaves it
  srv_pool_quit(s);
  for (int i = 0; i < s->threads.nworkers_started; i++) {
    pthread_join(s->threads.workers[i], NULL);
  }
  if (s->threads.pacer_started) {
    pthread_join(s->threads.pacer, NULL);
  }
  s->threads.nworkers_started = 0;
  s->threads.pacer_started = 0;
  free(s->threads.workers);
  s->threads.workers = NULL;
  s->threaded = 0;
}

void srv_pool_drain(srv *s) {
  pthread_mutex_lock(&s->mu);
  // one list of everything ready: paced first, then the rest
  if (s->pool.ptail) {
    s->pool.ptail->next = s->pool.rhead;
    s->pool.rhead = s->pool.phead;
    if (!s->pool.rtail) {
      s->pool.rtail = s->pool.ptail;
    }
  }
  srv_job *lists[2] = {s->pool.rhead, s->pool.delayed};
  s->pool.phead = s->pool.ptail = NULL;
  s->pool.rhead = s->pool.rtail = s->pool.delayed = NULL;
  atomic_store(&s->pool.nready, 0);
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    srv_session *ss = s->store.tab[i];
    if (ss) {
      srv_job *j = ss->sched.qhead;
      while (j) {
        srv_job *nx = j->next;
        srv_job_free(j);
        j = nx;
      }
      ss->sched.qhead = ss->sched.qtail = NULL;
      ss->sched.busy = 0;
    }
  }
  // creates waiting for a copy of theirs are in no list but that copy's
  for (srv_job *b = s->store.building; b; b = b->building_next) {
    for (srv_job *w = b->waiting; w;) {
      srv_job *nx = w->next;
      srv_job_free(w);
      w = nx;
    }
    b->waiting = NULL;
  }
  s->store.building = NULL;
  s->store.pending_creates = 0;
  pthread_mutex_unlock(&s->mu);
  for (int k = 0; k < 2; k++) {
    srv_job *j = lists[k];
    while (j) {
      srv_job *nx = j->next;
      srv_session *ss = k == 0 ? j->ss : NULL;
      if (ss && ss->sched.dead) {
        // closed, out of the table, waiting only for this job: nobody else frees it
        for (srv_job *q = ss->sched.qhead; q;) {
          srv_job *qn = q->next;
          srv_job_free(q);
          q = qn;
        }
        srv_session_free(&ss);
      }
      srv_job_free(j);
      j = nx;
    }
  }
}
