"""ccsim/_wire.py, the hand-written fast path of Step, against the generated classes:
encoded Step requests parse to the message the classes build, and replies read straight
from their bytes (ccsimd's own, of several scenes, and random ones) give the same states
bit for bit; anything else (errors, contacts, truncated bytes) is left to the classes."""
import random
import unittest

import numpy as np

import ccsim
from ccsim import _wire
from ccsim._pb import pb
from ccsim.session import _state
from ccsim_pytest_util import Server, example


def slow_rows(reply, n):
    return _state(reply.step.time, reply.step.bodies, n).array


class WireTest(unittest.TestCase):
    def test_step_request_encoding(self):
        rng = random.Random(7)
        for trial in range(200):
            sid, tok = "%032x" % rng.getrandbits(128), rng.choice(["", "%032x" % trial])
            seq = rng.choice([1, 127, 128, 300, 2**40 + 3])
            dt = rng.uniform(1e-6, 1)
            substeps = rng.choice([1, 2, 200, 10000])
            wc, ws = rng.random() < 0.5, rng.random() < 0.5
            ref = pb.Request(session_id=sid, seq=seq)
            if tok:
                ref.token = tok
            ref.step.dt = dt
            if substeps > 1:
                ref.step.substeps = substeps
            if wc:
                ref.step.want_contacts = True
            if ws:
                ref.step.want_substates = True
            enc = []
            for _ in range(rng.randrange(4)):
                body = rng.choice([0, 5, 127, 128, 1000])
                kw = {k: [rng.uniform(-1e3, 1e3) for _ in range(4 if k == "q" else 3)]
                      for k in ("force", "torque", "p", "q", "v", "w") if rng.random() < 0.4}
                m = ref.step.inputs.add(body=body)
                for k, x in kw.items():
                    if k in ("force", "torque"):
                        getattr(m, k).x, getattr(m, k).y, getattr(m, k).z = x
                    elif k == "p":
                        m.pose.p.x, m.pose.p.y, m.pose.p.z = x
                    elif k == "q":
                        m.pose.q.w, m.pose.q.x, m.pose.q.y, m.pose.q.z = x
                    else:
                        t = getattr(m.twist, k)
                        t.x, t.y, t.z = x
                enc.append(_wire.body_input(body, **kw))
            data = _wire.step_request(_wire.session_fields(sid, tok), seq, dt, enc, substeps,
                                      wc, ws)
            got = pb.Request.FromString(b"\x08\x05" + data)
            ref.request_id = 5
            self.assertEqual(got, ref, f"trial {trial}")

    def random_reply(self, rng, n):
        r = pb.Reply(request_id=rng.randrange(1, 2**40))
        r.error.code = pb.OK
        r.step.time = rng.uniform(0, 100)
        for k in range(n):
            b = r.step.bodies.add(body=k)
            b.pose.p.x, b.pose.p.y, b.pose.p.z = (rng.uniform(-9, 9) for _ in range(3))
            b.pose.q.w, b.pose.q.x, b.pose.q.y, b.pose.q.z = (rng.uniform(-1, 1) for _ in range(4))
            b.twist.v.x, b.twist.v.y, b.twist.v.z = (rng.uniform(-9, 9) for _ in range(3))
            b.twist.w.x, b.twist.w.y, b.twist.w.z = (rng.uniform(-9, 9) for _ in range(3))
            if rng.random() < 0.5:
                b.contact_force.x, b.contact_force.y, b.contact_force.z = (
                    rng.uniform(-9, 9) for _ in range(3))
            if rng.random() < 0.5:
                b.contact_torque.x, b.contact_torque.y, b.contact_torque.z = (
                    rng.uniform(-9, 9) for _ in range(3))
            if rng.random() < 0.5:
                b.contact_count = rng.choice([0, 1, 127, 128, 70000])
            if rng.random() < 0.5:
                b.mean_contact_force.x, b.mean_contact_force.y, b.mean_contact_force.z = (
                    rng.uniform(-9, 9) for _ in range(3))
            if rng.random() < 0.5:
                b.mean_contact_torque.x, b.mean_contact_torque.y, b.mean_contact_torque.z = (
                    rng.uniform(-9, 9) for _ in range(3))
        if rng.random() < 0.5:
            r.step.stats.steps = rng.randrange(1000)
            r.step.stats.max_depth = rng.random()
        if rng.random() < 0.3:
            r.step.deadline.misses = 3
        return r

    def test_random_replies(self):
        rng = random.Random(11)
        fast_seen = 0
        for trial in range(300):
            n = rng.choice([1, 2, 7, 130])
            r = self.random_reply(rng, n)
            data = r.SerializeToString()
            self.assertEqual(_wire.reply_request_id(data), r.request_id)
            f = _wire.step_reply(data, n)
            if f is None:
                continue
            fast_seen += 1
            t, rows, stats, deadline = f
            self.assertEqual(t, r.step.time)
            a = np.array(rows, dtype=np.float64).reshape(n, 26)
            self.assertTrue(np.array_equal(a, slow_rows(r, n)), f"trial {trial}")
            if r.step.HasField("stats"):
                self.assertEqual(pb.StepStats.FromString(stats), r.step.stats)
            else:
                self.assertIsNone(stats)
            if r.step.HasField("deadline"):
                self.assertEqual(pb.DeadlineStats.FromString(deadline), r.step.deadline)
        self.assertGreater(fast_seen, 100)  # bodies past 127 take the slow path

    def test_other_replies_are_left_to_the_classes(self):
        rng = random.Random(3)
        r = self.random_reply(rng, 2)
        self.assertIsNotNone(_wire.step_reply(r.SerializeToString(), 2))
        self.assertIsNone(_wire.step_reply(r.SerializeToString(), 3))  # a count that differs
        e = pb.Reply()
        e.CopyFrom(r)
        e.error.code = pb.ESEQ
        e.error.message = "no"
        self.assertIsNone(_wire.step_reply(e.SerializeToString(), 2))
        c = pb.Reply()
        c.CopyFrom(r)
        c.step.contacts.add(body_a=0, body_b=1)
        self.assertIsNone(_wire.step_reply(c.SerializeToString(), 2))
        m = pb.Reply()
        m.CopyFrom(r)
        m.step.bodies[1].ClearField("twist")
        self.assertIsNone(_wire.step_reply(m.SerializeToString(), 2))
        data = r.SerializeToString()
        for cut in range(len(data)):  # truncated: never an exception, never a wrong state
            f = _wire.step_reply(data[:cut], 2)
            self.assertIsNone(f, f"cut at {cut}")
        self.assertIsNone(_wire.reply_request_id(b"\x08\xff\xff"))

    def test_ccsimd_replies(self):
        server = Server("--workers", "2")
        try:
            with ccsim.connect(server.endpoint) as c:
                for scene in ("box_rest.json", "free_fall.json", "sphere_drop.json",
                              "box_pile.json"):
                    with c.create(example(scene)) as s:
                        for k in range(40):
                            seq = s.seq + 1
                            data = c._exchange(_wire.step_request(
                                s._wire_session, seq, 1e-3, [], 1, False, False), seq)
                            s.seq = seq
                            f = _wire.step_reply(data, s.nbody)
                            r = pb.Reply.FromString(data)
                            self.assertIsNotNone(f, f"{scene}: ccsimd's reply not read fast")
                            self.assertEqual(f[0], r.step.time)
                            a = np.array(f[1], dtype=np.float64).reshape(s.nbody, 26)
                            self.assertTrue(np.array_equal(a, slow_rows(r, s.nbody)), scene)
                        # and the session's own step reads the same poses and twists
                        # (GetState's reply carries no contact forces)
                        st = s.step(1e-3)
                        self.assertTrue(np.array_equal(st.array[:, :13],
                                                       s.get_state().array[:, :13]))
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main()
