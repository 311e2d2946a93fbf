"""model=semipriv with trainer=dpsgd (docs/semipriv.md, "DP-SGD trainer (trainer=dpsgd)") from
Python: dpdyn.run gives the CLI's numbers bit for bit on the data law and on a 3-class file with a
public split, and dpdyn.sweep over epsilon gives the CLI's sweep bit for bit."""
import subprocess

import numpy as np

import dpdyn
from conftest import REPO, cli
from test_run_vs_cli import column_matches, same
from test_sweep import same as same_bits, strip

LAW = dict(model="semipriv", trainer="dpsgd", d=20, k=3, n=120, n_public=60, n_test=100,
           seeds=3, epsilon=1, q=0.05, epochs=4, plot=0)


def three_class_files(tmp_path):
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(3, 12))

    def make(n):
        y = rng.integers(0, 3, n)
        return np.column_stack([y, centres[y] + 0.3 * rng.normal(size=(n, 12))])
    np.save(tmp_path / "train.npy", make(400))
    np.save(tmp_path / "test.npy", make(100))
    return dict(features="file:%s" % (tmp_path / "train.npy"),
                test_features="file:%s" % (tmp_path / "test.npy"))


def run_and_cli(keys, tmp_path, cli_path):
    keys = {k: str(v) for k, v in keys.items()}
    model = keys.pop("model")
    code, err = cli("simulate", model, keys, tmp_path / "out")
    assert code == 0, err
    ran = dpdyn.run("simulate", model=model, **keys)
    loaded = dpdyn.load(tmp_path / "out")
    diffs = []
    same(ran.summary, loaded.summary, "", diffs)
    assert not diffs, "\n".join(diffs)
    table, f = ran.tables["replicates.tsv"], loaded.tables["replicates.tsv"]
    assert table.dtype.names == f.dtype.names
    for col in table.dtype.names:
        assert column_matches(table[col], f[col]) is not None, col
    return ran


def test_law_dpsgd_run_equals_cli(tmp_path, cli_path):
    ran = run_and_cli(LAW, tmp_path, cli_path)
    assert ran.summary["trainer"] == "dpsgd"
    assert ran.summary["privacy"]["epsilon_pld"] <= 1.0
    assert "clipped_fraction" in ran.tables["replicates.tsv"].dtype.names


def test_file_split_dpsgd_run_equals_cli(tmp_path, cli_path):
    keys = dict(model="semipriv", trainer="dpsgd", k=4, public_fraction=0.1,
                private_fraction=0.5, seeds=3, epsilon=2, q=0.05, epochs=3, plot=0,
                **three_class_files(tmp_path))
    ran = run_and_cli(keys, tmp_path, cli_path)
    assert ran.summary["classes"] == 3
    assert ran.summary["n_public"] == 40 and ran.summary["n_private"] == 180


def test_dpsgd_sweep_equals_the_clis(tmp_path, cli_path):
    keys = {k: v for k, v in LAW.items() if k != "plot"}
    subprocess.run([cli_path, "sweep", "simulate"] +
                   ["--%s=%s" % (k, v) for k, v in keys.items() if k != "epsilon"] +
                   ["--epsilon=0.5,inf", "--plot_y=test_accuracy", "--plot=0",
                    "--out=%s" % (tmp_path / "cli")], check=True, capture_output=True, cwd=REPO)
    cli_sweep = dpdyn.load(tmp_path / "cli")
    keys.pop("epsilon")
    py = dpdyn.sweep("simulate", epsilon=[0.5, float("inf")], plot_y="test_accuracy", **keys)
    assert py.tables["sweep.tsv"].tobytes() == cli_sweep.tables["sweep.tsv"].tobytes()
    for p, c in zip(py.points, cli_sweep.points):
        assert same_bits(strip(p.summary), strip(c.summary))
