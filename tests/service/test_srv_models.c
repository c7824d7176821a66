// ctest-label: e2e
// ctest-timeout: 90
// Compiled models shared by sessions (srv_models.c): two sessions of one scene share one
// model, meshes of other contents do not, models no session uses are evicted least recently
// used first and only they, a session of a shared model steps to the same bits as one of a
// freshly compiled model, and checkpoint and state-dir restores go through the cache. Mesh
// files travel as their bytes and are read once, by the server.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "srv.h"
#include "srv_models.h"

typedef struct fixture {
  srv *s;
  pthread_t thread;
  char dir[64];  // the test's temporary directory (meshes, state) in the build tree
} fixture;

// an octahedron of half-diagonal r as an OBJ file dir/name
static void write_octahedron(const char *dir, const char *name, double r) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "v %.17g 0 0\nv %.17g 0 0\nv 0 %.17g 0\nv 0 %.17g 0\nv 0 0 %.17g\nv 0 0 %.17g\n", r,
          -r, r, -r, r, -r);
  // counter-clockwise seen from outside
  fprintf(f, "f 1 3 5\nf 3 2 5\nf 2 4 5\nf 4 1 5\nf 3 1 6\nf 2 3 6\nf 4 2 6\nf 1 4 6\n");
  fclose(f);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "ccsim-models-XXXXXX");
  if (!mkdtemp(f->dir)) {
    free(f);
    return -1;
  }
  write_octahedron(f->dir, "a.obj", 0.1);
  write_octahedron(f->dir, "b.obj", 0.1000001);  // other bytes, same size of message
  *state = f;
  return 0;
}

static void start(fixture *f, size_t cache_mb, const char *state_dir) {
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 2;
  cfg.model_cache_mb = cache_mb;
  cfg.state_dir = state_dir;
  f->s = test_server_start(&cfg, &f->thread);
  assert_non_null(f->s);
}

static void stop(fixture *f) {
  if (f->s) test_server_stop(&f->s, f->thread);
}

static void remove_tree(const char *path) {
  DIR *d = opendir(path);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      char p[512];
      snprintf(p, sizeof p, "%s/%s", path, e->d_name);
      struct stat st;
      if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
        remove_tree(p);
      } else {
        unlink(p);
      }
    }
  }
  if (d) closedir(d);
  rmdir(path);
}

static int teardown(void **state) {
  fixture *f = *state;
  stop(f);
  remove_tree(f->dir);
  free(f);
  return 0;
}

// a mesh body resting on a fixed floor box, touching it (contacts from the first step)
static ccsim_scene *scene_of(const fixture *f, const char *mesh) {
  char json[1024], err[256];
  snprintf(json, sizeof json,
           "{\"gravity\": [0, 0, -9.81],"
           " \"contact\": {\"k\": 1e5, \"alpha\": 0.5, \"standoff\": 0.001, \"mu\": 0.3},"
           " \"bodies\": [{\"name\": \"floor\", \"fixed\": true,"
           "   \"shape\": {\"box\": {\"size\": [1, 1, 0.1]}}, \"pose\": {\"p\": [0, 0, -0.05]}},"
           "  {\"name\": \"gem\", \"density\": 1000, \"shape\": {\"mesh\": \"%s\"},"
           "   \"pose\": {\"p\": [0, 0, 0.1005]}, \"velocity\": {\"v\": [0.2, 0, 0]}}]}",
           mesh);
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "gem", f->dir, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  return sc;
}

static srv_models_stat stats(const fixture *f) {
  srv_models_stat st;
  srv_models_stats(srv_models_of(f->s), &st);
  return st;
}

// the counters once a closed session's model is let go: a session is freed by the pool
// after its close was answered (at most a few seconds)
static srv_models_stat stats_when_unused(const fixture *f, int unused, int models) {
  srv_models_stat st = stats(f);
  for (int k = 0; k < 500 && (st.unused != unused || st.models != models); k++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    st = stats(f);
  }
  return st;
}

static ccsim_client *client(const fixture *f) {
  char err[256];
  ccsim_client *c = ccsim_client_new(srv_endpoint(f->s), err, sizeof err);
  assert_non_null(c);
  return c;
}

