"""CURVE from Python: keys made by `ccsim keygen`, a ccsimd with --curve-secret and
--curve-allow serves a listed client (requests and the state stream) and refuses, within
a bounded time, an unlisted key and a client without CURVE."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import ccsim
from ccsim_pytest_util import CCSIM_CLI, Server, example


class CurveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CCSIM_CLI:
            raise unittest.SkipTest("CCSIM_CLI does not name the ccsim program")
        cls.tmp = tempfile.mkdtemp(prefix="ccsim-py-curve-")
        allow = os.path.join(cls.tmp, "allow")
        os.mkdir(allow)
        for name in ("server", "listed", "unlisted"):
            subprocess.run([CCSIM_CLI, "keygen", name, "--dir", cls.tmp], check=True,
                           capture_output=True, timeout=30)
        shutil.copy(os.path.join(cls.tmp, "listed.pub"), allow)
        cls.server = Server("--curve-secret", cls.key("server", "secret"), "--curve-allow", allow,
                            "--workers", "2")

    @classmethod
    def key(cls, name, ext):
        return os.path.join(cls.tmp, f"{name}.{ext}")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.tmp)

    def test_listed_client_is_served(self):
        with ccsim.connect(self.server.endpoint, server_key=self.key("server", "pub"),
                           client_keys=self.key("listed", "secret"), timeout=5) as c:
            with c.create(example("free_fall.json")) as s, c.watch(s) as w:
                got = None
                deadline = time.monotonic() + 10
                while got is None and time.monotonic() < deadline:
                    s.step(1e-3)
                    try:
                        got = w.next(timeout=0.05)
                    except ccsim.TimeoutError:
                        pass
                self.assertIsNotNone(got, "no stream message over CURVE")
                self.assertEqual(got.session_id, s.id)
        # keys given as (public, secret) strings work the same
        with open(self.key("listed", "pub")) as f:
            pub = f.read().strip()
        with open(self.key("listed", "secret")) as f:
            sec = f.read().strip()
        with ccsim.connect(self.server.endpoint, server_key=self.key("server", "pub"),
                           client_keys=(pub, sec), timeout=5) as c:
            self.assertEqual(c.server_info()["protocol_version"], 1)

    def test_keys_from_the_environment(self):
        import os as _os
        saved = {k: _os.environ.get(k) for k in ("CCSIM_SERVER_KEY", "CCSIM_CLIENT_KEY")}
        try:
            _os.environ["CCSIM_SERVER_KEY"] = self.key("server", "pub")
            _os.environ["CCSIM_CLIENT_KEY"] = self.key("listed", "secret")
            with ccsim.connect(self.server.endpoint, timeout=5) as c:
                self.assertEqual(c.server_info()["protocol_version"], 1)
            del _os.environ["CCSIM_CLIENT_KEY"]
            with self.assertRaises(ccsim.InvalidArgumentError) as cm:
                ccsim.connect(self.server.endpoint, timeout=5)
            self.assertIn("CCSIM_CLIENT_KEY", str(cm.exception))
        finally:
            for k, v in saved.items():
                if v is None:
                    _os.environ.pop(k, None)
                else:
                    _os.environ[k] = v

    def test_unlisted_key_is_refused(self):
        t0 = time.monotonic()
        with self.assertRaises(ccsim.PermissionError) as cm:
            ccsim.connect(self.server.endpoint, server_key=self.key("server", "pub"),
                          client_keys=self.key("unlisted", "secret"), timeout=5, retries=0)
        self.assertLess(time.monotonic() - t0, 5.5)
        self.assertIn("curve-allow", str(cm.exception))

    def test_client_without_curve(self):
        with self.assertRaises((ccsim.PermissionError, ccsim.TimeoutError)) as cm:
            ccsim.connect(self.server.endpoint, timeout=1, retries=0)
        self.assertIn(self.server.endpoint, str(cm.exception))

    def test_one_key_alone_is_refused(self):
        with self.assertRaises(ccsim.InvalidArgumentError) as cm:
            ccsim.connect(self.server.endpoint, server_key=self.key("server", "pub"))
        self.assertIn("client_keys", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
