"""The state stream: a SUB socket on ccsimd's XPUB, one message per step of each watched
session, with per-session sequence numbers so lost messages are counted."""
import time
from dataclasses import dataclass
from typing import Optional

import zmq

from ._pb import pb
from . import errors as E
from .session import State, Contacts, _state, _contacts

__all__ = ["Watch", "StreamMessage"]


@dataclass
class StreamMessage:
    """One StreamState: session_id, seq (1, 2, 3 ... per session), state (a State; None on
    the closing message), contacts (when the step asked for them), closed (the session
    ended), missed (messages lost just before this one: 0 unless there was a gap)."""
    session_id: str
    seq: int
    time: float
    state: Optional[State]
    contacts: Optional[Contacts]
    closed: bool
    missed: int


class Watch:
    """Subscription to a state stream (Client.watch). next(timeout) waits for one message;
    iterating yields messages until the watched session closes (each wait bounded by
    Watch.timeout, a TimeoutError past it). gaps counts the messages lost, per session in
    missed_by_session; the first message seen of a session sets its start."""

    def __init__(self, endpoint, session_id=None, *, curve=None, context=None, timeout=10.0,
                 rcvhwm=None):
        if not isinstance(endpoint, str) or "://" not in endpoint:
            raise E.InvalidArgumentError(f"a stream endpoint such as tcp://127.0.0.1:5556, "
                                         f"not {endpoint!r}")
        self.endpoint = endpoint
        self.session_id = session_id
        self.timeout = timeout
        self._own_ctx = context is None
        self._ctx = context or zmq.Context()
        s = self._ctx.socket(zmq.SUB)
        s.setsockopt(zmq.LINGER, 0)
        if rcvhwm is not None:
            s.setsockopt(zmq.RCVHWM, rcvhwm)
        if curve:
            s.curve_serverkey, s.curve_publickey, s.curve_secretkey = curve
        s.setsockopt(zmq.SUBSCRIBE, (session_id or "").encode())
        s.connect(endpoint)
        self._sock = s
        self.last_seq = {}
        self.missed_by_session = {}
        self.gaps = 0
        self.received = 0

    def next(self, timeout=None):
        """The next message, waiting up to timeout [s] (None: Watch.timeout);
        ccsim.TimeoutError when none came."""
        if self._sock is None:
            raise E.InvalidArgumentError("this watch is closed")
        t = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self._sock.poll(max(1, int(1000 * left))):
                raise E.TimeoutError(f"no stream message from {self.endpoint} within {t:g} s")
            frames = self._sock.recv_multipart()
            if len(frames) != 2:
                continue  # not a [topic][StreamState] pair: not ours to read
            m = pb.StreamState()
            try:
                m.ParseFromString(frames[1])
            except Exception:
                raise E.ProtocolError("a stream message that is not a ccsim.StreamState") \
                    from None
            return self._take(m)

    def _take(self, m):
        sid = m.session_id
        last = self.last_seq.get(sid)
        missed = 0
        if last is not None and m.stream_seq > last + 1:
            missed = m.stream_seq - last - 1
            self.gaps += missed
            self.missed_by_session[sid] = self.missed_by_session.get(sid, 0) + missed
        self.last_seq[sid] = max(m.stream_seq, last or 0)
        self.received += 1
        n = len(m.bodies)
        state = _state(m.time, m.bodies, n, m.stats) if n else None
        contacts = _contacts(m.time, m.contacts, n) if len(m.contacts) else None
        return StreamMessage(sid, m.stream_seq, m.time, state, contacts, m.closed, missed)

    def __iter__(self):
        while True:
            msg = self.next()
            yield msg
            if msg.closed and self.session_id is not None:
                return

    def close(self):
        if self._sock is not None:
            self._sock.close(linger=0)
            self._sock = None
        if self._own_ctx and self._ctx is not None:
            self._ctx.term()
            self._ctx = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
