"""dpdyn.sweep: the CLI's sweep, its numbers bit for bit, from Python."""
import math
import os
import subprocess

import pytest

import dpdyn
from conftest import CLI, REPO

KEYS = dict(d=20, n=80, seeds=3, grid=11, rho=2)


def same(a, b):
    """Equal bit for bit (NaN equal to NaN, -0 unequal to 0)."""
    if isinstance(a, float) and isinstance(b, float):
        return a.hex() == b.hex() if not (math.isnan(a) and math.isnan(b)) else True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def strip(summary):
    s = dict(summary)
    s.pop("wall_seconds", None)
    # out: where it was written; plot: the figure (dpdyn.run draws none and records no plot)
    s["params"] = {k: v for k, v in s.get("params", {}).items() if k not in ("out", "plot")}
    return s


def test_sweep_equals_the_clis_bit_for_bit(tmp_path, cli_path):
    subprocess.run([cli_path, "sweep", "simulate"] + ["--%s=%s" % kv for kv in KEYS.items()] +
                   ["--c=0.5,1", "--schedule=const|sqrt", "--plot_y=none", "--plot=0",
                    "--out=%s" % (tmp_path / "cli")], check=True, capture_output=True, cwd=REPO)
    cli = dpdyn.load(tmp_path / "cli")
    py = dpdyn.sweep("simulate", c=[0.5, 1], schedule=("const", "sqrt"), **KEYS)
    assert py.path is None
    assert py.tables["sweep.tsv"].dtype == cli.tables["sweep.tsv"].dtype
    assert py.tables["sweep.tsv"].tobytes() == cli.tables["sweep.tsv"].tobytes()
    assert len(py.points) == len(cli.points) == 4
    for p, c in zip(py.points, cli.points):
        assert same(strip(p.summary), strip(c.summary))
        assert p.tables.keys() == c.tables.keys()
        for name in p.tables:
            assert p.tables[name].tobytes() == c.tables[name].tobytes(), name
    # and a point is what dpdyn.run gives for its keys (summary numbers round-trip exactly)
    run = dpdyn.run("simulate", c=1, schedule="sqrt", **KEYS)
    assert same(strip(py.points[3].summary), strip(run.summary))


def test_sweep_into_a_given_directory_keeps_it(tmp_path):
    out = tmp_path / "s"
    r = dpdyn.sweep("ode", model="linreg", d=20, n=80, rho=2, c=range(1, 3), out=out,
                    plot_y="none")
    assert r.path == str(out) and (out / "sweep.tsv").is_file()
    assert list(r.tables["sweep.tsv"]["c"]) == [1.0, 2.0]
    again = dpdyn.sweep("ode", model="linreg", d=20, n=80, rho=2, c=range(1, 3), out=out,
                        plot_y="none")  # resumed: every point complete
    assert again.tables["sweep.tsv"].tobytes() == r.tables["sweep.tsv"].tobytes()


def test_the_clis_own_specs_and_integral_floats(tmp_path):
    r = dpdyn.sweep("ode", d=20, n=[8e1, 160], rho=2, c="log:0.5:2:3")
    assert list(r.tables["sweep.tsv"]["n"]) == [80.0, 80.0, 80.0, 160.0, 160.0, 160.0]
    assert list(r.tables["sweep.tsv"]["c"]) == [0.5, 1.0, 2.0] * 2


def test_run_sweep_points_to_dpdyn_sweep():
    """It was a bare TypeError."""
    with pytest.raises(dpdyn.Error, match=r"dpdyn\.sweep\("):
        dpdyn.run("sweep", d=20, c=[1, 2])


def test_sweep_errors_carry_the_clis_message(cli_path):
    with pytest.raises(dpdyn.Error) as e:
        dpdyn.sweep("simulate", d=20, n=80, c=[1, -1])
    assert e.value.status == -1
    assert "invalid value for 'c': -1" in str(e.value)
    with pytest.raises(dpdyn.Error, match=r"'n': 1.5 \(must be an integer"):
        dpdyn.sweep("simulate", d=20, n=[80, 1.5])
    with pytest.raises(dpdyn.Error, match=r"'schedule': 'a\|b' .*'\|'"):
        dpdyn.sweep("simulate", d=20, n=80, schedule=["const", "a|b"])
    with pytest.raises(dpdyn.Error, match=r"invalid key name '--d' "):
        dpdyn.sweep("simulate", **{"--d": 20})


def test_the_executable_is_the_one_beside_the_library():
    if "DPDYN_CLI" in os.environ:
        assert dpdyn.executable() == os.environ["DPDYN_CLI"]
    else:
        assert os.path.samefile(dpdyn.executable(), CLI)
