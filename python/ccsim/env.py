"""ccsim.Env: a Gymnasium-style environment over one session."""
import math

import numpy as np

from ._pb import pb
from . import errors as E
from .client import Client

__all__ = ["Env", "Box"]

try:  # optional: spaces are gymnasium's when it is installed
    import gymnasium as _gym
except ImportError:  # pragma: no cover - depends on the machine
    _gym = None


class Box:
    """A stand-in for gymnasium.spaces.Box when gymnasium is not installed: shape, dtype,
    low, high, sample() and contains()."""

    def __init__(self, low, high, shape, dtype=np.float64):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape)
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape)
        self._rng = np.random.default_rng()

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def sample(self):
        lo = np.where(np.isfinite(self.low), self.low, -1.0)
        hi = np.where(np.isfinite(self.high), self.high, 1.0)
        return self._rng.uniform(lo, hi).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


def _space(low, high, shape):
    if _gym is not None:
        return _gym.spaces.Box(low=low, high=high, shape=tuple(shape), dtype=np.float64)
    return Box(low, high, shape)


def default_observation(state):
    """Every body's position, quaternion, velocity and angular velocity, flat (13 n)."""
    return np.concatenate([state.positions, state.quaternions, state.velocities,
                           state.angular_velocities], axis=1).ravel()


class Env:
    """A Gymnasium-style environment: one session of `scene` on the server at `endpoint`
    (or on `client`), reset to the scene's initial state.

    action_map(action, state) -> inputs for Session.step (default: action (k, 3) or (3k,)
    forces on the k free bodies); reward(state, action) -> float (default 0);
    terminated(state) -> bool (default never); observation(state) -> array (default
    positions, quaternions, velocities, angular velocities of every body, flat);
    reset_fn(rng, session) -> {body: {"p", "q", "v", "w"}} to randomise a reset (applied
    with set_state after the initial state). Each env.step advances dt [s] in `substeps`
    sub-steps; truncated after max_episode_steps. action_shape / action_low / action_high
    describe action_space; observation_space follows observation(). With gymnasium
    installed the spaces are gymnasium.spaces.Box, else ccsim.env.Box.

    One environment holds one session and, given an endpoint, its own connection: many
    environments may step in parallel on one server, one thread (or process) each."""

    metadata = {"render_modes": []}

    def __init__(self, scene, *, endpoint=None, client=None, dt=0.01, substeps=1,
                 action_map=None, reward=None, terminated=None, observation=None,
                 reset_fn=None, max_episode_steps=None, action_shape=None, action_low=-np.inf,
                 action_high=np.inf, **connect_kw):
        if (endpoint is None) == (client is None):
            raise E.InvalidArgumentError("Env: give an endpoint or a client (one of them)")
        if not isinstance(dt, (int, float)) or not math.isfinite(dt) or not dt > 0:
            raise E.InvalidArgumentError(f"Env: dt must be a finite number of seconds > 0, "
                                         f"not {dt!r}")
        for name, f in (("action_map", action_map), ("reward", reward),
                        ("terminated", terminated), ("observation", observation),
                        ("reset_fn", reset_fn)):
            if f is not None and not callable(f):
                raise E.InvalidArgumentError(f"Env: {name} must be callable")
        self._own_client = client is None
        self.client = Client(endpoint, **connect_kw) if client is None else client
        try:
            self.session = self.client.create(scene)
        except BaseException:
            if self._own_client:
                self.client.close()
            raise
        self.dt, self.substeps = float(dt), substeps
        self.max_episode_steps = max_episode_steps
        self._action_map = action_map or self._forces_on_free_bodies
        self._reward = reward or (lambda state, action: 0.0)
        self._terminated = terminated or (lambda state: False)
        self._observation = observation or default_observation
        self._reset_fn = reset_fn
        sc = self.session.scene
        self._free = [i for i, b in enumerate(sc.bodies) if b.type == pb.BODY_FREE]
        self._movable = [i for i, b in enumerate(sc.bodies) if b.type != pb.BODY_FIXED]
        s0 = self.session.state
        self._initial = {i: {"p": s0.positions[i].copy(), "q": s0.quaternions[i].copy(),
                             "v": s0.velocities[i].copy(), "w": s0.angular_velocities[i].copy()}
                         for i in self._movable}
        if action_shape is None:
            action_shape = (3 * len(self._free),)
        self.action_space = _space(action_low, action_high, action_shape)
        obs = np.asarray(self._observation(s0))
        self.observation_space = _space(-np.inf, np.inf, obs.shape)
        self.np_random = np.random.default_rng()
        self.steps = 0
        self.state = s0
        self._fresh = True

    def _forces_on_free_bodies(self, action, state):
        a = np.asarray(action, dtype=np.float64).reshape(len(self._free), 3)
        return {b: {"force": a[k]} for k, b in enumerate(self._free)}

    def reset(self, *, seed=None, options=None):
        """Back to the scene's initial state at time 0 (then reset_fn's changes).
        Returns (observation, info)."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            if hasattr(self.action_space, "seed"):
                self.action_space.seed(seed)
        if not self._fresh or self._reset_fn is not None:
            # the held kinematic velocities go with the twists set here
            self.state = self.session.set_state(self._initial, time=0.0)
            if self._reset_fn is not None:
                changes = self._reset_fn(self.np_random, self.session)
                if changes:
                    self.state = self.session.set_state(changes)
        self._fresh = False
        self.steps = 0
        return np.asarray(self._observation(self.state)), {"time": self.session.time}

    def step(self, action):
        """Apply action over dt; returns (observation, reward, terminated, truncated, info)."""
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise E.InvalidArgumentError(f"Env.step: the action must be numbers, not "
                                         f"{action!r}") from None
        if a.shape != tuple(self.action_space.shape):
            raise E.InvalidArgumentError(f"Env.step: the action has shape {a.shape}, the "
                                         f"action space {tuple(self.action_space.shape)}")
        if not np.isfinite(a).all():
            bad = np.argwhere(~np.isfinite(a))[0].tolist()
            raise E.InvalidArgumentError(f"Env.step: the action holds {a[tuple(bad)]} at "
                                         f"index {bad}: every element must be finite")
        self._fresh = False
        inputs = self._action_map(a, self.state)
        self.state = self.session.step(self.dt, inputs, substeps=self.substeps)
        self.steps += 1
        obs = np.asarray(self._observation(self.state))
        reward = float(self._reward(self.state, a))
        terminated = bool(self._terminated(self.state))
        truncated = self.max_episode_steps is not None and self.steps >= self.max_episode_steps
        return obs, reward, terminated, truncated, {"time": self.state.time,
                                                   "stats": self.state.stats}

    def close(self):
        """Close the session (and the connection this environment opened)."""
        try:
            if not self.session.closed and not self.client.closed:
                self.session.close()
        finally:
            if self._own_client:
                self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
