// The session store: building sessions from scenes and checkpoints, the table of open
// sessions, tombstones of closed ones, checkpoints and the --state-dir files.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ccsim_file.h"
#include "ccsim_random.h"
#include "ccsim_pb.h"
#include "srv_clock.h"
#include "srv_job.h"
#include "srv_store.h"
#include "wire.h"


int srv_new_id(srv *s, char out[SRV_ID_LEN + 1]) {
  unsigned char raw[SRV_ID_LEN / 2];
  if (s->cfg.deterministic_ids) {
    pthread_mutex_lock(&s->mu);
    uint64_t n = ++s->store.id_counter;
    pthread_mutex_unlock(&s->mu);
    snprintf(out, SRV_ID_LEN + 1, "%032llx", (unsigned long long)n);
    return 0;
  }
  if (ccsim_random(raw, sizeof raw) != 0) {
    return -1;
  }
  for (size_t i = 0; i < sizeof raw; i++) {
    snprintf(out + 2 * i, 3, "%02x", raw[i]);
  }
  return 0;
}

// ---- building and freeing -----------------------------------------------------------

static int scene_limits(const srv *s, const Ccsim__Scene *sc, char *err, size_t err_sz) {
  if (sc->n_bodies > (size_t)s->cfg.max_bodies) {
    ccsim_set_err(err, err_sz,
                  "scene.bodies: %zu bodies exceed this server's limit of %d per session",
                  sc->n_bodies, s->cfg.max_bodies);
    return -1;
  }
  long long tris = wire_scene_triangles(sc);
  if (tris > s->cfg.max_triangles) {
    ccsim_set_err(err, err_sz,
                  "scene: %lld triangles exceed this server's limit of %ld per session", tris,
                  s->cfg.max_triangles);
    return -1;
  }
  return 0;
}

static int pacing_read(const Ccsim__Pacing *p, int *mode, double *period, char *err,
                       size_t err_sz) {
  *mode = CCSIM__PACING_MODE__PACING_NONE;
  *period = 1e-3;
  if (!p) {
    return 0;
  }
  if (p->has_mode) {
    if (p->mode != CCSIM__PACING_MODE__PACING_NONE &&
        p->mode != CCSIM__PACING_MODE__PACING_LOCKSTEP &&
        p->mode != CCSIM__PACING_MODE__PACING_FREE_RUNNING) {
      ccsim_set_err(err, err_sz, "pacing.mode = %d: unknown mode", (int)p->mode);
      return -1;
    }
    *mode = (int)p->mode;
  }
  if (p->has_period) {
    if (!isfinite(p->period) || p->period < 1e-4 || p->period > 1) {
      ccsim_set_err(err, err_sz, "pacing.period = %g s: must be finite and in [1e-4, 1]",
                    p->period);
      return -1;
    }
    *period = p->period;
  }
  return 0;
}

