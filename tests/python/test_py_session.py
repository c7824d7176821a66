"""ccsim (Python) against a real ccsimd: a box comes to rest carrying its weight, a
retried step steps once, an observer's step is refused EPERM, checkpoint -> restore
continues to the same bits, contacts, set_state, and bad input raises naming the cause."""
import math
import os
import threading
import unittest

import numpy as np
import zmq

import ccsim
from ccsim._pb import pb
from ccsim_pytest_util import Server, example


class DropFirstStepReply:
    """A relay between the client and ccsimd that loses the reply to the first Step (the
    step has run on the server): the client's retry must get the stored reply."""

    def __init__(self, backend):
        self.ctx = zmq.Context()
        self.front = self.ctx.socket(zmq.ROUTER)
        self.front.setsockopt(zmq.LINGER, 0)
        port = self.front.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.back = self.ctx.socket(zmq.DEALER)
        self.back.setsockopt(zmq.LINGER, 0)
        self.back.connect(backend)
        self.dropped = 0
        self.steps_forwarded = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        who = {}
        poller = zmq.Poller()
        poller.register(self.front, zmq.POLLIN)
        poller.register(self.back, zmq.POLLIN)
        while not self.stop:
            for sock, _ in poller.poll(50):
                if sock is self.front:
                    ident, data = self.front.recv_multipart()
                    rq = pb.Request()
                    rq.ParseFromString(data)
                    who[rq.request_id] = ident  # a retry comes from a new identity
                    if rq.WhichOneof("body") == "step":
                        self.steps_forwarded += 1
                    self.back.send(data)
                else:
                    data = self.back.recv()
                    r = pb.Reply()
                    r.ParseFromString(data)
                    if r.WhichOneof("body") == "step" and self.dropped == 0:
                        self.dropped += 1
                        continue
                    self.front.send_multipart([who[r.request_id], data])

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.front.close()
        self.back.close()
        self.ctx.term()


class SessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--workers", "2")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        self.c = ccsim.connect(self.server.endpoint, timeout=10)

    def tearDown(self):
        self.c.close()

    def test_box_rests_on_its_weight(self):
        with self.c.create(example("box_rest.json")) as s:
            self.assertEqual(s.body_names, ["floor", "box"])
            # its bounce on the springs decays within 3 s (alpha 0.5 s/m damps it)
            for _ in range(3000):
                s.step(1e-3)
            self.assertAlmostEqual(s.time, 3.0, places=9)
            self.assertEqual(s.positions.shape, (2, 3))
            self.assertEqual(s.quaternions.shape, (2, 4))
            self.assertEqual(s.contact_wrenches.shape, (2, 6))
            box = s.body_index("box")
            weight = 1.0 * 9.81
            fz = s.contact_forces[box, 2]
            self.assertLess(abs(fz - weight), 1e-3 * weight, f"support {fz} N, weight {weight} N")
            self.assertLess(np.linalg.norm(s.velocities[box]), 1e-3)
            # the mean over the last step carries the weight too, and the floor its opposite
            self.assertEqual(s.mean_contact_forces.shape, (2, 3))
            mz = s.mean_contact_forces[box, 2]
            self.assertLess(abs(mz - weight), 1e-3 * weight, f"mean support {mz} N")
            np.testing.assert_allclose(s.mean_contact_forces[0], -s.mean_contact_forces[box],
                                       atol=1e-9)
            # the floor feels the opposite; the contacts carry the same total
            np.testing.assert_allclose(s.contact_forces[0], -s.contact_forces[box], atol=1e-9)
            cs = s.query_contacts()
            self.assertGreaterEqual(len(cs), 3)
            self.assertTrue(np.all(cs.body_b == box) or np.all(cs.body_a == box))
            total = cs.force.sum(axis=0) * (1 if np.all(cs.body_b == box) else -1)
            self.assertLess(abs(total[2] - fz), 1e-6 * weight)
            s.step(1e-3, want_contacts=True)
            self.assertEqual(s.contacts.force.shape[1], 3)

    def test_inputs_and_set_state(self):
        scene = {"gravity": [0, 0, 0],
                 "bodies": [{"name": "ball", "mass": 2.0, "inertia": [1, 1, 1],
                             "shape": {"sphere": {"radius": 0.1}}}]}
        with self.c.create(scene) as s:
            s.step(0.01, {"ball": {"force": [4.0, 0, 0]}}, substeps=10)
            # a = F / m = 2 m/s^2 over 0.1 s
            self.assertAlmostEqual(s.velocities[0, 0], 0.2, places=6)
            self.assertAlmostEqual(s.positions[0, 0], 0.5 * 2 * 0.01, places=6)
            self.assertEqual(s.seq, 1)
            s.set_state({"ball": {"p": [1, 2, 3], "v": [0, 0, 0]}}, time=5.0)
            np.testing.assert_array_equal(s.positions[0], [1, 2, 3])
            self.assertEqual(s.time, 5.0)
            s.step(0.01, [{"body": 0, "torque": [0, 0, 1.0]}], want_substates=True)
            self.assertEqual(len(s.substates), 1)
            self.assertGreater(s.angular_velocities[0, 2], 0)

    def test_retried_step_steps_once(self):
        relay = DropFirstStepReply(self.server.endpoint)
        try:
            with ccsim.connect(relay.endpoint, timeout=0.5, retries=2) as c:
                with c.create(example("free_fall.json")) as s:
                    t0 = s.time
                    s.step(0.01)
                    self.assertEqual(relay.dropped, 1)
                    self.assertEqual(relay.steps_forwarded, 2)  # the step and its retry
                    self.assertEqual(c.attempts, 2)
                    self.assertEqual(s.seq, 1)
                    self.assertAlmostEqual(s.time, t0 + 0.01, places=12)
                    server_side = {x["session_id"]: x for x in c.list_sessions()}[s.id]
                    self.assertEqual(server_side["steps"], 1)  # stepped once
                    self.assertAlmostEqual(server_side["time"], t0 + 0.01, places=12)
                    s.step(0.01)
                    self.assertEqual(s.seq, 2)
        finally:
            relay.close()

    def test_observer_step_is_eperm(self):
        with self.c.create(example("box_rest.json")) as s:
            s.step(1e-3)
            with ccsim.connect(self.server.endpoint) as c2:
                obs = c2.attach(s.id)
                self.assertTrue(obs.observer)
                np.testing.assert_array_equal(obs.positions, s.positions)
                with self.assertRaises(ccsim.PermissionError) as cm:
                    obs.step(1e-3)
                self.assertEqual(cm.exception.code, -9)
                self.assertIsInstance(cm.exception, ccsim.Error)
                self.assertTrue(cm.exception.message)
                with self.assertRaises(ccsim.PermissionError):
                    obs.set_state({"box": {"v": [1, 0, 0]}})
                with self.assertRaises(ccsim.PermissionError):
                    obs.checkpoint()
                self.assertGreater(len(obs.query_contacts()), 0)
                obs.close()  # frees the handle only
            s.step(1e-3)

    def test_checkpoint_restore_continues_bit_identical(self):
        with self.c.create(example("box_rest.json")) as s:
            for k in range(50):
                s.step(1e-3, {"box": {"force": [0.3 * math.sin(k), 0, 0]}})
            blob = s.checkpoint()
            self.assertIsInstance(blob, bytes)
            with s.restore(blob) as r:
                self.assertEqual(r.seq, s.seq)
                self.assertEqual(r.time, s.time)
                for k in range(200):
                    u = {"box": {"force": [0.5 * math.cos(k), 0.2, 0]}}
                    a = s.step(1e-3, u)
                    b = r.step(1e-3, u)
                    for name in ("positions", "quaternions", "velocities", "angular_velocities",
                                 "contact_forces"):
                        x, y = getattr(a, name), getattr(b, name)
                        self.assertTrue(np.array_equal(x.view(np.uint64), y.view(np.uint64)),
                                        f"{name} differs at step {k}: {x} vs {y}")

    def test_bad_input_names_the_cause(self):
        s = self.c.create(example("box_rest.json"))
        cases = [
            (lambda: s.step("0.001"), "dt"),
            (lambda: s.step(float("nan")), "dt"),
            (lambda: s.step(-1e-3), "dt"),
            (lambda: s.step(1e-3, substeps=0), "substeps"),
            (lambda: s.step(1e-3, {"box": {"force": [0, float("nan"), 0]}}), "not finite"),
            (lambda: s.step(1e-3, {"box": {"force": [1, 2]}}), "force"),
            (lambda: s.step(1e-3, {"nobody": {"force": [1, 2, 3]}}), "nobody"),
            (lambda: s.step(1e-3, {7: {"force": [1, 2, 3]}}), "out of range"),
            (lambda: s.step(1e-3, {"box": {"fore": [1, 2, 3]}}), "fore"),
            (lambda: s.step(1e-3, [1, 2, 3]), "inputs"),
            (lambda: self.c.create(42), "scene"),
            (lambda: self.c.create({"bodies": [{"name": "a", "mass": "heavy"}]}), "mass"),
            (lambda: self.c.create({"bodies": [{"name": "a", "colour": 1}]}), "colour"),
        ]
        for f, word in cases:
            with self.assertRaises(ccsim.InvalidArgumentError) as cm:
                f()
            self.assertIn(word, str(cm.exception))
        self.assertEqual(s.seq, 0)  # nothing was sent
        # the server's own refusal, as its exception with its code and message
        with self.assertRaises(ccsim.InvalidArgumentError) as cm:
            s.step(1e-3, {"floor": {"force": [1, 0, 0]}})
        self.assertEqual(cm.exception.code, -1)
        s.close()
        with self.assertRaises(ccsim.ExpiredError) as cm:
            s.step(1e-3)
        self.assertIn("closed", str(cm.exception))
        s.close()  # twice is harmless
        # the session is gone on the server too
        with self.assertRaises(ccsim.ExpiredError):
            self.c.attach(s.id)

    def test_closed_client(self):
        c = ccsim.connect(self.server.endpoint)
        s = c.create(example("free_fall.json"))
        s.close()
        c.close()
        with self.assertRaises(ccsim.Error) as cm:
            c.server_info()
        self.assertIn("closed", str(cm.exception))

    def test_mesh_scene_sends_its_file(self):
        meshes = [f for f in os.listdir(example("meshes")) if f.endswith((".obj", ".stl"))]
        if not meshes:
            self.skipTest("no example mesh")
        scene = {"gravity": [0, 0, -9.81],
                 "bodies": [{"name": "part", "density": 1000,
                             "shape": {"mesh": meshes[0]}}]}
        msg = ccsim.scene_message(scene, base_dir=example("meshes"))
        self.assertEqual(msg.bodies[0].shape.mesh.source, meshes[0])
        with open(os.path.join(example("meshes"), meshes[0]), "rb") as f:
            self.assertEqual(msg.bodies[0].shape.mesh.file, f.read())
        with self.c.create(msg) as s:
            s.step(1e-3)
            self.assertLess(s.velocities[0, 2], 0)
        with self.assertRaises(ccsim.TransportError) as cm:
            ccsim.scene_message(scene, base_dir=example("."))
        self.assertIn(meshes[0], str(cm.exception))


if __name__ == "__main__":
    unittest.main()
