// ctest-label: unit
// ctest-timeout: 60
// Hostile requests through the transport-free dispatcher (srv_handle): random bytes,
// truncated protobuf, wrong wire types, huge declared counts, NaN/Inf, unknown sessions,
// wrong roles and every configured limit. Each gets an error code and a message, the
// session stays exactly as it was, and a Hello still works afterwards. Also what a good
// Step's reply leaves out: zero statistics, and pacing statistics of an unpaced session.
#include "ccsim_test.h"
#include "ccsim_test_srv.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ccsim.pb-c.h"
#include "ccsim_status.h"
#include "srv.h"
#include "wire.h"

typedef struct fixture {
  srv *s;
  char id[64], token[64];
  uint64_t rid;
  char dir[64];  // a state dir's parent made by the test ("": none)
  char state_dir[128];
} fixture;

static Ccsim__Reply *call_raw(fixture *f, const uint8_t *buf, size_t n) {
  size_t rlen = 0;
  uint8_t *rep = srv_handle(f->s, buf, n, &rlen);
  assert_non_null(rep);
  Ccsim__Reply *r = ccsim__reply__unpack(NULL, rlen, rep);
  free(rep);
  assert_non_null(r);  // whatever came in, a decodable reply goes out
  assert_non_null(r->error);
  return r;
}

static Ccsim__Reply *call(fixture *f, Ccsim__Request *rq) {
  rq->has_request_id = 1;
  rq->request_id = ++f->rid;
  size_t n = ccsim__request__get_packed_size(rq);
  uint8_t *buf = malloc(n + 1);
  ccsim__request__pack(rq, buf);
  Ccsim__Reply *r = call_raw(f, buf, n);
  free(buf);
  assert_int_equal(r->request_id, rq->request_id);
  return r;
}

static void expect(Ccsim__Reply *r, int code, const char *needle) {
  if ((int)r->error->code != code || (needle && !strstr(r->error->message, needle))) {
    print_error("expected %s (\"%s\"), got %s: %s\n", ccsim_status_name(code),
                needle ? needle : "", ccsim_status_name((int)r->error->code),
                r->error->message ? r->error->message : "");
  }
  assert_int_equal((int)r->error->code, code);
  if (code != CCSIM_OK) {
    assert_non_null(r->error->message);
    assert_true(strlen(r->error->message) > 0);
    assert_int_equal(r->body_case, CCSIM__REPLY__BODY__NOT_SET);
  }
  if (needle) {
    assert_non_null(strstr(r->error->message, needle));
  }
  ccsim__reply__free_unpacked(r, NULL);
}

// a one-body scene (nbody free balls)
typedef struct scene_buf {
  Ccsim__Scene sc;
  Ccsim__Body b[8], *bp[8];
  Ccsim__Pose pose[8];
  Ccsim__Vec3 p[8];
} scene_buf;

static Ccsim__Scene *make_scene(scene_buf *sb, int nbody) {
  ccsim__scene__init(&sb->sc);
  for (int i = 0; i < nbody; i++) {
    ccsim__body__init(&sb->b[i]);
    ccsim__pose__init(&sb->pose[i]);
    ccsim__vec3__init(&sb->p[i]);
    sb->p[i].has_z = 1;
    sb->p[i].z = 10 + i;
    sb->pose[i].p = &sb->p[i];
    sb->b[i].pose = &sb->pose[i];
    sb->b[i].has_mass = 1;
    sb->b[i].mass = 1;
    static double inertia[3] = {0.1, 0.1, 0.1};
    sb->b[i].n_inertia = 3;
    sb->b[i].inertia = inertia;
    static char names[8][16];  // room for any int: -Wformat-truncation cannot bound it
    snprintf(names[i], sizeof names[i], "b%d", i);
    sb->b[i].name = names[i];
    sb->bp[i] = &sb->b[i];
  }
  sb->sc.n_bodies = (size_t)nbody;
  sb->sc.bodies = sb->bp;
  return &sb->sc;
}

static Ccsim__Reply *create_scene(fixture *f, Ccsim__Scene *sc) {
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  Ccsim__Pacing pc;
  test_create_request(&rq, &cs, &pc, sc, NULL, 0, 0);
  return call(f, &rq);
}

