"""Result: what a run returns and what `load` reads back (summary, tables, notes)."""
import json
import math

import numpy as np

_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class Result:
    """The output of one run (or of a sweep: then `points` lists the points' results).

    summary  dict: the summary (summary.json); numbers are floats or ints, non-finite ones
             included (inf as float('inf')); `params` holds the keys in effect
    tables   dict: file name -> structured NumPy array, one float field per column
             (result.tables["trajectory.tsv"]["excess_risk"]); sweep.tsv keeps its text
             columns (a swept text key) as strings
    notes    list of the run's notes and warnings (the lines the CLI prints on stderr)
    report   the text the CLI prints on stdout ('' when loaded from a directory)
    points   for a sweep: one Result per point, in grid order (a failed point: failed=True and
             its failed.json as summary); None otherwise
    path     the directory it was loaded from (None for dpdyn.run)
    replicates             replicates.tsv (save_replicates >= 1): one row per replicate, its
                           final values by name (result.replicates["final_excess_risk"]);
                           None when the run did not write it
    replicates_trajectory  replicates_trajectory.tsv (save_replicates = 2), long format: one
                           row per replicate and grid point; None when absent.
                           result.replicate_curves("excess_risk") gives it as a
                           (seeds, grid) array
    """

    def __init__(self, summary, tables, notes=(), report="", headline="", figure=None,
                 points=None, path=None, failed=False):
        self.summary = summary
        self.tables = tables
        self.notes = list(notes)
        self.report = report
        self.headline = headline
        self.figure = figure
        self.points = points
        self.path = path
        self.failed = failed

    @property
    def params(self):
        """The keys in effect (summary["params"])."""
        return self.summary.get("params", {})

    @property
    def command(self):
        return self.summary.get("command")

    @property
    def model(self):
        return self.summary.get("model", self.params.get("model"))

    @property
    def replicates(self):
        """replicates.tsv as a structured array (one row per replicate), None when absent."""
        return self.tables.get("replicates.tsv")

    @property
    def replicates_trajectory(self):
        """replicates_trajectory.tsv as a structured array (long format: one row per replicate
        and grid point, replicate-major), None when absent."""
        return self.tables.get("replicates_trajectory.tsv")

    def replicate_curves(self, column):
        """A column of replicates_trajectory.tsv as a (seeds, grid) array: row r is replicate
        r on the grid (np.mean(..., axis=0) is trajectory.tsv's column of the same name)."""
        t = self.replicates_trajectory
        if t is None:
            raise KeyError("no replicates_trajectory.tsv: run with save_replicates=2")
        seeds = int(t["replicate"].max()) + 1 if len(t) else 0
        return np.asarray(t[column]).reshape(seeds, -1)

    def __getitem__(self, key):
        """result["final_excess_risk"]: a summary value."""
        return self.summary[key]

    def __repr__(self):
        what = self.command or "?"
        if self.summary.get("sweep_command"):
            what += " " + self.summary["sweep_command"]
        return "<dpdyn.Result %s model=%s tables=%s%s>" % (
            what, self.model, list(self.tables),
            "" if self.points is None else " points=%d" % len(self.points))


def _walk_strings(obj):
    """Legacy summaries (and today's library) write +-inf as the strings "inf"/"-inf": numbers."""
    if isinstance(obj, dict):
        return {k: _walk_strings(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_walk_strings(v) for v in obj]
    if isinstance(obj, str) and obj in _NONFINITE:
        return _NONFINITE[obj]
    return obj


def _path_set(obj, path, value):
    """Sets the null at a dotted path ("params.c", "list.0"); a key holding a dot matches whole
    first. Returns whether it was found."""
    if isinstance(obj, dict) and path in obj:
        if obj[path] is None:
            obj[path] = value
        return True
    if isinstance(obj, list) and path.isdigit() and int(path) < len(obj):
        if obj[int(path)] is None:
            obj[int(path)] = value
        return True
    start = 0
    while True:
        dot = path.find(".", start)
        if dot < 0:
            return False
        head, rest = path[:dot], path[dot + 1:]
        sub = None
        if isinstance(obj, dict):
            sub = obj.get(head)
        elif isinstance(obj, list) and head.isdigit() and int(head) < len(obj):
            sub = obj[int(head)]
        if isinstance(sub, (dict, list)) and _path_set(sub, rest, value):
            return True
        start = dot + 1


def summary_decode(obj):
    """A summary as read from JSON -> Python: the "nonfinite" object (dotted path -> "inf",
    "-inf", "nan") put back in place as floats and removed; legacy "inf" strings as floats."""
    if isinstance(obj, dict) and isinstance(obj.get("nonfinite"), dict):
        nonfinite = obj.pop("nonfinite")
        for key, token in nonfinite.items():
            if token in _NONFINITE:
                _path_set(obj, key, _NONFINITE[token])
    return _walk_strings(obj)


def summary_parse(text):
    """summary.json's text (dpd_output_summary_print: non-finite numbers under "nonfinite")
    -> decoded summary."""
    return summary_decode(json.loads(text))


def table_from_columns(names, columns):
    """A structured array with one float64 field per column (columns: 1-D arrays)."""
    rows = len(columns[0]) if columns else 0
    dtype = [(n, np.asarray(c).dtype if np.asarray(c).dtype.kind == "U" else "f8")
             for n, c in zip(names, columns)]
    arr = np.empty(rows, dtype=dtype)
    for n, c in zip(names, columns):
        arr[n] = c
    return arr