srv_session *srv_session_build(srv *s, const Ccsim__Scene *scene, const Ccsim__Checkpoint *cp,
                               const Ccsim__Pacing *pacing, int *code, char *err, size_t err_sz) {
  *code = CCSIM_EINVAL;
  if (!scene) {
    ccsim_set_err(err, err_sz, "scene missing");
    return NULL;
  }
  srv_session *ss = calloc(1, sizeof *ss);
  if (!ss) {
    *code = CCSIM_ENOMEM;
    ccsim_set_err(err, err_sz, "out of memory");
    return NULL;
  }
  ss->sched.cost = -1;  // unknown until a job ran: its first request goes to another thread
  // a client's checkpoint and a saved session alike: another format is not guessed at
  if (cp && (!cp->has_format || cp->format != 1)) {
    if (cp->has_format) {
      ccsim_set_err(err, err_sz, "checkpoint.format = %u: this server reads format 1",
                    (unsigned)cp->format);
    } else {
      ccsim_set_err(err, err_sz, "checkpoint.format missing: this server reads format 1");
    }
    goto fail;
  }
  if (scene_limits(s, scene, err, err_sz) != 0) {
    *code = CCSIM_ELIMIT;
    goto fail;
  }
  const Ccsim__Pacing *pc = pacing ? pacing : (cp ? cp->pacing : NULL);
  if (pacing_read(pc, &ss->pace.mode, &ss->pace.period, err, err_sz) != 0) {
    goto fail;
  }
  // the compiled model and the scene's copy for checkpoints, shared with every session of
  // the same scene (compiled here when none is cached)
  char e[1024] = "";
  ss->model = srv_models_acquire(s->models, scene, code, e, sizeof e);
  if (!ss->model) {
    ccsim_set_err(err, err_sz, "%s", e);
    goto fail;
  }
  *code = CCSIM_EINVAL;
  ss->m = srv_model_sim(ss->model);
  ss->scene = srv_model_scene(ss->model);
  ss->d = sim_data_new(ss->m, e, sizeof e);
  if (!ss->d) {
    *code = CCSIM_ESOLVER;
    ccsim_set_err(err, err_sz, "%s", e);
    goto fail;
  }
  ss->scratch.nsnap = ss->scratch.snap_cap = sim_snapshot_size(ss->m, ss->d);
  ss->scratch.snap = calloc(ss->scratch.nsnap, sizeof *ss->scratch.snap);
  ss->view.bodies =
      calloc((size_t)(ss->m->nbody ? ss->m->nbody : 1) * SRV_VIEW, sizeof *ss->view.bodies);
  if (!ss->scratch.snap || !ss->view.bodies) {
    *code = CCSIM_ENOMEM;
    ccsim_set_err(err, err_sz, "out of memory");
    goto fail;
  }
  if (cp) {
    if (sim_snapshot_set(ss->m, ss->d, cp->snapshot, cp->n_snapshot) != CCSIM_OK) {
      ccsim_set_err(err, err_sz, "checkpoint.snapshot: %s", sim_data_errmsg(ss->d));
      goto fail;
    }
    ss->once.last_seq = cp->has_last_seq ? cp->last_seq : 0;
  }
  // the view as of now, without the lock: nobody else sees ss yet
  ss->view.time = sim_data_time(ss->d);
  for (int b = 0; b < ss->m->nbody; b++) {
    double *v = ss->view.bodies + (size_t)b * SRV_VIEW;
    sim_get_body(ss->m, ss->d, b, v, v + 3, v + 7, v + 10);
  }
  ss->sched.last_active = srv_now();
  *code = CCSIM_OK;
  return ss;
fail:
  srv_session_free(&ss);
  return NULL;
}

void srv_session_free(srv_session **pss) {
  if (!pss || !*pss) {
    return;
  }
  srv_session *ss = *pss;
  sim_data_destroy(&ss->d);
  srv_model_release(&ss->model);
  free(ss->scratch.snap);
  free(ss->view.bodies);
  srv_blob_release(&ss->once.last_reply);
  srv_blob_release(&ss->view.contacts);
  free(ss);
  *pss = NULL;
}

uint64_t srv_session_publish_view(srv *s, srv_session *ss, srv_deadline *dl) {
  // the core is ours (job thread); the lock orders the copy against the leader
  const int nb = ss->m->nbody;
  pthread_mutex_lock(&s->mu);
  ss->view.time = sim_data_time(ss->d);
  for (int b = 0; b < nb; b++) {
    double *v = ss->view.bodies + (size_t)b * SRV_VIEW;
    sim_get_body(ss->m, ss->d, b, v, v + 3, v + 7, v + 10);
  }
  uint64_t seq = ++ss->view.steps;
  *dl = ss->view.dl;
  pthread_mutex_unlock(&s->mu);
  return seq;
}

// ---- table and tombstones -----------------------------------------------------------

srv_session *srv_find(srv *s, const char *id) {
  if (!id || !id[0] || strlen(id) != SRV_ID_LEN) {
    return NULL;
  }
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    if (s->store.tab[i] && memcmp(s->store.tab[i]->id, id, SRV_ID_LEN) == 0) {
      return s->store.tab[i];
    }
  }
  return NULL;
}

// whether the create keys a (alen bytes) and b (blen) are the same. A key stands for the
// token: compared in constant time, as the token is
static int same_create_key(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  if (alen != blen || alen == 0) {
    return 0;
  }
  unsigned diff = 0;
  for (size_t k = 0; k < alen; k++) {
    diff |= (unsigned)(a[k] ^ b[k]);
  }
  return diff == 0;
}

