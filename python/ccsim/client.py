"""Connection to a ccsimd: requests and replies over a ZeroMQ DEALER, retries on fresh
connections, the socket monitor's word on refused connections and handshakes, CURVE."""
import os
import time

import zmq
from zmq.utils.monitor import recv_monitor_message

from ._pb import pb
from . import errors as E
from . import _wire

__all__ = ["Client", "connect", "read_key"]

PROTOCOL_VERSION = 1
MONITOR_SLICE = 0.1   # longest wait without reading the socket's events [s]
REFUSED_FOR = 1.0     # connections refused this long mean nothing listens there [s]
DEFAULT_MAX_REPLY = 512 << 20

_REQ_NAMES = {"hello": "hello", "create_session": "create_session", "step": "step",
              "get_state": "get_state", "set_state": "set_state",
              "query_contacts": "query_contacts", "close_session": "close_session",
              "server_info": "server_info", "attach_session": "attach_session",
              "list_sessions": "list_sessions"}
_MECH_MISMATCH = 0x11000003  # ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH


def read_key(key):
    """A CURVE key: 40 Z85 characters given as str/bytes, or the path of a file holding them
    (ccsim keygen's NAME.pub / NAME.secret). Returns bytes."""
    if isinstance(key, (bytes, bytearray)):
        k = bytes(key).strip()
    elif isinstance(key, (str, os.PathLike)):
        s = os.fspath(key).strip()
        if len(s) == 40 and not os.path.exists(s):
            k = s.encode()
        else:
            try:
                with open(s, "rb") as f:
                    k = f.read().strip()
            except OSError as e:
                raise E.InvalidArgumentError(f"cannot read the CURVE key file {s}: "
                                             f"{e.strerror}") from None
    else:
        raise E.InvalidArgumentError(f"a CURVE key is a str, bytes or path, not "
                                     f"{type(key).__name__}")
    if len(k) != 40:
        raise E.InvalidArgumentError(f"a CURVE key has 40 Z85 characters, not {len(k)}")
    return k


def _check_timeout(timeout, what="timeout"):
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
            not timeout > 0 or timeout != timeout or timeout == float("inf"):
        raise E.InvalidArgumentError(f"{what} must be a finite number of seconds > 0, "
                                     f"not {timeout!r}")
    return float(timeout)


class _Monitor:
    """What a socket's monitor says about its connection: refused for how long, handshakes
    refused or failed."""

    EVENTS = (zmq.EVENT_CONNECTED | zmq.EVENT_CONNECT_RETRIED |
              zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH |
              zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)

    def __init__(self, sock, refusals=True):
        events = self.EVENTS if refusals else self.EVENTS & ~(
            zmq.EVENT_CONNECTED | zmq.EVENT_CONNECT_RETRIED)
        self.sock = sock.get_monitor_socket(events)
        self.refused_since = None
        self.failures = 0

    def close(self):
        if self.sock is not None:
            self.sock.close(linger=0)
            self.sock = None

    def read(self, endpoint, curve):
        """Raise when the events say the request cannot succeed."""
        while self.sock.poll(0):
            ev = recv_monitor_message(self.sock, zmq.NOBLOCK)
            eid, value = ev["event"], ev["value"]
            if eid == zmq.EVENT_CONNECTED:
                self.refused_since = None
            elif eid == zmq.EVENT_CONNECT_RETRIED:
                if self.refused_since is None:
                    self.refused_since = time.monotonic()
            elif eid == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.failures = 0
            elif eid == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                if value >= 500:
                    raise E.PermissionError(
                        f"{endpoint} cannot check client keys now (ZAP status {value}): its "
                        "--curve-allow directory cannot be read")
                raise E.PermissionError(
                    f"{endpoint} refused this client's CURVE key (ZAP status {value}): its "
                    "public key must be in the server's --curve-allow directory")
            elif eid == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL and value == _MECH_MISMATCH:
                raise E.PermissionError(
                    f"{endpoint} " + ("does not use CURVE, and this client does"
                                      if curve else "requires CURVE: give server_key and "
                                      "client_keys (ccsim keygen)"))
            else:
                self.failures += 1
        if self.refused_since is not None and \
                time.monotonic() - self.refused_since >= REFUSED_FOR:
            raise E.TransportError(
                f"nothing accepts connections at {endpoint} \u2014 is ccsimd running?")

    def hint(self, curve):
        if not self.failures:
            return ""
        return (f"; the handshake failed {self.failures} time(s) without detail: " +
                ("server_key may not be this server's public key, or the server may not use "
                 "CURVE" if curve else "the server may require CURVE (server_key, "
                 "client_keys)"))


