"""The Python client as a user gets it: the README's loop, run by the package pip
installs (offline, --no-build-isolation) from a copy of python/ and proto/ into a venv made
with --system-site-packages; and examples/push_to_target.py reaching its target."""
# ctest-timeout: 240
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from ccsim_pytest_util import SOURCE_DIR, Server, example


def readme_loop():
    with open(os.path.join(SOURCE_DIR, "README.md")) as f:
        text = f.read()
    sec = text[text.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", sec, re.S).group(1)


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--workers", "2")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_example_push_to_target(self):
        env = dict(os.environ)
        r = subprocess.run([sys.executable, example("push_to_target.py"), self.server.endpoint],
                           capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("reached the target", r.stdout)

    def test_pip_install_then_the_readme_loop(self):
        if subprocess.run([sys.executable, "-c", "import venv, ensurepip"],
                          capture_output=True).returncode != 0:
            self.skipTest("python3-venv is not installed")
        with tempfile.TemporaryDirectory(prefix="ccsim-py-install-") as tmp:
            # a copy: pip builds in the source folder, which must stay clean
            src = os.path.join(tmp, "src")
            shutil.copytree(os.path.join(SOURCE_DIR, "python"), os.path.join(src, "python"),
                            ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                          "__pycache__", "*_pb2.py"))
            os.makedirs(os.path.join(src, "proto"))
            shutil.copy(os.path.join(SOURCE_DIR, "proto", "ccsim.proto"),
                        os.path.join(src, "proto"))
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                           check=True, capture_output=True, timeout=120)
            py = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
            env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from a registry
            r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "-q",
                                os.path.join(src, "python")], capture_output=True, text=True,
                               timeout=180, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            script = os.path.join(tmp, "loop.py")
            with open(script, "w") as f:
                f.write("import ccsim\nassert ccsim.__file__.startswith(%r), ccsim.__file__\n"
                        % venv + readme_loop().replace("tcp://127.0.0.1:5555",
                                                       self.server.endpoint))
            # run from the checkout, as the README's relative scene path expects
            r = subprocess.run([py, script], capture_output=True, text=True, timeout=60,
                               cwd=SOURCE_DIR, env=env)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            m = re.search(r"support ([0-9.]+) N", r.stdout)
            self.assertIsNotNone(m, r.stdout)
            self.assertLess(abs(float(m.group(1)) - 10.81), 0.02 * 10.81)


if __name__ == "__main__":
    unittest.main()
