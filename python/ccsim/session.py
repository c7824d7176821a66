"""Sessions: a plant on the server, stepped exactly once per call however often the
request is retried; states as numpy arrays."""
import math
import os
from dataclasses import dataclass
from numbers import Real as _Real

import numpy as np

from ._pb import pb
from . import errors as E
from . import _wire

_isfinite = math.isfinite

__all__ = ["Session", "State", "Contacts"]


class State:
    """Every body's state at time t [s] (n bodies, in the scene's order), world frame:
    positions (n, 3) [m] and quaternions (n, 4) (w, x, y, z), body -> world, of each body's
    reference frame; velocities (n, 3) [m/s] of its origin and angular_velocities (n, 3)
    [rad/s]; contact_forces (n, 3) [N], contact_torques (n, 3) [N m] about the frame
    origin, contact_counts (n,) witness pairs carrying force (all three at the state);
    mean_contact_forces (n, 3) [N], mean_contact_torques (n, 3) [N m]: the contact impulse
    over the step that reached the state divided by its length (zero for a state no step
    made); stats: the step's solver statistics (a dict, see StepStats in proto/ccsim.proto;
    {} for a state not stepped). The arrays are views of one (n, 26) array, `array`."""

    __slots__ = ("time", "array", "_stats")

    def __init__(self, time, array, stats=None):
        self.time = time
        self.array = array
        self._stats = stats  # a StepStats message or its bytes until asked for

    positions = property(lambda self: self.array[:, 0:3])
    quaternions = property(lambda self: self.array[:, 3:7])
    velocities = property(lambda self: self.array[:, 7:10])
    angular_velocities = property(lambda self: self.array[:, 10:13])
    contact_forces = property(lambda self: self.array[:, 13:16])
    contact_torques = property(lambda self: self.array[:, 16:19])
    contact_counts = property(lambda self: self.array[:, 19].astype(np.int64))
    mean_contact_forces = property(lambda self: self.array[:, 20:23])
    mean_contact_torques = property(lambda self: self.array[:, 23:26])

    @property
    def contact_wrenches(self):
        """(n, 6): contact force [N] then torque [N m] of each body."""
        return self.array[:, 13:19]

    @property
    def stats(self):
        m = self._stats
        if not isinstance(m, dict):
            if isinstance(m, bytes):
                m = pb.StepStats.FromString(m)
            self._stats = {f.name: v for f, v in m.ListFields()} if m is not None else {}
        return self._stats

    def __repr__(self):
        return f"<ccsim.State t={self.time:g} s, {len(self.array)} bodies>"


@dataclass
class Contacts:
    """Witness pairs carrying force (m of them): body_a, body_b (m,) indices; point_a,
    point_b (m, 3) [m]; normal (m, 3) unit, A towards B; depth (m,) [m]; depth_rate (m,)
    [m/s]; force (m, 3) on B [N] (A feels the opposite)."""
    time: float
    body_a: np.ndarray
    body_b: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    depth_rate: np.ndarray
    force: np.ndarray

    def __len__(self):
        return len(self.depth)


def _body_row(b, k):
    if b.body != k:
        raise E.ProtocolError(f"the reply's body state {k} names body {b.body}")
    pose, tw = b.pose, b.twist
    p, q, v, w = pose.p, pose.q, tw.v, tw.w
    f, t = b.contact_force, b.contact_torque
    mf, mt = b.mean_contact_force, b.mean_contact_torque
    return (p.x, p.y, p.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z,
            f.x, f.y, f.z, t.x, t.y, t.z, b.contact_count,
            mf.x, mf.y, mf.z, mt.x, mt.y, mt.z)


def _state(time, bodies, n, stats=None):
    if len(bodies) != n:
        raise E.ProtocolError(f"the reply holds {len(bodies)} body states for {n} bodies")
    rows = []
    add = rows.extend
    for k, b in enumerate(bodies):
        add(_body_row(b, k))
    return State(time, np.array(rows, dtype=np.float64).reshape(n, 26), stats)


