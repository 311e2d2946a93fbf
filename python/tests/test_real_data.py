"""linreg on a dataset from a file (docs/real_data.md) against code written here from the
specification alone (issue 27; /work/shared/docs/MATH.md §1.3-1.7):

* an independent NumPy DP-SGD on the rows of scikit-learn's digits (1,797 x 64, bundled: no
  download), in law: the mean released excess risk and the risk before release of dpdyn's
  simulate agree with the NumPy replicates within 4 standard errors of the difference (both
  sides redraw the rows, without replacement, and the privacy noise; independent streams);
* the deterministic equivalent built from the data's own spectrum: dpdyn's ode (both kinds of
  clipping factors) against SciPy's solve_ivp of the same equations to 1e-6 of R(0).

The preprocessing is the documented one: features centred, ONE factor so that tr Sigma^ = d
(1/N), targets centred and scaled to unit variance (1/N); the population is the N rows."""
import math

import numpy as np
import pytest

import dpdyn

datasets = pytest.importorskip("sklearn.datasets", reason="python3-sklearn is not installed")
integrate = pytest.importorskip("scipy.integrate", reason="python3-scipy is not installed")
special = pytest.importorskip("scipy.special")

FLOOR = 1e-12  # eigenvalues below FLOOR * lambda_max are raised to it (docs/real_data.md)


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    x, y = datasets.load_digits(return_X_y=True)
    where = tmp_path_factory.mktemp("real data")
    xpath, ypath = where / "digits x.npy", where / "digits y.npy"
    np.save(xpath, x.astype(np.float32))  # exact: pixel counts 0..16
    np.save(ypath, y.astype(np.float64))
    return x.astype(np.float64), y.astype(np.float64), "file:" + str(xpath), "file:" + str(ypath)


def population(x, y):
    """The preprocessed rows, Sigma^, theta^* (minimum norm), the residuals."""
    n_rows, d = x.shape
    xc = x - x.mean(axis=0)
    xp = xc * math.sqrt(d / ((xc ** 2).sum() / n_rows))
    yc = y - y.mean()
    yp = yc / math.sqrt((yc ** 2).mean())
    sigma = xp.T @ xp / n_rows
    lam, u = np.linalg.eigh(sigma)
    lam, u = lam[::-1], u[:, ::-1]
    keep = lam > FLOOR * lam[0]
    b = xp.T @ yp / n_rows
    theta = u[:, keep] @ ((u[:, keep].T @ b) / lam[keep])
    z = yp - xp @ theta
    return xp, yp, sigma, lam, u, theta, z


def sqrt_schedule(eta0, n):
    """eta_k = eta~(k/n)/n with eta~(t) = eta0 sqrt(1 - t), eta_n = 0, and the calibrated noise
    rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 (MATH.md §1.4), without rho."""
    t = np.arange(n + 1) / n
    eta = eta0 * np.sqrt(np.maximum(1.0 - t, 0.0)) / n
    eta[n] = 0.0
    return eta[:n], np.sqrt(eta[:n] ** 2 - eta[1:] ** 2)


def numpy_dpsgd(xp, yp, sigma, theta_hat, n, c, rho, eta0, seeds, seed):
    """One-pass DP-SGD with per-sample clipping on n distinct rows drawn per replicate, all
    replicates at once; returns the risks before release and of the released iterate."""
    rng = np.random.default_rng(seed)
    n_rows, d = xp.shape
    big_c = c * math.sqrt(d)
    eta, sig = sqrt_schedule(eta0, n)
    sig = sig / rho
    order = np.stack([rng.permutation(n_rows)[:n] for _ in range(seeds)])
    theta = np.zeros((seeds, d))
    before = None
    for k in range(n):
        x = xp[order[:, k]]
        r = np.einsum("sd,sd->s", x, theta) - yp[order[:, k]]
        norm = np.abs(r) * np.linalg.norm(x, axis=1)
        s = np.minimum(1.0, big_c / np.maximum(norm, 1e-300))
        theta -= (eta[k] * s * r)[:, None] * x
        if k == n - 1:
            e = theta - theta_hat
            before = 0.5 * np.einsum("si,ij,sj->s", e, sigma, e)
        theta += 2.0 * big_c * sig[k] * rng.standard_normal((seeds, d))
    e = theta - theta_hat
    return before, 0.5 * np.einsum("si,ij,sj->s", e, sigma, e)