class Client:
    """A connection to one ccsimd (see connect). Not thread-safe: one thread at a time
    uses a client and its sessions; give each thread its own client."""

    def __init__(self, endpoint, *, server_key=None, client_keys=None, timeout=10.0,
                 retries=2, heartbeat=1.0, max_reply_bytes=DEFAULT_MAX_REPLY,
                 client_name="ccsim-python"):
        if not isinstance(endpoint, str) or "://" not in endpoint:
            raise E.InvalidArgumentError(f"endpoint must be a ZeroMQ address such as "
                                         f"tcp://127.0.0.1:5555, not {endpoint!r}")
        self.endpoint = endpoint
        self.timeout = _check_timeout(timeout)
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise E.InvalidArgumentError(f"retries must be a whole number >= 0, not {retries!r}")
        self.retries = retries
        self.heartbeat = 0.0 if not heartbeat else _check_timeout(heartbeat, "heartbeat")
        if isinstance(max_reply_bytes, bool) or not isinstance(max_reply_bytes, int) or \
                max_reply_bytes <= 0:
            raise E.InvalidArgumentError("max_reply_bytes must be a whole number > 0")
        self.max_reply_bytes = max_reply_bytes
        self._curve = None
        if server_key is None and client_keys is None:
            # as libccsim: the environment may name the keys (ccsim_client_opts_from_env)
            env_s, env_c = os.environ.get("CCSIM_SERVER_KEY"), os.environ.get("CCSIM_CLIENT_KEY")
            if env_s or env_c:
                if not (env_s and env_c):
                    raise E.InvalidArgumentError(
                        f"{'CCSIM_SERVER_KEY' if env_s else 'CCSIM_CLIENT_KEY'} is set but "
                        f"{'CCSIM_CLIENT_KEY' if env_s else 'CCSIM_SERVER_KEY'} is not: CURVE "
                        "needs both (the server's .pub file and this client's .secret file)")
                server_key, client_keys = env_s, env_c
        if server_key is not None or client_keys is not None:
            if server_key is None or client_keys is None:
                raise E.InvalidArgumentError(
                    "CURVE needs both server_key (the server's .pub) and client_keys (this "
                    "client's (public, secret) pair, or its .secret file): with one alone the "
                    "connection would not be encrypted")
            if isinstance(client_keys, (tuple, list)) and len(client_keys) == 2:
                pub, sec = read_key(client_keys[0]), read_key(client_keys[1])
            else:
                sec = read_key(client_keys)
                pub = zmq.curve_public(sec)
            self._curve = (read_key(server_key), pub, sec)
        self._ctx = zmq.Context()
        self._sock = None
        self._mon = None
        self._stale = False
        self._next_id = 0
        self.max_request_bytes = 0
        self.server_version = ""
        self.attempts = 0
        try:
            self._open()
            r = self._call(pb.Request(hello=pb.Hello(protocol_version=PROTOCOL_VERSION,
                                                     client_name=client_name)), "hello")
        except BaseException:
            self.close()
            raise
        self.server_version = r.hello.server_version
        self.max_request_bytes = r.hello.max_msg_bytes

    # ---- connection ----------------------------------------------------------------

    def _open(self):
        if self._mon:
            self._mon.close()
            self._mon = None
        if self._sock is not None:
            self._sock.close(linger=0)
        s = self._ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDTIMEO, int(self.timeout * 1000))
        self._rcv_ms = int(1000 * min(self.timeout, MONITOR_SLICE)) + 1
        s.setsockopt(zmq.RCVTIMEO, self._rcv_ms)
        # a backstop: a reply far over the limit is dropped by ZeroMQ (a timeout); one
        # within it is received and refused with its size named
        s.setsockopt(zmq.MAXMSGSIZE, min(self.max_reply_bytes + (1 << 20), 2**62))
        if self.heartbeat:
            ivl = int(self.heartbeat * 1000)
            s.setsockopt(zmq.HEARTBEAT_IVL, ivl)
            s.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3 * ivl)
            s.setsockopt(zmq.HEARTBEAT_TTL, 3 * ivl)
        if self._curve:
            s.curve_serverkey, s.curve_publickey, s.curve_secretkey = self._curve
        self._sock = s
        self._mon = _Monitor(s)
        try:
            s.connect(self.endpoint)
        except zmq.ZMQError as e:
            raise E.TransportError(f"cannot connect to {self.endpoint}: {e}") from None
        self._stale = False

    def reconnect(self):
        """Drop the connection and connect again (a new ZeroMQ identity)."""
        self._check_open()
        self._open()

    def close(self):
        """Close the connection (sessions are left to their idle timeout unless closed)."""
        if self._mon:
            self._mon.close()
            self._mon = None
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None
        if self._ctx is not None:
            self._ctx.term()
            self._ctx = None

    @property
    def closed(self):
        return self._ctx is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _check_open(self):
        if self._ctx is None:
            raise E.InvalidArgumentError("this client is closed")

    # ---- round trips ----------------------------------------------------------------

    def _await(self, rid):
        """The bytes of the reply to request rid, or None after the timeout."""
        # the receive waits in slices (the socket's RCVTIMEO), the monitor's events read
        # between them: a reply costs one receive, and a refused connection is told within
        # a slice (a Poller per call would cost more than the rest of a step's Python)
        deadline = time.monotonic() + self.timeout
        sock = self._sock
        slice_ms = self._rcv_ms
        while True:
            try:
                data = sock.recv()
            except zmq.Again:
                self._mon.read(self.endpoint, self._curve is not None)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                ms = int(1000 * min(left, MONITOR_SLICE)) + 1
                if ms != slice_ms:
                    sock.setsockopt(zmq.RCVTIMEO, ms)
                    slice_ms = self._rcv_ms = ms
                continue
            n = len(data)
            if n > self.max_reply_bytes:
                raise E.LimitError(f"the server sent a reply of {n} bytes, over this client's "
                                   f"max_reply_bytes of {self.max_reply_bytes}")
            got = _wire.reply_request_id(data)
            if got is None:
                got = self._parse(data).request_id
            if got != rid:
                if time.monotonic() > deadline:
                    return None
                continue  # a late reply to an earlier request
            return data

    @staticmethod
    def _parse(data):
        r = pb.Reply()
        try:
            r.ParseFromString(data)
        except Exception:
            raise E.ProtocolError(f"the server sent a reply of {len(data)} bytes that is not "
                                  "a ccsim.Reply") from None
        return r

    def _call(self, rq, want, retryable=True):
        """Send rq and return its Reply with body `want`; retried on timeout with the same
        bytes on a fresh connection; raises the server's error as its exception."""
        return self._reply(self._exchange(rq.SerializeToString(), rq.seq, retryable,
                                          rq.WhichOneof("body")), want)

    def _reply(self, data, want):
        """The Reply in data with body `want`, or the server's error as its exception."""
        r = self._parse(data)
        if r.HasField("error") and r.error.code != pb.OK:
            raise E.error_for_code(r.error.code, r.error.message,
                                   r.error.last_seq if r.error.HasField("last_seq") else None)
        if r.WhichOneof("body") != want:
            raise E.ProtocolError(f"{_REQ_NAMES.get(want, want)}: the reply has no {want}")
        return r

    def _exchange(self, body, seq=0, retryable=True, name="step"):
        """Send a Request serialized without its request_id (field 1, added here) and
        return the bytes of its reply; retried on timeout with the same bytes on a fresh
        connection."""
        self._check_open()
        self._next_id += 1
        rid = self._next_id
        data = (b"\x08" + _wire.varint(rid)) + body
        if self.max_request_bytes and len(data) > self.max_request_bytes:
            raise E.LimitError(f"request of {len(data)} bytes exceeds the server's limit of "
                               f"{self.max_request_bytes} bytes (ccsimd --max-msg-bytes)")
        tries = 1 + (self.retries if retryable else 0)
        r = None
        self.attempts = 0
        try:
            for k in range(tries):
                self.attempts += 1
                if k > 0 or self._stale:
                    self._open()  # a fresh connection (new identity) for the retry
                try:
                    self._sock.send(data)
                except zmq.Again:
                    continue  # not even taken: the server is gone or swamped
                r = self._await(rid)
                if r is not None:
                    break
        except (E.PermissionError, E.TransportError):
            self._stale = True
            raise
        if r is None:
            self._stale = True  # requests queued here would reach a server that comes back
            seq = f" (seq {seq})" if seq else ""
            raise E.TimeoutError(
                f"no reply from {self.endpoint} to {_REQ_NAMES.get(name, name)}{seq} within "
                f"{self.timeout:g} s ({self.attempts} attempt{'s' if self.attempts > 1 else ''})"
                + self._mon.hint(self._curve is not None))
        return r

    # ---- requests -------------------------------------------------------------------

    def server_info(self):
        """The server's version, load, limits and stream endpoint, as a dict."""
        r = self._call(pb.Request(server_info=pb.ServerInfo()), "server_info").server_info
        return {f.name: v for f, v in r.ListFields() if f.type != f.TYPE_MESSAGE} | {
            "deadline": _deadline(r.deadline)}

    def list_sessions(self):
        """The open sessions: a list of dicts (session_id, time, bodies, steps, idle, ...)."""
        r = self._call(pb.Request(list_sessions=pb.ListSessions()), "sessions").sessions
        return [{"session_id": s.session_id, "time": s.time, "bodies": s.bodies,
                 "steps": s.steps, "idle": s.idle,
                 "pacing": pb.PacingMode.Name(s.pacing.mode).lower()[7:],
                 "deadline": _deadline(s.deadline)} for s in r.sessions]

    def create(self, scene, *, pacing=None, period=None):
        """A new session from a scene: a scene file's path, a dict (the file's JSON; meshes
        relative to the working directory) or a ccsim_pb2.Scene. This client controls it.
        pacing: None, "lockstep" or "free-running" (period: its plant step [s])."""
        from .scene import load_scene, scene_message
        from .session import Session
        if isinstance(scene, (str, os.PathLike)):
            msg = load_scene(scene)
        elif isinstance(scene, dict):
            msg = scene_message(scene, base_dir=".")
        elif isinstance(scene, pb.Scene):
            msg = scene
        else:
            raise E.InvalidArgumentError(f"a scene is a file path, a dict or a Scene message, "
                                         f"not {type(scene).__name__}")
        cs = pb.CreateSession(scene=msg)
        _pacing(cs, pacing, period)
        return Session._create(self, cs, msg)

    def restore(self, checkpoint, *, pacing=None, period=None):
        """A new session resumed from a checkpoint blob (Session.checkpoint()); it steps to
        the same bits as the session it was taken from."""
        from .session import Session
        if not isinstance(checkpoint, (bytes, bytearray, memoryview)) or not checkpoint:
            raise E.InvalidArgumentError("a checkpoint is the non-empty bytes "
                                         "Session.checkpoint() returned")
        cs = pb.CreateSession(checkpoint=bytes(checkpoint))
        _pacing(cs, pacing, period)
        ck = pb.Checkpoint()
        try:
            ck.ParseFromString(bytes(checkpoint))
        except Exception:
            raise E.InvalidArgumentError("not a checkpoint blob") from None
        return Session._create(self, cs, ck.scene)

    def attach(self, session_id):
        """Join a running session as an observer: get_state and query_contacts work; step,
        set_state, checkpoint are refused (PermissionError); close frees the handle only."""
        from .session import Session
        if not isinstance(session_id, str) or not session_id:
            raise E.InvalidArgumentError("attach: give a session id (Session.id)")
        r = self._call(pb.Request(session_id=session_id, attach_session=pb.AttachSession()),
                       "attach_session")
        s = Session(self, r.attach_session, None)
        s.get_state()
        return s

    def close_session(self, session_id, token=None):
        """Close a session by id with its controller token or the server's admin token."""
        try:
            self._call(pb.Request(session_id=session_id, token=token or "",
                                  close_session=pb.CloseSession()), "close_session")
        except E.ExpiredError:
            if self.attempts <= 1:
                raise  # closed before this call: only a retry finding its own close is fine

    def watch(self, session_id=None, *, endpoint=None):
        """Subscribe to the server's state stream for one session (an id or a Session) or
        all (None). Returns a Watch (an iterator of StreamMessage, with gap counts)."""
        from .stream import Watch
        if endpoint is None:
            endpoint = self.server_info().get("stream_endpoint")
            if not endpoint:
                raise E.NotFoundError(f"{self.endpoint} has no state stream (ccsimd --stream)")
        if hasattr(session_id, "id"):
            session_id = session_id.id
        return Watch(endpoint, session_id, curve=self._curve, context=None)


