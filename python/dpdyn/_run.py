"""dpdyn.run: any command of any model of the registry, through the library's own entry points
(dpd_model_find, dpd_model_keys_create, dpd_model_key_set, dpd_model_run), the ones the command
line calls, so keys are validated by the same code and with the same messages."""
import math
import os
import threading
import time
import warnings

import numpy as np

from . import _lib
from ._result import Result, summary_parse, table_from_columns


class Error(Exception):
    """A run refused or failed: str(e) is the message the CLI prints after 'dpdyn COMMAND: '.
    status: the library's status code (dpd_status: -1 invalid input, -3 solver failure, ...)."""

    def __init__(self, message, status=-1, command=None):
        super().__init__(message)
        self.status = status
        self.command = command


def _check(status, err, command):
    if status < 0:
        lib = _lib.lib()
        reason = _lib.ffi.string(err.reason).decode("utf-8", "replace")
        raise Error(reason or _lib.text(lib.dpd_status_str(status)), status, command)
    return status


def _model_at(i):
    m = _lib.lib().dpd_model_at(i)
    return None if m == _lib.ffi.NULL else m


def _models():
    i, out = 0, []
    while (m := _model_at(i)) is not None:
        out.append(m)
        i += 1
    return out


def _has(m, command):
    return _lib.lib().dpd_model_command_get(m, command.encode()) != _lib.ffi.NULL


def _list(fn, *args):
    buf = _lib.ffi.new("char[]", 4096)
    fn(*args, buf, 4096)
    return _lib.ffi.string(buf).decode()


def models():
    """{name: one-line summary} of the registry's models."""
    return {_lib.text(m.name): _lib.text(m.summary) for m in _models()}


def commands(model="linreg"):
    """{command: one-line summary} of a model."""
    m = _lib.lib().dpd_model_lookup(model.encode())
    if m == _lib.ffi.NULL:
        raise Error("invalid value for 'model': '%s' (allowed: %s)" %
                    (model, _list(_lib.lib().dpd_model_list)))
    out, c = {}, m.commands
    while c.name != _lib.ffi.NULL:
        out[_lib.text(c.name)] = _lib.text(c.summary)
        c += 1
    return out


def small(model="linreg"):
    """The model's small problem ({key: text}): the registry contract test's keys, runs in well
    under a second for every command."""
    m = _lib.lib().dpd_model_lookup(model.encode())
    if m == _lib.ffi.NULL:
        raise Error("invalid value for 'model': '%s' (allowed: %s)" %
                    (model, _list(_lib.lib().dpd_model_list)))
    out, kv = {}, m.small
    i = 0
    while kv != _lib.ffi.NULL and kv[i] != _lib.ffi.NULL:
        out[_lib.text(kv[i])] = _lib.text(kv[i + 1])
        i += 2
    return out


def _choose(command, model, err, keys=()):
    """The model as the CLI chooses it (dpd_model_find_keyed on the names of the keys given,
    with its messages); a command no model has lists the registry's commands."""
    lib, ffi = _lib.lib(), _lib.ffi
    all_models = _models()
    if not any(_has(m, command) for m in all_models):
        cmds = []
        for m in all_models:
            c = m.commands
            while c.name != ffi.NULL:
                if _lib.text(c.name) not in cmds:
                    cmds.append(_lib.text(c.name))
                c += 1
        raise Error("unknown command '%s' (allowed: %s)" % (command, ", ".join(cmds)),
                    -1, command)
    mp = ffi.new("dpd_model_type **")
    name = ffi.NULL if model is None else str(model).encode()
    names = []
    for k in keys:  # a name that is not UTF-8 is refused later, naming it (_key_set)
        try:
            names.append(ffi.new("char[]", str(k).encode()))
        except UnicodeEncodeError:
            pass
    arr = ffi.new("const char *[]", names) if names else ffi.NULL
    _check(lib.dpd_model_find_keyed(name, command.encode(), arr, len(names), mp, err), err,
           command)
    return mp[0]


