// ctest-label: e2e
// ctest-timeout: 120
// Contacts and kinematic bodies over the wire: a box resting on a floor reports contacts
// whose vertical forces add up to its weight (QueryContacts and Step.want_contacts, the
// per-body contact wrench in BodyState, the state stream), a kinematic body reaches the pose a Step
// commands, and inputs on the wrong kind of body are refused without changing anything.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "ccsim.pb-c.h"
#include "ccsim_client.h"
#include "ccsim_scene_msg.h"
#include "srv.h"

typedef struct fixture {
  srv *s;
  pthread_t thread;
  void *zctx, *sock;
  void *sub;  // a test's stream subscriber, closed by teardown (a failed assertion skips
              // the test's own close, and the context would wait for it for ever)
  char session[64], token[128];
  uint64_t seq, rid;
} fixture;

static const char *k_scene =
    "{\"gravity\": [0, 0, -9.81],"
    " \"contact\": {\"k\": 1e5, \"alpha\": 0.5, \"standoff\": 0.001},"
    " \"integrator\": {\"rtol\": 1e-8, \"atol\": 1e-11},"
    " \"bodies\": ["
    "  {\"name\": \"floor\", \"fixed\": true, \"shape\": {\"box\": {\"size\": [1, 1, 0.1]}},"
    "   \"pose\": {\"p\": [0, 0, -0.05]}},"
    "  {\"name\": \"box\", \"mass\": 1.0, \"shape\": {\"box\": {\"size\": [0.1, 0.1, 0.05]}},"
    "   \"pose\": {\"p\": [0.1, 0.3, 0.0259]}},"
    "  {\"name\": \"hand\", \"kinematic\": true, \"shape\": {\"sphere\": {\"radius\": 0.02}},"
    "   \"pose\": {\"p\": [-0.3, 0, 0.5]}}]}";

static Ccsim__Reply *roundtrip(fixture *f, Ccsim__Request *rq) {
  rq->has_request_id = 1;
  rq->request_id = ++f->rid;
  size_t n = ccsim__request__get_packed_size(rq);
  uint8_t *buf = malloc(n + 1);
  ccsim__request__pack(rq, buf);
  assert_true(zmq_send(f->sock, buf, n, 0) >= 0);
  free(buf);
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  assert_true(zmq_msg_recv(&msg, f->sock, 0) >= 0);
  Ccsim__Reply *r = ccsim__reply__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
  zmq_msg_close(&msg);
  assert_non_null(r);
  assert_int_equal(r->request_id, f->rid);
  return r;
}

static int create(fixture *f, char *session, size_t sz) {
  char err[512];
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "inline", NULL, err, sizeof err);
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  ccsim__request__init(&rq);
  ccsim__create_session__init(&cs);
  cs.scene = (Ccsim__Scene *)ccsim_scene_message(sc);
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = &cs;
  Ccsim__Reply *r = roundtrip(f, &rq);
  int ok = r->body_case == CCSIM__REPLY__BODY_CREATE_SESSION;
  if (ok) snprintf(session, sz, "%s", r->create_session->session_id);
  if (ok) snprintf(f->token, sizeof f->token, "%s", r->create_session->controller_token);
  ccsim__reply__free_unpacked(r, NULL);
  ccsim_scene_destroy(&sc);
  return ok ? 0 : -1;
}

// a server with max_step_seconds (0: its default) and the fixture's session on it
static int setup_limit(void **state, double max_step_seconds) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = "tcp://127.0.0.1:*";
  cfg.stream_bind = "auto";
  if (max_step_seconds > 0) cfg.max_step_seconds = max_step_seconds;
  char err[512] = "";
  f->s = test_server_start(&cfg, &f->thread);
  if (!f->s) {
    free(f);
    return -1;
  }
  f->zctx = zmq_ctx_new();
  f->sock = zmq_socket(f->zctx, ZMQ_DEALER);
  int linger = 0, timeo = 20000;
  zmq_setsockopt(f->sock, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(f->sock, ZMQ_RCVTIMEO, &timeo, sizeof timeo);
  zmq_connect(f->sock, srv_endpoint(f->s));
  // the session, created through the same scene loader the CLI uses
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "inline", NULL, err, sizeof err);
  if (!sc) {
    print_error("%s\n", err);
    return -1;
  }
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  ccsim__request__init(&rq);
  ccsim__create_session__init(&cs);
  cs.scene = (Ccsim__Scene *)ccsim_scene_message(sc);
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = &cs;
  Ccsim__Reply *r = roundtrip(f, &rq);
  if (r->body_case != CCSIM__REPLY__BODY_CREATE_SESSION) {
    print_error("create: %s\n", r->error ? r->error->message : "?");
    return -1;
  }
  snprintf(f->session, sizeof f->session, "%s", r->create_session->session_id);
  snprintf(f->token, sizeof f->token, "%s",
           r->create_session->controller_token ? r->create_session->controller_token : "");
  ccsim__reply__free_unpacked(r, NULL);
  ccsim_scene_destroy(&sc);
  *state = f;
  return 0;
}

static int setup(void **state) {
  return setup_limit(state, 0);
}

static int setup_step_limit(void **state) {
  return setup_limit(state, 0.05);
}

