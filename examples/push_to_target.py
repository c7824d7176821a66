#!/usr/bin/python3
"""Push a puck to a target with a P(D) controller, through ccsim.Env.

    build/server/service/ccsimd &                       # tcp://127.0.0.1:5555
    PYTHONPATH=python:build/python /usr/bin/python3 examples/push_to_target.py [ENDPOINT]

(or with the package installed: pip install --no-build-isolation ./python). It prints the
distance to the target every 0.1 s and ends when the puck is within 5 mm of it, at about
t = 1 s."""
import sys

import numpy as np

import ccsim

SCENE = {
    "description": "A 1 kg puck on a frictionless floor, pushed in the plane.",
    "gravity": [0, 0, -9.81],
    "contact": {"k": 1e5, "alpha": 0.5, "standoff": 0.001},
    "bodies": [
        {"name": "floor", "fixed": True, "shape": {"box": {"size": [4, 4, 0.1]}},
         "pose": {"p": [0, 0, -0.05]}},
        {"name": "puck", "mass": 1.0, "shape": {"cylinder": {"radius": 0.05, "height": 0.02}},
         "pose": {"p": [0, 0, 0.01]}},
    ],
}
TARGET = np.array([0.6, -0.3])
KP, KD, FMAX = 20.0, 8.0, 10.0  # [N/m], [N s/m], [N]


def main():
    endpoint = sys.argv[1] if len(sys.argv) > 1 else "tcp://127.0.0.1:5555"
    env = ccsim.Env(
        SCENE, endpoint=endpoint, dt=0.01, action_low=-FMAX, action_high=FMAX,
        action_shape=(2,),
        # the action is the horizontal force on the puck
        action_map=lambda a, state: {"puck": {"force": [a[0], a[1], 0.0]}},
        observation=lambda state: np.concatenate([state.positions[1, :2],
                                                  state.velocities[1, :2]]),
        reward=lambda state, a: -float(np.linalg.norm(state.positions[1, :2] - TARGET)),
        terminated=lambda state: bool(np.linalg.norm(state.positions[1, :2] - TARGET) < 5e-3
                                      and np.linalg.norm(state.velocities[1, :2]) < 0.05),
        max_episode_steps=500)
    with env:
        obs, info = env.reset()
        for k in range(500):
            p, v = obs[:2], obs[2:]
            action = np.clip(KP * (TARGET - p) - KD * v, -FMAX, FMAX)
            obs, reward, terminated, truncated, info = env.step(action)
            if k % 10 == 9:
                print(f"t = {info['time']:.2f} s  distance {-reward * 1000:7.2f} mm")
            if terminated or truncated:
                break
        print(f"{'reached' if terminated else 'did not reach'} the target at "
              f"t = {info['time']:.2f} s: puck at {obs[:2].round(4)}")
        return 0 if terminated else 1


if __name__ == "__main__":
    sys.exit(main())