static void test_sessions_of_one_scene_share(void **state) {
  fixture *f = *state;
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  ccsim_scene *sc = scene_of(f, "a.obj");
  ccsim_client *c = client(f);
  ccsim_session *a = ccsim_session_create(c, sc);
  ccsim_session *b = ccsim_session_create(c, sc);
  assert_non_null(a);
  assert_non_null(b);
  srv_models_stat st = stats(f);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.models, 1);
  assert_int_equal(st.unused, 0);
  assert_true(st.bytes > 0);
  // closed, the model stays cached for the next session of the scene
  ccsim_session_close(&a);
  ccsim_session_close(&b);
  st = stats_when_unused(f, 1, 1);
  assert_int_equal(st.models, 1);
  assert_int_equal(st.unused, 1);
  ccsim_session *d = ccsim_session_create(c, sc);
  assert_non_null(d);
  st = stats(f);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.hits, 2);
  assert_int_equal(st.unused, 0);
  ccsim_session_close(&d);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

static void test_other_mesh_contents_do_not_share(void **state) {
  fixture *f = *state;
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  ccsim_scene *sa = scene_of(f, "a.obj"), *sb = scene_of(f, "b.obj");
  ccsim_client *c = client(f);
  ccsim_session *a = ccsim_session_create(c, sa);
  ccsim_session *b = ccsim_session_create(c, sb);
  assert_non_null(a);
  assert_non_null(b);
  srv_models_stat st = stats(f);
  assert_int_equal(st.misses, 2);
  assert_int_equal(st.hits, 0);
  assert_int_equal(st.models, 2);
  assert_int_equal(st.collisions, 0);
  ccsim_session_close(&a);
  ccsim_session_close(&b);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sa);
  ccsim_scene_destroy(&sb);
}

// with no budget a model goes with its last session, and one in use stays
static void test_no_budget_keeps_only_models_in_use(void **state) {
  fixture *f = *state;
  start(f, 0, NULL);
  ccsim_scene *sa = scene_of(f, "a.obj"), *sb = scene_of(f, "b.obj");
  ccsim_client *c = client(f);
  ccsim_session *a = ccsim_session_create(c, sa);
  ccsim_session *b = ccsim_session_create(c, sb);
  assert_non_null(a);
  assert_non_null(b);
  ccsim_session_close(&b);
  srv_models_stat st = stats_when_unused(f, 0, 1);
  assert_int_equal(st.models, 1);
  assert_int_equal(st.evictions, 1);
  assert_int_equal(ccsim_session_step(a, 1e-3, NULL, 0), CCSIM_OK);
  ccsim_session_close(&a);
  st = stats_when_unused(f, 0, 0);
  assert_int_equal(st.models, 0);
  assert_int_equal(st.evictions, 2);
  assert_int_equal(st.bytes, 0);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sa);
  ccsim_scene_destroy(&sb);
}

// the cache alone: unused models beyond the budget go least recently used first
static void test_lru_eviction_of_unused_models(void **state) {
  fixture *f = *state;
  ccsim_scene *sc[3];
  char name[16];
  for (int k = 0; k < 3; k++) {
    snprintf(name, sizeof name, "m%d.obj", k);
    write_octahedron(f->dir, name, 0.1 + 0.01 * k);
    sc[k] = scene_of(f, name);
  }
  srv_models *cache = srv_models_new(SIZE_MAX);
  assert_non_null(cache);
  srv_model *r[3];
  int code;
  char err[400];
  for (int k = 0; k < 3; k++) {
    r[k] = srv_models_acquire(cache, ccsim_scene_message(sc[k]), &code, err, sizeof err);
    assert_non_null(r[k]);
  }
  srv_models_stat st;
  srv_models_stats(cache, &st);
  assert_int_equal(st.models, 3);
  for (int k = 0; k < 3; k++) srv_model_release(&r[k]);
  srv_models_destroy(&cache);
  // again with a budget of one and a half of them
  size_t one = st.bytes / 3;
  cache = srv_models_new(one + one / 2);
  for (int k = 0; k < 3; k++) {
    r[k] = srv_models_acquire(cache, ccsim_scene_message(sc[k]), &code, err, sizeof err);
    assert_non_null(r[k]);
  }
  // in use, all stay whatever the budget
  srv_models_stats(cache, &st);
  assert_int_equal(st.models, 3);
  assert_int_equal(st.evictions, 0);
  srv_model_release(&r[0]);  // unused: m0 (fits)
  srv_model_release(&r[1]);  // unused: m0, m1 (too much: m0, the least recently used, goes)
  srv_models_stats(cache, &st);
  assert_int_equal(st.models, 2);
  assert_int_equal(st.evictions, 1);
  // m1 is still cached: a hit; m0 is not: a miss
  r[1] = srv_models_acquire(cache, ccsim_scene_message(sc[1]), &code, err, sizeof err);
  r[0] = srv_models_acquire(cache, ccsim_scene_message(sc[0]), &code, err, sizeof err);
  assert_non_null(r[0]);
  assert_non_null(r[1]);
  srv_models_stats(cache, &st);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.misses, 4);
  for (int k = 0; k < 3; k++) srv_model_release(&r[k]);
  srv_models_stats(cache, &st);
  assert_int_equal(st.unused, 1);  // the most recently used (m0) is left
  assert_true(st.bytes <= one + one / 2);
  srv_models_destroy(&cache);
  for (int k = 0; k < 3; k++) ccsim_scene_destroy(&sc[k]);
}

