"""The Python client where things go wrong: nothing listening is said within about a
second, a server that never answers times out within timeout x attempts, a reply over
max_reply_bytes or one that is not a Reply raises naming the cause; nothing hangs."""
import socket
import threading
import time
import unittest

import zmq

import ccsim
from ccsim._pb import pb


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class FakeServer:
    """A ROUTER answering Hello properly and every other request with answer(request)
    (bytes to send, or None to stay silent)."""

    def __init__(self, answer):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.endpoint = f"tcp://127.0.0.1:{self.sock.bind_to_random_port('tcp://127.0.0.1')}"
        self.answer = answer
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            if not self.sock.poll(50):
                continue
            ident, data = self.sock.recv_multipart()
            rq = pb.Request()
            rq.ParseFromString(data)
            if rq.WhichOneof("body") == "hello":
                r = pb.Reply(request_id=rq.request_id, error=pb.Error(code=pb.OK))
                r.hello.protocol_version = 1
                r.hello.server_version = "fake"
                out = r.SerializeToString()
            else:
                out = self.answer(rq)
            if out is not None:
                self.sock.send_multipart([ident, out])

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.sock.close()
        self.ctx.term()


class ErrorsTest(unittest.TestCase):
    def test_nothing_listening_is_said_within_a_second(self):
        ep = f"tcp://127.0.0.1:{free_port()}"
        t0 = time.monotonic()
        with self.assertRaises(ccsim.TransportError) as cm:
            ccsim.connect(ep, timeout=30, retries=2)
        took = time.monotonic() - t0
        self.assertIn("nothing accepts connections at " + ep, str(cm.exception))
        self.assertIn("is ccsimd running?", str(cm.exception))
        self.assertEqual(cm.exception.code, -11)
        self.assertLess(took, 5.0)  # about a second, far below 3 x 30 s

    def test_silent_server_times_out(self):
        fake = FakeServer(lambda rq: None)
        try:
            with ccsim.connect(fake.endpoint, timeout=0.3, retries=1) as c:
                self.assertEqual(c.server_version, "fake")
                t0 = time.monotonic()
                with self.assertRaises(ccsim.TimeoutError) as cm:
                    c.server_info()
                self.assertLess(time.monotonic() - t0, 3.0)
                self.assertIn("server_info", str(cm.exception))
                self.assertIn("2 attempts", str(cm.exception))
        finally:
            fake.close()

    def test_reply_over_the_limit(self):
        def huge(rq):
            r = pb.Reply(request_id=rq.request_id, error=pb.Error(code=pb.OK))
            r.server_info.server_version = "x" * 300_000
            return r.SerializeToString()
        fake = FakeServer(huge)
        try:
            with ccsim.connect(fake.endpoint, timeout=2, max_reply_bytes=100_000) as c:
                with self.assertRaises(ccsim.LimitError) as cm:
                    c.server_info()
                self.assertIn("max_reply_bytes", str(cm.exception))
        finally:
            fake.close()

    def test_garbage_and_server_errors(self):
        def garbage(rq):
            if rq.WhichOneof("body") == "list_sessions":
                r = pb.Reply(request_id=rq.request_id,
                             error=pb.Error(code=pb.ESEQ, message="out of order", last_seq=7))
                return r.SerializeToString()
            return b"\xff\xff\xff not protobuf"
        fake = FakeServer(garbage)
        try:
            with ccsim.connect(fake.endpoint, timeout=2) as c:
                with self.assertRaises(ccsim.ProtocolError):
                    c.server_info()
                with self.assertRaises(ccsim.SequenceError) as cm:
                    c.list_sessions()
                self.assertEqual((cm.exception.code, cm.exception.message,
                                  cm.exception.last_seq), (-8, "out of order", 7))
        finally:
            fake.close()

    def test_bad_arguments(self):
        for kw in ({"timeout": 0}, {"timeout": float("nan")}, {"retries": -1},
                   {"timeout": "1"}, {"server_key": "x" * 40}):
            with self.assertRaises(ccsim.InvalidArgumentError):
                ccsim.connect("tcp://127.0.0.1:1", **kw)
        with self.assertRaises(ccsim.InvalidArgumentError):
            ccsim.connect(5555)
        with self.assertRaises(ccsim.InvalidArgumentError):
            ccsim.connect("tcp://127.0.0.1:1", server_key="short", client_keys="short")

    def test_one_class_per_code(self):
        seen = set()
        for code in range(-1, -14, -1):
            e = ccsim.error_for_code(code, "m")
            self.assertIsInstance(e, ccsim.Error)
            self.assertEqual(e.code, code)
            self.assertEqual(type(e).name, pb.Code.Name(code))
            seen.add(type(e))
        self.assertEqual(len(seen), 13)
        self.assertEqual(pb.Code.Name(-9), ccsim.PermissionError.name)


if __name__ == "__main__":
    unittest.main()
