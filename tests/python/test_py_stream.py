"""The state stream from Python: a real ccsimd's messages for one session arrive in order
with its states, the close ends the iteration; gaps in the sequence (a publisher of our
own skipping numbers) are counted per session."""
import time
import unittest

import numpy as np
import zmq

import ccsim
from ccsim._pb import pb
from ccsim_pytest_util import Server, example


class StreamTest(unittest.TestCase):
    def test_real_stream(self):
        server = Server("--workers", "2")
        try:
            with ccsim.connect(server.endpoint) as c, c.create(example("free_fall.json")) as s, \
                    c.watch(s) as w:
                # a subscription takes a moment to reach the server: step until one arrives
                deadline = time.monotonic() + 10
                first = None
                while first is None and time.monotonic() < deadline:
                    s.step(1e-3)
                    try:
                        first = w.next(timeout=0.05)
                    except ccsim.TimeoutError:
                        pass
                self.assertIsNotNone(first, "no stream message within 10 s")
                self.assertEqual(first.session_id, s.id)
                for _ in range(20):
                    s.step(1e-3)
                got = [w.next(timeout=5) for _ in range(s.seq - first.seq)]
                self.assertEqual([m.seq for m in got], list(range(first.seq + 1, s.seq + 1)))
                self.assertTrue(np.array_equal(got[-1].state.positions, s.positions))
                self.assertEqual(got[-1].time, s.time)
                self.assertEqual(w.gaps, 0)
                s.close()
                last = list(w)  # ends with the session's closing message
                self.assertTrue(last[-1].closed)
        finally:
            server.stop()

    def test_gaps_counted(self):
        ctx = zmq.Context()
        pub = ctx.socket(zmq.PUB)
        pub.setsockopt(zmq.LINGER, 0)
        ep = f"tcp://127.0.0.1:{pub.bind_to_random_port('tcp://127.0.0.1')}"
        try:
            with ccsim.Watch(ep, None, timeout=5) as w:
                def send(sid, seq):
                    m = pb.StreamState(session_id=sid, stream_seq=seq, time=seq * 1e-3)
                    b = m.bodies.add(body=0)
                    b.pose.p.x = seq
                    pub.send_multipart([sid.encode(), m.SerializeToString()])
                # until the subscription has reached the publisher, messages are lost
                # before the watch's count starts: the first message seen sets it
                seq = 0
                deadline = time.monotonic() + 10
                first = None
                while first is None and time.monotonic() < deadline:
                    seq += 1
                    send("a", seq)
                    try:
                        first = w.next(timeout=0.05)
                    except ccsim.TimeoutError:
                        pass
                self.assertIsNotNone(first)
                self.assertEqual(first.missed, 0)
                while True:  # drain what was sent while waiting
                    try:
                        w.next(timeout=0.2)
                    except ccsim.TimeoutError:
                        break
                base = w.last_seq["a"]
                for k in (1, 2, 5, 6, 10):
                    send("a", base + k)
                send("b", 1)
                send("b", 4)
                got = [w.next() for _ in range(7)]
                self.assertEqual([m.missed for m in got if m.session_id == "a"],
                                 [0, 0, 2, 0, 3])
                self.assertEqual(w.missed_by_session, {"a": 5, "b": 2})
                self.assertEqual(w.gaps, 7)
                self.assertEqual(got[2].state.positions[0, 0], base + 5)
        finally:
            pub.close()
            ctx.term()


if __name__ == "__main__":
    unittest.main()