def test_simulate_agrees_in_law_with_numpy(digits):
    x, y, xfile, yfile = digits
    xp, yp, sigma, _, _, theta, _ = population(x, y)
    n, c, rho, eta0, seeds = 1500, 0.5, 4.0, 2.0, 400
    res = dpdyn.run("simulate", model="linreg", features=xfile, targets=yfile, n=n, c=c,
                    rho=rho, schedule="sqrt", eta0=eta0, seeds=seeds, grid=3, seed=11)
    before, after = numpy_dpsgd(xp, yp, sigma, theta, n, c, rho, eta0, seeds, 12345)
    assert res["data"]["rows_per_replicate"] == n
    checks = [("before release", res["excess_risk_before_release"],
               res["excess_risk_before_release_se"], before),
              ("released", res["final_excess_risk"], res["final_excess_risk_se"], after)]
    for name, mean, se, ref in checks:
        ref_se = ref.std(ddof=1) / math.sqrt(len(ref))
        gap = abs(mean - ref.mean()) / math.hypot(se, ref_se)
        assert gap < 4.0, "%s: dpdyn %g +- %g, numpy %g +- %g (%.1f SE)" % (
            name, mean, se, ref.mean(), ref_se, gap)
    # the test has power: the SE is under 2 % of the mean, so a 10 % error on either side (a
    # preprocessing factor, the noise calibration, rows drawn with replacement) is > 5 SE
    assert res["final_excess_risk_se"] < 0.02 * res["final_excess_risk"]


def gaussian_factors(c, big_p):
    k = c / (2.0 * math.sqrt(big_p))
    mu = math.erf(k)
    nu = math.erf(k) - 2.0 * k / math.sqrt(math.pi) * math.exp(-k * k) + 2.0 * k * k * \
        math.erfc(k)
    return mu, nu


def data_factors(c, big_r, a, z, zeta2):
    """mu and nu of the rows (docs/real_data_theory.md), written from their definitions:
    w = sqrt(a) u - z, u ~ N(0, 2R); mu = mean a P(|w| <= c/sqrt(a)),
    nu P = (1/2) mean a E[min(w^2, c^2/a)]."""
    s = np.sqrt(2.0 * a * big_r)
    b = c / np.sqrt(a)
    lo, hi = (-b + z) / s, (b + z) / s  # standardised limits of G in w = -z + s G
    cdf = special.ndtr
    pdf = lambda v: np.exp(-0.5 * v * v) / math.sqrt(2.0 * math.pi)  # noqa: E731
    inside = cdf(hi) - cdf(lo)
    m = -z
    second = (m * m + s * s) * inside + 2.0 * m * s * (pdf(lo) - pdf(hi)) + \
        s * s * (lo * pdf(lo) - hi * pdf(hi))
    mu = np.mean(a * inside)
    nu_p = 0.5 * np.mean(a * (second + b * b * (1.0 - inside)))
    return mu, nu_p / (big_r + 0.5 * zeta2)


@pytest.mark.parametrize("factors", ["gaussian", "data"])
@pytest.mark.parametrize("schedule", ["const", "sqrt"])
def test_ode_agrees_with_scipy(digits, factors, schedule):
    x, y, xfile, yfile = digits
    xp, _, _, lam, u, theta, z = population(x, y)
    n_rows, d = xp.shape
    n, c, rho, eta0, grid = n_rows, 0.7, 3.0, 1.5, 11
    gamma = d / n
    lam_f = np.maximum(lam, FLOOR * lam[0])
    lam_f = lam_f / lam_f.mean()  # the problem's mean-1 normalisation (a no-op up to rounding)
    s0 = 0.5 * d * (u.T @ theta) ** 2
    zeta2 = np.mean(z * z)
    a = np.sum(xp * xp, axis=1) / d

    def eta(t):
        return eta0 if schedule == "const" else eta0 * math.sqrt(max(1.0 - t, 0.0))

    sig2 = 0.0 if schedule == "const" else eta0 ** 2 / rho ** 2  # -d/dt eta~^2 / rho^2

    def rhs(t, s):
        big_r = float(lam_f @ s) / d
        big_p = big_r + 0.5 * zeta2
        if factors == "gaussian":
            mu, nu = gaussian_factors(c, big_p)
        else:
            mu, nu = data_factors(c, max(big_r, 0.0), a, z, zeta2)
        e = eta(t)
        return -2.0 * lam_f * e * mu * s + gamma * lam_f * e * e * nu * big_p + \
            2.0 * c * c * gamma * gamma * sig2

    ts = np.linspace(0.0, 1.0, grid)
    sol = integrate.solve_ivp(rhs, (0.0, 1.0), s0, method="LSODA", t_eval=ts, rtol=1e-11,
                              atol=1e-14)
    assert sol.success
    ref = lam_f @ sol.y / d
    res = dpdyn.run("ode", model="linreg", features=xfile, targets=yfile, c=c, rho=rho,
                    schedule=schedule, eta0=eta0, grid=grid, factors=factors, compress="off",
                    finite_size="off")
    ours = res.tables["trajectory.tsv"]["excess_risk"]
    assert np.max(np.abs(ours - ref)) <= 1e-6 * ref[0], (ours, ref)
    jump = 2.0 * c * c * gamma * gamma * eta(1.0) ** 2 / rho ** 2
    assert abs(res["final_excess_risk"] - (ref[-1] + jump)) <= 1e-6 * ref[0]