static int teardown(void **state) {
  fixture *f = *state;
  zmq_close(f->sock);
  if (f->sub) zmq_close(f->sub);
  zmq_ctx_term(f->zctx);
  test_server_stop(&f->s, f->thread);
  free(f);
  return 0;
}

// one Step of dt with the given inputs; the reply (caller frees)
static Ccsim__Reply *step(fixture *f, double dt, Ccsim__BodyInput **in, size_t nin, int contacts) {
  Ccsim__Request rq;
  Ccsim__Step st;
  ccsim__request__init(&rq);
  ccsim__step__init(&st);
  st.has_dt = 1;
  st.dt = dt;
  st.n_inputs = nin;
  st.inputs = in;
  st.has_want_contacts = 1;
  st.want_contacts = contacts;
  rq.session_id = f->session;
  rq.token = f->token;
  rq.has_seq = 1;
  rq.seq = f->seq + 1;
  rq.body_case = CCSIM__REQUEST__BODY_STEP;
  rq.step = &st;
  Ccsim__Reply *r = roundtrip(f, &rq);
  if (r->body_case == CCSIM__REPLY__BODY_STEP) f->seq++;
  return r;
}

static void test_resting_box_contacts(void **state) {
  fixture *f = *state;
  for (int k = 0; k < 1500; k++) {
    Ccsim__Reply *r = step(f, 2e-3, NULL, 0, 0);
    if (r->body_case != CCSIM__REPLY__BODY_STEP) print_error("%s\n", r->error->message);
    assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
    ccsim__reply__free_unpacked(r, NULL);
  }
  // the state stream carries the contacts of a step that asks for them, and only then
  void *sub = f->sub = zmq_socket(f->zctx, ZMQ_SUB);
  int linger = 0, timeo = 20000;
  zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeo, sizeof timeo);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, f->session, strlen(f->session));
  assert_int_equal(zmq_connect(sub, srv_stream_endpoint(f->s)), 0);
  Ccsim__StreamState *ss = NULL;
  for (int k = 0; k < 400 && !ss; k++) {  // until the subscription has reached the server
    Ccsim__Reply *r = step(f, 2e-3, NULL, 0, 0);
    assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
    ccsim__reply__free_unpacked(r, NULL);
    zmq_msg_t part;
    zmq_msg_init(&part);
    while (zmq_msg_recv(&part, sub, ZMQ_DONTWAIT) >= 0) {
      if (!zmq_msg_more(&part)) {
        ss = ccsim__stream_state__unpack(NULL, zmq_msg_size(&part), zmq_msg_data(&part));
        break;
      }
    }
    zmq_msg_close(&part);
  }
  assert_non_null(ss);
  assert_int_equal(ss->n_contacts, 0);  // not asked for
  ccsim__stream_state__free_unpacked(ss, NULL);
  ss = NULL;
  // Step.want_contacts and the body's contact wrench
  Ccsim__Reply *r = step(f, 2e-3, NULL, 0, 1);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
  const Ccsim__StepReply *sr = r->step;
  assert_true(sr->n_contacts >= 4);
  double fz = 0;
  for (size_t i = 0; i < sr->n_contacts; i++) {
    const Ccsim__Contact *c = sr->contacts[i];
    assert_int_equal(c->body_a, 0);  // floor (A) pushes the box (B) up along +z
    assert_int_equal(c->body_b, 1);
    assert_true(c->depth > 0 && c->depth < 0.001);
    assert_double_near(c->normal->z, 1.0, 1e-9);
    fz += c->force->z;
  }
  assert_double_rel(fz, 9.81, 2e-3, 0);
  const Ccsim__BodyState *box = sr->bodies[1];
  assert_non_null(box->contact_force);
  assert_double_rel(box->contact_force->z, fz, 1e-12, 0);
  assert_int_equal(box->contact_count, sr->n_contacts);
  assert_double_rel(sr->bodies[0]->contact_force->z, -fz, 1e-12, 0);  // equal and opposite
  // the stream message of that step: the reply's contacts, byte for byte
  zmq_msg_t topic, body;
  zmq_msg_init(&topic);
  zmq_msg_init(&body);
  for (int k = 0; k < 3 && !(ss && ss->time == sr->time); k++) {  // earlier steps' first
    if (ss) ccsim__stream_state__free_unpacked(ss, NULL);
    assert_true(zmq_msg_recv(&topic, sub, 0) >= 0);
    assert_true(zmq_msg_more(&topic));
    assert_true(zmq_msg_recv(&body, sub, 0) >= 0);
    ss = ccsim__stream_state__unpack(NULL, zmq_msg_size(&body), zmq_msg_data(&body));
    assert_non_null(ss);
  }
  assert_double_near(ss->time, sr->time, 0);
  // the mean contact force over the step: at rest, the weight; the stream carries the same
  for (int b = 0; b < 2; b++) {
    const Ccsim__Vec3 *mr = sr->bodies[b]->mean_contact_force;
    const Ccsim__Vec3 *ms = ss->bodies[b]->mean_contact_force;
    assert_non_null(mr);
    assert_non_null(ms);
    assert_non_null(sr->bodies[b]->mean_contact_torque);
    assert_double_rel(mr->z, b ? 9.81 : -9.81, 2e-3, 0);
    assert_true(mr->x == ms->x && mr->y == ms->y && mr->z == ms->z);
  }
  assert_int_equal(ss->n_contacts, sr->n_contacts);
  for (size_t i = 0; i < sr->n_contacts; i++) {
    uint8_t a[512], b[512];
    size_t na = ccsim__contact__get_packed_size(sr->contacts[i]);
    assert_true(na <= sizeof a);
    assert_int_equal(ccsim__contact__get_packed_size(ss->contacts[i]), na);
    ccsim__contact__pack(sr->contacts[i], a);
    ccsim__contact__pack(ss->contacts[i], b);
    assert_memory_equal(a, b, na);
  }
  ccsim__stream_state__free_unpacked(ss, NULL);
  zmq_msg_close(&topic);
  zmq_msg_close(&body);
  zmq_close(sub);
  f->sub = NULL;
  ccsim__reply__free_unpacked(r, NULL);
  // QueryContacts answers the same at the same state
  Ccsim__Request rq;
  Ccsim__QueryContacts qc;
  ccsim__request__init(&rq);
  ccsim__query_contacts__init(&qc);
  rq.session_id = f->session;
  rq.body_case = CCSIM__REQUEST__BODY_QUERY_CONTACTS;
  rq.query_contacts = &qc;  // no token: observers may ask too
  r = roundtrip(f, &rq);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_CONTACTS);
  double fz2 = 0;
  for (size_t i = 0; i < r->contacts->n_contacts; i++) fz2 += r->contacts->contacts[i]->force->z;
  assert_double_near(fz2, fz, 0);
  ccsim__reply__free_unpacked(r, NULL);
}

