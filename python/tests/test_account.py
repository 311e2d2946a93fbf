"""dpdyn.account (the accountant of include/dpdyn/account.h through cffi) against the CLI and
against independent formulas written here: the exact GDP conversion of the Gaussian mechanism
(scipy), and the RDP of the Poisson-subsampled Gaussian with its tight conversion (Mironov,
Talwar, Zhang 2019; Canonne, Kamath, Steinke 2020), re-implemented from the formulas."""
import json
import math

import pytest

import dpdyn
from conftest import cli

scipy_stats = pytest.importorskip("scipy.stats")
scipy_optimize = pytest.importorskip("scipy.optimize")


def test_agrees_with_the_cli(tmp_path):
    keys = dict(noise_multiplier=1, q=0.01, steps=1000, delta=1e-5)
    status, stderr = cli("account", "privacy", dict(keys, plot=0), tmp_path / "o")
    assert status == 0, stderr
    with open(tmp_path / "o" / "summary.json") as f:
        s = json.load(f)
    r = dpdyn.account.epsilon(**keys)
    for k in ("epsilon", "epsilon_estimate", "epsilon_lower", "epsilon_rdp", "mu_clt", "h"):
        assert s[k] == r[k], k
    run = dpdyn.run("account", model="privacy", plot=0, **keys)
    assert run.summary["epsilon"] == r["epsilon"]
    assert "curve.tsv" in run.tables


def gdp_eps(mu, delta):
    """eps of mu-GDP at delta (Dong, Roth, Su 2019, Cor. 2.13), solved by brentq."""
    Phi = scipy_stats.norm.cdf

    def f(e):
        return Phi(-e / mu + mu / 2) - math.exp(e) * Phi(-e / mu - mu / 2) - delta
    return scipy_optimize.brentq(f, 0.0, 10 * mu + mu * mu, xtol=1e-14, rtol=1e-14)


@pytest.mark.parametrize("sigma,steps,delta", [(2.0, 50, 1e-6), (1.0, 10, 1e-5), (5.0, 1000, 1e-8)])
def test_gaussian_is_exact_gdp(sigma, steps, delta):
    """q = 1: T Gaussian steps are exactly sqrt(T)/sigma-GDP: the exact eps lies between the
    reported PLD bounds, which are within the accuracy of each other."""
    r = dpdyn.account.epsilon(noise_multiplier=sigma, steps=steps, delta=delta,
                              mechanism="gaussian")
    exact = gdp_eps(math.sqrt(steps) / sigma, delta)
    assert r["epsilon_lower"] <= exact <= r["epsilon"]
    assert r["epsilon"] - r["epsilon_lower"] <= 0.01 * r["epsilon"] * (1 + 1e-9)


def rdp_orders():
    return list(range(2, 65)) + [80, 96, 128, 192, 256, 384, 512, 768, 1024]


def rdp_subsampled(q, sigma, alpha):
    """RDP of one Poisson-subsampled Gaussian step at integer alpha (Mironov, Talwar, Zhang
    2019, Sec. 3.3): log(sum_k binom(alpha, k) (1-q)^(alpha-k) q^k e^((k^2-k)/(2 sigma^2)))
    / (alpha - 1), summed in log space."""
    terms = [math.lgamma(alpha + 1) - math.lgamma(k + 1) - math.lgamma(alpha - k + 1) +
             (alpha - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * sigma * sigma)
             for k in range(alpha + 1)]
    top = max(terms)
    return (top + math.log(sum(math.exp(t - top) for t in terms))) / (alpha - 1)


def test_rdp_reimplemented():
    q, sigma, steps, delta = 0.02, 1.0, 300, 1e-5
    eps = min(steps * rdp_subsampled(q, sigma, a) + math.log1p(-1 / a) -
              (math.log(delta) + math.log(a)) / (a - 1) for a in rdp_orders())
    r = dpdyn.account.epsilon(noise_multiplier=sigma, q=q, steps=steps, delta=delta)
    assert r["epsilon_rdp"] == pytest.approx(eps, rel=1e-9)
    assert r["epsilon"] <= r["epsilon_rdp"]
    assert r["mu_clt"] == pytest.approx(q * math.sqrt(steps * math.expm1(1 / sigma ** 2)),
                                        rel=1e-12)


def test_inverse_never_overshoots():
    r = dpdyn.account.sigma_for(1.0, 1e-5, q=0.02, steps=200)
    assert r["epsilon"] <= 1.0
    below = dpdyn.account.epsilon(noise_multiplier=r["noise_multiplier"] * (1 - 1e-3), q=0.02,
                                  steps=200, delta=1e-5, h=r["h"])
    assert below["epsilon"] > 1.0
    t = dpdyn.account.steps_for(1.0, 1e-5, noise_multiplier=1.2, q=0.02, h=2e-4)
    assert t["epsilon"] <= 1.0 and t["steps"] >= 1
    more = dpdyn.account.epsilon(noise_multiplier=1.2, q=0.02, steps=t["steps"] + 1, delta=1e-5,
                                 h=2e-4)
    assert more["epsilon"] > 1.0


def test_delta_segments_and_errors():
    d = dpdyn.account.delta(1.84, noise_multiplier=1.0, q=0.01, steps=1000)
    assert 0 <= d["delta_lower"] <= d["delta"] <= 1e-5 <= d["delta_rdp"]
    two = dpdyn.account.epsilon(segments=[(1.5, 0.05, 100), (1.5, 0.05, 100)], delta=1e-6, h=2e-4)
    one = dpdyn.account.epsilon(noise_multiplier=1.5, q=0.05, steps=200, delta=1e-6, h=2e-4)
    assert two["epsilon"] == pytest.approx(one["epsilon"], rel=1e-6)
    with pytest.raises(dpdyn.Error, match=r"segments\[0\]\.q = 2 is invalid"):
        dpdyn.account.epsilon(noise_multiplier=1, q=2, steps=10, delta=1e-5)
    with pytest.raises(dpdyn.Error, match="neighbours"):
        dpdyn.account.epsilon(noise_multiplier=1, batch=10, n=100, steps=10, delta=1e-5,
                              sampling="fixed")