static Ccsim__Reply *create(fixture *f, int nbody) {
  scene_buf sb;
  return create_scene(f, make_scene(&sb, nbody));
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = NULL;
  cfg.max_sessions = 3;
  cfg.idle_timeout = 0;  // the session limit's message for a server that never frees them
  cfg.max_bodies = 4;
  cfg.max_triangles = 12;
  cfg.max_substeps = 100;
  cfg.max_msg_bytes = 4096;
  char err[256];
  f->s = srv_new(&cfg, err, sizeof err);
  if (!f->s) {
    print_error("%s\n", err);
    return -1;
  }
  Ccsim__Reply *r = create(f, 1);
  if (r->error->code != CCSIM__CODE__OK) {
    return -1;
  }
  snprintf(f->id, sizeof f->id, "%s", r->create_session->session_id);
  snprintf(f->token, sizeof f->token, "%s", r->create_session->controller_token);
  ccsim__reply__free_unpacked(r, NULL);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  srv_destroy(&f->s);
  free(f);
  return 0;
}

// the session's time and first body's z, via GetState
static void snapshot(fixture *f, double *t, double *z) {
  Ccsim__Request rq;
  Ccsim__GetState gs;
  ccsim__request__init(&rq);
  ccsim__get_state__init(&gs);
  rq.session_id = f->id;
  rq.body_case = CCSIM__REQUEST__BODY_GET_STATE;
  rq.get_state = &gs;
  Ccsim__Reply *r = call(f, &rq);
  assert_int_equal(r->error->code, CCSIM__CODE__OK);
  *t = r->state->time;
  *z = r->state->bodies[0]->pose->p->z;
  ccsim__reply__free_unpacked(r, NULL);
}

static void hello_works(fixture *f) {
  Ccsim__Request rq;
  Ccsim__Hello h;
  ccsim__request__init(&rq);
  ccsim__hello__init(&h);
  h.has_protocol_version = 1;
  h.protocol_version = 1;
  rq.body_case = CCSIM__REQUEST__BODY_HELLO;
  rq.hello = &h;
  expect(call(f, &rq), CCSIM_OK, NULL);
}

// a valid Step request on the fixture's session (fields for the test to spoil)
typedef struct step_req {
  Ccsim__Request rq;
  Ccsim__Step st;
  Ccsim__BodyInput in, *inp[1];
  Ccsim__Vec3 force;
} step_req;

static void make_step(fixture *f, step_req *s) {
  ccsim__request__init(&s->rq);
  ccsim__step__init(&s->st);
  ccsim__body_input__init(&s->in);
  ccsim__vec3__init(&s->force);
  s->st.has_dt = 1;
  s->st.dt = 1e-3;
  s->rq.session_id = f->id;
  s->rq.token = f->token;
  s->rq.body_case = CCSIM__REQUEST__BODY_STEP;
  s->rq.step = &s->st;
}

