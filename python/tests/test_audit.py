"""dpdyn.run("audit", ...): the empirical privacy audit from Python (docs/privacy.md, "Empirical
audit"): the lower bounds below the accountant's upper bounds, the runs table, bad input."""
import pytest

import dpdyn


def test_linreg_audit_runs_and_bounds():
    r = dpdyn.run("audit", d=20, n=200, c=1, rho=1, runs=200, plot=0)
    s = r.summary
    assert s["runs"] == 200 and s["audit_confidence"] == 0.95
    assert 0 <= s["epsilon_lower"] <= s["epsilon_upper"]
    assert s["mu_lower"] <= s["mu_upper"] == 1
    assert s["mu_hat_lo"] <= s["mu_hat"] <= s["mu_hat_hi"]
    runs = r.tables["audit_runs.tsv"]
    assert runs.shape == (400,)
    assert set(runs["side"]) == {0.0, 1.0}
    assert "audit_tradeoff.tsv" in r.tables and "audit_curve.tsv" in r.tables


def test_rf_audit_runs_and_bounds():
    r = dpdyn.run("audit", model="rf", d=20, n=10, p=200, steps=20, mu=1, clip=1, runs=100,
                  plot=0)
    s = r.summary
    assert 0 <= s["epsilon_lower"] <= s["epsilon_upper"]
    assert 0 < s["mu_canary"] <= s["mu_upper"]


def test_audit_refuses_a_non_private_run():
    with pytest.raises(dpdyn.Error, match="'rho'"):
        dpdyn.run("audit", d=20, n=200, c=1, runs=200, plot=0)
