"""Reading output directories: data files, summaries, sweeps (dpdyn.load).

Data files come in two layouts, both read here (the first header style found decides):
  * `#` metadata lines, then one uncommented header row of tab-separated column names, then
    tab-separated rows (non-finite values as inf, -inf, nan);
  * the older layout: `#` lines among which `# columns: a b c`, then rows whose columns are
    separated (aligned) by spaces.
Blank lines (gnuplot's block separators) are skipped. Metadata lines `# key = value` are kept.
"""
import json
import os
import re
import stat

import numpy as np

from ._result import Result, summary_decode, table_from_columns
from ._run import Error

_META = re.compile(r"^#\s*([^=:]+?)\s*[=:]\s*(.*)$")


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def open_regular(path):
    """Opens a regular file for reading as UTF-8 text; anything else (a FIFO, which would block
    until a writer comes, a device such as /dev/zero, a directory) is dpdyn.Error naming the path
    at once. The file is opened without blocking, checked with fstat (links followed), then
    read normally."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise Error("'%s' is a directory (allowed: a regular file)" % path) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((k for test, k in _KINDS if test(mode)), "not a regular file")
            raise Error("'%s' is %s (allowed: a regular file)" % (path, kind))
        os.set_blocking(fd, True)
        return os.fdopen(fd, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def read_ini(path):
    """The keys of an INI file as {key: text} (the CLI's rules: sections ignored but [sweep],
    whose keys are left out; ';' and '#' start comments, also after a value), ready for
    run(command, **read_ini(path)). A path that is not a regular file is dpdyn.Error."""
    keys, section = {}, ""
    with open_regular(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in ";#":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                continue
            if section == "sweep" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            for mark in (" ;", "\t;", " #", "\t#"):
                if mark in value:
                    value = value[:value.index(mark)]
            keys[key.strip()] = value.strip()
    return keys


def read_table(path):
    """One data file -> (structured array, metadata dict of its `# key = value` lines)."""
    names = None
    legacy = False
    rows = []
    meta = {}
    with open_regular(path) as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                if names is None and line.startswith("# columns:"):
                    names = line[len("# columns:"):].split()
                    legacy = True
                    continue
                m = _META.match(line)
                if m and m.group(1) not in meta:
                    meta[m.group(1)] = m.group(2)
                continue
            if names is None:
                names = line.split("\t")
                continue
            rows.append(line.split() if legacy else line.split("\t"))
    if names is None:
        raise ValueError("%s: no column names (neither a header row nor '# columns:')" % path)
    for i, r in enumerate(rows):
        if len(r) != len(names):
            raise ValueError("%s: data row %d has %d fields, the header %d" %
                             (path, i + 1, len(r), len(names)))
    columns = []
    for k in range(len(names)):
        cells = [r[k] for r in rows]
        try:
            columns.append(np.array([float(c) for c in cells], dtype="f8"))
        except ValueError:  # a text column (a swept text key of sweep.tsv)
            columns.append(np.array(cells, dtype=str))
    return table_from_columns(names, columns), meta


def read_summary(path):
    with open_regular(path) as f:
        return summary_decode(json.load(f))


def load(outdir):
    """Reads an output directory of dpdyn (any command; a sweep's directory with sweep.tsv and
    points/<i>/) into a Result. The library is not needed."""
    outdir = os.fspath(outdir)
    if not os.path.isdir(outdir):
        raise FileNotFoundError("dpdyn.load: no directory '%s'" % outdir)
    failed = os.path.join(outdir, "failed.json")
    if os.path.exists(failed) and not os.path.exists(os.path.join(outdir, "summary.json")):
        return Result(read_summary(failed), {}, path=outdir, failed=True)
    summary_path = os.path.join(outdir, "summary.json")
    summary = read_summary(summary_path) if os.path.exists(summary_path) else {}
    tables = {}
    meta = {}
    for name in sorted(os.listdir(outdir)):
        if name.endswith(".tsv") and os.path.isfile(os.path.join(outdir, name)):
            tables[name], meta[name] = read_table(os.path.join(outdir, name))
    points = None
    pdir = os.path.join(outdir, "points")
    if "sweep.tsv" in tables and os.path.isdir(pdir):
        names = sorted((n for n in os.listdir(pdir) if n.isdigit()), key=int)
        points = [load(os.path.join(pdir, n)) for n in names]
    figure = None
    for t in meta.values():
        figure = figure or t.get("figure")
    result = Result(summary, tables, points=points, path=outdir, figure=figure)
    result.meta = meta
    return result