// QueryContacts at the current state of session, asked without a token (an observer)
static Ccsim__Reply *query_contacts(fixture *f, const char *session) {
  Ccsim__Request rq;
  Ccsim__QueryContacts qc;
  ccsim__request__init(&rq);
  ccsim__query_contacts__init(&qc);
  rq.session_id = (char *)session;
  rq.body_case = CCSIM__REQUEST__BODY_QUERY_CONTACTS;
  rq.query_contacts = &qc;
  return roundtrip(f, &rq);
}

// A libccsim client and a session of k_scene on the fixture's server, for tests that step
// through the library; client_session_end closes all three.
typedef struct client_session {
  ccsim_scene *sc;
  ccsim_client *c;
  ccsim_session *s;
} client_session;

static client_session client_session_open(fixture *f) {
  char err[512];
  client_session cs = {0};
  cs.sc = ccsim_scene_parse(k_scene, strlen(k_scene), "inline", NULL, err, sizeof err);
  assert_non_null(cs.sc);
  cs.c = ccsim_client_new(srv_endpoint(f->s), err, sizeof err);
  assert_non_null(cs.c);
  cs.s = ccsim_session_create(cs.c, cs.sc);
  assert_non_null(cs.s);
  return cs;
}

static void client_session_end(client_session *cs) {
  ccsim_session_close(&cs->s);
  ccsim_client_destroy(&cs->c);
  ccsim_scene_destroy(&cs->sc);
}

typedef struct long_step {
  ccsim_session *s;
  int status;
  atomic_int started, done;
} long_step;

static void *long_step_main(void *p) {
  long_step *ls = p;
  atomic_store(&ls->started, 1);
  ls->status = ccsim_session_step_n(ls->s, 0.01, 2000, NULL, 0, NULL, NULL);  // 20 s
  atomic_store(&ls->done, 1);
  return NULL;
}

// the packed contacts of a ContactsReply, for comparing two answers byte for byte
static size_t packed_contacts(const Ccsim__ContactsReply *cr, uint8_t *buf, size_t cap) {
  size_t n = ccsim__contacts_reply__get_packed_size(cr);
  assert_true(n <= cap);
  return ccsim__contacts_reply__pack(cr, buf);
}

// An observer's QueryContacts at the current state is computed once per state on the
// session's worker; asked again at that state it is answered by the thread that receives
// it, so observers never wait behind the controller's steps: during a long step (20 s of
// resting contact: 0.3 s of wall time here, 20 ms of which pass before the query)
// the answer is the state before it, byte for byte the first answer. After the step, the
// new state's contacts.
static void test_contacts_answered_at_published_state(void **state) {
  fixture *f = *state;
  client_session cs = client_session_open(f);
  ccsim_session *s = cs.s;
  for (int k = 0; k < 200; k++) {
    assert_int_equal(ccsim_session_step(s, 2e-3, NULL, 0), CCSIM_OK);  // the box settles
  }
  char id[64];
  snprintf(id, sizeof id, "%s", ccsim_session_id(s));
  double t1 = ccsim_session_time(s);
  Ccsim__Reply *r1 = query_contacts(f, id);
  assert_int_equal(r1->body_case, CCSIM__REPLY__BODY_CONTACTS);
  assert_true(r1->contacts->n_contacts >= 4);
  assert_true(r1->contacts->time == t1);
  long_step ls = {.s = s};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, long_step_main, &ls), 0);
  while (!atomic_load(&ls.started)) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  struct timespec settle = {0, 20000000};  // the step is under way on the server
  nanosleep(&settle, NULL);
  double q0 = now_s();
  Ccsim__Reply *r2 = query_contacts(f, id);
  double q1 = now_s();
  int answered_during = !atomic_load(&ls.done);
  pthread_join(th, NULL);
  print_message("long step %.3f s; the observer's query during it %.2f ms\n", now_s() - q0,
                1e3 * (q1 - q0));
  assert_int_equal(ls.status, CCSIM_OK);
  assert_true(answered_during);
  assert_int_equal(r2->body_case, CCSIM__REPLY__BODY_CONTACTS);
  assert_true(r2->contacts->time == t1);
  static uint8_t b1[1 << 16], b2[1 << 16];
  size_t n1 = packed_contacts(r1->contacts, b1, sizeof b1);
  size_t n2 = packed_contacts(r2->contacts, b2, sizeof b2);
  assert_int_equal(n1, n2);
  assert_memory_equal(b1, b2, n1);
  Ccsim__Reply *r3 = query_contacts(f, id);
  assert_int_equal(r3->body_case, CCSIM__REPLY__BODY_CONTACTS);
  assert_true(r3->contacts->time == ccsim_session_time(s));
  assert_true(r3->contacts->time > t1 + 19.9);
  assert_true(r3->contacts->n_contacts >= 4);
  ccsim__reply__free_unpacked(r1, NULL);
  ccsim__reply__free_unpacked(r2, NULL);
  ccsim__reply__free_unpacked(r3, NULL);
  client_session_end(&cs);
}