def _contacts(time, cs, n):
    m = len(cs)
    ab = np.empty((m, 2), dtype=np.int64)
    x = np.empty((m, 14))
    for k, c in enumerate(cs):
        if c.body_a >= n or c.body_b >= n:
            raise E.ProtocolError(f"contact {k} names a body out of range")
        ab[k] = c.body_a, c.body_b
        pa, pb_, nn, f = c.point_a, c.point_b, c.normal, c.force
        x[k] = (pa.x, pa.y, pa.z, pb_.x, pb_.y, pb_.z, nn.x, nn.y, nn.z, c.depth, c.depth_rate,
                f.x, f.y, f.z)
    return Contacts(time, ab[:, 0], ab[:, 1], x[:, 0:3], x[:, 3:6], x[:, 6:9], x[:, 9],
                    x[:, 10], x[:, 11:14])


def _finite_fast(x, n):
    """x is a list or tuple of n finite floats (the common case, checked quickly)."""
    if type(x) not in (list, tuple) or len(x) != n:
        return False
    for e in x:
        t = type(e)
        if (t is not float and t is not int) or not _isfinite(e):
            return False
    return True


def _finite(x, n, what, name=None):
    """x as a list of n finite floats, or InvalidArgumentError naming what (of body name).
    Plain Python: on three numbers numpy costs more than the round trip's own work."""
    if _finite_fast(x, n):
        return x
    if name is not None:
        what = f'{what} of "{name}"'
    if isinstance(x, np.ndarray):
        x = x.tolist() if x.ndim == 1 else [x]
    elif isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
        raise E.InvalidArgumentError(f"{what} must be {n} numbers, not {x!r}")
    if len(x) != n:
        raise E.InvalidArgumentError(f"{what} must be {n} numbers, not {len(x)}: {x!r}")
    out = []
    for e in x:
        if type(e) is not float and (isinstance(e, (bool, str, bytes)) or
                                     not isinstance(e, _Real)):
            raise E.InvalidArgumentError(f"{what} must be {n} numbers, not {x!r}")
        e = float(e)
        if not _isfinite(e):
            raise E.InvalidArgumentError(f"{what} holds a number that is not finite: {x!r}")
        out.append(e)
    return out


def _set3(m, x):
    m.x, m.y, m.z = x


