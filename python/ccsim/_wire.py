"""Hand encoding of the one request on the hot path, Step, straight to protobuf's wire
format (the fields of proto/ccsim.proto's Request, Step and BodyInput). Building the
message through the generated classes costs a lockstep loop more than the server's work
on a small scene; tests/python/test_py_wire.py checks that protobuf parses these bytes to
the message the generated classes build."""
import operator
import struct

_d = struct.Struct("<d").pack
_vec3 = struct.Struct("<BdBdBd").pack
_quat = struct.Struct("<BdBdBdBd").pack


_SMALL = [bytes((i,)) for i in range(0x80)]


def varint(n):
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field_bytes(tag, payload):
    """A length-delimited field: tag byte, length, payload."""
    n = len(payload)
    return _SMALL[tag] + (_SMALL[n] if n < 0x80 else varint(n)) + payload


def vec3(tag, x):
    # Vec3 {x = 1, y = 2, z = 3}: three doubles, 27 bytes
    return bytes((tag, 27)) + _vec3(0x09, x[0], 0x11, x[1], 0x19, x[2])


def quat(tag, q):
    # Quat {w = 1, x = 2, y = 3, z = 4}
    return bytes((tag, 36)) + _quat(0x09, q[0], 0x11, q[1], 0x19, q[2], 0x21, q[3])


def session_fields(session_id, token):
    """Request.session_id (2) and Request.token (4), encoded once per session."""
    out = field_bytes(0x12, session_id.encode())
    if token:
        out += field_bytes(0x22, token.encode())
    return out


def body_input(body, force=None, torque=None, p=None, q=None, v=None, w=None):
    """BodyInput: body (1), force (2), torque (3), pose (4) {p (1), q (2)}, twist (5)
    {v (1), w (2)}; values already checked."""
    out = b"\x08" + varint(body)
    if force is not None:
        out += vec3(0x12, force)
    if torque is not None:
        out += vec3(0x1A, torque)
    if p is not None or q is not None:
        pose = (vec3(0x0A, p) if p is not None else b"") + (quat(0x12, q) if q is not None else b"")
        out += field_bytes(0x22, pose)
    if v is not None or w is not None:
        tw = (vec3(0x0A, v) if v is not None else b"") + (vec3(0x12, w) if w is not None else b"")
        out += field_bytes(0x2A, tw)
    return out


def step_request(session, seq, dt, inputs, substeps, want_contacts, want_substates):
    """A Request {session_id, token, seq (3), step (12)} without its request_id (the
    client prepends field 1). inputs: encoded BodyInput messages."""
    st = b"\x09" + _d(dt)
    for m in inputs:
        st += field_bytes(0x12, m)
    if want_contacts:
        st += b"\x18\x01"
    if substeps > 1:
        st += b"\x20" + varint(substeps)
    if want_substates:
        st += b"\x28\x01"
    return session + b"\x18" + varint(seq) + field_bytes(0x62, st)


# ---- decoding a Step's reply ---------------------------------------------------------

# A BodyState as protobuf-c writes it (fields in number order): body (1), then pose (2)
# {p {x y z}, q {w x y z}} and twist (3) {v {x y z}, w {x y z}} read by one struct call,
# then what is present of contact_force (4), contact_torque (5), contact_count (6),
# mean_contact_force (7) and mean_contact_torque (8) (the server leaves them out when zero).
# Any other layout leaves the reply to the generated classes.
_V3 = "BdBdBd"
_HEAD = struct.Struct("<BBBB" + _V3 + "BB" + "BdBdBdBd" + "BBBB" + _V3 + "BB" + _V3)
_HEAD_TAGS = (0x12, 0x43, 0x0A, 0x1B, 0x09, 0x11, 0x19, 0x12, 0x24, 0x09, 0x11, 0x19, 0x21,
              0x1A, 0x3A, 0x0A, 0x1B, 0x09, 0x11, 0x19, 0x12, 0x1B, 0x09, 0x11, 0x19)
