"""Shared by the Python tests: a real ccsimd on a free loopback port, stopped at the end;
paths of the build's programs come from the environment ctest sets (CCSIMD, CCSIM_CLI,
CCSIM_SOURCE_DIR)."""
import os
import re
import subprocess
import tempfile
import time
import unittest

SOURCE_DIR = os.environ.get("CCSIM_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CCSIMD = os.environ.get("CCSIMD", "")
CCSIM_CLI = os.environ.get("CCSIM_CLI", "")


def example(name):
    return os.path.join(SOURCE_DIR, "examples", name)


class Server:
    """ccsimd --bind tcp://127.0.0.1:* with args; endpoint and stream from its log."""

    def __init__(self, *args, cwd=None):
        if not CCSIMD or not os.access(CCSIMD, os.X_OK):
            raise unittest.SkipTest("CCSIMD does not name the ccsimd program")
        self.dir = tempfile.TemporaryDirectory(prefix="ccsim-py-")
        self.log_path = os.path.join(self.dir.name, "server.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([CCSIMD, "--bind", "tcp://127.0.0.1:*", *args],
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=cwd or self.dir.name)
        self.endpoint = self.stream = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None:
            with open(self.log_path) as f:
                text = f.read()
            m = re.search(r"listening on (tcp:\S+)", text)
            st = re.search(r"state stream on (tcp:\S+)", text)
            if m and (st or "--stream" in args):
                self.endpoint, self.stream = m.group(1), st and st.group(1)
                return
            time.sleep(0.02)
        with open(self.log_path) as f:
            log = f.read()
        self.stop()
        raise RuntimeError("ccsimd did not start: " + log)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.dir.cleanup()
