"""Scene files: JSON read into the Scene message the same way libccsim's
client/ccsim_scene.c does (unknown keys refused, numbers finite, meshes sent as the bytes
of their files, found relative to the scene file)."""
import json
import math
import os

from ._pb import pb
from .errors import InvalidArgumentError, TransportError

__all__ = ["load_scene", "scene_message"]

PRIM_MAX_RES = 4096        # geometry/geo_prim.h GEO_PRIM_MAX_RES
MESH_MAX_FILE = 1 << 30    # geometry/geo_mesh.h GEO_MESH_MAX_FILE
SCENE_MAX_FILE = 256 << 20  # proto/common/ccsim_limits.h CCSIM_SCENE_MAX_FILE


class _Ctx:
    def __init__(self, name, base_dir):
        self.name = name
        self.base_dir = base_dir

    def fail(self, path, what):
        raise InvalidArgumentError(f"{self.name}: {path}: {what}")


def _keys(c, obj, path, allowed):
    if not isinstance(obj, dict):
        c.fail(path, "expected an object")
    for k in obj:
        if k not in allowed:
            c.fail(path, f'unknown key "{k}" (known: {", ".join(allowed)})')


def _isnum(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _num(c, obj, key, path):
    v = obj.get(key)
    if v is None:
        return None
    if not _isnum(v):
        c.fail(path, f'"{key}" must be a number')
    if not math.isfinite(v):
        c.fail(path, f'"{key}" must be finite')
    return float(v)


def _uint(c, obj, key, path, mx):
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > mx:
        c.fail(path, f'"{key}" must be a whole number in [0, {mx}]')
    return v


def _array(c, v, path, n):
    if not isinstance(v, list) or len(v) != n:
        c.fail(path, f"expected an array of {n} numbers")
    for i, e in enumerate(v):
        if not _isnum(e) or not math.isfinite(e):
            c.fail(path, f"element {i} must be a finite number")
    return [float(e) for e in v]


def _vec3(c, obj, key, path, msg):
    v = obj.get(key)
    if v is None:
        return False
    x = _array(c, v, f"{path}.{key}", 3)
    msg.x, msg.y, msg.z = x
    return True


def _set(msg, field, value):
    if value is not None:
        setattr(msg, field, value)


def _contact(c, obj, path, m):
    keys = ["k", "alpha", "n", "standoff", "mu", "mu_dynamic"]
    _keys(c, obj, path, keys)
    m.SetInParent()
    for k in keys:
        _set(m, k, _num(c, obj, k, path))


def _mesh_file(c, file, path, m):
    full = file if os.path.isabs(file) or not c.base_dir else os.path.join(c.base_dir, file)
    if not os.path.isfile(full):
        raise TransportError(f'{c.name}: {path}: cannot use mesh "{file}": {full}: '
                             "no such regular file")
    size = os.path.getsize(full)
    if size > MESH_MAX_FILE:
        c.fail(path, f'cannot use mesh "{file}": {full}: file larger than the cap of '
                     f"{MESH_MAX_FILE} bytes")
    try:
        with open(full, "rb") as f:
            m.file = f.read()
    except OSError as e:
        raise TransportError(f'{c.name}: {path}: cannot use mesh "{file}": {full}: '
                             f"{e.strerror}") from e
    m.source = file


def _shape(c, obj, path, m):
    kinds = ["box", "sphere", "cylinder", "cone", "torus", "mesh"]
    _keys(c, obj, path, kinds)
    if len(obj) != 1:
        c.fail(path, "give exactly one of box, sphere, cylinder, cone, torus, mesh")
    kind, v = next(iter(obj.items()))
    sub = f"{path}.{kind}"
    if kind == "box":
        _keys(c, v, sub, ["size"])
        if not _vec3(c, v, "size", sub, m.box.size):
            c.fail(sub, '"size" is required: [x, y, z] full edge lengths in metres')
    elif kind == "mesh":
        if isinstance(v, str):
            file = v
        else:
            _keys(c, v, sub, ["file"])
            file = v.get("file")
        if not isinstance(file, str) or not file:
            c.fail(sub, 'expected a mesh file name (OBJ or STL), as "mesh": "part.obj"')
        _mesh_file(c, file, sub, m.mesh)
    else:
        spec = {"sphere": (["radius"], ["slices", "stacks"]),
                "cylinder": (["radius", "height"], ["segments"]),
                "cone": (["radius", "height"], ["segments", "rings"]),
                "torus": (["major_radius", "minor_radius"],
                          ["major_segments", "minor_segments"])}[kind]
        _keys(c, v, sub, spec[0] + spec[1])
        pm = getattr(m, kind)
        pm.SetInParent()
        for k in spec[0]:
            _set(pm, k, _num(c, v, k, sub))
        for k in spec[1]:
            _set(pm, k, _uint(c, v, k, sub, PRIM_MAX_RES))


def _pose(c, v, path, m):
    m.SetInParent()
    _vec3(c, v, "p", path, m.p)
    q = v.get("q")
    if q is not None:
        x = _array(c, q, f"{path}.q", 4)
        if not sum(e * e for e in x) > 0:
            c.fail(f"{path}.q", "the quaternion [w, x, y, z] must not be zero")
        m.q.w, m.q.x, m.q.y, m.q.z = x


_TYPES = {"free": pb.BODY_FREE, "fixed": pb.BODY_FIXED, "kinematic": pb.BODY_KINEMATIC}


def _body(c, obj, path, b):
    _keys(c, obj, path, ["name", "fixed", "kinematic", "type", "mass", "inertia", "density",
                         "com", "shape", "pose", "velocity", "contact", "path"])
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        c.fail(path, '"name" is required (a non-empty string)')
    b.name = name
    b.type = pb.BODY_FREE
    typed_by = None
    if "type" in obj:
        if obj["type"] not in _TYPES:
            c.fail(path, '"type" must be "free", "fixed" or "kinematic"')
        b.type = _TYPES[obj["type"]]
        typed_by = '"type"'
    for flag in ("fixed", "kinematic"):
        if flag in obj:
            if not isinstance(obj[flag], bool):
                c.fail(path, f'"{flag}" must be true or false')
            if obj[flag]:
                if typed_by and b.type != _TYPES[flag]:
                    c.fail(path, f'"{flag}": true contradicts {typed_by}')
                b.type = _TYPES[flag]
                typed_by = f'"{flag}": true'
    _set(b, "mass", _num(c, obj, "mass", path))
    _set(b, "density", _num(c, obj, "density", path))
    if "inertia" in obj:
        v, sub = obj["inertia"], f"{path}.inertia"
        n = len(v) if isinstance(v, list) else 0
        if n == 3 and isinstance(v[0], list):
            b.inertia.extend(x for r in v for x in _array(c, r, sub, 3))
        elif n in (3, 9):
            b.inertia.extend(_array(c, v, sub, n))
        else:
            c.fail(sub, "give [Ixx, Iyy, Izz], 9 numbers row-major, or a 3x3 array [kg m^2]")
    _vec3(c, obj, "com", path, b.com)
    if "shape" in obj:
        _shape(c, obj["shape"], f"{path}.shape", b.shape)
    if "pose" in obj:
        _keys(c, obj["pose"], f"{path}.pose", ["p", "q"])
        _pose(c, obj["pose"], f"{path}.pose", b.pose)
    if "path" in obj:
        v, sub = obj["path"], f"{path}.path"
        if not isinstance(v, list) or not v:
            c.fail(sub, 'expected a non-empty array of waypoints {"t": s, "p": [x, y, z], '
                        '"q": [w, x, y, z]}')
        for i, w in enumerate(v):
            wsub = f"{sub}[{i}]"
            _keys(c, w, wsub, ["t", "p", "q"])
            if "t" not in w:
                c.fail(wsub, '"t" is required (the waypoint\'s time in seconds)')
            wp = b.path.add()
            wp.t = _num(c, w, "t", wsub)
            _pose(c, w, wsub, wp.pose)
    if "velocity" in obj:
        v, sub = obj["velocity"], f"{path}.velocity"
        _keys(c, v, sub, ["v", "w"])
        b.twist.SetInParent()
        _vec3(c, v, "v", sub, b.twist.v)
        _vec3(c, v, "w", sub, b.twist.w)
    if "contact" in obj:
        _contact(c, obj["contact"], f"{path}.contact", b.contact)


def scene_message(scene, *, name="scene", base_dir=None):
    """The Scene message for a scene given as a dict (the JSON of a scene file, see
    docs/scenes.md). Mesh files are read relative to base_dir (default: the working
    directory). Raises InvalidArgumentError naming the key at fault."""
    c = _Ctx(name, base_dir)
    _keys(c, scene, "scene", ["description", "gravity", "contact", "integrator", "mode",
                              "rigid_dt", "friction_directions", "bodies"])
    s = pb.Scene()
    _vec3(c, scene, "gravity", "scene", s.gravity)
    if "contact" in scene:
        _contact(c, scene["contact"], "contact", s.contact)
    if "integrator" in scene:
        v = scene["integrator"]
        _keys(c, v, "integrator", ["rtol", "atol", "max_step", "linear_solver"])
        s.integrator.SetInParent()
        for k in ("rtol", "atol", "max_step"):
            _set(s.integrator, k, _num(c, v, k, "integrator"))
        if "linear_solver" in v:
            if v["linear_solver"] not in ("auto", "dense", "klu"):
                c.fail("integrator", '"linear_solver" must be "auto", "dense" or "klu"')
            s.integrator.linear_solver = v["linear_solver"]
    if "mode" in scene:
        m = {"compliant": pb.MODE_COMPLIANT, "rigid": pb.MODE_RIGID}.get(scene["mode"])
        if m is None:
            c.fail("mode", 'must be "compliant" or "rigid"')
        s.mode = m
    _set(s, "rigid_dt", _num(c, scene, "rigid_dt", "scene"))
    _set(s, "friction_directions", _uint(c, scene, "friction_directions", "scene", 64))
    bodies = scene.get("bodies")
    if not isinstance(bodies, list) or not bodies:
        c.fail("bodies", "required: a non-empty array of bodies")
    for i, b in enumerate(bodies):
        _body(c, b, f"bodies[{i}]", s.bodies.add())
    return s


def load_scene(path):
    """Read a scene file (JSON) into a Scene message; meshes are found beside it."""
    path = os.fspath(path)
    try:
        if os.path.getsize(path) > SCENE_MAX_FILE:
            raise InvalidArgumentError(f"{path}: too large (over {SCENE_MAX_FILE} bytes)")
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise TransportError(f"{path}: cannot open the scene file: {e.strerror}") from e

    def no_dupes(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                raise InvalidArgumentError(f'{path}: duplicate key "{k}"')
            d[k] = v
        return d

    try:
        data = json.loads(text, object_pairs_hook=no_dupes)
    except json.JSONDecodeError as e:
        raise InvalidArgumentError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}") from e
    return scene_message(data, name=path, base_dir=os.path.dirname(path) or ".")