static void test_bytes_and_encodings(void **state) {
  fixture *f = *state;
  double t0, z0, t, z;
  snapshot(f, &t0, &z0);
  // random bytes
  unsigned seed = 7;
  for (int k = 0; k < 500; k++) {
    uint8_t junk[300];
    size_t n = (size_t)(rand_r(&seed) % 300);
    for (size_t i = 0; i < n; i++) junk[i] = (uint8_t)rand_r(&seed);
    Ccsim__Reply *r = call_raw(f, junk, n);
    assert_true(r->error->code != CCSIM__CODE__OK || n == 0 ||
                r->body_case != CCSIM__REPLY__BODY_STEP);
    ccsim__reply__free_unpacked(r, NULL);
  }
  // a valid step, truncated at every length
  step_req s;
  make_step(f, &s);
  uint8_t buf[512];
  size_t n = ccsim__request__pack(&s.rq, buf);
  for (size_t cut = 1; cut < n; cut++) {
    Ccsim__Reply *r = call_raw(f, buf, cut);
    // a cut inside a field is undecodable; a cut between fields is a request missing parts
    assert_true(r->error->code == CCSIM__CODE__EPROTO || r->error->code == CCSIM__CODE__ENOTFOUND ||
                r->error->code == CCSIM__CODE__EPERM || r->error->code == CCSIM__CODE__EINVAL);
    ccsim__reply__free_unpacked(r, NULL);
  }
  snapshot(f, &t, &z);
  assert_true(t == t0 && z == z0);
  // wrong wire types: session_id (field 2, a string) as a varint; step.dt (a double) as
  // a varint; a declared length of 2^62 bytes
  const uint8_t wrong_id[] = {0x08, 0x01, 0x10, 0x05, 0x62, 0x00};
  expect(call_raw(f, wrong_id, sizeof wrong_id), CCSIM_EPROTO, NULL);
  uint8_t wrong_dt[128];
  size_t p = 0;
  wrong_dt[p++] = 0x12;  // session_id
  wrong_dt[p++] = 32;
  memcpy(wrong_dt + p, f->id, 32);
  p += 32;
  wrong_dt[p++] = 0x22;  // token
  wrong_dt[p++] = 32;
  memcpy(wrong_dt + p, f->token, 32);
  p += 32;
  wrong_dt[p++] = 0x62;  // step, 2 bytes
  wrong_dt[p++] = 2;
  wrong_dt[p++] = 0x08;  // dt as varint 5
  wrong_dt[p++] = 0x05;
  expect(call_raw(f, wrong_dt, p), CCSIM_EPROTO, NULL);
  const uint8_t huge_len[] = {0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 'a'};
  expect(call_raw(f, huge_len, sizeof huge_len), CCSIM_EPROTO, NULL);
  // a packed repeated double (inertia) claiming far more values than the message holds
  const uint8_t huge_packed[] = {0x5a, 0x08, 0x0a, 0x06, 0x22, 0x04, 0x22, 0xff, 0xff, 0x7f};
  expect(call_raw(f, huge_packed, sizeof huge_packed), CCSIM_EPROTO, NULL);
  // over the size limit: an error reply, not a silent drop
  // (a request refused undecoded still gets its request_id back, or its client could not
  // match the reply and would time out)
  uint8_t *big = calloc(1, 5000);
  big[0] = 0x08;  // request_id 7
  big[1] = 0x07;
  Ccsim__Reply *r = call_raw(f, big, 5000);
  assert_true(r->has_request_id && r->request_id == 7);
  expect(r, CCSIM_ELIMIT, "exceeds the limit");
  // within it, but two thousand empty inputs: 72 bytes each decoded, past 16 per byte
  size_t q = 0;
  big[q++] = 0x08;  // request_id 8
  big[q++] = 0x08;
  big[q++] = 0x62;  // step, its length in two bytes
  big[q++] = 0x80 | (4000 & 0x7f);
  big[q++] = 4000 >> 7;
  for (int k = 0; k < 2000; k++) {
    big[q++] = 0x12;  // inputs {}
    big[q++] = 0x00;
  }
  r = call_raw(f, big, q);
  assert_true(r->has_request_id && r->request_id == 8);
  expect(r, CCSIM_ELIMIT, "decoded");
  free(big);
  // a scene holding an unknown field numbered 0 in two bytes: read, but it cannot be
  // written back for the session's checkpoints
  const uint8_t zero_field[] = {0x08, 0x09, 0x5a, 0x05, 0x0a, 0x03, 0x80, 0x00, 0x00};
  expect(call_raw(f, zero_field, sizeof zero_field), CCSIM_EINVAL, "numbered 0");
  snapshot(f, &t, &z);
  assert_true(t == t0 && z == z0);
  hello_works(f);
}