srv_session *srv_find_key(srv *s, const uint8_t *key, size_t len) {
  // creates are rare and the table small: a scan, like srv_find's
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    const srv_session *ss = s->store.tab[i];
    if (ss && same_create_key(ss->create.key, ss->create.key_len, key, len)) {
      return s->store.tab[i];
    }
  }
  return NULL;
}

int srv_tomb_key(const srv *s, const uint8_t *key, size_t len) {
  for (int k = 0; k < SRV_TOMBS; k++) {
    if (same_create_key(s->store.tombs[k].create_key, s->store.tombs[k].create_key_len, key, len)) {
      return k;
    }
  }
  return -1;
}

// the slot holding key, whatever its age (one slot per key), or -1
static int failed_slot(const srv *s, const uint8_t *key, size_t len) {
  for (int k = 0; k < SRV_FAILED_CREATES; k++) {
    if (same_create_key(s->store.failed[k].create_key, s->store.failed[k].create_key_len, key,
                        len)) {
      return k;
    }
  }
  return -1;
}

void srv_failed_key_add(srv *s, const uint8_t *key, size_t len, uint64_t digest, int code,
                        const char *msg) {
  if (len == 0 || len > SRV_CREATE_KEY_MAX) {
    return;
  }
  int k = failed_slot(s, key, len);  // a copy that built again, or an expired entry: reused
  if (k < 0) {
    k = s->store.failed_next;
    s->store.failed_next = (k + 1) % SRV_FAILED_CREATES;
  }
  memcpy(s->store.failed[k].create_key, key, len);
  s->store.failed[k].create_key_len = len;
  s->store.failed[k].digest = digest;
  s->store.failed[k].when = srv_now();
  s->store.failed[k].code = code;
  snprintf(s->store.failed[k].msg, sizeof s->store.failed[k].msg, "%s", msg);
}

int srv_failed_key(const srv *s, const uint8_t *key, size_t len) {
  int k = failed_slot(s, key, len);
  return k >= 0 && srv_now() - s->store.failed[k].when <= SRV_FAILED_CREATE_TTL ? k : -1;
}

int srv_insert(srv *s, srv_session *ss) {
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    if (!s->store.tab[i]) {
      s->store.tab[i] = ss;
      s->store.nsessions++;
      return 0;
    }
  }
  return -1;
}

void srv_remove(srv *s, srv_session *ss, const char *why) {
  for (int i = 0; i < s->cfg.max_sessions; i++) {
    if (s->store.tab[i] == ss) {
      s->store.tab[i] = NULL;
      s->store.nsessions--;
      break;
    }
  }
  ss->sched.dead = 1;
  int k = s->store.tomb_next;
  s->store.tomb_next = (k + 1) % SRV_TOMBS;
  memcpy(s->store.tombs[k].id, ss->id, sizeof ss->id);
  snprintf(s->store.tombs[k].why, sizeof s->store.tombs[k].why, "%s", why);
  memcpy(s->store.tombs[k].create_key, ss->create.key, ss->create.key_len);
  s->store.tombs[k].create_key_len = ss->create.key_len;
}

const char *srv_tomb(const srv *s, const char *id) {
  if (!id || strlen(id) != SRV_ID_LEN) {
    return "";
  }
  for (int k = 0; k < SRV_TOMBS; k++) {
    if (s->store.tombs[k].id[0] && memcmp(s->store.tombs[k].id, id, SRV_ID_LEN) == 0) {
      return s->store.tombs[k].why;
    }
  }
  return "";
}

// ---- checkpoints ----------------------------------------------------------------------

// Job thread: ss's full state into ss->scratch.snap (grown as the friction anchors need; nsnap
// set). CCSIM_OK or CCSIM_ENOMEM.
static int srv_snapshot(srv_session *ss) {
  size_t n = sim_snapshot_size(ss->m, ss->d);
  if (n > ss->scratch.snap_cap) {
    // the friction anchors make the size vary: grow, never on the plain step path
    double *p = realloc(ss->scratch.snap, n * sizeof *p);
    if (!p) return CCSIM_ENOMEM;
    ss->scratch.snap = p;
    ss->scratch.snap_cap = n;
  }
  sim_snapshot_get(ss->m, ss->d, ss->scratch.snap);
  ss->scratch.nsnap = n;
  return CCSIM_OK;
}

