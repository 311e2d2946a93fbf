"""The package's cffi declarations against the C compiler's view of the public headers.

The declarations are generated from include/dpdyn/*.h (dpdyn/_cdef.py) and used in ABI mode,
where cffi computes every struct layout itself from the declared fields. Here the same
declarations are compiled in cffi's API mode with the real headers, so that the C compiler says
where each field is: every struct must have the same size and every field the same offset and
size in both. A header change the generator misreads, or a declaration written by hand that no
longer matches, fails here. Needs a C compiler and Python's headers (skipped without them)."""
import importlib.util
import os
import re
import sys
import sysconfig

import pytest

from conftest import REPO

cffi = pytest.importorskip("cffi")
from dpdyn import _cdef, _lib  # noqa: E402

INCLUDE = os.path.join(REPO, "include")


def _compiled(text, tmp):
    """An API-mode FFI over `text` compiled with the headers (the compiler's layouts)."""
    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        pytest.skip("Python.h is missing (Debian: python3-dev): cannot compile the check")
    ffi = cffi.FFI()
    ffi.cdef(text)
    library = _lib.path()  # the functions resolve against the library under test
    if os.sep in library:
        library = os.path.abspath(library)
        link = dict(extra_link_args=[library],
                    runtime_library_dirs=[os.path.dirname(library)])
    else:
        link = dict(libraries=["dpdyn"])
    ffi.set_source("_dpd_cdef_check",
                   "\n".join('#include "dpdyn/%s"' % h for h in _cdef.HEADERS),
                   include_dirs=[INCLUDE], **link,
                   # a function declared with other types than the header's must not compile
                   extra_compile_args=["-Werror=incompatible-pointer-types",
                                       "-Werror=int-conversion"])
    try:
        so = ffi.compile(tmpdir=str(tmp))
    except Exception as e:  # no compiler, or a declaration the compiler refuses
        if "command" in str(e) and "not found" in str(e):
            pytest.skip("no C compiler: %s" % e)
        raise
    spec = importlib.util.spec_from_file_location("_dpd_cdef_check", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ffi


def _structs(ffi):
    """{type name: [field names]} of every struct of the declarations (opaque ones left out)."""
    out = {}
    typedefs, structs, _ = ffi.list_types()
    for name in list(typedefs) + ["struct " + s for s in structs]:
        t = ffi.typeof(name)
        if t.kind == "struct" and t.fields is not None:
            out[name] = [f for f, _ in t.fields]
    return out


def _mismatches(abi_text, tmp):
    """The layout differences between ABI mode over abi_text and the compiler's layouts."""
    abi = cffi.FFI()
    abi.cdef(abi_text)
    api = _compiled(_lib.cdef(), tmp)
    out = []
    for name, fields in sorted(_structs(abi).items()):
        try:
            size = api.sizeof(name)
        except Exception as e:  # cffi's own check (wrong size or offset) fires here
            out.append("%s: %s" % (name, e))
            continue
        if abi.sizeof(name) != size:
            out.append("%s: size %d, compiler %d" % (name, abi.sizeof(name), size))
        afields, cfields = dict(abi.typeof(name).fields), dict(api.typeof(name).fields)
        for f in fields:
            if f not in cfields:
                out.append("%s.%s: not in the header" % (name, f))
                continue
            got = (afields[f].offset, abi.sizeof(afields[f].type))
            want = (cfields[f].offset, api.sizeof(cfields[f].type))
            if got != want:
                out.append("%s.%s: (offset, size) %s, compiler %s" % (name, f, got, want))
    return out


def test_every_declaration_is_generated_from_the_headers():
    text = _cdef.generate(INCLUDE)
    for name in _cdef.DECLARATIONS:
        assert re.search(r"\b%s\b" % re.escape(name), text), name
    assert "DPD_API" not in text and "__attribute__" not in text and "#" not in text
    assert _lib.cdef() == text  # what the package gives cffi


def test_every_struct_matches_the_compilers_layout(tmp_path):
    structs = _structs(_compiled(_lib.cdef(), tmp_path / "a"))
    # the structs the package reads fields of: all of them are checked
    for name in ("dpd_err", "dpd_key_desc", "dpd_table", "dpd_output", "dpd_run_env",
                 "dpd_model_command", "dpd_model_type"):
        assert name in structs, name
    assert _mismatches(_lib.cdef(), tmp_path / "b") == []


def test_a_stale_declaration_is_caught(tmp_path):
    # dpd_model_command as it was before the model type got per-operation functions: the check
    # must see that its layout is not the header's
    stale = re.sub(r"struct dpd_model_command \{.*?\};",
                   "struct dpd_model_command { const char *name; const char *summary; "
                   "const char *files; const char *example; void *run; const char *numbers; };",
                   _lib.cdef(), flags=re.S)
    assert stale != _lib.cdef()
    found = _mismatches(stale, tmp_path)
    assert any(m.startswith("dpd_model_command") for m in found), found


def test_a_missing_declaration_names_itself(tmp_path):
    os.makedirs(tmp_path / "dpdyn")
    for h in _cdef.HEADERS:
        with open(os.path.join(INCLUDE, "dpdyn", h), encoding="utf-8") as f:
            text = f.read()
        if h == "model.h":
            text = text.replace("dpd_model_lookup(", "dpd_model_by_name(")
        (tmp_path / "dpdyn" / h).write_text(text, encoding="utf-8")
    with pytest.raises(_cdef.HeaderError, match="dpd_model_lookup"):
        _cdef.generate(str(tmp_path))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