class Session:
    """A session on the server (Client.create, Client.restore, Client.attach).

    The handle keeps the last state (Session.state: positions, quaternions, velocities,
    angular_velocities, contact_forces ... as numpy arrays; also as attributes of the
    session) and the seq of its last step. `with` closes it (controllers close it on the
    server; observers free the handle)."""

    def __init__(self, client, reply, scene):
        self.client = client
        self.id = reply.session_id
        self.token = reply.controller_token or None
        self._wire_session = _wire.session_fields(self.id, self.token)
        self.body_names = list(reply.body_names)
        self.nbody = len(self.body_names)
        self._index = {n: i for i, n in enumerate(self.body_names)}
        self.seq = reply.last_seq
        self.time = reply.time
        self.scene = scene
        self.want_contacts = False
        self.contacts = None
        self.substates = None
        self.state = None
        self.deadline = None
        self._closed = False

    @classmethod
    def _create(cls, client, cs, scene):
        # the key makes a retry return the session the first attempt made: one session
        # however many attempts reach the server
        cs.create_key = os.urandom(16)
        r = client._call(pb.Request(create_session=cs), "create_session")
        s = cls(client, r.create_session, scene)
        try:
            s.get_state()
        except BaseException:
            s.close()
            raise
        return s

    # ---- properties ------------------------------------------------------------------

    @property
    def observer(self):
        return self.token is None

    @property
    def closed(self):
        return self._closed

    # the last state's arrays (Session.state), None before the first state
    positions = property(lambda self: getattr(self.state, 'positions') if self.state else None)
    quaternions = property(lambda self: getattr(self.state, 'quaternions') if self.state else None)
    velocities = property(lambda self: getattr(self.state, 'velocities') if self.state else None)
    angular_velocities = property(lambda self: getattr(self.state, 'angular_velocities') if self.state else None)
    contact_forces = property(lambda self: getattr(self.state, 'contact_forces') if self.state else None)
    contact_torques = property(lambda self: getattr(self.state, 'contact_torques') if self.state else None)
    contact_counts = property(lambda self: getattr(self.state, 'contact_counts') if self.state else None)
    contact_wrenches = property(lambda self: getattr(self.state, 'contact_wrenches') if self.state else None)
    mean_contact_forces = property(lambda self: getattr(self.state, 'mean_contact_forces') if self.state else None)
    mean_contact_torques = property(lambda self: getattr(self.state, 'mean_contact_torques') if self.state else None)
    stats = property(lambda self: getattr(self.state, 'stats') if self.state else None)

    def body_index(self, body):
        """Index of a body given by name or index; InvalidArgumentError when unknown."""
        if isinstance(body, str):
            if body not in self._index:
                raise E.InvalidArgumentError(f'no body "{body}" in this session (bodies: '
                                             f'{", ".join(self.body_names)})')
            return self._index[body]
        if isinstance(body, (int, np.integer)) and not isinstance(body, bool):
            if not 0 <= body < self.nbody:
                raise E.InvalidArgumentError(f"body index {body} out of range "
                                             f"[0, {self.nbody})")
            return int(body)
        raise E.InvalidArgumentError(f"a body is a name or an index, not {body!r}")

    def _check(self):
        # an observer's step goes to the server, which refuses it (EPERM) with its reason
        if self._closed:
            raise E.ExpiredError(f"session {self.id} is closed (this handle)")
        self.client._check_open()

    def _request(self, **kw):
        return pb.Request(session_id=self.id, token=self.token or "", **kw)

    # ---- stepping ---------------------------------------------------------------------

    def _inputs(self, inputs):
        """inputs checked and encoded: a list of BodyInput messages' bytes."""
        if inputs is None:
            return ()
        if isinstance(inputs, dict):
            items = inputs.items()
        elif isinstance(inputs, (list, tuple)):
            items = []
            for k, it in enumerate(inputs):
                if not isinstance(it, dict) or "body" not in it:
                    raise E.InvalidArgumentError(f"inputs[{k}] must be a dict with a \"body\"")
                items.append((it["body"], {a: b for a, b in it.items() if a != "body"}))
        else:
            raise E.InvalidArgumentError(
                "inputs is a dict {body: {\"force\": [fx, fy, fz], \"torque\": ...}} or a "
                f"list of dicts with \"body\", not {type(inputs).__name__}")
        out = []
        nbody = self.nbody
        for body, spec in items:
            b = body if type(body) is int and 0 <= body < nbody else self.body_index(body)
            name = self.body_names[b]
            if type(spec) is not dict and not isinstance(spec, dict):
                raise E.InvalidArgumentError(f'input for "{name}" must be a dict with force, '
                                             "torque, p, q, v or w")
            kw = {}
            for key, val in spec.items():
                if val is None:
                    continue
                if key == "force" or key == "torque":
                    x = _finite(val, 3, key, name)
                    if abs(x[0]) > 1e12 or abs(x[1]) > 1e12 or abs(x[2]) > 1e12:
                        raise E.InvalidArgumentError(f'{key} of "{name}" over 1e12')
                elif key == "q":
                    x = _finite(val, 4, "q", name)
                elif key in ("p", "v", "w"):
                    x = _finite(val, 3, key, name)
                else:
                    raise E.InvalidArgumentError(f'input for "{name}": unknown key "{key}" '
                                                 "(known: force, torque, p, q, v, w)")
                kw[key] = x
            out.append(_wire.body_input(b, **kw))
        return out

    def step(self, dt, inputs=None, *, substeps=1, want_contacts=None, want_substates=False):
        """Advance by substeps x dt [s] with inputs held over the step, in one round trip.

        inputs: {body: {"force": (3,), "torque": (3,)}} for free bodies (world frame, at the
        centre of mass [N], [N m]); kinematic bodies take "p"/"q" (pose reached at the end)
        or "v"/"w" (twist held); body is a name or an index. Retried on timeout with the same
        seq: the server steps once. After a TimeoutError the step may or may not have run:
        the same call again steps or gets the stored reply. Returns the new State (also
        Session.state); contacts (want_contacts, default Session.want_contacts) go to
        Session.contacts, sub-step states (want_substates) to Session.substates."""
        if self._closed:
            self._check()
        if type(dt) is not float or not 0.0 < dt < math.inf:  # NaN fails the comparison
            if isinstance(dt, bool) or not isinstance(dt, (int, float, np.floating)) or \
                    not math.isfinite(dt) or not dt > 0:
                raise E.InvalidArgumentError(f"dt must be a finite number of seconds > 0, "
                                             f"not {dt!r}")
        if substeps != 1 or type(substeps) is not int:
            if isinstance(substeps, bool) or not isinstance(substeps, (int, np.integer)) or \
                    substeps < 1 or substeps > 0xFFFFFFFF:
                raise E.InvalidArgumentError(f"substeps must be a whole number >= 1, "
                                             f"not {substeps!r}")
        wc = self.want_contacts if want_contacts is None else bool(want_contacts)
        seq = self.seq + 1  # the same seq on every retry: the server steps once
        data = _wire.step_request(self._wire_session, seq, float(dt), self._inputs(inputs),
                                  int(substeps), wc, want_substates)
        try:
            raw = self.client._exchange(data, seq)
            fast = None if wc or want_substates else _wire.step_reply(raw, self.nbody)
            if fast is not None:
                # the common reply, read straight from its bytes (ccsim/_wire.py)
                self.seq = seq
                t, rows, stats, deadline = fast
                self.state = State(t, np.array(rows, dtype=np.float64).reshape(self.nbody, 26),
                                   stats)
                self.time = t
                self.deadline = pb.DeadlineStats.FromString(deadline) \
                    if deadline is not None else None
                self.contacts = self.substates = None
                return self.state
            r = self.client._reply(raw, "step")
        except E.Error as e:
            if e.last_seq is not None and e.last_seq == seq:
                self.seq = seq  # the step ran and failed part-way: this seq is spent
            if isinstance(e, E.SequenceError) and e.last_seq is not None and \
                    e.last_seq < self.seq:
                e.message += (f"; the session is behind this handle (last executed "
                              f"{e.last_seq}, the handle's {self.seq}): a server restored "
                              "from an older checkpoint? Session.resync() takes its word")
                e.args = (f"{e.name}: {e.message}",)
            raise
        sr = r.step
        self.seq = seq
        self.state = _state(sr.time, sr.bodies, self.nbody, sr.stats)
        self.time = sr.time
        self.deadline = sr.deadline if sr.HasField("deadline") else None
        self.contacts = _contacts(sr.time, sr.contacts, self.nbody) if wc else None
        if want_substates:
            if len(sr.substates) != substeps:
                raise E.ProtocolError(f"step: {len(sr.substates)} sub-states for {substeps} "
                                      "sub-steps")
            self.substates = [_state(ss.time, ss.bodies, self.nbody) for ss in sr.substates]
        else:
            self.substates = None
        return self.state

    # ---- state ------------------------------------------------------------------------

    def _take_state(self, sr):
        self.state = _state(sr.time, sr.bodies, self.nbody)
        self.time = sr.time
        return self.state

    def get_state(self):
        """Fetch the current state without stepping; returns it (also Session.state)."""
        self._check()
        r = self.client._call(self._request(get_state=pb.GetState()), "state")
        return self._take_state(r.state)

    def resync(self):
        """Take the server's word for where the session is: its last executed seq and state
        (after a SequenceError saying the session is behind this handle)."""
        self._check()
        r = self.client._call(self._request(attach_session=pb.AttachSession()),
                              "attach_session")
        self.seq = r.attach_session.last_seq
        return self.get_state()

    def _body_states(self, bodies, what, need_pose):
        out = []
        if bodies is None:
            return out
        if not isinstance(bodies, dict):
            raise E.InvalidArgumentError(f"{what}: bodies is a dict {{body: {{\"p\": ..., "
                                         "\"q\": ..., \"v\": ..., \"w\": ...}}}")
        for body, spec in bodies.items():
            b = self.body_index(body)
            name = self.body_names[b]
            if not isinstance(spec, dict) or set(spec) - {"p", "q", "v", "w"}:
                raise E.InvalidArgumentError(f'{what}: "{name}" takes a dict with p, q, v, w')
            m = pb.BodyState(body=b)
            if need_pose and (spec.get("p") is None or spec.get("q") is None):
                raise E.InvalidArgumentError(f'{what}: "{name}" needs a pose: p and q')
            if spec.get("p") is not None or spec.get("q") is not None:
                p = spec.get("p")
                q = spec.get("q")
                p = self.state.positions[b] if p is None else p
                q = self.state.quaternions[b] if q is None else q
                _set3(m.pose.p, _finite(p, 3, "p", name))
                m.pose.q.w, m.pose.q.x, m.pose.q.y, m.pose.q.z = _finite(q, 4, "q", name)
            if spec.get("v") is not None or spec.get("w") is not None:
                v = spec.get("v")
                w = spec.get("w")
                v = self.state.velocities[b] if v is None else v
                w = self.state.angular_velocities[b] if w is None else w
                _set3(m.twist.v, _finite(v, 3, "v", name))
                _set3(m.twist.w, _finite(w, 3, "w", name))
            out.append(m)
        return out

    def set_state(self, bodies=None, *, time=None):
        """Controller only: set bodies' poses and twists ({body: {"p", "q", "v", "w"}}, the
        rest kept) and optionally the time [s]; the integrator restarts there."""
        self._check()
        ss = pb.SetState(bodies=self._body_states(bodies, "set_state", False))
        if time is not None:
            ss.time = _finite([time], 1, "time")[0]
        r = self.client._call(self._request(set_state=ss), "state")
        return self._take_state(r.state)

    def query_contacts(self, poses=None):
        """Contacts at the current state, or with the bodies given ({body: {"p", "q"[, "v",
        "w"]}}) at those poses, without changing the session. Observers may ask."""
        self._check()
        qc = pb.QueryContacts(poses=self._body_states(poses, "query_contacts", True))
        r = self.client._call(self._request(query_contacts=qc), "contacts")
        return _contacts(r.contacts.time, r.contacts.contacts, self.nbody)

    def checkpoint(self):
        """The whole session as bytes, resumable by Client.restore / Session.restore (the
        live session restarts its integrator there, so both step to the same bits)."""
        self._check()
        r = self.client._call(self._request(get_state=pb.GetState(checkpoint=True)), "state")
        self._take_state(r.state)
        return r.state.checkpoint

    def restore(self, checkpoint):
        """A new session on this session's client resumed from a checkpoint blob."""
        return self.client.restore(checkpoint)

    # ---- closing -----------------------------------------------------------------------

    def close(self):
        """Close the session on the server (controllers) and the handle; observers only free
        their handle. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self.token is not None and not self.client.closed:
            self.client.close_session(self.id, self.token)

    def release(self):
        """Forget the handle without telling the server (the idle timeout frees it)."""
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        role = "observer" if self.token is None else "controller"
        return (f"<ccsim.Session {self.id} {role}, {self.nbody} bodies, t={self.time:g} s, "
                f"seq {self.seq}{', closed' if self._closed else ''}>")