static void test_numbers_roles_and_sessions(void **state) {
  fixture *f = *state;
  double t0, z0, t, z;
  step_req s;
  make_step(f, &s);
  expect(call(f, &s.rq), CCSIM_OK, NULL);
  snapshot(f, &t0, &z0);
  // NaN/Inf in dt, forces, substeps too many, inputs for bodies that do not exist
  const double bad[] = {NAN, INFINITY, -INFINITY, -1, 0, 1e300};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    make_step(f, &s);
    s.st.dt = bad[i];
    Ccsim__Reply *r = call(f, &s.rq);
    assert_true(r->error->code == CCSIM__CODE__EINVAL || r->error->code == CCSIM__CODE__ELIMIT);
    ccsim__reply__free_unpacked(r, NULL);
  }
  make_step(f, &s);
  s.st.has_substeps = 1;
  s.st.substeps = 4000000000u;
  expect(call(f, &s.rq), CCSIM_ELIMIT, "substeps");
  s.st.substeps = 100;
  s.st.dt = 40;  // 4000 s in one request
  expect(call(f, &s.rq), CCSIM_ELIMIT, "dt x substeps");
  make_step(f, &s);
  s.inp[0] = &s.in;
  s.st.n_inputs = 1;
  s.st.inputs = s.inp;
  s.in.has_body = 1;
  s.in.body = UINT32_MAX;
  expect(call(f, &s.rq), CCSIM_EINVAL, "inputs[0].body");
  s.in.body = 0;
  s.in.force = &s.force;
  s.force.has_y = 1;
  s.force.y = INFINITY;
  expect(call(f, &s.rq), CCSIM_EINVAL, "finite");
  // finite but past what a state can hold after a step (1e308 N made a rigid ball's
  // state infinite, and its save unrestorable)
  s.force.y = 1e308;
  expect(call(f, &s.rq), CCSIM_EINVAL, "force above 1e12 N");
  // wrong roles: no token, a wrong token, a token of the right length but not ours
  make_step(f, &s);
  s.rq.token = NULL;
  expect(call(f, &s.rq), CCSIM_EPERM, "controller");
  s.rq.token = "not a token";
  expect(call(f, &s.rq), CCSIM_EPERM, NULL);
  char forged[64];
  snprintf(forged, sizeof forged, "%s", f->token);
  forged[0] = forged[0] == '0' ? '1' : '0';
  s.rq.token = forged;
  expect(call(f, &s.rq), CCSIM_EPERM, NULL);
  {
    Ccsim__Request rq;
    Ccsim__CloseSession cl;
    ccsim__request__init(&rq);
    ccsim__close_session__init(&cl);
    rq.session_id = f->id;
    rq.token = forged;
    rq.body_case = CCSIM__REQUEST__BODY_CLOSE_SESSION;
    rq.close_session = &cl;
    expect(call(f, &rq), CCSIM_EPERM, NULL);
    Ccsim__GetState gs;
    ccsim__get_state__init(&gs);
    gs.has_checkpoint = 1;
    gs.checkpoint = 1;
    rq.body_case = CCSIM__REQUEST__BODY_GET_STATE;
    rq.get_state = &gs;
    expect(call(f, &rq), CCSIM_EPERM, "checkpoint");
    // set_state: NaN pose, a body out of range
    Ccsim__SetState ss;
    Ccsim__BodyState bs, *bsp[1] = {&bs};
    Ccsim__Pose pose;
    Ccsim__Vec3 pp;
    ccsim__set_state__init(&ss);
    ccsim__body_state__init(&bs);
    ccsim__pose__init(&pose);
    ccsim__vec3__init(&pp);
    pp.has_x = 1;
    pp.x = NAN;
    pose.p = &pp;
    bs.has_body = 1;
    bs.pose = &pose;
    ss.n_bodies = 1;
    ss.bodies = bsp;
    rq.token = f->token;
    rq.body_case = CCSIM__REQUEST__BODY_SET_STATE;
    rq.set_state = &ss;
    expect(call(f, &rq), CCSIM_EINVAL, "finite");
    bs.body = 9;
    expect(call(f, &rq), CCSIM_EINVAL, "out of range");
    ss.has_time = 1;
    ss.time = -INFINITY;
    bs.body = 0;
    pp.x = 1;
    expect(call(f, &rq), CCSIM_EINVAL, "set_state.time");
  }
  // unknown sessions: random, too long, empty
  make_step(f, &s);
  s.rq.session_id = "ffffffffffffffffffffffffffffffff";
  expect(call(f, &s.rq), CCSIM_ENOTFOUND, "unknown session");
  char longid[300];
  memset(longid, 'a', sizeof longid - 1);
  longid[sizeof longid - 1] = 0;
  s.rq.session_id = longid;
  expect(call(f, &s.rq), CCSIM_ENOTFOUND, NULL);
  s.rq.session_id = NULL;
  expect(call(f, &s.rq), CCSIM_ENOTFOUND, NULL);
  // a contact query at "given" poses that names no body and no pose: refused, not ignored
  {
    Ccsim__Request rq;
    Ccsim__QueryContacts q;
    Ccsim__BodyState bs, *bsp[1] = {&bs};
    ccsim__request__init(&rq);
    ccsim__query_contacts__init(&q);
    ccsim__body_state__init(&bs);
    q.n_poses = 1;
    q.poses = bsp;
    rq.session_id = f->id;
    rq.body_case = CCSIM__REQUEST__BODY_QUERY_CONTACTS;
    rq.query_contacts = &q;
    expect(call(f, &rq), CCSIM_EINVAL, "poses");
  }
  snapshot(f, &t, &z);
  assert_true(t == t0 && z == z0);
  // a valid set_state does change it, and the stream of steps carries on from there
  {
    Ccsim__Request rq;
    Ccsim__SetState ss;
    Ccsim__BodyState bs, *bsp[1] = {&bs};
    Ccsim__Pose pose;
    Ccsim__Vec3 pp;
    ccsim__request__init(&rq);
    ccsim__set_state__init(&ss);
    ccsim__body_state__init(&bs);
    ccsim__pose__init(&pose);
    ccsim__vec3__init(&pp);
    pp.has_z = 1;
    pp.z = 3;
    pose.p = &pp;
    bs.has_body = 1;
    bs.pose = &pose;
    ss.n_bodies = 1;
    ss.bodies = bsp;
    ss.has_time = 1;
    ss.time = 2;
    rq.session_id = f->id;
    rq.token = f->token;
    rq.body_case = CCSIM__REQUEST__BODY_SET_STATE;
    rq.set_state = &ss;
    expect(call(f, &rq), CCSIM_OK, NULL);
    snapshot(f, &t, &z);
    assert_true(t == 2 && z == 3);
  }
  hello_works(f);
}

