"""Build hook: generate ccsim/ccsim_pb2.py from proto/ccsim.proto with protoc.

The generated module is never committed: it is made here, when the package is built
(pip install ./python), from the wire contract beside this folder, or from the file the
environment variable CCSIM_PROTO names.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

here = os.path.dirname(os.path.abspath(__file__))


def generate(out_dir):
    proto = os.environ.get("CCSIM_PROTO") or os.path.join(here, "..", "proto", "ccsim.proto")
    proto = os.path.abspath(proto)
    if not os.path.isfile(proto):
        raise SystemExit(f"ccsim: {proto} not found: build from a ccsim checkout, or set "
                         "CCSIM_PROTO to the wire contract ccsim.proto")
    protoc = shutil.which("protoc")
    if not protoc:
        raise SystemExit("ccsim: protoc not found: install protobuf-compiler")
    os.makedirs(out_dir, exist_ok=True)
    subprocess.check_call([protoc, f"--proto_path={os.path.dirname(proto)}",
                           f"--python_out={out_dir}", proto])


class BuildPy(build_py):
    def run(self):
        super().run()
        generate(os.path.join(self.build_lib, "ccsim"))


setup(cmdclass={"build_py": BuildPy})
