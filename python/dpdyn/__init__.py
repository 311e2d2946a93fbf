"""dpdyn from Python: run any command of any model of the library, read any output directory.

    import dpdyn
    r = dpdyn.run("compare", d=500, n=2000, c=0.5, rho=2, seeds=64)
    r.summary["sup_gap_in_se"]                       # the summary, a dict
    r.tables["trajectory.tsv"]["excess_risk"]        # a column, a NumPy array
    r2 = dpdyn.load("dpdyn-out/quickstart")          # what the CLI wrote, as the same object

docs/python.md describes the package; the library is found through DPDYN_LIBRARY, the build
tree, or the system loader (dpdyn._lib).
"""
from ._files import load, read_table
from ._result import Result
from ._run import Error, commands, key_text, models, run, small
from . import _lib

__all__ = ["run", "load", "read_table", "read_ini", "Result", "Error", "models", "commands",
           "small", "key_text", "library_path", "version"]


def library_path():
    """Where libdpdyn was loaded from (loads it)."""
    return _lib.path()


def version():
    """The library's version ("MAJOR.MINOR.PATCH")."""
    return _lib.text(_lib.lib().dpd_version())


def read_ini(path):
    """The keys of an INI file as {key: text} (the CLI's rules: sections ignored but [sweep],
    whose keys are left out; ';' and '#' start comments, also after a value), ready for
    run(command, **read_ini(path))."""
    keys, section = {}, ""
    with open(path, encoding="utf-8") as f:
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
