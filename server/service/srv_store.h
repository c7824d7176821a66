// Sessions, their table and the state dir (srv_store.c).
#ifndef SRV_STORE_H
#define SRV_STORE_H

#include "srv_internal.h"

// Fill out with SRV_ID_LEN random hex characters (or a counter with cfg.deterministic_ids).
int srv_new_id(srv *s, char out[SRV_ID_LEN + 1]);

// Build a session from a scene and an optional checkpoint (scene taken from the checkpoint
// when given). The session keeps a copy of scene (a decoded one lives in the caller's
// arena). NULL with a message and *code set on failure.
srv_session *srv_session_build(srv *s, const Ccsim__Scene *scene, const Ccsim__Checkpoint *cp,
                               const Ccsim__Pacing *pacing, int *code, char *err, size_t err_sz);

// Free a session (not in the table, no jobs). NULL-safe.
void srv_session_free(srv_session **ss);

// Refresh ss->view from its sim_data and count the change in ss->steps, in one hold of
// srv.mu (so a reader never pairs the new view with the old count, or the reverse); *dl
// gets the session's pacing statistics. Returns the new count (job thread).
uint64_t srv_session_publish_view(srv *s, srv_session *ss, srv_deadline *dl);

// Under mu: the open session with this id, or NULL.
srv_session *srv_find(srv *s, const char *id);

// Under mu: insert into the table (a slot must be free: callers reserve one).
int srv_insert(srv *s, srv_session *ss);

// Under mu: take ss out of the table, mark it dead and remember why for EEXPIRED.
void srv_remove(srv *s, srv_session *ss, const char *why);

// Under mu: why a session id is gone ("" when never seen).
const char *srv_tomb(const srv *s, const char *id);

// Under mu: the session in the table made by a CreateSession with this create_key, or NULL.
srv_session *srv_find_key(srv *s, const uint8_t *key, size_t len);

// Under mu: the tombstone index of the closed session a CreateSession with this create_key
// made (its id in s->tombs[i].id, why in .why), or -1: a late copy of that create must not
// build it again.
int srv_tomb_key(const srv *s, const uint8_t *key, size_t len);

// Under mu: remember that a CreateSession under this create_key (digest: of its bytes) failed
// with code and msg (copied), so that its retries are answered the same without building
// again; the oldest of SRV_FAILED_CREATES is forgotten.
void srv_failed_key_add(srv *s, const uint8_t *key, size_t len, uint64_t digest, int code,
                        const char *msg);

// Under mu: the index in s->store.failed of the failed create remembered under this
// create_key (younger than SRV_FAILED_CREATE_TTL), or -1.
int srv_failed_key(const srv *s, const uint8_t *key, size_t len);

// A Checkpoint blob for ss (job thread): serialized into *out (malloc, caller frees).
// Restarts ss's integrator at the checkpoint. Returns CCSIM_OK, or an error code with the
// reason in err (out of memory; a state no restore would take).
int srv_checkpoint(srv *s, srv_session *ss, uint8_t **out, size_t *len, char *err, size_t err_sz);

// --state-dir: write ss to DIR/ID.session (job thread or after the threads stopped).
int srv_save_session(srv *s, srv_session *ss);

// --state-dir: delete ss's file (its session closed or expired).
void srv_unlink_session(srv *s, const char *id);

// --state-dir: create dir when missing and lock it for this server. Returns the lock's
// descriptor (the caller owns it; closing it frees the dir), or -1 + message when dir is
// not a directory this process can write into (a server that could not save its sessions
// would lose them) or another server holds it (two would overwrite each other's files).
int srv_state_dir_open(const char *dir, char *err, size_t err_sz);

// --state-dir: load every saved session into the table (from srv_new). Returns the
// number restored; problems go to stderr and leave the file in place.
int srv_restore_all(srv *s);

#endif