def _deadline(d):
    return {"paced_steps": d.paced_steps, "misses": d.misses, "late_requests": d.late_requests,
            "worst_lateness": d.worst_lateness, "last_lateness": d.last_lateness,
            "worst_release_delay": d.worst_release_delay}


def _pacing(cs, pacing, period):
    if pacing is None or pacing == "none":
        if period is not None:
            raise E.InvalidArgumentError("a period needs pacing=\"free-running\"")
        return
    modes = {"lockstep": pb.PACING_LOCKSTEP, "free-running": pb.PACING_FREE_RUNNING}
    if pacing not in modes:
        raise E.InvalidArgumentError(f'pacing is None, "lockstep" or "free-running", not '
                                     f"{pacing!r}")
    cs.pacing.mode = modes[pacing]
    if period is not None:
        cs.pacing.period = _check_timeout(period, "period")


def connect(endpoint, *, server_key=None, client_keys=None, timeout=10.0, retries=2,
            heartbeat=1.0, max_reply_bytes=DEFAULT_MAX_REPLY):
    """Connect to a ccsimd at endpoint (e.g. "tcp://127.0.0.1:5555") and say Hello.

    timeout: seconds each attempt waits for its reply; retries: attempts after a timeout,
    each on a fresh connection (steps keep their seq, so a retried step runs once).
    server_key: the server's public key (40 Z85 characters or its .pub file) and
    client_keys: this client's .secret file or (public, secret) for CURVE (neither given:
    the files CCSIM_SERVER_KEY and CCSIM_CLIENT_KEY name, as libccsim). When nothing
    accepts connections at endpoint a request fails within about a second
    (ccsim.TransportError). Returns a Client; `with` closes it."""
    return Client(endpoint, server_key=server_key, client_keys=client_keys, timeout=timeout,
                  retries=retries, heartbeat=heartbeat, max_reply_bytes=max_reply_bytes)