// A request whose physics runs past the server's max_step_seconds (50 ms here) is stopped
// there: ELIMIT naming the limit, the state it reached kept and published (GetState),
// the session usable afterwards. The step asked for is 20 s of a box resting on a floor
// (0.3 s of wall time when it runs through).
static void test_step_stopped_at_time_limit(void **state) {
  fixture *f = *state;
  client_session cs = client_session_open(f);
  ccsim_client *c = cs.c;
  ccsim_session *s = cs.s;
  ccsim_server_info info;
  assert_int_equal(ccsim_client_server_info(c, &info, NULL), CCSIM_OK);
  assert_true(info.max_step_seconds == 0.05);
  assert_int_equal(ccsim_session_step(s, 2e-3, NULL, 0), CCSIM_OK);
  double t1 = ccsim_session_time(s), w0 = now_s();
  assert_int_equal(ccsim_session_step_n(s, 0.01, 2000, NULL, 0, NULL, NULL), CCSIM_ELIMIT);
  double wall = now_s() - w0;
  print_message("stopped after %.3f s: %s\n", wall, ccsim_client_errmsg(c));
  assert_non_null(strstr(ccsim_client_errmsg(c), "stopped after 0.05 s of physics"));
  assert_true(wall < 5);
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  double t2 = ccsim_session_time(s);
  assert_true(t2 > t1 && t2 < t1 + 20);
  assert_int_equal(ccsim_session_step(s, 2e-3, NULL, 0), CCSIM_OK);
  assert_true(ccsim_session_time(s) == t2 + 2e-3);
  client_session_end(&cs);
}

// A Step that fails after progress still publishes the state it reached: in rigid mode a
// cube falls onto a grid of 0.5 mm squares, about 29 000 vertices under its face, more
// than a session's 16 384 contacts; the step stops with ELIMIT when they overflow, its
// 1 ms steps before kept, and GetState (answered from the published state) tells the time
// the step's error names, past the start
static void test_failed_step_publishes_its_progress(void **state) {
  fixture *f = *state;
  enum { N = 180 };
  const double h = 0.5e-3, edge = 0.085;
  static double vert[TEST_GRID_NVERT(N) * 3];
  static uint32_t tri[TEST_GRID_NTRI(N) * 3];
  test_grid(N, h, vert, tri);
  Ccsim__Mesh mesh;
  Ccsim__Box box;
  Ccsim__Shape gs, cs_;
  Ccsim__Vec3 size, g, cp;
  Ccsim__Pose cpose;
  Ccsim__ContactParams prm;
  Ccsim__Body b[2], *bp[2] = {&b[0], &b[1]};
  Ccsim__Scene sc;
  ccsim__mesh__init(&mesh);
  ccsim__box__init(&box);
  ccsim__shape__init(&gs);
  ccsim__shape__init(&cs_);
  ccsim__vec3__init(&size);
  ccsim__vec3__init(&g);
  ccsim__vec3__init(&cp);
  ccsim__pose__init(&cpose);
  ccsim__contact_params__init(&prm);
  ccsim__scene__init(&sc);
  mesh.n_vertices = 3 * TEST_GRID_NVERT(N);
  mesh.vertices = vert;
  mesh.n_triangles = 3 * TEST_GRID_NTRI(N);
  mesh.triangles = tri;
  gs.kind_case = CCSIM__SHAPE__KIND_MESH;
  gs.mesh = &mesh;
  size.has_x = size.has_y = size.has_z = 1;
  size.x = size.y = size.z = edge;
  box.size = &size;
  cs_.kind_case = CCSIM__SHAPE__KIND_BOX;
  cs_.box = &box;
  cp.has_z = 1;
  cp.z = edge / 2 + 3e-3;  // 2 mm above its standoff
  cpose.p = &cp;
  for (int i = 0; i < 2; i++) ccsim__body__init(&b[i]);
  b[0].name = "grid";
  b[0].has_type = 1;
  b[0].type = CCSIM__BODY_TYPE__BODY_FIXED;
  b[0].shape = &gs;
  b[1].name = "cube";
  b[1].has_mass = 1;
  b[1].mass = 1;
  b[1].shape = &cs_;
  b[1].pose = &cpose;
  g.has_z = 1;
  g.z = -9.81;
  prm.has_k = prm.has_alpha = prm.has_standoff = 1;
  prm.k = 1e5, prm.alpha = 0.5, prm.standoff = 1e-3;
  sc.gravity = &g;
  sc.contact = &prm;
  sc.n_bodies = 2;
  sc.bodies = bp;
  sc.has_mode = 1;
  sc.mode = CCSIM__MODE__MODE_RIGID;  // its 1 ms steps before the overflow are kept
  Ccsim__Request rq;
  Ccsim__CreateSession cr;
  ccsim__request__init(&rq);
  ccsim__create_session__init(&cr);
  cr.scene = &sc;
  rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
  rq.create_session = &cr;
  Ccsim__Reply *r = roundtrip(f, &rq);
  if (r->body_case != CCSIM__REPLY__BODY_CREATE_SESSION) print_error("%s\n", r->error->message);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_CREATE_SESSION);
  snprintf(f->session, sizeof f->session, "%s", r->create_session->session_id);
  snprintf(f->token, sizeof f->token, "%s", r->create_session->controller_token);
  ccsim__reply__free_unpacked(r, NULL);
  f->seq = 0;
  // 0.1 s of fall: the contacts overflow on the way
  r = step(f, 0.1, NULL, 0, 0);
  assert_int_not_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
  assert_non_null(r->error);
  print_message("%s\n", r->error->message);
  assert_int_equal(r->error->code, CCSIM__CODE__ELIMIT);
  const char *at = NULL;  // the last "at t = ": the server's, to 17 digits
  for (const char *p = r->error->message; (p = strstr(p, "at t = ")); p++) at = p;
  assert_non_null(at);
  double reached = atof(at + 7);
  assert_true(reached > 0 && reached < 0.1);
  ccsim__reply__free_unpacked(r, NULL);
  Ccsim__GetState gsq;
  ccsim__request__init(&rq);
  ccsim__get_state__init(&gsq);
  rq.session_id = f->session;
  rq.body_case = CCSIM__REQUEST__BODY_GET_STATE;
  rq.get_state = &gsq;
  r = roundtrip(f, &rq);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STATE);
  assert_true(r->state->time == reached);
  ccsim__reply__free_unpacked(r, NULL);
}

