"""dpdyn.load: both file layouts (the `# columns:` one and the header-row one), summary.json's
non-finite encoding, sweeps (sweep.tsv + points/<i>/), and a CLI directory round trip."""
import json
import math

import pytest

import subprocess

import dpdyn
from conftest import CLI, REPO, cli


def write(path, text):
    path.write_text(text)
    return path


def test_header_row_layout_with_nonfinite_tokens(tmp_path):
    write(tmp_path / "trajectory.tsv",
          "# dpdyn 0.1.0\n# command: ode\n# figure: ode\n# d = 20\n# c = inf\n"
          "t\texcess_risk\tode_upper_bound\n"
          "0\t0.5\tinf\n0.5\t0.2755180947\t-inf\n1\t0.1439429761\tnan\n")
    write(tmp_path / "summary.json", json.dumps({
        "command": "ode", "model": "linreg", "final_excess_risk": 0.17519297612288759,
        "bound": None, "gaps": {"sup": None}, "list": [1, None],
        "params": {"d": 20, "c": None, "schedule": "const"},
        "nonfinite": {"bound": "-inf", "params.c": "inf", "gaps.sup": "nan", "list.1": "inf"}}))
    r = dpdyn.load(tmp_path)
    t = r.tables["trajectory.tsv"]
    assert t.dtype.names == ("t", "excess_risk", "ode_upper_bound")
    assert t["excess_risk"][1] == 0.2755180947
    assert t["ode_upper_bound"][0] == math.inf and t["ode_upper_bound"][1] == -math.inf
    assert math.isnan(t["ode_upper_bound"][2])
    assert r.summary["bound"] == -math.inf and r.params["c"] == math.inf
    assert math.isnan(r.summary["gaps"]["sup"]) and r.summary["list"] == [1, math.inf]
    assert "nonfinite" not in r.summary
    assert r.summary["final_excess_risk"] == 0.17519297612288759
    assert r.meta["trajectory.tsv"]["d"] == "20" and r.figure == "ode"


def test_columns_line_layout(tmp_path):
    write(tmp_path / "release.tsv",
          "# dpdyn 0.1.0\n# command: simulate\n# d = 20\n# columns: t excess_risk\n"
          "# a comment line\n0    0.5\n1    0.1227626333\n\n")
    write(tmp_path / "summary.json", '{"command": "simulate", "rho": "inf", "x": 1.5}')
    r = dpdyn.load(tmp_path)
    assert r.tables["release.tsv"]["excess_risk"].tolist() == [0.5, 0.1227626333]
    assert r.summary["rho"] == math.inf and r.summary["x"] == 1.5


def test_a_ragged_row_is_refused(tmp_path):
    write(tmp_path / "a.tsv", "t\tx\n0\t1\n1\n")
    with pytest.raises(ValueError, match="row 2"):
        dpdyn.read_table(str(tmp_path / "a.tsv"))


def test_blocks_and_a_cli_directory_round_trip(tmp_path, cli_path):
    """tune writes a heat map in blocks (blank lines): every row comes back, and the summary
    equals the run's."""
    keys = dict(dpdyn.small("linreg"), plot=0)
    code, err = cli("tune", "linreg", keys, tmp_path / "tune")
    assert code == 0, err
    r = dpdyn.load(tmp_path / "tune")
    ran = dpdyn.run("tune", **keys)
    assert r.tables["heatmap.tsv"].shape == ran.tables["heatmap.tsv"].shape
    assert r.summary["final_excess_risk"] == ran.summary["final_excess_risk"]


def test_sweep(tmp_path, cli_path):
    keys = dict(dpdyn.small("linreg"), c="0.5,1", schedule="const|sqrt")
    argv = [CLI, "sweep", "simulate"] + ["--%s=%s" % kv for kv in keys.items()] + \
        ["--out=" + str(tmp_path / "sw"), "--plot_y=none"]
    p = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0, p.stderr
    r = dpdyn.load(tmp_path / "sw")
    s = r.tables["sweep.tsv"]
    assert len(r.points) == 4 == len(s)
    assert s["schedule"].tolist() == ["const", "sqrt", "const", "sqrt"]
    assert s["c"].tolist() == [0.5, 0.5, 1.0, 1.0]
    for i, point in enumerate(r.points):
        assert point.params["schedule"] == s["schedule"][i]
        assert point.summary["final_excess_risk"] == s["final_excess_risk"][i]  # bit for bit
        ran = dpdyn.run("simulate", **dict(dpdyn.small("linreg"), c=s["c"][i],
                                            schedule=s["schedule"][i]))
        assert ran.summary["final_excess_risk"] == s["final_excess_risk"][i]
    assert r.summary["sweep_command"] == "simulate" and r.model == "linreg"


def test_read_ini_gives_the_keys_of_the_quickstart():
    keys = dpdyn.read_ini(REPO + "/models/linreg/quickstart.ini")
    assert keys["n"] == "2000" and keys["c"] == "0.5" and keys["model"] == "linreg"
    assert keys["spectrum"] == "levels:0.4*200,1.0*200,2.2*100"


def test_load_needs_no_library(tmp_path):
    write(tmp_path / "summary.json", '{"command": "account"}')
    assert dpdyn.load(tmp_path).tables == {}
    with pytest.raises(FileNotFoundError):
        dpdyn.load(tmp_path / "missing")
