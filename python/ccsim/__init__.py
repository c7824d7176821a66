"""ccsim: the Python client of ccsimd, the compliant-contact co-simulation service.

    import ccsim
    with ccsim.connect("tcp://127.0.0.1:5555") as c, c.create("examples/box_rest.json") as s:
        for _ in range(1000):
            s.step(1e-3, {"box": {"force": [0, 0, 1.0]}})
        print(s.positions, s.contact_forces)

connect() -> Client; Client.create / restore / attach -> Session; Session.step ->
State (numpy arrays); Client.watch -> Watch (the state stream); Env: a Gymnasium-style
environment. Errors are ccsim.Error subclasses, one per wire code."""
from .errors import (Error, InvalidArgumentError, OutOfMemoryError, LimitError, SolverError,
                     NotFoundError, VersionError, NotImplementedByServerError, SequenceError,
                     PermissionError, TimeoutError, TransportError, ProtocolError,
                     ExpiredError, error_for_code)
from .client import Client, connect, read_key
from .scene import load_scene, scene_message
from .session import Session, State, Contacts
from .stream import Watch, StreamMessage
from .env import Env

__version__ = "0.2.0"

__all__ = ["connect", "Client", "Session", "State", "Contacts", "Watch", "StreamMessage", "Env",
           "load_scene", "scene_message", "read_key", "error_for_code", "Error",
           "InvalidArgumentError", "OutOfMemoryError", "LimitError", "SolverError",
           "NotFoundError", "VersionError", "NotImplementedByServerError", "SequenceError",
           "PermissionError", "TimeoutError", "TransportError", "ProtocolError", "ExpiredError"]