_is_tag = [c == "B" for c in _HEAD.format.lstrip("<")]
_tags = operator.itemgetter(*[i for i, t in enumerate(_is_tag) if t])
_doubles = operator.itemgetter(*[i for i, t in enumerate(_is_tag) if not t])
_VEC = struct.Struct("<BBBdBdBd")  # a Vec3 field with all three: tag, 27, x, y, z
_VEC_LEN = _VEC.size
_double = struct.Struct("<d").unpack_from
_NO_CONTACT = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
# contact_force, contact_torque, mean_contact_force, mean_contact_torque: their tags and
# where each goes in a row's six + six numbers
_WRENCH_SLOT = {0x22: 0, 0x2A: 3, 0x3A: 6, 0x42: 9}


def _uvarint(b, pos):
    x = b[pos]
    if x < 0x80:
        return x, pos + 1
    x &= 0x7F
    shift = 7
    while True:
        pos += 1
        c = b[pos]
        x |= (c & 0x7F) << shift
        if c < 0x80:
            return x, pos + 1
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")


def reply_request_id(b):
    """Reply.request_id when the reply starts with it (as ccsimd writes it), else None."""
    if b and b[0] == 0x08:
        try:
            return _uvarint(b, 1)[0]
        except IndexError:
            return None
    return None


def step_reply(b, n):
    """A successful Reply {request_id, error {code OK}, step {time, bodies (n), stats,
    deadline}} read straight from its bytes: (time, rows: 26 n numbers, stats bytes or None,
    deadline bytes or None). None for anything else (an error, contacts, sub-states, a
    layout not foreseen): the generated classes then read it."""
    try:
        pos, end = 0, len(b)
        start = stop = -1
        while pos < end:
            tag = b[pos]
            pos += 1
            if tag == 0x08:  # request_id (checked by the caller)
                pos = _uvarint(b, pos)[1]
            elif tag == 0x12:  # error: only {code: OK}
                ln, pos = _uvarint(b, pos)
                if not (ln == 0 or (ln == 2 and b[pos] == 0x08 and b[pos + 1] == 0)):
                    return None
                pos += ln
            elif tag == 0x62:  # step
                ln = b[pos]
                if ln < 0x80:
                    pos += 1
                else:
                    ln, pos = _uvarint(b, pos)
                start, stop = pos, pos + ln
                pos = stop
            else:
                return None
        if start < 0 or stop > end:
            return None
        pos = start
        t = stats = deadline = None
        rows = []
        k = 0
        while pos < stop:
            tag = b[pos]
            pos += 1
            if tag == 0x09:  # time
                t = _double(b, pos)[0]
                pos += 8
            elif tag == 0x12:  # a body
                ln = b[pos]
                if ln < 0x80:
                    pos += 1
                else:
                    ln, pos = _uvarint(b, pos)
                body_end = pos + ln
                if b[pos] != 0x08 or b[pos + 1] != k or body_end > stop:
                    return None
                v = _HEAD.unpack_from(b, pos + 2)
                if _tags(v) != _HEAD_TAGS:
                    return None
                rows += _doubles(v)
                p = pos + 2 + _HEAD.size
                if p == body_end:  # no contact
                    rows += _NO_CONTACT
                    rows.append(0)
                    rows += _NO_CONTACT
                else:
                    wr = [0.0] * 12  # force, torque, mean force, mean torque
                    count = 0
                    while p < body_end:
                        c = b[p]
                        slot = _WRENCH_SLOT.get(c)
                        if slot is not None:
                            w = _VEC.unpack_from(b, p)
                            if w[1] != 27 or w[2] != 0x09 or w[4] != 0x11 or w[6] != 0x19:
                                return None
                            wr[slot:slot + 3] = (w[3], w[5], w[7])
                            p += _VEC_LEN
                        elif c == 0x30:
                            count, p = _uvarint(b, p + 1)
                        else:
                            return None
                    if p != body_end:
                        return None
                    rows += wr[0:6]
                    rows.append(count)
                    rows += wr[6:12]
                k += 1
                pos = body_end
            elif tag == 0x1A or tag == 0x32:  # stats, deadline: read when asked for
                ln, pos = _uvarint(b, pos)
                if tag == 0x1A:
                    stats = b[pos:pos + ln]
                else:
                    deadline = b[pos:pos + ln]
                pos += ln
            else:
                return None
        if k != n or t is None or pos != stop:
            return None
        return t, rows, stats, deadline
    except (IndexError, struct.error):
        return None
