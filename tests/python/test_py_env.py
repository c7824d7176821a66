"""ccsim.Env: reset / step / terminate on a real ccsimd, resets going back to the same
start, NaN actions refused before anything is sent, and 8 environments on one server
stepping in parallel threads, each reaching the same state as it would alone."""
import threading
import unittest

import numpy as np

import ccsim
from ccsim_pytest_util import Server

SCENE = {"gravity": [0, 0, 0],
         "bodies": [{"name": "puck", "mass": 1.0, "inertia": [0.01, 0.01, 0.01],
                     "shape": {"sphere": {"radius": 0.05}}}]}
TARGET = np.array([0.5, 0.0, 0.0])


def make_env(endpoint, **kw):
    return ccsim.Env(
        SCENE, endpoint=endpoint, dt=0.01,
        action_map=lambda a, s: {"puck": {"force": a}},
        reward=lambda s, a: -float(np.linalg.norm(s.positions[0] - TARGET)),
        terminated=lambda s: bool(np.linalg.norm(s.positions[0] - TARGET) < 0.01),
        max_episode_steps=500, action_low=-10, action_high=10, **kw)


def p_control(obs):
    p, v = obs[0:3], obs[7:10]
    return np.clip(20 * (TARGET - p) - 8 * v, -10, 10)


class EnvTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--workers", "4")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def run_episode(self, env):
        obs, info = env.reset(seed=1)
        np.testing.assert_array_equal(obs[0:3], [0, 0, 0])
        self.assertEqual(info["time"], 0.0)
        for k in range(500):
            obs, reward, terminated, truncated, info = env.step(p_control(obs))
            if terminated or truncated:
                break
        return k, obs, reward, terminated, truncated

    def test_loop_reset_step_terminate(self):
        with make_env(self.server.endpoint) as env:
            self.assertEqual(tuple(env.action_space.shape), (3,))
            self.assertEqual(tuple(env.observation_space.shape), (13,))
            k1, obs1, reward, terminated, truncated = self.run_episode(env)
            self.assertTrue(terminated, f"not at the target after {k1 + 1} steps: {obs1[:3]}")
            self.assertFalse(truncated)
            self.assertGreater(reward, -0.01)
            # a reset goes back to the start: the second episode repeats the first
            k2, obs2, *_ = self.run_episode(env)
            self.assertEqual(k1, k2)
            np.testing.assert_array_equal(obs1, obs2)
            with self.assertRaises(ccsim.InvalidArgumentError) as cm:
                env.step([0.0, float("nan"), 0.0])
            self.assertIn("finite", str(cm.exception))
            with self.assertRaises(ccsim.InvalidArgumentError):
                env.step([1.0, 2.0])
            with self.assertRaises(ccsim.InvalidArgumentError):
                env.step("push")

    def test_truncation_and_reset_fn(self):
        def start_elsewhere(rng, session):
            return {"puck": {"p": [rng.uniform(-1, -0.5), 0, 0]}}
        with make_env(self.server.endpoint, reset_fn=start_elsewhere) as env:
            env.max_episode_steps = 3
            obs, _ = env.reset(seed=3)
            self.assertLess(obs[0], -0.49)
            for _ in range(3):
                obs, r, terminated, truncated, _ = env.step(np.zeros(3))
            self.assertTrue(truncated)
            self.assertFalse(terminated)
            obs_again, _ = env.reset(seed=3)
            self.assertEqual(obs_again[0], env.reset(seed=3)[0][0])

    def test_eight_environments_in_parallel(self):
        alone = make_env(self.server.endpoint)
        try:
            expected = self.run_episode(alone)
        finally:
            alone.close()
        envs = [make_env(self.server.endpoint) for _ in range(8)]
        results, errors = [None] * 8, []
        start = threading.Barrier(8)

        def work(i):
            try:
                start.wait(10)
                results[i] = self.run_episode(envs[i])
            except BaseException as e:  # reported below
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        try:
            self.assertEqual(len(self.server_sessions()), 8)
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            self.assertFalse(any(t.is_alive() for t in threads), "an environment hangs")
            self.assertEqual(errors, [])
            for r in results:
                self.assertEqual(r[0], expected[0])
                np.testing.assert_array_equal(r[1], expected[1])
                self.assertTrue(r[3])
        finally:
            for e in envs:
                e.close()
        self.assertEqual(len(self.server_sessions()), 0)

    def server_sessions(self):
        with ccsim.connect(self.server.endpoint) as c:
            return c.list_sessions()


if __name__ == "__main__":
    unittest.main()