static void test_kinematic_target(void **state) {
  fixture *f = *state;
  Ccsim__BodyInput in;
  Ccsim__Pose pose;
  Ccsim__Vec3 p;
  Ccsim__Quat q;
  ccsim__body_input__init(&in);
  ccsim__pose__init(&pose);
  ccsim__vec3__init(&p);
  ccsim__quat__init(&q);
  p.has_x = p.has_y = p.has_z = 1;
  p.x = -0.25, p.y = 0.05, p.z = 0.45;
  q.has_w = q.has_z = 1;
  q.w = cos(0.25), q.z = sin(0.25);  // half a radian about z
  pose.p = &p;
  pose.q = &q;
  in.has_body = 1;
  in.body = 2;
  in.pose = &pose;
  Ccsim__BodyInput *inp[1] = {&in};
  Ccsim__Reply *r = step(f, 0.01, inp, 1, 0);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
  const Ccsim__BodyState *hand = r->step->bodies[2];
  assert_double_near(hand->pose->p->x, -0.25, 1e-12);
  assert_double_near(hand->pose->p->y, 0.05, 1e-12);
  assert_double_near(hand->pose->p->z, 0.45, 1e-12);
  assert_double_near(hand->pose->q->z, sin(0.25), 1e-12);
  // its twist over the step: 5 m/s along x, 0.5 rad / 0.01 s about z
  assert_double_near(hand->twist->v->x, 5.0, 1e-9);
  assert_double_near(hand->twist->w->z, 50.0, 1e-9);
  double t = r->step->time;
  ccsim__reply__free_unpacked(r, NULL);
  // a force on the kinematic body, a pose on the free box: refused, nothing changes
  Ccsim__Vec3 force;
  ccsim__vec3__init(&force);
  force.has_z = 1;
  force.z = 1;
  Ccsim__BodyInput bad;
  ccsim__body_input__init(&bad);
  bad.has_body = 1;
  bad.body = 2;
  bad.force = &force;
  inp[0] = &bad;
  r = step(f, 0.01, inp, 1, 0);
  assert_int_equal((int)r->error->code, CCSIM_EINVAL);
  assert_non_null(strstr(r->error->message, "not free"));
  ccsim__reply__free_unpacked(r, NULL);
  in.body = 1;
  inp[0] = &in;
  r = step(f, 0.01, inp, 1, 0);
  assert_int_equal((int)r->error->code, CCSIM_EINVAL);
  assert_non_null(strstr(r->error->message, "not kinematic"));
  ccsim__reply__free_unpacked(r, NULL);
  r = step(f, 0.01, NULL, 0, 0);  // the next seq still steps from where it was
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
  assert_double_near(r->step->time, t + 0.01, 1e-12);
  ccsim__reply__free_unpacked(r, NULL);
}

