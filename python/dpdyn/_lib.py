"""The C library, loaded with cffi in ABI mode (no compiler at run time).

Where the library comes from, first match wins:
  1. the environment variable DPDYN_LIBRARY (a path to libdpdyn.so);
  2. the build tree this package sits in: <repo>/build/libdpdyn.so (python/dpdyn/ -> <repo>);
  3. the system loader (an installed prefix: libdpdyn.so.0 on the loader's path, LD_LIBRARY_PATH
     included).
The declarations are generated from the library's public headers (include/dpdyn/{status,isa,
keys,model}.h) when the library is first loaded (_cdef.py): the headers are the one definition of
every struct layout, and nothing is copied by hand.
"""
import os
import threading

from cffi import FFI

from . import _cdef

ffi = FFI()

_lock = threading.Lock()
_lib = None
_path = None
_declared = None  # the cdef text, once given to ffi


def _candidates():
    env = os.environ.get("DPDYN_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libdpdyn.so")
    names = [build] if os.path.exists(build) else []
    return names + ["libdpdyn.so.0", "libdpdyn.so"], False


def _declare(names):
    """Gives ffi the declarations of the headers that go with the library (once)."""
    global _declared
    if _declared is None:
        path = next((n for n in names if os.sep in n), None)
        text = _cdef.generate(_cdef.find_include_dir(path))
        ffi.cdef(text)
        _declared = text


def cdef():
    """The declarations given to cffi (generated from the headers; loads nothing)."""
    with _lock:
        _declare(_candidates()[0])
        return _declared


def lib():
    """The loaded library (loaded on first use; `dpdyn.load` never needs it)."""
    global _lib, _path
    with _lock:
        if _lib is None:
            names, forced = _candidates()
            _declare(names)
            errors = []
            for name in names:
                try:
                    # never unloaded: at interpreter exit cffi closes the handle, and unmapping
                    # libdpdyn (and libgomp with it) under OpenMP's idle worker threads crashed
                    # the process after a successful run (tests/test_unload.py)
                    _lib = ffi.dlopen(name, ffi.RTLD_NOW | ffi.RTLD_NODELETE)
                    _path = name
                    break
                except OSError as e:
                    errors.append("%s: %s" % (name, e))
                    if forced:
                        break
            if _lib is None:
                raise OSError(
                    "dpdyn: cannot load libdpdyn (set DPDYN_LIBRARY to its path, build it with "
                    "scripts/setup.sh, or install it): " + "; ".join(errors))
        return _lib


def path():
    """The path or name the library was loaded from (loads it)."""
    lib()
    return _path


def text(ptr):
    """A C string as str ('' for NULL)."""
    return "" if ptr == ffi.NULL else ffi.string(ptr).decode("utf-8", "replace")


def isa_problem():
    """None when the environment variable DPD_ISA is unset, empty or names a kernel path this CPU
    has; otherwise the CLI's one-line reason (docs/kernels.md)."""
    buf = ffi.new("char[]", 512)
    if lib().dpd_isa_env_check(buf, 512) != 0:
        return text(buf)
    return None
