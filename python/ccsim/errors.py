"""Exceptions: one class per wire status code (proto/ccsim.proto, enum Code), all
deriving from ccsim.Error, which carries the code, its name and the server's message."""

__all__ = ["Error", "InvalidArgumentError", "OutOfMemoryError", "LimitError", "SolverError",
           "NotFoundError", "VersionError", "NotImplementedByServerError", "SequenceError",
           "PermissionError", "TimeoutError", "TransportError", "ProtocolError",
           "ExpiredError", "error_for_code"]


class Error(Exception):
    """Base of every ccsim error. code: the wire's status code (int, negative); name: its
    name ("EPERM"); message: what the server (or this client) said; last_seq: for a failed
    Step, the session's last executed seq when the server said so, else None."""

    code = None
    name = "ERROR"

    def __init__(self, message, *, code=None, last_seq=None):
        if code is not None:
            self.code = code
        self.message = message
        self.last_seq = last_seq
        super().__init__(f"{self.name}: {message}")


class InvalidArgumentError(Error, ValueError, TypeError):
    """EINVAL: invalid argument or malformed input (also raised before sending for bad
    types, shapes and non-finite numbers); a ValueError and a TypeError too."""
    code, name = -1, "EINVAL"


class OutOfMemoryError(Error):
    """ENOMEM: the server ran out of memory."""
    code, name = -2, "ENOMEM"


class LimitError(Error):
    """ELIMIT: the request exceeds a configured limit (the server's, or a reply larger than
    this client's max_reply_bytes)."""
    code, name = -3, "ELIMIT"


class SolverError(Error):
    """ESOLVER: integration failed; the state is kept at the last good step."""
    code, name = -4, "ESOLVER"


class NotFoundError(Error):
    """ENOTFOUND: unknown session or body."""
    code, name = -5, "ENOTFOUND"


class VersionError(Error):
    """EVERSION: protocol version mismatch."""
    code, name = -6, "EVERSION"


class NotImplementedByServerError(Error):
    """ENOTIMPL: the server does not implement this yet."""
    code, name = -7, "ENOTIMPL"


class SequenceError(Error):
    """ESEQ: a step out of sequence (see Session.resync)."""
    code, name = -8, "ESEQ"


class PermissionError(Error):  # noqa: A001 (the wire's EPERM; builtins' stays reachable)
    """EPERM: not permitted for this client's role (an observer's step, a refused key)."""
    code, name = -9, "EPERM"


class TimeoutError(Error):  # noqa: A001
    """ETIMEOUT: no reply within the timeout, after every retry."""
    code, name = -10, "ETIMEOUT"


class TransportError(Error):
    """EIO: transport or file error (nothing accepts connections at the endpoint, a mesh
    file that cannot be read)."""
    code, name = -11, "EIO"


class ProtocolError(Error):
    """EPROTO: a malformed or undecodable message."""
    code, name = -12, "EPROTO"


class ExpiredError(Error):
    """EEXPIRED: the session expired or was closed."""
    code, name = -13, "EEXPIRED"


_BY_CODE = {c.code: c for c in (InvalidArgumentError, OutOfMemoryError, LimitError,
                                SolverError, NotFoundError, VersionError,
                                NotImplementedByServerError, SequenceError, PermissionError,
                                TimeoutError, TransportError, ProtocolError, ExpiredError)}


def error_for_code(code, message, last_seq=None):
    """The exception for a wire code (an unknown code gives a plain Error)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        e = Error(message, code=code, last_seq=last_seq)
        return e
    return cls(message, last_seq=last_seq)