// A dt too small for the integrator to tell the step's end from its start is refused
// before the request spends its seq. At t = 0 any positive dt advanced the time as a
// double, so 1e-300 passed the check and failed inside CVODE (ESOLVER), seq spent.
static void test_tiny_dt(void **state) {
  fixture *f = *state;
  const double tiny[] = {5e-324, 1e-300, 1e-13};
  for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
    step_req s;
    make_step(f, &s);
    s.rq.has_seq = 1;
    s.rq.seq = 1;
    s.st.dt = tiny[i];
    expect(call(f, &s.rq), CCSIM_EINVAL, "too small to advance time 0");
  }
  double t, z;
  snapshot(f, &t, &z);
  assert_true(t == 0);
  step_req s;
  make_step(f, &s);
  s.rq.has_seq = 1;
  s.rq.seq = 1;  // still the next seq
  s.st.dt = 1e-12;
  expect(call(f, &s.rq), CCSIM_OK, NULL);
  snapshot(f, &t, &z);
  assert_true(t == 1e-12);
}

// Finite but absurd motion (a body 1e7 m away, at 1e7 m/s or 1e7 rad/s) is refused where it
// is given, naming the bound, instead of failing later inside the integrator; nothing changes
static void test_motion_out_of_range(void **state) {
  fixture *f = *state;
  double t0, z0, t, z;
  snapshot(f, &t0, &z0);
  // a scene body's velocity
  scene_buf sb;
  Ccsim__Scene *sc = make_scene(&sb, 1);
  Ccsim__Twist tw;
  Ccsim__Vec3 v;
  ccsim__twist__init(&tw);
  ccsim__vec3__init(&v);
  v.has_x = 1;
  v.x = 1e7;
  tw.v = &v;
  sb.b[0].twist = &tw;
  expect(create_scene(f, sc), CCSIM_EINVAL, "velocity above 1e6 m/s");
  sb.b[0].twist = NULL;
  sb.p[0].z = -1e7;
  expect(create_scene(f, sc), CCSIM_EINVAL, "position farther than 1e6 m");
  // SetState: an angular velocity, then a position
  Ccsim__Request rq;
  Ccsim__SetState ss;
  Ccsim__BodyState bs, *bsp[1] = {&bs};
  Ccsim__Twist btw;
  Ccsim__Vec3 w;
  ccsim__request__init(&rq);
  ccsim__set_state__init(&ss);
  ccsim__body_state__init(&bs);
  ccsim__twist__init(&btw);
  ccsim__vec3__init(&w);
  w.has_y = 1;
  w.y = -1e7;
  btw.w = &w;
  bs.has_body = 1;
  bs.twist = &btw;
  ss.n_bodies = 1;
  ss.bodies = bsp;
  rq.session_id = f->id;
  rq.token = f->token;
  rq.body_case = CCSIM__REQUEST__BODY_SET_STATE;
  rq.set_state = &ss;
  expect(call(f, &rq), CCSIM_EINVAL, "angular velocity above 1e6 rad/s");
  snapshot(f, &t, &z);
  assert_true(t == t0 && z == z0);
  hello_works(f);
}

// a create of a one-body scene under key[0, klen) (key NULL: none), lockstep-paced or not
static Ccsim__Reply *create_keyed(fixture *f, const uint8_t *key, size_t klen, int lockstep) {
  scene_buf sb;
  Ccsim__Request rq;
  Ccsim__CreateSession cs;
  Ccsim__Pacing pc;
  test_create_request(&rq, &cs, &pc, make_scene(&sb, 1), key, klen, lockstep);
  return call(f, &rq);
}

// SetState's reply carries a paced session's deadline statistics, as every Step and
// GetState reply does, and none for an unpaced one
static void test_set_state_reply_deadline(void **state) {
  fixture *f = *state;
  Ccsim__Request rq;
  Ccsim__Reply *cr = create_keyed(f, NULL, 0, 1);
  assert_int_equal(cr->error->code, CCSIM__CODE__OK);
  const char *ids[2] = {cr->create_session->session_id, f->id};
  const char *tokens[2] = {cr->create_session->controller_token, f->token};
  for (int k = 0; k < 2; k++) {
    Ccsim__SetState ss;
    ccsim__request__init(&rq);
    ccsim__set_state__init(&ss);
    ss.has_time = 1;
    ss.time = 0.5;
    rq.session_id = (char *)ids[k];
    rq.token = (char *)tokens[k];
    rq.body_case = CCSIM__REQUEST__BODY_SET_STATE;
    rq.set_state = &ss;
    Ccsim__Reply *r = call(f, &rq);
    assert_int_equal(r->error->code, CCSIM__CODE__OK);
    assert_non_null(r->state);
    if (k == 0) {
      assert_non_null(r->state->deadline);
    } else {
      assert_null(r->state->deadline);
    }
    ccsim__reply__free_unpacked(r, NULL);
  }
  ccsim__reply__free_unpacked(cr, NULL);
}

