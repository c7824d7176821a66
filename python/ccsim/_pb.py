"""The generated protobuf module: inside the package when it was installed (pip), else
a top-level ccsim_pb2 on sys.path (CMake generates one into the build tree for tests)."""
try:
    from . import ccsim_pb2 as pb  # noqa: F401
except ImportError:
    try:
        import ccsim_pb2 as pb  # noqa: F401
    except ImportError as e:
        raise ImportError(
            "ccsim: the generated module ccsim_pb2 is missing: install the package "
            "(pip install --no-build-isolation ./python) or put the build tree's python/ "
            "folder (CMake generates it with protoc) on PYTHONPATH") from e
