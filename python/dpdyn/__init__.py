"""dpdyn from Python: run any command of any model of the library, read any output directory.

    import dpdyn
    r = dpdyn.run("compare", d=500, n=2000, c=0.5, rho=2, seeds=64)
    r.summary["sup_gap_in_se"]                       # the summary, a dict
    r.tables["trajectory.tsv"]["excess_risk"]        # a column, a NumPy array
    r2 = dpdyn.load("dpdyn-out/quickstart")          # what the CLI wrote, as the same object
    s = dpdyn.sweep("simulate", d=100, seeds=8, c=[0.5, 1, 2])  # a sweep: s.tables["sweep.tsv"]
    dpdyn.account.epsilon(noise_multiplier=1, q=0.01, steps=1000, delta=1e-5)["epsilon"]
    m = dpdyn.dpsgd.train(X, y, classes=10, q=0.01, epochs=5, epsilon=1)  # DP-SGD: m.W, m.evaluate

docs/python.md describes the package; the library is found through DPDYN_LIBRARY, the build
tree, or the system loader (dpdyn._lib).
"""
from ._files import load, read_ini, read_table
from ._result import Result
from ._run import Error, commands, key_text, models, run, small
from ._sweep import executable, sweep
from . import _lib
from . import account
from . import dpsgd

__all__ = ["run", "sweep", "executable", "load", "read_table", "read_ini", "Result", "Error", "models", "commands",
           "small", "key_text", "library_path", "version", "kernel_path", "account", "dpsgd"]


def library_path():
    """Where libdpdyn was loaded from (loads it)."""
    return _lib.path()


def version():
    """The library's version ("MAJOR.MINOR.PATCH")."""
    return _lib.text(_lib.lib().dpd_version())


def kernel_path():
    """The vectorised kernel path in use ("avx512", "avx2" or "scalar"; DPD_ISA forces one, every
    path gives the same bits: docs/kernels.md)."""
    return _lib.text(_lib.lib().dpd_isa_name(_lib.lib().dpd_isa_get()))