// A free ball's 1 ms step: the stats carry what is not zero (CVODE's steps, evaluations,
// last step size) and leave out the zeros (no contacts, no penetrations, no geometry time);
// the unpaced session's reply has no DeadlineStats.
static void test_step_reply_leaves_out_zeros(void **state) {
  fixture *f = *state;
  step_req s;
  make_step(f, &s);
  s.rq.has_seq = 1;
  s.rq.seq = 1;
  Ccsim__Reply *r = call(f, &s.rq);
  assert_int_equal(r->error->code, CCSIM__CODE__OK);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_STEP);
  const Ccsim__StepStats *st = r->step->stats;
  assert_non_null(st);
  assert_true(st->has_steps && st->steps > 0);
  assert_true(st->has_rhs_evals && st->rhs_evals > 0);
  assert_true(st->has_last_step_size && st->last_step_size > 0);
  assert_false(st->has_contacts || st->has_penetrations || st->has_geometry_us ||
               st->has_max_depth);
  // every field present is nonzero, and every field left out is zero
  assert_int_equal(st->has_newton_fails, st->newton_fails != 0);
  assert_int_equal(st->has_error_fails, st->error_fails != 0);
  assert_int_equal(st->has_jac_evals, st->jac_evals != 0);
  assert_null(r->step->deadline);
  ccsim__reply__free_unpacked(r, NULL);
}