def key_text(value):
    """A Python value as the text of a key: numbers in their shortest round-trip form (repr),
    True/False as 1/0, inf as inf; anything else through str()."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return "nan" if math.isnan(v) else repr(v)
    return str(value)


def _shown(value):
    """A value as an error message shows it: text quoted as the CLI does ('20'), with Python's
    escapes for what cannot be printed (NUL, a lone surrogate)."""
    if isinstance(value, str):
        return "'%s'" % value.encode("unicode_escape", "backslashreplace").decode("ascii")
    return repr(value)


def _encode(text, name, is_name=False):
    """Text of a key's name (is_name) or value as the C library takes it (UTF-8, no NUL):
    dpdyn.Error naming the key otherwise (C would cut the text at a NUL byte)."""
    what = ("key name %s" % _shown(name) if is_name else
            "value for '%s': %s" % (_encode_name(name), _shown(text)))
    if "\x00" in text:
        raise Error("invalid %s (allowed: text without NUL bytes)" % what)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Error("invalid %s (allowed: text encodable as UTF-8; %s)" % (what, e.reason)) \
            from None


def _encode_name(name):
    """A key name as messages show it: itself, or escaped when it holds NUL or a surrogate."""
    return _shown(name)[1:-1]


def _desc(kset, name):
    """The descriptor of key `name` in a key set (None: the set lacks it)."""
    lib, ffi = _lib.lib(), _lib.ffi
    i = lib.dpd_keys_find(kset, name)
    if i < 0:
        return None
    d = lib.dpd_keys_desc_get(kset, i)
    return None if d == ffi.NULL else d


def _allowed(desc):
    buf = _lib.ffi.new("char[]", 512)
    _lib.lib().dpd_key_desc_allowed(desc, buf, 512)
    return _lib.ffi.string(buf).decode("utf-8", "replace")


def value_text(name, value, desc=None):
    """The text of key `name` for a Python value (desc: its dpd_key_desc, or None when unknown):
    integral floats for integer keys as integers (n=1e4 -> "10000"), other floats of integer
    keys, None, bools for keys other than on/off ones, and other types are dpdyn.Error naming
    the key."""
    lib = _lib.lib()
    is_int = desc is not None and desc.kind == lib.DPD_KEY_INT
    shown = _encode_name(name)
    if value is None:
        raise Error("invalid value for '%s': None (allowed: a value; leave the key out for its "
                    "default)" % shown)
    if isinstance(value, (bool, np.bool_)):
        if desc is not None and not (is_int and desc.lo == 0 and desc.hi == 1):
            raise Error("invalid value for '%s': %r (allowed: %s; True/False only for on/off "
                        "keys, integer 0 <= key <= 1)" % (shown, bool(value), _allowed(desc)))
        return key_text(value)
    if isinstance(value, (int, np.integer)):
        return key_text(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if is_int and math.isfinite(v):
            if not v.is_integer():
                raise Error("invalid value for '%s': %r (must be an integer: allowed: %s)" %
                            (shown, v, _allowed(desc)))
            return str(int(v))
        return key_text(v)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return value
    raise Error("invalid value for '%s': %s of type %s (allowed: a number, True/False for "
                "on/off keys, or text)" % (shown, _shown(value), type(value).__name__))


def _key_set(m, kset, name, value, command, err):
    """Sets one key as the CLI would (dpd_model_key_set: its messages), after the binding's own
    checks of the Python name and value."""
    lib = _lib.lib()
    if not isinstance(name, str):
        raise Error("invalid key name %r (allowed: text)" % (name,), -1, command)
    try:
        bname = _encode(name, name, True)
        text = value_text(name, value, _desc(kset, bname))
        btext = _encode(text, name)
    except Error as e:
        e.command = command
        raise
    _check(lib.dpd_model_key_set(m, kset, bname, btext, err), err, command)


def _physical_memory():
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0
    return pages * size if pages > 0 and size > 0 else 0


def _tables(out):
    ffi = _lib.ffi
    tables = {}
    for i in range(out.ntables):
        t = out.tables[i]
        rows, ncols = t.rows, t.ncols
        names = [_lib.text(t.columns[k]) for k in range(ncols)]
        if rows * ncols > 0:
            data = np.frombuffer(ffi.buffer(t.data, 8 * rows * ncols), dtype=np.float64)
            data = data.reshape(ncols, rows).copy()
        else:
            data = np.empty((ncols, rows))
        tables[_lib.text(t.name)] = table_from_columns(names, list(data))
    return tables


def _wait_interruptible(call, flag, name, on_interrupt=None):
    """Runs call() (a library call, which cffi makes without the GIL) on a worker thread while
    this thread waits, so that Ctrl-C (KeyboardInterrupt) can reach it: then flag[0] = 1 (the
    flag the call's progress callback returns), the library stops at its next poll
    (DPD_ECANCELLED), the worker is joined, on_interrupt() runs (to free what the call made) and
    KeyboardInterrupt is raised. Returns call()'s value; re-raises its exception."""
    box = {}

    def work():
        try:
            box["status"] = call()
        except BaseException as e:  # noqa: B036 -- handed to the waiting thread
            box["error"] = e

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        flag[0] = 1
        while worker.is_alive():
            try:
                worker.join()
            except KeyboardInterrupt:  # pressed again: the call is already stopping
                pass
        if on_interrupt is not None:
            on_interrupt()
        raise
    if "error" in box:
        raise box["error"]
    return box["status"]


def _interruptible(call, env, outp):
    """Runs call() (a run of the library) by _wait_interruptible, with env's progress callback
    returning the stop flag (dpd_run_progress_flag; the library polls it about every 0.1 s); on
    Ctrl-C any output is freed. The library installs no signal handler; Python's stays in
    place."""
    lib, ffi = _lib.lib(), _lib.ffi
    flag = ffi.new("int *")
    env.progress = lib.dpd_run_progress_flag
    env.progress_user = flag

    def free_output():
        if outp[0] != ffi.NULL:
            lib.dpd_output_free(outp[0])
            outp[0] = ffi.NULL

    return _wait_interruptible(call, flag, "dpdyn.run", free_output)


def run(command, model=None, **keys):
    """Runs COMMAND of MODEL with the given keys and returns a Result.

    model: a model of the registry (dpdyn.models()); None: as the CLI chooses (linreg, or the
    first model that has the command: run("ou") is model=rf). keys: the CLI's keys, given as
    Python values (run("simulate", d=100, gamma=0.5, c=1, rho=2, seeds=8)); numbers are passed
    in their shortest round-trip form. Nothing is written to disk (the key `out` is recorded
    only) and no figure is drawn. Raises dpdyn.Error with the CLI's message."""
    lib, ffi = _lib.lib(), _lib.ffi
    start = time.monotonic()
    if command == "sweep":
        raise Error("a sweep is run by dpdyn.sweep(COMMAND, model=None, out=None, **keys), a "
                    "list being an axis: dpdyn.sweep(\"simulate\", d=100, c=[0.5, 1, 2])",
                    -1, command)
    problem = _lib.isa_problem()
    if problem is not None:  # as the CLI refuses it (docs/kernels.md)
        raise Error(problem, -1, command)
    err = ffi.new("dpd_err *")
    m = _choose(command, model, err, list(keys))
    cmd = command.encode()
    keysp = ffi.new("dpd_keys **")
    _check(lib.dpd_model_keys_create(m, cmd, keysp, err), err, command)
    kset = ffi.gc(keysp[0], lib.dpd_keys_free)
    given = ([("model", model)] if model is not None else []) + list(keys.items())
    for name, value in given:  # the CLI's messages for a name the model lacks
        _key_set(m, kset, name, value, command, err)
    ram = _physical_memory()
    max_memory = ffi.new("size_t *")
    _check(lib.dpd_keys_bytes_get(kset, b"max_memory", ram // 2 if ram > 0 else 1 << 32,
                                  max_memory, err), err, command)
    env = ffi.new("dpd_run_env *", lib.dpd_run_env_default())
    env.max_memory = max_memory[0]
    outp = ffi.new("dpd_output **")
    status = _interruptible(lambda: lib.dpd_model_run(m, cmd, kset, env, outp, err), env, outp)
    out = outp[0]
    try:
        _check(status, err, command)
        _check(lib.dpd_output_params_set(out, kset, err), err, command)
        text = lib.dpd_output_summary_print(out)  # summary.json's text, freed here
        if text == ffi.NULL:
            raise MemoryError("dpdyn %s: out of memory printing the summary" % command)
        try:
            summary = summary_parse(ffi.string(text).decode("utf-8"))
        finally:
            lib.free(text)
        tables = _tables(out)
        headline = _lib.text(out.headline)
        notes = [_lib.text(out.notes[k]) for k in range(out.nnotes)]
        report = _lib.text(out.report)
        figure = _lib.text(out.figure) or None
    finally:
        lib.dpd_output_free(out)
    for name, _ in given:  # a key the run did not use, as the CLI notes it (src/cli/cmd_run.c)
        if lib.dpd_keys_text_get(kset, name.encode()) == ffi.NULL:
            notes.append("note: '%s' has no effect on %s (%s)" % (name, command, headline))
    for note in notes:
        if note.startswith("warning:"):
            warnings.warn("dpdyn %s: %s" % (command, note), RuntimeWarning, stacklevel=2)
    summary["wall_seconds"] = time.monotonic() - start
    return Result(summary, tables, notes, report, headline, figure)
