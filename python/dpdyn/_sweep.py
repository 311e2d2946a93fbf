"""dpdyn.sweep: a parameter sweep (docs/sweep.md) run by the dpdyn executable, read back with
dpdyn.load.

The sweep is the command line's own (src/cli/cmd_sweep.c: its grid, validation, resume, point
directories), so its numbers are the CLI's bit for bit. The executable runs as a child process
with an argument list (never through a shell); Ctrl-C sends it SIGINT, on which it removes the
staging files of the point in progress and exits, and KeyboardInterrupt is raised here.

Where the executable comes from, first match wins:
  1. the environment variable DPDYN_CLI (a path to the dpdyn executable);
  2. next to the library that dpdyn loaded: <dir>/dpdyn (the build tree), or <prefix>/bin/dpdyn
     for <prefix>/lib/libdpdyn.so (an installed prefix);
  3. `dpdyn` on PATH.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import warnings

import numpy as np

from . import _lib
from ._files import load
from ._run import Error, _choose, _desc, _encode, _shown, value_text

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Exit status of the CLI -> the library's status (docs: 1 invalid input, 2 numerical failure,
# 3 I/O failure).
_STATUS = {1: -1, 2: -3, 3: -5}


def executable():
    """The path of the dpdyn executable that dpdyn.sweep runs (see the module's text)."""
    env = os.environ.get("DPDYN_CLI")
    if env:
        if not os.access(env, os.X_OK):
            raise Error("DPDYN_CLI='%s' is not an executable file" % env)
        return env
    tried = []
    try:
        libpath = _lib.path()
    except OSError:
        libpath = None
    if libpath and os.sep in libpath:
        here = os.path.dirname(os.path.realpath(libpath))
        for cand in (os.path.join(here, "dpdyn"),
                     os.path.join(os.path.dirname(here), "bin", "dpdyn")):
            tried.append(cand)
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return cand
    found = shutil.which("dpdyn")
    if found:
        return found
    raise Error("dpdyn.sweep needs the dpdyn executable: none next to the library (%s) nor on "
                "PATH; build it (cmake --build build --target dpdyn) or set DPDYN_CLI to it" %
                (", ".join(tried) or "not loaded from a path"))


def _spec(name, value, desc):
    """The SPEC text of one key (docs/sweep.md): a list, tuple, range or 1-D array is an axis
    (its values joined by '|', each as dpdyn.run would pass it); anything else one value
    (text as is, so the CLI's own forms 'log:0.1:10:5' and '0.5,1,2' work too)."""
    if isinstance(value, (list, tuple, range, np.ndarray)):
        values = list(np.asarray(value).ravel()) if isinstance(value, np.ndarray) else list(value)
        if not values:
            raise Error("invalid value for '%s': an empty list (allowed: one value or a list "
                        "of at least one)" % name)
        texts = []
        for v in values:
            t = value_text(name, v, desc)
            if "|" in t:
                raise Error("invalid value for '%s': %s (allowed in a swept list: values "
                            "without '|', which separates them)" % (name, _shown(t)))
            texts.append(t)
        return "|".join(texts)
    return value_text(name, value, desc)


def sweep(command, model=None, out=None, ini=None, plot_y=None, **keys):
    """Runs `dpdyn sweep COMMAND` over a grid and returns its table as a Result (what
    dpdyn.load gives for the sweep's directory: tables["sweep.tsv"], points, summary).

    keys: the CLI's keys; a list (tuple, range, array) is an axis of the grid, e.g.
    sweep("simulate", d=100, seeds=8, c=[0.25, 0.5, 1], eta0="log:0.1:1:4"); model may be a
    list too. out: the sweep's directory (kept; an existing sweep of the same configuration
    is resumed, as the CLI does); None: a temporary directory, removed once read (then no
    figure is drawn and Result.path is None). ini: an INI file of the CLI (its [sweep] section
    included). plot_y: as the CLI's. Ctrl-C stops the sweep (the CLI removes the point in
    progress; complete points stay in `out`) and raises KeyboardInterrupt. Errors: dpdyn.Error
    with the CLI's message and status (-1 invalid input, -5 I/O failure); points that failed
    numerically (exit 2) are in the Result (failed=True) and named in a RuntimeWarning."""
    exe = executable()
    lib, ffi = _lib.lib(), _lib.ffi
    err = ffi.new("dpd_err *")
    first = model[0] if isinstance(model, (list, tuple)) and model else model
    m = _choose(command, first, err, list(keys))  # the kinds of the keys (integer, real, text)
    keysp = ffi.new("dpd_keys **")
    kset = None
    if lib.dpd_model_keys_create(m, command.encode(), keysp, err) >= 0:
        kset = ffi.gc(keysp[0], lib.dpd_keys_free)
    argv = [exe, "sweep", command]
    if ini is not None:
        argv.append(_encode(os.fspath(ini), "ini"))
    given = ([("model", model)] if model is not None else []) + list(keys.items())
    if plot_y is not None:
        given.append(("plot_y", plot_y))
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="dpdyn-sweep-")
        outdir = os.path.join(tmp, "sweep")
        if plot_y is None:
            given.append(("plot_y", "none"))
        if "plot" not in keys:
            given.append(("plot", 0))
    else:
        outdir = os.fspath(out)
    try:
        for name, value in given:
            if not isinstance(name, str) or not _NAME.match(name):
                _encode(name, name, True)  # NUL, surrogates: their own message
                raise Error("invalid key name %s (allowed: letters, digits and '_')" %
                            _shown(name))
            desc = _desc(kset, name.encode()) if kset is not None else None
            argv.append(b"--" + name.encode() + b"=" + _encode(_spec(name, value, desc), name))
        argv.append(b"--out=" + _encode(outdir, "out"))
        code, stdout, stderr = _run_child(argv)
        if code not in (0, 2):
            lines = [ln for ln in stderr.splitlines() if ln.strip()]
            message = lines[-1] if lines else "exit status %d" % code
            prefix = "dpdyn sweep: "
            message = message[len(prefix):] if message.startswith(prefix) else message
            raise Error(message, _STATUS.get(code, -5), "sweep")
        result = load(outdir)
        result.report = stdout
        result.notes = [ln for ln in stderr.splitlines() if ln.strip()]
        if code == 2:
            failed = [i for i, p in enumerate(result.points or []) if p.failed]
            warnings.warn("dpdyn sweep %s: %d point(s) failed numerically: %s" %
                          (command, len(failed), ", ".join(map(str, failed))),
                          RuntimeWarning, stacklevel=2)
        if tmp is not None:
            result.path = None
            for p in result.points or []:
                p.path = None
        return result
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _run_child(argv):
    """Runs the executable with an argument list; Ctrl-C: SIGINT to it, wait for its clean exit
    (SIGKILL after 30 s or a second Ctrl-C), KeyboardInterrupt."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        stdout, stderr = proc.communicate()
    except KeyboardInterrupt:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=30)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            proc.kill()
            proc.communicate()
        raise
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return (proc.returncode, stdout.decode("utf-8", "replace"),
            stderr.decode("utf-8", "replace"))