static void test_limits(void **state) {
  fixture *f = *state;
  // bodies per session
  expect(create(f, 5), CCSIM_ELIMIT, "4 per session");
  // triangles per session: a tetrahedron is 4, the limit 12, four tetrahedra are 16
  {
    static double v[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    static uint32_t tri[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    scene_buf sb;
    Ccsim__Scene *sc = make_scene(&sb, 4);
    Ccsim__Shape sh;
    Ccsim__Mesh mesh;
    ccsim__shape__init(&sh);
    ccsim__mesh__init(&mesh);
    mesh.n_vertices = 12;
    mesh.vertices = v;
    mesh.n_triangles = 12;
    mesh.triangles = tri;
    sh.kind_case = CCSIM__SHAPE__KIND_MESH;
    sh.mesh = &mesh;
    for (int i = 0; i < 4; i++) sb.b[i].shape = &sh;
    Ccsim__Request rq;
    Ccsim__CreateSession cs;
    ccsim__request__init(&rq);
    ccsim__create_session__init(&cs);
    cs.scene = sc;
    rq.body_case = CCSIM__REQUEST__BODY_CREATE_SESSION;
    rq.create_session = &cs;
    expect(call(f, &rq), CCSIM_ELIMIT, "triangles");
    // scene and checkpoint together, a checkpoint that is not one, a bad pacing
    cs.scene = make_scene(&sb, 1);
    cs.has_checkpoint = 1;
    cs.checkpoint.data = (uint8_t *)"xyz";
    cs.checkpoint.len = 3;
    expect(call(f, &rq), CCSIM_EINVAL, "either");
    cs.scene = NULL;
    expect(call(f, &rq), CCSIM_EINVAL, "checkpoint");
    cs.has_checkpoint = 0;
    cs.scene = make_scene(&sb, 1);
    Ccsim__Pacing pc;
    ccsim__pacing__init(&pc);
    pc.has_mode = pc.has_period = 1;
    pc.mode = CCSIM__PACING_MODE__PACING_FREE_RUNNING;
    pc.period = NAN;
    cs.pacing = &pc;
    expect(call(f, &rq), CCSIM_EINVAL, "pacing.period");
    pc.period = 1e-3;
    pc.mode = (Ccsim__PacingMode)99;
    expect(call(f, &rq), CCSIM_EINVAL, "pacing.mode");
  }
  // primitives count as the triangles they are tessellated into: two boxes are 24
  {
    scene_buf sb;
    Ccsim__Scene *sc = make_scene(&sb, 2);
    Ccsim__Shape sh;
    Ccsim__Box bx;
    Ccsim__Vec3 size;
    ccsim__shape__init(&sh);
    ccsim__box__init(&bx);
    ccsim__vec3__init(&size);
    size.has_x = size.has_y = size.has_z = 1;
    size.x = size.y = size.z = 0.1;
    bx.size = &size;
    sh.kind_case = CCSIM__SHAPE__KIND_BOX;
    sh.box = &bx;
    sb.b[0].shape = sb.b[1].shape = &sh;
    expect(create_scene(f, sc), CCSIM_ELIMIT, "24 triangles exceed this server's limit of 12");
    // a primitive finer than one body may be is refused before it is built: this torus
    // would be 33.5 million triangles (gigabytes, minutes)
    Ccsim__Torus tor;
    ccsim__torus__init(&tor);
    tor.has_major_radius = tor.has_minor_radius = 1;
    tor.major_radius = 0.05;
    tor.minor_radius = 0.015;
    tor.has_major_segments = tor.has_minor_segments = 1;
    tor.major_segments = tor.minor_segments = 4096;
    sh.kind_case = CCSIM__SHAPE__KIND_TORUS;
    sh.torus = &tor;
    sc->n_bodies = 1;
    char e[256] = "";
    assert_null(wire_scene_compile(sc, e, sizeof e));
    assert_non_null(strstr(e, "bodies[0].shape: 33554432 triangles exceed the limit of"));
    // resolutions past the cap are not counted but refused by name, also by a server
    tor.major_segments = tor.minor_segments = UINT32_MAX;
    assert_int_equal(wire_shape_triangles(&sh), -1);
    sc->n_bodies = 2;
    sb.b[1].shape = NULL;
    expect(create_scene(f, sc), CCSIM_EINVAL, "bodies[0].shape.torus:");
  }
  // sessions per server: the fixture holds one, the limit is 3
  Ccsim__Reply *r1 = create(f, 1), *r2 = create(f, 1);
  assert_int_equal(r1->error->code, CCSIM__CODE__OK);
  assert_int_equal(r2->error->code, CCSIM__CODE__OK);
  expect(create(f, 1), CCSIM_ELIMIT, "never frees idle ones (--idle-timeout 0)");
  assert_int_equal(srv_session_count(f->s), 3);
  ccsim__reply__free_unpacked(r1, NULL);
  ccsim__reply__free_unpacked(r2, NULL);
  hello_works(f);
}

// the session id and token a create answered with (OK asserted; r freed)
static void created(Ccsim__Reply *r, char id[64], char token[64]) {
  if (r->error->code != CCSIM__CODE__OK) {
    print_error("create: %s\n", r->error->message ? r->error->message : "");
  }
  assert_int_equal(r->error->code, CCSIM__CODE__OK);
  assert_int_equal(r->body_case, CCSIM__REPLY__BODY_CREATE_SESSION);
  assert_non_null(r->create_session->controller_token);
  snprintf(id, 64, "%s", r->create_session->session_id);
  snprintf(token, 64, "%s", r->create_session->controller_token);
  ccsim__reply__free_unpacked(r, NULL);
}

// Create keys: the same create again answers the session it made (token and all) and
// makes none, also at the session limit; other bytes under the key, or a key too short or
// too long, are refused; a closed session's key is refused EEXPIRED (a late copy of the
// create must not make a session nobody holds).
static void test_create_key(void **state) {
  fixture *f = *state;
  uint8_t k1[16], k2[16], big[65];
  memset(k1, 0x11, sizeof k1);
  memset(k2, 0x22, sizeof k2);
  memset(big, 0x33, sizeof big);
  char x[64], tx[64], x2[64], tx2[64], y[64], ty[64];
  created(create_keyed(f, k1, sizeof k1, 0), x, tx);
  assert_int_equal(srv_session_count(f->s), 2);  // the fixture's and x
  created(create_keyed(f, k1, sizeof k1, 0), x2, tx2);
  assert_string_equal(x2, x);
  assert_string_equal(tx2, tx);
  assert_int_equal(srv_session_count(f->s), 2);
  expect(create_keyed(f, k1, sizeof k1, 1), CCSIM_EINVAL, "from a different request");
  expect(create_keyed(f, k1, 8, 0), CCSIM_EINVAL, "create_key of 8 bytes");
  expect(create_keyed(f, big, sizeof big, 0), CCSIM_EINVAL, "create_key of 65 bytes");
  assert_int_equal(srv_session_count(f->s), 2);
  // at the limit (3), a new create is refused but a repeated one is answered
  created(create_keyed(f, k2, sizeof k2, 0), y, ty);
  assert_string_not_equal(y, x);
  expect(create(f, 1), CCSIM_ELIMIT, "--max-sessions");
  created(create_keyed(f, k1, sizeof k1, 0), x2, tx2);
  assert_string_equal(x2, x);
  assert_int_equal(srv_session_count(f->s), 3);
  // closed, the session leaves its key refused: a copy of its create arriving late makes
  // nothing, and says what became of the session
  Ccsim__Request rq;
  Ccsim__CloseSession cl;
  ccsim__request__init(&rq);
  ccsim__close_session__init(&cl);
  rq.session_id = x;
  rq.token = tx;
  rq.body_case = CCSIM__REQUEST__BODY_CLOSE_SESSION;
  rq.close_session = &cl;
  expect(call(f, &rq), CCSIM_OK, NULL);
  assert_int_equal(srv_session_count(f->s), 2);
  char why[200];
  snprintf(why, sizeof why, "create_key made session %s, which was closed by its controller", x);
  expect(create_keyed(f, k1, sizeof k1, 0), CCSIM_EEXPIRED, why);
  expect(create_keyed(f, k1, sizeof k1, 1), CCSIM_EEXPIRED, why);
  assert_int_equal(srv_session_count(f->s), 2);
  // a new key still makes a session in the place the closed one left
  uint8_t k3[16];
  memset(k3, 0x44, sizeof k3);
  created(create_keyed(f, k3, sizeof k3, 0), x2, tx2);
  assert_string_not_equal(x2, x);
  assert_int_equal(srv_session_count(f->s), 3);
  hello_works(f);
}

// a server without sockets saving into a fresh state dir (removed by teardown_saved)
static int setup_saved(void **state) {
  fixture *f = calloc(1, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "ccsim-key-XXXXXX");
  if (!mkdtemp(f->dir)) {
    free(f);
    return -1;
  }
  snprintf(f->state_dir, sizeof f->state_dir, "%s/state", f->dir);
  *state = f;
  return 0;
}

static int teardown_saved(void **state) {
  fixture *f = *state;
  srv_destroy(&f->s);
  DIR *d = opendir(f->state_dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] != '.') {
      char p[400];
      snprintf(p, sizeof p, "%s/%s", f->state_dir, e->d_name);
      unlink(p);
    }
  }
  if (d) closedir(d);
  rmdir(f->state_dir);
  rmdir(f->dir);
  free(f);
  return 0;
}

