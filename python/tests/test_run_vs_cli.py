"""dpdyn.run against the CLI, for every command of every model of the registry (the models'
small problems): every summary number is the same double, every table column is what the CLI
wrote, digit for digit (its files print %.10g, so the run's column printed the same way must
read back as the file's value, bit for bit), and load() reads the CLI's directory into the same
summary as the run's."""
import math

import numpy as np
import pytest

import dpdyn
from conftest import cli, registry

SKIP = {"wall_seconds"}  # the time of the run, different by nature
SKIP_PARAMS = {"out"}    # where the CLI wrote: the run writes nothing


def keys_of(model, command):
    keys = dict(dpdyn.small(model))
    keys["plot"] = "0"  # no gnuplot
    return keys


def same(a, b, path, diffs):
    """Exact equality of two decoded summaries (floats bit for bit, nan == nan)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in SKIP or (path == "params" and k in SKIP_PARAMS):
                continue
            if k not in a or k not in b:
                diffs.append("%s.%s only in %s" % (path, k, "run" if k in a else "cli"))
                continue
            same(a[k], b[k], path + "." + k if path else k, diffs)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, "%s.%d" % (path, i), diffs)
    elif isinstance(a, float) or isinstance(b, float):
        x, y = float(a), float(b)
        if not (x == y or (math.isnan(x) and math.isnan(y))) or \
                np.signbit(x) != np.signbit(y) or type(a) is bool or type(b) is bool:
            diffs.append("%s: run %r cli %r" % (path, a, b))
    elif a != b or type(a) is not type(b):
        diffs.append("%s: run %r cli %r" % (path, a, b))


def column_matches(run_col, file_col):
    """'exact' when the file holds the very doubles, '10g' when it holds them printed with %.10g
    (read back bit for bit), None otherwise."""
    if np.array_equal(run_col, file_col, equal_nan=True):
        return "exact"
    printed = np.array([float("%.10g" % x) for x in run_col])
    if np.array_equal(printed.view(np.uint64)[~np.isnan(printed)],
                      file_col.view(np.uint64)[~np.isnan(file_col)]) and \
            np.array_equal(np.isnan(printed), np.isnan(file_col)):
        return "10g"
    return None


@pytest.mark.parametrize("model,command", registry())
def test_run_equals_cli(model, command, tmp_path, cli_path):
    keys = keys_of(model, command)
    out = tmp_path / "out"
    code, err = cli(command, model, keys, out)
    assert code == 0, err
    ran = dpdyn.run(command, model=model, **keys)
    loaded = dpdyn.load(out)
    diffs = []
    same(ran.summary, loaded.summary, "", diffs)
    assert not diffs, "%s %s: summaries differ:\n%s" % (model, command, "\n".join(diffs))
    assert set(ran.tables) == set(loaded.tables)
    for name, table in ran.tables.items():
        f = loaded.tables[name]
        assert table.dtype.names == f.dtype.names, name
        assert table.shape == f.shape, name
        for col in table.dtype.names:
            assert column_matches(table[col], f[col]) is not None, \
                "%s %s %s column %s: run %s, cli %s" % (model, command, name, col,
                                                       table[col][:5], f[col][:5])
    assert ran.params["model"] == model
    assert ran.model == model and ran.command == command


def test_every_model_and_command_is_covered():
    pairs = registry()
    assert {m for m, _ in pairs} >= {"linreg", "rf", "nc", "semipriv"}
    assert ("rf", "ou") in pairs and ("linreg", "tune") in pairs and ("nc", "diagnose") in pairs


def test_a_wrong_value_is_caught_by_the_comparison():
    """Negative controls of the comparison helpers: one ulp apart, or one digit, is a failure."""
    a = {"x": 0.1, "params": {"d": 20}}
    diffs = []
    same(a, {"x": np.nextafter(0.1, 1.0), "params": {"d": 20}}, "", diffs)
    assert diffs
    diffs = []
    same(a, {"x": 0.1, "params": {"d": 21}}, "", diffs)
    assert diffs
    col = np.array([1.0 / 3.0, 2.385])
    assert column_matches(col, np.array([0.3333333333, 2.385])) == "10g"
    assert column_matches(col, np.array([0.3333333334, 2.385])) is None
    assert column_matches(col, col.copy()) == "exact"


def test_run_is_deterministic_and_the_model_defaults_like_the_cli():
    keys = dict(dpdyn.small("rf"), plot=0)
    a = dpdyn.run("ou", **keys)  # no model: the CLI's rule picks rf (the model with ou)
    b = dpdyn.run("ou", model="rf", **keys)
    assert a.model == "rf"
    for name in a.tables:
        for col in a.tables[name].dtype.names:
            assert np.array_equal(a.tables[name][col], b.tables[name][col], equal_nan=True)


def test_python_values_become_key_texts():
    assert dpdyn.key_text(0.1) == "0.1"
    assert dpdyn.key_text(1e-10) == "1e-10"
    assert dpdyn.key_text(float("inf")) == "inf"
    assert dpdyn.key_text(True) == "1"
    assert dpdyn.key_text(np.int64(20)) == "20"
    r = dpdyn.run("ode", d=20, n=80, c=0.5, rho=math.inf, eta0=np.float64(1.5), grid=11)
    assert r.params["rho"] == math.inf and r.params["c"] == 0.5 and r.params["eta0"] == 1.5