// interleaved steps of two sessions of one model, and of a session of a model compiled
// afresh on another server: every bit the same (nothing a session does lives in the model)
static void test_shared_model_steps_like_a_fresh_one(void **state) {
  fixture *f = *state;
  ccsim_scene *sc = scene_of(f, "a.obj");
  start(f, 0, NULL);
  ccsim_client *c = client(f);
  ccsim_session *fresh = ccsim_session_create(c, sc);
  assert_non_null(fresh);
  enum { N = 200 };
  ccsim_body_state ref[N][2];
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(fresh, 1e-3, NULL, 0), CCSIM_OK);
    memcpy(ref[k], ccsim_session_bodies(fresh), sizeof ref[k]);
  }
  // the floor holds the gem as it tips over (free fall would take it 0.2 m down): its
  // contacts are in the run
  assert_true(ccsim_session_bodies(fresh)[1].p[2] > 0.05);
  ccsim_session_close(&fresh);
  ccsim_client_destroy(&c);
  stop(f);
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  c = client(f);
  ccsim_session *a = ccsim_session_create(c, sc), *b = ccsim_session_create(c, sc);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(stats(f).hits, 1);
  for (int k = 0; k < N; k++) {
    assert_int_equal(ccsim_session_step(a, 1e-3, NULL, 0), CCSIM_OK);
    assert_int_equal(ccsim_session_step(b, 1e-3, NULL, 0), CCSIM_OK);
    assert_states_equal(ccsim_session_bodies(a), ref[k], 2);
    assert_states_equal(ccsim_session_bodies(b), ref[k], 2);
  }
  ccsim_session_close(&a);
  ccsim_session_close(&b);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// a resumed checkpoint and a session restored from the state dir take the cached model
static void test_restores_go_through_the_cache(void **state) {
  fixture *f = *state;
  char state_dir[128];
  snprintf(state_dir, sizeof state_dir, "%s/state", f->dir);
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, state_dir);
  ccsim_scene *sc = scene_of(f, "a.obj");
  ccsim_client *c = client(f);
  ccsim_session *a = ccsim_session_create(c, sc);
  assert_non_null(a);
  assert_int_equal(ccsim_session_step(a, 1e-3, NULL, 0), CCSIM_OK);
  uint8_t *blob = NULL;
  size_t len = 0;
  assert_int_equal(ccsim_session_checkpoint(a, &blob, &len), CCSIM_OK);
  ccsim_session *r = ccsim_session_resume(c, blob, len);
  free(blob);
  assert_non_null(r);
  srv_models_stat st = stats(f);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.models, 1);
  ccsim_session_release(&r);
  ccsim_session_release(&a);
  ccsim_client_destroy(&c);
  stop(f);  // saves both sessions
  // restored at start: the two sessions compile their scene once
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, state_dir);
  assert_int_equal(srv_session_count(f->s), 2);
  st = stats(f);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.hits, 1);
  assert_int_equal(st.models, 1);
  // and a client's new session of the same scene shares it too
  c = client(f);
  ccsim_session *n = ccsim_session_create(c, sc);
  assert_non_null(n);
  assert_int_equal(stats(f).hits, 2);
  assert_int_equal(stats(f).models, 1);
  ccsim_session_close(&n);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

