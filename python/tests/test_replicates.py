"""Per-replicate values (save_replicates, docs/output.md): Result.replicates and
Result.replicates_trajectory are there exactly when asked, equal the CLI's files digit for digit,
and reproduce the summary: the mean of a replicate column is the summary's mean of it, and its
sample standard deviation / sqrt(seeds) the summary's standard error (the summary is reduced from
the same doubles, in replicate order: equal to rounding, rtol 1e-12). The trajectory's mean over
replicates is trajectory.tsv's column of the same name."""
import numpy as np
import pytest

import dpdyn
from conftest import cli
from test_run_vs_cli import column_matches

# (model, command, extra keys, {replicates.tsv column: (summary mean, summary SE or None)},
#  replicates_trajectory.tsv columns that average to trajectory.tsv's)
CASES = [
    ("linreg", "simulate", {"c": "1", "rho": "2"},
     {"final_excess_risk": ("final_excess_risk", "final_excess_risk_se"),
      "excess_risk_before_release": ("excess_risk_before_release",
                                     "excess_risk_before_release_se"),
      "clipped_fraction": ("clipped_fraction", None)},
     ["excess_risk", "clipped_fraction"]),
    ("linreg", "sde", {"c": "1", "rho": "2"},
     {"final_excess_risk": ("final_excess_risk", "final_excess_risk_se"),
      "excess_risk_before_release": ("excess_risk_before_release",
                                     "excess_risk_before_release_se"),
      "expected_clipped_fraction": ("expected_clipped_fraction", None)},
     ["excess_risk", "expected_clipped_fraction"]),
    ("linreg", "compare", {"c": "1", "rho": "2", "sde": "1", "seeds": "8"},
     {"final_excess_risk": ("final_excess_risk", "final_excess_risk_se"),
      "sde_final_excess_risk": ("sde_final_excess_risk", "sde_final_excess_risk_se"),
      "sde_excess_risk_before_release": ("sde_excess_risk_before_release",
                                         "sde_excess_risk_before_release_se")},
     ["excess_risk", "clipped_fraction", "sde_excess_risk"]),
    ("rf", "simulate", {},
     {"final_test_risk": ("final_test_risk", "final_test_risk_se"),
      "final_train_risk": ("final_train_risk", "final_train_risk_se")},
     ["train_risk", "test_risk"]),
    ("rf", "compare", {"seeds": "8"},
     {"final_test_risk": ("final_test_risk", "final_test_risk_se")},
     ["test_risk"]),
]


def keys_for(model, extra, level):
    keys = dict(dpdyn.small(model))
    keys.update(extra)
    keys["plot"] = "0"
    if level is not None:
        keys["save_replicates"] = str(level)
    return keys


@pytest.mark.parametrize("model,command,extra,finals,curves", CASES)
def test_present_iff_asked(model, command, extra, finals, curves):
    for level in (None, 0, 1, 2):
        r = dpdyn.run(command, model=model, **keys_for(model, extra, level))
        want = level or 0
        assert (r.replicates is not None) == (want >= 1), (model, command, level)
        assert (r.replicates_trajectory is not None) == (want >= 2), (model, command, level)
        names = set(r.summary.get("data_files", []))
        assert ("replicates.tsv" in names) == (want >= 1)
        assert ("replicates_trajectory.tsv" in names) == (want >= 2)


@pytest.mark.parametrize("model,command,extra,finals,curves", CASES)
def test_replicates_reproduce_the_summary(model, command, extra, finals, curves):
    r = dpdyn.run(command, model=model, **keys_for(model, extra, 2))
    seeds = int(r.params["seeds"])
    reps = r.replicates
    assert len(reps) == seeds
    assert np.array_equal(reps["replicate"], np.arange(seeds))
    for column, (mean_key, se_key) in finals.items():
        x = reps[column]
        assert np.mean(x) == pytest.approx(r[mean_key], rel=1e-12, abs=1e-15), column
        if se_key is not None:
            se = np.std(x, ddof=1) / np.sqrt(seeds)
            assert se == pytest.approx(r[se_key], rel=1e-10, abs=1e-15), column
    traj = r.tables["trajectory.tsv"]
    grid = len(traj)
    assert len(r.replicates_trajectory) == seeds * grid
    for column in curves:
        c = r.replicate_curves(column)
        assert c.shape == (seeds, grid)
        assert np.allclose(c.mean(axis=0), traj[column], rtol=1e-12, atol=1e-15), column
    # a wrong pairing is rejected: the test SE is not the replicate SD (negative control)
    column, (mean_key, se_key) = next(iter(finals.items()))
    if se_key is not None and r[se_key] > 0:
        assert np.std(reps[column], ddof=1) != pytest.approx(r[se_key], rel=1e-6)


@pytest.mark.parametrize("model,command,extra,finals,curves", CASES)
def test_equal_to_the_cli_files(model, command, extra, finals, curves, tmp_path, cli_path):
    keys = keys_for(model, extra, 2)
    code, err = cli(command, model, keys, tmp_path / "out")
    assert code == 0, err
    loaded = dpdyn.load(tmp_path / "out")
    ran = dpdyn.run(command, model=model, **keys)
    for name in ("replicates", "replicates_trajectory"):
        a, b = getattr(ran, name), getattr(loaded, name)
        assert a is not None and b is not None, name
        assert a.dtype.names == b.dtype.names and a.shape == b.shape, name
        for col in a.dtype.names:
            assert column_matches(a[col], b[col]) is not None, (name, col)


@pytest.mark.parametrize("model,extra", [
    ("nc", {}),
    ("semipriv", {}),
])
def test_nc_semipriv_keep_replicates_by_default(model, extra):
    keys = keys_for(model, extra, None)
    r = dpdyn.run("simulate", model=model, **keys)
    seeds = int(r.params["seeds"])
    assert r.replicates is not None and len(r.replicates) == seeds
    assert r.replicates_trajectory is None
    column, mean_key, se_key = (("test_error", "test_error", "test_error_se") if model == "nc"
                                else ("test_accuracy", "test_accuracy", "test_accuracy_se"))
    x = r.replicates[column]
    assert np.mean(x) == pytest.approx(r[mean_key], rel=1e-12, abs=1e-15)
    assert np.std(x, ddof=1) / np.sqrt(seeds) == pytest.approx(r[se_key], rel=1e-10, abs=1e-15)
    keys["save_replicates"] = "0"
    assert dpdyn.run("simulate", model=model, **keys).replicates is None
    keys["save_replicates"] = "2"
    with pytest.raises(dpdyn.Error, match="save_replicates"):
        dpdyn.run("simulate", model=model, **keys)


def test_bad_value_names_the_key():
    keys = keys_for("linreg", {}, None)
    for bad in ("3", "yes", "-1"):
        keys["save_replicates"] = bad
        with pytest.raises(dpdyn.Error, match=r"save_replicates.*allowed"):
            dpdyn.run("simulate", model="linreg", **keys)