// QueryContacts of the box 0.2 mm below its pose, with the twist v = (0, 0, vz), w = 0
// (with_twist), or its own; the reply (caller frees)
static Ccsim__Reply *query_box_moving(fixture *f, const Ccsim__BodyState *box, double vz,
                                      int with_twist) {
  Ccsim__BodyState bs;
  Ccsim__Pose pose;
  Ccsim__Twist tw;
  Ccsim__Vec3 v, w, p;
  ccsim__pose__init(&pose);
  ccsim__vec3__init(&p);
  p.has_x = p.has_y = p.has_z = 1;
  p.x = box->pose->p->x, p.y = box->pose->p->y, p.z = box->pose->p->z - 2e-4;
  pose.p = &p;
  pose.q = box->pose->q;
  ccsim__body_state__init(&bs);
  ccsim__twist__init(&tw);
  ccsim__vec3__init(&v);
  ccsim__vec3__init(&w);
  v.has_z = 1;
  v.z = vz;
  tw.v = &v;
  tw.w = &w;
  bs.has_body = 1;
  bs.body = 1;
  bs.pose = &pose;
  bs.twist = with_twist ? &tw : NULL;
  Ccsim__BodyState *bsp[1] = {&bs};
  Ccsim__Request rq;
  Ccsim__QueryContacts qc;
  ccsim__request__init(&rq);
  ccsim__query_contacts__init(&qc);
  qc.n_poses = 1;
  qc.poses = bsp;
  rq.session_id = f->session;
  rq.body_case = CCSIM__REQUEST__BODY_QUERY_CONTACTS;
  rq.query_contacts = &qc;
  return roundtrip(f, &rq);
}

// QueryContacts at given poses: the box lowered by 0.2 mm presses 4 k 0.2 mm harder; and
// the session queried so is, to the last bit, the same as a twin stepped without queries
static void test_contacts_at_poses(void **state) {
  fixture *f = *state;
  char main_s[64], twin[64], twin_token[128], main_token[128];
  snprintf(main_s, sizeof main_s, "%s", f->session);
  snprintf(main_token, sizeof main_token, "%s", f->token);
  assert_int_equal(create(f, twin, sizeof twin), 0);
  snprintf(twin_token, sizeof twin_token, "%s", f->token);
  const char *sessions[2] = {main_s, twin};
  const char *tokens[2] = {main_token, twin_token};
  uint64_t seqs[2] = {0, 0};
  Ccsim__Reply *last[2] = {NULL, NULL};
  for (int k = 0; k < 300; k++) {
    for (int v = 0; v < 2; v++) {
      snprintf(f->session, sizeof f->session, "%s", sessions[v]);
      f->seq = seqs[v];
      snprintf(f->token, sizeof f->token, "%s", tokens[v]);
      Ccsim__Reply *r = step(f, 2e-3, NULL, 0, 0);
      assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
      seqs[v] = f->seq;
      if (last[v]) ccsim__reply__free_unpacked(last[v], NULL);
      last[v] = r;
      if (v == 0 && k % 10 == 0) {
        // ask the first session about a box lowered by 0.2 mm
        const Ccsim__BodyState *box = r->step->bodies[1];
        Ccsim__Reply *qr = query_box_moving(f, box, 0.0, 0);
        assert_int_equal(qr->body_case, CCSIM__REPLY__BODY_CONTACTS);
        if (k == 290) {
          double fz = 0, fz_now = 0;
          for (size_t i = 0; i < qr->contacts->n_contacts; i++)
            fz += qr->contacts->contacts[i]->force->z;
          fz_now = box->contact_force->z;
          // four corner springs of 1e5 N/m pressed 0.2 mm further (plus their damping)
          assert_int_equal(qr->contacts->n_contacts, 4);
          assert_double_near(fz - fz_now, 4 * 1e5 * 2e-4, 0.05 * 4 * 1e5 * 2e-4);
        }
        ccsim__reply__free_unpacked(qr, NULL);
      }
    }
  }
  // the queried session and its twin: the same bits
  for (int b = 0; b < 3; b++) {
    const Ccsim__BodyState *x = last[0]->step->bodies[b], *y = last[1]->step->bodies[b];
    assert_memory_equal(&x->pose->p->x, &y->pose->p->x, sizeof(double));
    assert_memory_equal(&x->pose->p->z, &y->pose->p->z, sizeof(double));
    assert_memory_equal(&x->twist->v->z, &y->twist->v->z, sizeof(double));
    assert_memory_equal(&x->pose->q->x, &y->pose->q->x, sizeof(double));
  }
  assert_memory_equal(&last[0]->step->time, &last[1]->step->time, sizeof(double));
  ccsim__reply__free_unpacked(last[0], NULL);
  ccsim__reply__free_unpacked(last[1], NULL);
  snprintf(f->session, sizeof f->session, "%s", main_s);
}