typedef struct racer {
  const char *endpoint;
  const ccsim_scene *sc;
  int ok;
} racer;

static void *race_create(void *arg) {
  racer *r = arg;
  char err[256];
  ccsim_client *c = ccsim_client_new(r->endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, r->sc) : NULL;
  r->ok = s && ccsim_session_step(s, 1e-3, NULL, 0) == CCSIM_OK;
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  return NULL;
}

// creates of one scene at once on every worker: one compile, the others wait for it
static void test_concurrent_creates_compile_once(void **state) {
  fixture *f = *state;
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  ccsim_scene *sc = scene_of(f, "a.obj");
  enum { N = 6 };
  racer r[N];
  pthread_t th[N];
  for (int k = 0; k < N; k++) {
    r[k] = (racer){.endpoint = srv_endpoint(f->s), .sc = sc};
    pthread_create(&th[k], NULL, race_create, &r[k]);
  }
  for (int k = 0; k < N; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < N; k++) assert_true(r[k].ok);
  srv_models_stat st = stats(f);
  assert_int_equal(st.misses, 1);
  assert_int_equal(st.hits, N - 1);
  assert_int_equal(st.models, 1);
  ccsim_scene_destroy(&sc);
}

static void *race_failing_create(void *arg) {
  racer *r = arg;
  char err[256];
  ccsim_client *c = ccsim_client_new(r->endpoint, err, sizeof err);
  ccsim_session *s = c ? ccsim_session_create(c, r->sc) : NULL;
  // refused for the impossible inertia, whoever compiled the scene
  r->ok = c && !s && strstr(ccsim_client_errmsg(c), "triangle inequality") != NULL;
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  return NULL;
}

