#!/usr/bin/python3
"""The Python client's lockstep loop beside libccsim's, in one run on one ccsimd: a
one-body scene stepped in 1 ms Steps (a force input on each), each round trip timed. The
two loops take turns for ROUNDS rounds so that the machine's load falls on both alike;
prints each round and the medians' ratio (goal: Python <= 1.5 x C). A third loop, "pyzmq",
sends the same requests' bytes with pyzmq and reads nothing of the replies: the floor of
any client written over pyzmq.

    PYTHONPATH=python:build/python /usr/bin/python3 tests/bench/bench_python.py \
        [--build build] [--steps 5000] [--rounds 3] [--endpoint E]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import ccsim

SCENE = {"gravity": [0, 0, -9.81],
         "bodies": [{"name": "ball", "mass": 1, "inertia": [0.1, 0.2, 0.3],
                     "pose": {"p": [0, 0, 10]},
                     "velocity": {"v": [1, 0, 0], "w": [0.1, 1, 0.1]}}]}


def python_loop(endpoint, n):
    with ccsim.connect(endpoint) as c, c.create(SCENE) as s:
        u = {0: {"force": [0.1, 0, 0]}}
        for _ in range(200):  # warm-up, as the C loop does
            s.step(1e-3, u)
        t = []
        clock = time.perf_counter
        for _ in range(n):
            t0 = clock()
            s.step(1e-3, u)
            t.append(1e6 * (clock() - t0))
    t.sort()
    return t[n // 2], t[int(0.99 * (n - 1))], sum(t) / n


def pyzmq_loop(endpoint, n):
    """The floor of any pyzmq client: the same Steps, encoded once, bytes sent and
    received with nothing read from them."""
    from ccsim import _wire
    with ccsim.connect(endpoint) as c, c.create(SCENE) as s:
        sock, rid = c._sock, 1 << 40
        u = [_wire.body_input(0, force=[0.1, 0.0, 0.0])]
        t = []
        clock = time.perf_counter
        for k in range(200 + n):
            s.seq += 1
            data = b"\x08" + _wire.varint(rid + k) + _wire.step_request(
                s._wire_session, s.seq, 1e-3, u, 1, False, False)
            t0 = clock()
            sock.send(data)
            sock.recv()
            t.append(1e6 * (clock() - t0))
    t = sorted(t[200:])
    return t[n // 2], t[int(0.99 * (n - 1))], sum(t) / n


def c_loop(exe, endpoint, n):
    out = subprocess.run([exe, endpoint, str(n)], capture_output=True, text=True, check=True,
                         timeout=600).stdout
    _, med, p99, mean, _ = out.split()
    return float(med), float(p99), float(mean)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--endpoint", help="a running ccsimd (default: start one)")
    a = ap.parse_args()
    exe = os.path.join(a.build, "tests", "bench", "bench_client_loop")
    proc = None
    endpoint = a.endpoint
    log = tempfile.TemporaryFile(mode="w+")
    if endpoint is None:
        proc = subprocess.Popen([os.path.join(a.build, "server", "service", "ccsimd"),
                                 "--bind", "tcp://127.0.0.1:*", "--stream", "none"],
                                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while endpoint is None and time.monotonic() < deadline:
            time.sleep(0.05)
            log.seek(0)
            m = re.search(r"listening on (tcp:\S+)", log.read())
            endpoint = m and m.group(1)
        if endpoint is None:
            proc.kill()
            sys.exit("bench_python: ccsimd did not start")
    try:
        rows = {"c": [], "python": [], "pyzmq": []}
        loops = {"c": lambda: c_loop(exe, endpoint, a.steps),
                 "python": lambda: python_loop(endpoint, a.steps),
                 "pyzmq": lambda: pyzmq_loop(endpoint, a.steps)}
        for r in range(a.rounds):
            for name in ("c", "python", "pyzmq"):
                f = loops[name]()
                rows[name].append(f)
                print(f"round {r + 1}  {name:<7} median {f[0]:8.2f} us   p99 {f[1]:8.2f} us   "
                      f"mean {f[2]:8.2f} us   ({a.steps} steps)", flush=True)
        mc = statistics.median(x[0] for x in rows["c"])
        mp = statistics.median(x[0] for x in rows["python"])
        mz = statistics.median(x[0] for x in rows["pyzmq"])
        print(f"median of the rounds' medians: C {mc:.2f} us, Python {mp:.2f} us, raw pyzmq "
              f"{mz:.2f} us: Python / C = {mp / mc:.2f}")
    finally:
        if proc:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