// ss's Checkpoint message (pointing into ss): CCSIM_OK, or an error with its reason in err
// (out of memory, or a state no restore would take: never handed out nor saved)
static int checkpoint_msg(srv_session *ss, Ccsim__Checkpoint *cp, Ccsim__Pacing *pc, char *err,
                          size_t err_sz) {
  ccsim__checkpoint__init(cp);
  ccsim__pacing__init(pc);
  if (srv_snapshot(ss) != CCSIM_OK) {
    ccsim_set_err(err, err_sz, "out of memory");
    return CCSIM_ENOMEM;
  }
  char why[200];
  if (sim_snapshot_check(ss->m, ss->scratch.snap, ss->scratch.nsnap, why, sizeof why) != CCSIM_OK) {
    ccsim_set_err(err, err_sz, "the session's state could not be restored (%s)", why);
    return CCSIM_ESOLVER;
  }
  cp->has_format = 1;
  cp->format = 1;
  cp->scene = (Ccsim__Scene *)ss->scene;  // packed only, never written
  cp->n_snapshot = ss->scratch.nsnap;
  cp->snapshot = ss->scratch.snap;
  pc->has_mode = pc->has_period = 1;
  pc->mode = (Ccsim__PacingMode)ss->pace.mode;
  pc->period = ss->pace.period;
  cp->pacing = pc;
  cp->has_last_seq = 1;
  cp->last_seq = ss->once.last_seq;
  return CCSIM_OK;
}

int srv_checkpoint(srv *s, srv_session *ss, uint8_t **out, size_t *len, char *err, size_t err_sz) {
  (void)s;
  Ccsim__Checkpoint cp;
  Ccsim__Pacing pc;
  int st = checkpoint_msg(ss, &cp, &pc, err, err_sz);
  if (st != CCSIM_OK) return st;
  *out = ccsim_pb_pack_new(&cp.base, 0, len);
  if (!*out) {
    ccsim_set_err(err, err_sz, "out of memory");
    return CCSIM_ENOMEM;
  }
  // the live session restarts here too, so it and a resumed copy agree to the last bit
  sim_restart(ss->m, ss->d);
  return CCSIM_OK;
}

static void session_path(const srv *s, const char *id, const char *suffix, char *out,
                         size_t n) {
  snprintf(out, n, "%s/%s.session%s", s->cfg.state_dir, id, suffix);
}

int srv_save_session(srv *s, srv_session *ss) {
  if (!s->cfg.state_dir) {
    return 0;
  }
  Ccsim__SavedSession sv;
  Ccsim__Checkpoint cp;
  Ccsim__Pacing pc;
  ccsim__saved_session__init(&sv);
  char refused[256];
  if (checkpoint_msg(ss, &cp, &pc, refused, sizeof refused) != CCSIM_OK) {
    // the last save stays: a restore would refuse this one
    fprintf(stderr, "ccsimd: cannot save session %s: %s; its last save is kept\n", ss->id, refused);
    return -1;
  }
  sv.session_id = ss->id;
  sv.controller_token = ss->token;
  sv.checkpoint = &cp;
  sv.has_steps = 1;
  sv.steps = ss->view.steps;  // written by the session's job thread only: this one, or none
  if (ss->once.last_reply) {
    sv.has_last_reply = 1;
    sv.last_reply.data = ss->once.last_reply->data;
    sv.last_reply.len = ss->once.last_reply->len;
    sv.has_last_step_digest = ss->once.last_digest != 0;
    sv.last_step_digest = ss->once.last_digest;
  }
  if (ss->create.key_len) {
    // a create retried across the restart still finds its session
    sv.has_create_key = sv.has_create_digest = 1;
    sv.create_key.data = ss->create.key;
    sv.create_key.len = ss->create.key_len;
    sv.create_digest = ss->create.digest;
  }
  size_t n = 0;
  uint8_t *buf = ccsim_pb_pack_new(&sv.base, 0, &n);
  if (!buf) {
    fprintf(stderr, "ccsimd: cannot save session %s: out of memory\n", ss->id);
    return -1;
  }
  if ((uint64_t)n > SRV_SAVED_MAX) {
    // a restore would refuse it: the previous save stays, and the operator is told
    fprintf(stderr, "ccsimd: cannot save session %s: %zu bytes, more than a restore reads\n",
            ss->id, n);
    free(buf);
    return -1;
  }
  sim_restart(ss->m, ss->d);
  // write a temporary file, flush it to disk, then rename: a crash leaves the old file
  char tmp[4096], path[4096];
  session_path(s, ss->id, ".tmp", tmp, sizeof tmp);
  session_path(s, ss->id, "", path, sizeof path);
  int rc = -1, why = 0;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) why = errno;
  if (fd >= 0) {
    size_t off = 0;
    while (off < n) {
      ssize_t w = write(fd, buf + off, n - off);
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w <= 0) {
        why = w < 0 ? errno : ENOSPC;
        break;
      }
      off += (size_t)w;
    }
    int synced = off == n && fsync(fd) == 0;
    // closed once whatever happened: after a failed close the descriptor is gone already,
    // and closing its number again could close another thread's new one
    if (close(fd) == 0 && synced) {
      rc = rename(tmp, path);
    }
    if (rc != 0 && !why) why = errno;
    if (rc == 0) {
      // the rename lives in the directory: until it is on disk, a power cut may leave the
      // old file (or none, for a first save) however well the file itself was flushed
      int dfd = open(s->cfg.state_dir, O_RDONLY | O_DIRECTORY);
      if (dfd < 0 || fsync(dfd) != 0) {
        why = errno;
        rc = -1;
      }
      if (dfd >= 0) close(dfd);
    }
  }
  if (rc != 0) {
    fprintf(stderr, "ccsimd: cannot save session %s in %s: %s\n", ss->id, s->cfg.state_dir,
            strerror(why));
    unlink(tmp);  // after a failed directory flush: already renamed, nothing to remove
  }
  free(buf);
  return rc;
}