// QueryContacts at a given pose and twist: the contacts move with the twist given (the
// damping part of the force follows it), not with the body's own; a twist that is not
// finite is refused
static void test_contacts_at_pose_and_twist(void **state) {
  fixture *f = *state;
  Ccsim__Reply *r = NULL;
  for (int k = 0; k < 100; k++) {  // 0.2 s: the box settles on the floor
    if (r) ccsim__reply__free_unpacked(r, NULL);
    r = step(f, 2e-3, NULL, 0, 0);
    assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
  }
  const Ccsim__BodyState *box = r->step->bodies[1];
  Ccsim__Reply *still = query_box_moving(f, box, 0.0, 1);
  Ccsim__Reply *down = query_box_moving(f, box, -0.1, 1);
  assert_int_equal(still->body_case, CCSIM__REPLY__BODY_CONTACTS);
  assert_int_equal(down->body_case, CCSIM__REPLY__BODY_CONTACTS);
  const Ccsim__ContactsReply *a = still->contacts, *b = down->contacts;
  assert_int_equal(a->n_contacts, 4);
  assert_int_equal(b->n_contacts, 4);
  double fa = 0, fb = 0;
  for (size_t i = 0; i < 4; i++) {
    // the floor (A) is fixed, the box (B) comes down at 0.1 m/s: the depth grows at 0.1
    assert_double_near(a->contacts[i]->depth_rate, 0.0, 1e-9);
    assert_double_near(b->contacts[i]->depth_rate, 0.1, 1e-9);
    assert_true(b->contacts[i]->depth == a->contacts[i]->depth);
    fa += a->contacts[i]->force->z;
    fb += b->contacts[i]->force->z;
  }
  // the normal law's damping, lambda depth^n depth_rate with lambda = 1.5 alpha k = 7.5e4
  // and n = 1 (this scene), adds up over the four corners
  double damping = 0;
  for (size_t i = 0; i < 4; i++) damping += 7.5e4 * b->contacts[i]->depth * 0.1;
  assert_double_near(fb - fa, damping, 1e-6 * damping + 1e-9);
  // without a twist the box moves with its own (it is still settling)
  Ccsim__Reply *own = query_box_moving(f, box, 0.0, 0);
  assert_int_equal(own->contacts->n_contacts, 4);
  assert_double_near(own->contacts->contacts[0]->depth_rate, -box->twist->v->z, 1e-6);
  assert_true(fabs(box->twist->v->z) > 1e-5);
  ccsim__reply__free_unpacked(own, NULL);
  ccsim__reply__free_unpacked(still, NULL);
  ccsim__reply__free_unpacked(down, NULL);
  Ccsim__Reply *bad = query_box_moving(f, box, NAN, 1);
  assert_int_equal(bad->error->code, CCSIM__CODE__EINVAL);
  assert_non_null(strstr(bad->error->message, "poses[0].twist"));
  ccsim__reply__free_unpacked(bad, NULL);
  ccsim__reply__free_unpacked(r, NULL);
}

// The client library's QueryContacts and SetState: a box settled on the floor reports
// contacts whose vertical forces on it add up to its weight; lifted in a query it touches
// nothing and the session is unchanged; an observer may query but not set; SetState moves
// the time and the box, and the box falls freely from there; a refused SetState changes
// nothing.
static void test_library_contacts_and_set_state(void **state) {
  fixture *f = *state;
  char err[512] = "";
  ccsim_scene *sc = ccsim_scene_parse(k_scene, strlen(k_scene), "inline", NULL, err, sizeof err);
  assert_non_null(sc);
  ccsim_client *c = ccsim_client_new(srv_endpoint(f->s), err, sizeof err);
  assert_non_null(c);
  ccsim_session *s = ccsim_session_create(c, sc);
  assert_non_null(s);
  int box = ccsim_session_body_index(s, "box");
  assert_int_equal(box, 1);
  assert_int_equal(ccsim_session_step_n(s, 2e-3, 1500, NULL, 0, NULL, NULL), CCSIM_OK);
  ccsim_contact *ct = NULL;
  size_t nc = 0;
  assert_int_equal(ccsim_session_query_contacts(s, NULL, 0, &ct, &nc), CCSIM_OK);
  assert_true(nc >= 4);
  double fz = 0;
  for (size_t i = 0; i < nc; i++) {
    assert_true(ct[i].body_a == box || ct[i].body_b == box);
    assert_true(ct[i].depth > 0 && ct[i].depth < 0.001);
    assert_double_near(fabs(ct[i].normal[2]), 1, 1e-6);
    fz += ct[i].body_b == box ? ct[i].force[2] : -ct[i].force[2];
  }
  free(ct);
  assert_double_near(fz, 9.81, 0.01 * 9.81);
  const double z_rest = ccsim_session_bodies(s)[box].p[2], t_rest = ccsim_session_time(s);
  // lifted in a query: no contacts, and the session stays where it was
  ccsim_body_set up = {.body = box, .has_pose = 1, .p = {0.1, 0.3, 0.5}, .q = {1, 0, 0, 0}};
  assert_int_equal(ccsim_session_query_contacts(s, &up, 1, &ct, &nc), CCSIM_OK);
  assert_int_equal(nc, 0);
  assert_null(ct);
  up.has_pose = 0;  // a query needs the pose
  assert_int_equal(ccsim_session_query_contacts(s, &up, 1, &ct, &nc), CCSIM_EINVAL);
  up.has_pose = 1;
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  assert_true(ccsim_session_bodies(s)[box].p[2] == z_rest && ccsim_session_time(s) == t_rest);
  // an observer queries, and may not set
  ccsim_session *obs = ccsim_session_attach(c, ccsim_session_id(s));
  assert_non_null(obs);
  assert_int_equal(ccsim_session_query_contacts(obs, NULL, 0, &ct, &nc), CCSIM_OK);
  assert_true(nc >= 4);
  free(ct);
  assert_int_equal(ccsim_session_set_state(obs, NULL, &up, 1), CCSIM_EPERM);
  ccsim_session_release(&obs);
  // set: time 2 s, the box at rest 0.3 m up; then 0.1 s of free fall
  double t = 2.0;
  ccsim_body_set drop = {
      .body = box, .has_pose = 1, .p = {0.1, 0.3, 0.3}, .q = {1, 0, 0, 0}, .has_twist = 1};
  assert_int_equal(ccsim_session_set_state(s, &t, &drop, 1), CCSIM_OK);
  assert_true(ccsim_session_time(s) == 2.0);
  assert_true(ccsim_session_bodies(s)[box].p[2] == 0.3);
  // zero sub-steps: refused before anything is sent (the wire would read it as one, and
  // write its sub-state into a buffer sized for none)
  ccsim_body_state none[1];
  double none_t[1];
  assert_int_equal(ccsim_session_step_n(s, 1e-3, 0, NULL, 0, none, none_t), CCSIM_EINVAL);
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  assert_true(ccsim_session_time(s) == 2.0);
  assert_int_equal(ccsim_session_step_n(s, 1e-3, 100, NULL, 0, NULL, NULL), CCSIM_OK);
  assert_double_near(ccsim_session_time(s), 2.1, 1e-12);
  assert_double_near(ccsim_session_bodies(s)[box].p[2], 0.3 - 0.5 * 9.81 * 0.01, 1e-6);
  assert_double_near(ccsim_session_bodies(s)[box].v[2], -9.81 * 0.1, 1e-6);
  // refused: a NaN in the pose; nothing changes
  const double z = ccsim_session_bodies(s)[box].p[2];
  drop.p[2] = NAN;
  t = 5.0;
  assert_int_equal(ccsim_session_set_state(s, &t, &drop, 1), CCSIM_EINVAL);
  assert_int_equal(ccsim_session_get_state(s), CCSIM_OK);
  assert_double_near(ccsim_session_time(s), 2.1, 1e-12);
  assert_true(ccsim_session_bodies(s)[box].p[2] == z);
  ccsim_session_close(&s);
  ccsim_client_destroy(&c);
  ccsim_scene_destroy(&sc);
}

