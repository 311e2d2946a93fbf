"""dpdyn.run("interpolate" | "sensitivity", model="rf"): the overparameterization studies from
Python (docs/overparameterization.md): the tables and summaries, the numbers' relations, and the
bad input the commands refuse before any work."""
import numpy as np
import pytest

import dpdyn


def test_interpolate_runs_and_its_numbers_hold_together():
    r = dpdyn.run("interpolate", model="rf", n=40, d=10, p_over_n="0.5,2,8", seeds=2,
                  activation="hermite134", input="sphere", plot=0)
    s = r.summary
    t = r.tables["interpolate.tsv"]
    assert list(t["p_over_n"]) == [0.5, 2, 8] and list(t["p"]) == [20, 80, 320]
    assert s["lambda_min"] == t["lambda_min"][-1] and s["theta_star_norm"] == t["theta_star_norm"][-1]
    assert abs(t["lambda_min"][0]) < 1e-10          # p < n: the Gram is singular
    assert np.all(t["lambda_min"][1:] > 0) and s["residual"] < 1e-8
    assert 0 < s["bound"] <= s["hermite_sum"] <= s["kernel_lambda_min"] <= s["kernel_lambda_max"]
    h = r.tables["hermite.tsv"]
    assert h["mu_r"][0] == 0 and h["mu_r"][2] == 0 and h["mu_r"][1] == 1  # phi_0 = phi_2 = 0
    assert r.params["p"] == 320


def test_sensitivity_runs_for_theta_star_and_dpgd():
    r = dpdyn.run("sensitivity", model="rf", n_list="20,40", p=200, d=50, n_test=50, seeds=2,
                  steps=30, epsilon=2, clip=1, zeta=0.5, plot=0)
    s = r.summary
    t = r.tables["sensitivity.tsv"]
    assert list(t["n"]) == [20, 40] and s["vary"] == "n"
    assert s["sensitivity_q10"] <= s["sensitivity_q50"] <= s["sensitivity_q90"]
    assert s["sensitivity_mean"] > 0 and s["sensitivity_dpgd_mean"] > 0
    assert np.all(t["sigma"] > 0) and np.allclose(t["epsilon"], 2, rtol=1e-6)
    assert s["predicted_exponent"] == 0.5 and s["mu_1"] > 0


def test_sensitivity_refuses_an_activation_outside_the_theorem():
    with pytest.raises(dpdyn.Error, match="'activation'.*mu_1"):
        dpdyn.run("sensitivity", model="rf", activation="abs_centered", predict="theorem",
                  n_list="20,40", p=100, d=10, plot=0)
    with pytest.raises(dpdyn.Error, match="'p_list'"):
        dpdyn.run("sensitivity", model="rf", n_list="20,40", p_list="100,200", plot=0)