void srv_unlink_session(srv *s, const char *id) {
  if (!s->cfg.state_dir) {
    return;
  }
  char path[4096];
  session_path(s, id, "", path, sizeof path);
  // not flushed to disk (the I/O thread calls this): after a power cut soon after, a
  // closed session may come back at the restart, its saved state intact
  unlink(path);
  // a save that failed part-way left its temporary file: no later save removes it now
  session_path(s, id, ".tmp", path, sizeof path);
  unlink(path);
}

// The whole of a regular file of at most max bytes (malloc'd), or NULL with *why set.
static uint8_t *read_file(const char *path, uint64_t max, size_t *len, const char **why) {
  off_t size = 0;
  int fd = ccsim_open_regular(path, O_NOFOLLOW, &size, why);
  if (fd < 0) {
    return NULL;
  }
  if ((uint64_t)size > max) {
    *why = "larger than any session a server saves";
    close(fd);
    return NULL;
  }
  size_t n = (size_t)size;
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) {
    *why = "out of memory";
    close(fd);
    return NULL;
  }
  int rc = ccsim_read_all(fd, buf, n, why);
  close(fd);
  if (rc != 0) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static int hex_id(const char *id) {
  if (!id || strlen(id) != SRV_ID_LEN) {
    return 0;
  }
  for (int i = 0; i < SRV_ID_LEN; i++) {
    char c = id[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return 0;
    }
  }
  return 1;
}

int srv_state_dir_open(const char *dir, char *err, size_t err_sz) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    ccsim_set_err(err, err_sz, "cannot create the state dir %s: %s", dir, strerror(errno));
    return -1;
  }
  struct stat st;
  if (stat(dir, &st) != 0) {
    ccsim_set_err(err, err_sz, "cannot use the state dir %s: %s", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    ccsim_set_err(err, err_sz, "the state dir %s is not a directory", dir);
    return -1;
  }
  if (access(dir, W_OK | X_OK) != 0) {
    ccsim_set_err(err, err_sz, "cannot write into the state dir %s: %s", dir, strerror(errno));
    return -1;
  }
  // flock: the kernel frees it when the process ends however it ends, so a crashed
  // server's lock never has to be removed by hand
  char path[4096];
  snprintf(path, sizeof path, "%s/ccsimd.lock", dir);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    ccsim_set_err(err, err_sz, "cannot create the lock %s: %s", path, strerror(errno));
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char pid[32] = "";
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = 0;
    pid[strcspn(pid, "\n")] = 0;
    close(fd);
    if (e == EWOULDBLOCK) {
      ccsim_set_err(err, err_sz, "the state dir %s is in use by another server (pid %s)", dir,
                    pid[0] ? pid : "unknown");
    } else {
      ccsim_set_err(err, err_sz, "cannot lock %s: %s", path, strerror(e));
    }
    return -1;
  }
  char pid[32];
  int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
    // the pid is for the message above only: the lock holds without it
  }
  return fd;
}