// The mean contact force through libccsim: the box dropped 6 mm onto the floor and
// stepped in Steps of ten 1 ms sub-steps. Over every batch, its mean contact force times
// 10 ms is the impulse that changes the box's momentum: m (v_end - v_start) - m g T from
// the states before and after; each sub-state's mean is over its own sub-step, and the
// batch's is their average. States no step made (SetState) carry none.
static void test_mean_contact_force_impulse(void **state) {
  fixture *f = *state;
  client_session cs = client_session_open(f);
  ccsim_session *s = cs.s;
  const int box = 1, nsub = 10;
  const double mass = 1.0, dt = 1e-3, g = 9.81;
  double t = 0;
  ccsim_body_set drop = {
      .body = box, .has_pose = 1, .p = {0.1, 0.3, 0.031}, .q = {1, 0, 0, 0}, .has_twist = 1};
  assert_int_equal(ccsim_session_set_state(s, &t, &drop, 1), CCSIM_OK);
  assert_true(ccsim_session_bodies(s)[box].mean_contact_force[2] == 0);
  ccsim_body_state sub[10 * 3];
  double sub_t[10], worst = 0, total = 0;
  int touched = 0;
  for (int k = 0; k < 40; k++) {
    double v0 = ccsim_session_bodies(s)[box].v[2];
    assert_int_equal(ccsim_session_step_n(s, dt, nsub, NULL, 0, sub, sub_t), CCSIM_OK);
    const ccsim_body_state *b = &ccsim_session_bodies(s)[box];
    double imp = b->mean_contact_force[2] * nsub * dt, sum = 0;
    double expect = mass * (b->v[2] - v0) + mass * g * nsub * dt;
    for (int i = 0; i < nsub; i++) sum += sub[3 * i + box].mean_contact_force[2] * dt;
    assert_double_rel(sum, imp, 1e-9, 1e-12);
    if (fabs(imp - expect) > worst) worst = fabs(imp - expect);
    total += imp;
    touched += imp > 0;
    assert_double_near(imp, expect, 1e-3 * mass * 0.31);  // v_in = sqrt(2 g 5 mm) = 0.31 m/s
  }
  print_message("drop: %d of 40 batches touched; total impulse %.6g N s; worst |impulse - "
                "momentum change| %.3g N s\n", touched, total, worst);
  assert_true(touched >= 10);
  client_session_end(&cs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_mean_contact_force_impulse, setup, teardown),
      cmocka_unit_test_setup_teardown(test_resting_box_contacts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_contacts_answered_at_published_state, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_step_publishes_its_progress, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_stopped_at_time_limit, setup_step_limit, teardown),
      cmocka_unit_test_setup_teardown(test_kinematic_target, setup, teardown),
      cmocka_unit_test_setup_teardown(test_contacts_at_poses, setup, teardown),
      cmocka_unit_test_setup_teardown(test_contacts_at_pose_and_twist, setup, teardown),
      cmocka_unit_test_setup_teardown(test_library_contacts_and_set_state, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