// Saved and restored, a session still answers its create's retry, and refuses other bytes
// under its key.
static void test_create_key_saved(void **state) {
  fixture *f = *state;
  srv_config cfg;
  srv_config_defaults(&cfg);
  cfg.bind = NULL;
  cfg.state_dir = f->state_dir;
  char err[256], x[64], tx[64], x2[64], tx2[64];
  uint8_t k1[16];
  memset(k1, 0x11, sizeof k1);
  assert_non_null(f->s = srv_new(&cfg, err, sizeof err));
  created(create_keyed(f, k1, sizeof k1, 0), x, tx);
  assert_int_equal(srv_save_all(f->s), 1);
  srv_destroy(&f->s);
  assert_non_null(f->s = srv_new(&cfg, err, sizeof err));
  assert_int_equal(srv_session_count(f->s), 1);
  created(create_keyed(f, k1, sizeof k1, 0), x2, tx2);
  assert_string_equal(x2, x);
  assert_string_equal(tx2, tx);
  expect(create_keyed(f, k1, sizeof k1, 1), CCSIM_EINVAL, "from a different request");
  assert_int_equal(srv_session_count(f->s), 1);
}

// Only endpoints no other machine can reach pass for local: ccsimd warns of the rest when
// they have no CURVE. Transports other than tcp, ipc and inproc used to pass.
static void test_endpoint_is_local(void **state) {
  (void)state;
  const char *local[] = {"ipc:///tmp/ccsim.sock", "inproc://x", "tcp://127.0.0.1:5555",
                         "tcp://127.1.2.3:1", "tcp://[::1]:5555"};
  const char *open_ep[] = {"tcp://0.0.0.0:5555",
                           "tcp://192.168.1.2:5555",
                           "tcp://[::]:5555",
                           "tcp://10.127.0.1:5",
                           "epgm://eth0;239.192.1.1:5555",
                           "pgm://eth0;239.192.1.1:5555",
                           "ws://0.0.0.0:80/x",
                           "tipc://{5560,0,0}",
                           "vmci://1:5555"};
  for (size_t i = 0; i < sizeof local / sizeof local[0]; i++) {
    assert_true(srv_endpoint_is_local(local[i]));
  }
  for (size_t i = 0; i < sizeof open_ep / sizeof open_ep[0]; i++) {
    if (srv_endpoint_is_local(open_ep[i])) print_error("%s passed for local\n", open_ep[i]);
    assert_false(srv_endpoint_is_local(open_ep[i]));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_set_state_reply_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tiny_dt, setup, teardown),
      cmocka_unit_test_setup_teardown(test_motion_out_of_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bytes_and_encodings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_numbers_roles_and_sessions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_reply_leaves_out_zeros, setup, teardown),
      cmocka_unit_test_setup_teardown(test_create_key, setup, teardown),
      cmocka_unit_test_setup_teardown(test_create_key_saved, setup_saved, teardown_saved),
      cmocka_unit_test(test_endpoint_is_local),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