int srv_restore_all(srv *s) {
  if (!s->cfg.state_dir) {
    return 0;
  }
  DIR *dir = opendir(s->cfg.state_dir);
  if (!dir) {
    fprintf(stderr, "ccsimd: cannot read the state dir %s: %s\n", s->cfg.state_dir,
            strerror(errno));
    return 0;
  }
  int restored = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t nl = strlen(e->d_name);
    if (nl != SRV_ID_LEN + 8 || strcmp(e->d_name + SRV_ID_LEN, ".session") != 0) {
      continue;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->cfg.state_dir, e->d_name);
    size_t len = 0;
    const char *problem = NULL;
    uint8_t *buf = read_file(path, SRV_SAVED_MAX, &len, &problem);
    // decoded as requests and checkpoints are, under the same bound: protobuf-c would let a
    // damaged or planted file of empty sub-messages take tens of times its size, and time
    // quadratic in a sub-message given again and again
    ccsim_arena a;
    ccsim_arena_init(&a, 64 * 1024, ccsim_pb_decoded_max(len));
    Ccsim__SavedSession *sv = buf ? (Ccsim__SavedSession *)ccsim_pb_unpack(
                                        &ccsim__saved_session__descriptor, &a, len, buf)
                                  : NULL;
    int empty = buf && len == 0, read = buf != NULL;
    free(buf);
    char err[512] = "";
    if (empty) {
      problem = "empty (0 bytes)";  // it would decode as a session with nothing in it
    } else if (!sv && read) {
      problem = a.over_limit      ? "takes more memory decoded than a file its size may"
                : a.out_of_memory ? "out of memory decoding it"
                                  : "not a saved session";
    } else if (!sv) {
      problem = problem ? problem : "not a saved session";  // unread: read_file says why
    } else if (!hex_id(sv->session_id) || !hex_id(sv->controller_token) || !sv->checkpoint ||
               !sv->checkpoint->scene || strncmp(e->d_name, sv->session_id, SRV_ID_LEN) != 0) {
      problem = "incomplete (id, token or checkpoint)";
    } else if (s->store.nsessions >= s->cfg.max_sessions) {
      problem = "over the session limit";
    }
    srv_session *ss = NULL;
    if (!problem) {
      int code = 0;
      ss =
          srv_session_build(s, sv->checkpoint->scene, sv->checkpoint, NULL, &code, err, sizeof err);
      if (!ss) {
        problem = err;
      }
    }
    if (ss) {
      ss->view.steps = ss->view.saved_steps = sv->steps;
    }
    if (ss && sv->has_last_reply && sv->last_reply.len > 0) {
      ss->once.last_reply = srv_blob_copy(sv->last_reply.data, sv->last_reply.len);
      ss->once.last_digest = sv->has_last_step_digest ? sv->last_step_digest : 0;
    }
    if (ss && sv->has_create_key) {
      if (sv->create_key.len >= SRV_CREATE_KEY_MIN && sv->create_key.len <= SRV_CREATE_KEY_MAX) {
        memcpy(ss->create.key, sv->create_key.data, sv->create_key.len);
        ss->create.key_len = sv->create_key.len;
        ss->create.digest = sv->has_create_digest ? sv->create_digest : 0;
      } else {
        // only a damaged file has one: the session is whole, a retry of its create is not
        fprintf(stderr, "ccsimd: %s: restored without its create_key (%zu bytes)\n", path,
                sv->create_key.len);
      }
    }
    if (ss) {
      memcpy(ss->id, sv->session_id, SRV_ID_LEN + 1);
      memcpy(ss->token, sv->controller_token, SRV_ID_LEN + 1);
      pthread_mutex_lock(&s->mu);
      if (srv_find(s, ss->id) || srv_insert(s, ss) != 0) {
        problem = "duplicate id";
      }
      pthread_mutex_unlock(&s->mu);
      if (problem) {
        srv_session_free(&ss);
      } else {
        restored++;
      }
    }
    if (problem) {
      fprintf(stderr, "ccsimd: %s: not restored: %s\n", path, problem);
    }
    ccsim_arena_fini(&a);
  }
  closedir(dir);
  return restored;
}