// creates of one scene that does not compile, at once (each with its own create key): the
// ones that waited for the compile get its error, the failed model is kept by nobody, and
// the server serves on (whoever lets go of the failed model last frees it; the builder
// reads the error before it lets go)
static void test_concurrent_failing_creates(void **state) {
  fixture *f = *state;
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  // a ball of 40 000 triangles takes a while to build; the box after it cannot be a body
  static const char json[] =
      "{\"bodies\": [{\"name\": \"ball\", \"density\": 1000, \"shape\": {\"sphere\": "
      "{\"radius\": 0.1, \"slices\": 200, \"stacks\": 100}}},"
      " {\"name\": \"odd\", \"mass\": 1, \"inertia\": [1, 1, 5], \"pose\": {\"p\": [0, 0, 1]},"
      " \"shape\": {\"box\": {\"size\": [0.1, 0.1, 0.1]}}}]}";
  char err[256];
  ccsim_scene *sc = ccsim_scene_parse(json, strlen(json), "inline", NULL, err, sizeof err);
  if (!sc) print_error("%s\n", err);
  assert_non_null(sc);
  enum { N = 6 };
  for (int round = 0; round < 3; round++) {
    racer r[N];
    pthread_t th[N];
    for (int k = 0; k < N; k++) {
      r[k] = (racer){.endpoint = srv_endpoint(f->s), .sc = sc};
      pthread_create(&th[k], NULL, race_failing_create, &r[k]);
    }
    for (int k = 0; k < N; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < N; k++) assert_true(r[k].ok);
  }
  srv_models_stat st = stats(f);
  print_message("failing creates: %llu compiles, %llu waited for one\n",
                (unsigned long long)st.misses, (unsigned long long)st.hits);
  assert_true(st.hits > 0);        // some creates did wait for a compile that failed
  assert_int_equal(st.models, 0);  // a failed model is kept by nobody
  ccsim_client *c = client(f);
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// a mesh travels as its file's bytes and the server reads it: its errors name the file and
// line, and its triangles count against the server's limit before anything is built
static void test_mesh_files_are_read_by_the_server(void **state) {
  fixture *f = *state;
  char path[256];
  snprintf(path, sizeof path, "%s/bad.obj", f->dir);
  FILE *o = fopen(path, "w");
  assert_non_null(o);
  fprintf(o, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n");
  fclose(o);
  ccsim_scene *good = scene_of(f, "a.obj"), *bad = scene_of(f, "bad.obj");
  const Ccsim__Mesh *mesh = ccsim_scene_message(good)->bodies[1]->shape->mesh;
  assert_true(mesh->has_file);
  assert_int_equal(mesh->n_vertices, 0);
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  ccsim_client *c = client(f);
  assert_null(ccsim_session_create(c, bad));
  const char *msg = ccsim_client_errmsg(c);
  if (!strstr(msg, "bad.obj:4")) print_error("got '%s'\n", msg);
  assert_non_null(strstr(msg, "bodies[1].shape.mesh"));
  assert_non_null(strstr(msg, "bad.obj:4"));
  ccsim_client_destroy(&c);
  stop(f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.workers = 2;
  cfg.max_triangles = 12 + 7;  // the floor box and one triangle fewer than the octahedron's
  f->s = test_server_start(&cfg, &f->thread);
  assert_non_null(f->s);
  c = client(f);
  assert_null(ccsim_session_create(c, good));
  msg = ccsim_client_errmsg(c);
  if (!strstr(msg, "20 triangles")) print_error("got '%s'\n", msg);
  assert_non_null(strstr(msg, "20 triangles exceed"));
  assert_int_equal(stats(f).misses, 0);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&good);
  ccsim_scene_destroy(&bad);
}

// the reply to a raw CreateSession of sc under key[0, 16) (lockstep: another request under
// the same key) on a fresh DEALER: its code, and its message into msg
static int raw_create(const fixture *f, const ccsim_scene *sc, const uint8_t *key, int lockstep,
                      char *msg, size_t msg_sz) {
  static uint64_t rid = 1;
  void *zctx = zmq_ctx_new();
  void *sock = test_dealer(zctx, srv_endpoint(f->s));
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  Ccsim__Pacing pc;
  test_create_request(&rq, &cs, &pc, ccsim_scene_message(sc), key, 16, lockstep);
  Ccsim__Reply *r = test_send_request(sock, &rq, rid++) == 0 ? test_recv_reply(sock) : NULL;
  zmq_close(sock);
  zmq_ctx_term(zctx);
  int code = !r ? -1000 : r->error ? (int)r->error->code : CCSIM_OK;
  snprintf(msg, msg_sz, "%s", r && r->error && r->error->message ? r->error->message : "");
  if (r) ccsim__reply__free_unpacked(r, NULL);
  return code;
}

// a create whose scene does not compile is remembered by its key: its retry (the library's,
// on a fresh connection) gets the same error at once, without compiling again; the key with
// other bytes is refused, and another key compiles
static void test_failed_create_answers_its_retry(void **state) {
  fixture *f = *state;
  char path[256];
  snprintf(path, sizeof path, "%s/bad.obj", f->dir);
  FILE *o = fopen(path, "w");
  assert_non_null(o);
  fprintf(o, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n");
  fclose(o);
  ccsim_scene *bad = scene_of(f, "bad.obj");
  start(f, SRV_DEFAULT_MODEL_CACHE_MB, NULL);
  const uint8_t key[16] = "failed-create-01", other[16] = "failed-create-02";
  char m1[512], m2[512];
  assert_int_equal(raw_create(f, bad, key, 0, m1, sizeof m1), CCSIM_EINVAL);
  assert_non_null(strstr(m1, "bad.obj:4"));
  assert_int_equal(stats(f).misses, 1);
  assert_int_equal(raw_create(f, bad, key, 0, m2, sizeof m2), CCSIM_EINVAL);
  assert_string_equal(m1, m2);
  assert_int_equal(stats(f).misses, 1);  // answered from the failure, not compiled again
  assert_int_equal(raw_create(f, bad, key, 1, m2, sizeof m2), CCSIM_EINVAL);
  if (!strstr(m2, "different request")) print_error("got '%s'\n", m2);
  assert_non_null(strstr(m2, "different request"));
  assert_int_equal(raw_create(f, bad, other, 0, m2, sizeof m2), CCSIM_EINVAL);
  assert_string_equal(m1, m2);
  assert_int_equal(stats(f).misses, 2);
  ccsim_scene_destroy(&bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_sessions_of_one_scene_share, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_mesh_contents_do_not_share, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_budget_keeps_only_models_in_use, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lru_eviction_of_unused_models, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shared_model_steps_like_a_fresh_one, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restores_go_through_the_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mesh_files_are_read_by_the_server, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_creates_compile_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_failing_creates, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_create_answers_its_retry, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
