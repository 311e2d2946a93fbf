"""The accountant of subsampled DP-SGD (include/dpdyn/account.h; docs/privacy.md, "Accounting
subsampled DP-SGD"), called directly through cffi.

    from dpdyn import account
    r = account.epsilon(noise_multiplier=1.0, q=0.01, steps=1000, delta=1e-5)
    r["epsilon"], r["epsilon_lower"], r["epsilon_rdp"]     # PLD upper/lower bound, RDP
    account.delta(1.84, noise_multiplier=1.0, q=0.01, steps=1000)["delta"]
    account.sigma_for(1.0, 1e-5, q=0.02, steps=200)["noise_multiplier"]   # never overshoots
    account.steps_for(1.0, 1e-5, noise_multiplier=1.2, q=0.02)["steps"]

The run is one segment (noise_multiplier, q or batch, steps) or `segments`, a list of tuples
(noise_multiplier, q, steps) or (noise_multiplier, q, steps, batch) (a heterogeneous schedule).
mechanism: "gaussian" | "subsampled_gaussian" | "shuffle" (steps = epochs); sampling: "poisson" |
"fixed" | "replacement" (the last two with n, batch and neighbours="replace_one"); neighbours:
"add_remove" | "replace_one". accuracy: the target relative width of the PLD bounds (0: 0.01);
h: the PLD grid step (0: chosen from accuracy). Invalid input raises dpdyn.Error naming the
member, as the library's message does. Results are dicts of floats (NaN where a value is not
computed: RDP for fixed/replacement sampling, the CLT for non-Poisson runs).
"""
from . import _lib
from ._run import Error, _check

MECHANISMS = ("gaussian", "subsampled_gaussian", "shuffle")
SAMPLINGS = ("poisson", "fixed", "replacement")
NEIGHBOURS = ("add_remove", "replace_one")
_RESULT = ("epsilon", "epsilon_estimate", "epsilon_lower", "epsilon_rdp", "best_alpha", "mu_clt",
           "epsilon_clt", "h", "points", "total_steps")

__all__ = ["epsilon", "delta", "curve", "sigma_for", "steps_for", "MECHANISMS", "SAMPLINGS",
           "NEIGHBOURS"]


def _index(value, allowed, what):
    if value not in allowed:
        raise Error("invalid value for '%s': %r (allowed: %s)" % (what, value, " | ".join(allowed)))
    return allowed.index(value)


def _count(value, what):
    if value is None:
        return 0
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise Error("invalid value for '%s': %r (allowed: an integer >= 0)" % (what, value))
    return int(value)


def _account(noise_multiplier, q, steps, batch, n, segments, mechanism, sampling, neighbours,
             accuracy, h):
    """The dpd_account (and the cffi objects that must stay alive with it)."""
    ffi = _lib.ffi
    rows = segments if segments is not None else [(noise_multiplier, q, steps, batch)]
    if len(rows) == 0:
        raise Error("invalid value for 'segments': empty (allowed: one row or more)")
    seg = ffi.new("dpd_account_segment[]", len(rows))
    for i, row in enumerate(rows):
        row = tuple(row) + (None,) * (4 - len(row))
        sigma, rate, count, b = row[:4]
        seg[i].sigma = float("nan") if sigma is None else float(sigma)
        seg[i].q = 1.0 if rate is None else float(rate)
        seg[i].steps = _count(count, "steps")
        seg[i].batch = _count(b, "batch")
    a = ffi.new("dpd_account *")
    a.mechanism = _index(mechanism, MECHANISMS, "mechanism")
    a.sampling = _index(sampling, SAMPLINGS, "sampling")
    a.neighbours = _index(neighbours, NEIGHBOURS, "neighbours")
    a.n = _count(n, "n")
    a.segments = seg
    a.nsegments = len(rows)
    a.accuracy = float(accuracy)
    a.h = float(h)
    return a, seg


def _result(r):
    out = {k: float(getattr(r, k)) for k in _RESULT}
    out["points"] = int(r.points)
    out["total_steps"] = int(r.total_steps)
    return out


def epsilon(noise_multiplier=None, q=None, steps=None, delta=None, *, batch=None, n=None,
            segments=None, mechanism="subsampled_gaussian", sampling="poisson",
            neighbours="add_remove", accuracy=0.0, h=0.0):
    """eps at delta: the PLD upper bound `epsilon` (the answer), `epsilon_estimate`,
    `epsilon_lower`, RDP's `epsilon_rdp` at `best_alpha`, the CLT `mu_clt` and `epsilon_clt`
    (an approximation), the grid step `h`, `points`, `total_steps`."""
    lib, ffi = _lib.lib(), _lib.ffi
    a, keep = _account(noise_multiplier, q, steps, batch, n, segments, mechanism, sampling,
                       neighbours, accuracy, h)
    r, err = ffi.new("dpd_account_result *"), ffi.new("dpd_err *")
    _check(lib.dpd_account_epsilon(a, float("nan") if delta is None else float(delta), r, err),
           err, "account")
    del keep
    return _result(r)


def delta(eps, noise_multiplier=None, q=None, steps=None, *, batch=None, n=None, segments=None,
          mechanism="subsampled_gaussian", sampling="poisson", neighbours="add_remove",
          accuracy=0.0, h=0.0):
    """delta at eps: the PLD upper bound `delta`, `delta_lower`, and RDP's `delta_rdp` (NaN
    where RDP is not computed)."""
    lib, ffi = _lib.lib(), _lib.ffi
    a, keep = _account(noise_multiplier, q, steps, batch, n, segments, mechanism, sampling,
                       neighbours, accuracy, h)
    up, low, rdp = ffi.new("double *"), ffi.new("double *"), ffi.new("double *")
    err = ffi.new("dpd_err *")
    _check(lib.dpd_account_delta(a, float(eps), up, low, rdp, err), err, "account")
    del keep
    return {"delta": up[0], "delta_lower": low[0], "delta_rdp": rdp[0]}


def curve(eps, noise_multiplier=None, q=None, steps=None, *, batch=None, n=None, segments=None,
          mechanism="subsampled_gaussian", sampling="poisson", neighbours="add_remove",
          accuracy=0.0, h=0.0):
    """The privacy curve at the values of `eps` (a sequence): lists `delta_up`, `delta_low`
    from one PLD."""
    lib, ffi = _lib.lib(), _lib.ffi
    a, keep = _account(noise_multiplier, q, steps, batch, n, segments, mechanism, sampling,
                       neighbours, accuracy, h)
    e = ffi.new("double[]", [float(x) for x in eps])
    up, low = ffi.new("double[]", len(e)), ffi.new("double[]", len(e))
    err = ffi.new("dpd_err *")
    _check(lib.dpd_account_curve(a, e, len(e), up, low, err), err, "account")
    del keep
    return {"eps": list(e), "delta_up": list(up), "delta_low": list(low)}


def sigma_for(eps, delta, q=None, steps=None, *, batch=None, n=None,
              mechanism="subsampled_gaussian", sampling="poisson", neighbours="add_remove",
              accuracy=0.0, h=0.0):
    """The smallest noise multiplier (to a relative 1e-4) whose PLD upper bound at delta is
    <= eps: `noise_multiplier` and the accounting there (its `epsilon` <= eps: never
    overshoots)."""
    lib, ffi = _lib.lib(), _lib.ffi
    a, keep = _account(1.0, q, steps, batch, n, None, mechanism, sampling, neighbours, accuracy, h)
    sigma, r, err = ffi.new("double *"), ffi.new("dpd_account_result *"), ffi.new("dpd_err *")
    _check(lib.dpd_account_sigma_for(a, float(eps), float(delta), sigma, r, err), err, "account")
    del keep
    return dict(_result(r), noise_multiplier=sigma[0])


def steps_for(eps, delta, noise_multiplier=None, q=None, *, batch=None, n=None,
              mechanism="subsampled_gaussian", sampling="poisson", neighbours="add_remove",
              accuracy=0.0, h=0.0):
    """The most steps whose PLD upper bound at delta is <= eps (0 when one step exceeds it):
    `steps` and the accounting there."""
    lib, ffi = _lib.lib(), _lib.ffi
    a, keep = _account(noise_multiplier, q, 1, batch, n, None, mechanism, sampling, neighbours,
                       accuracy, h)
    count, r = ffi.new("size_t *"), ffi.new("dpd_account_result *")
    err = ffi.new("dpd_err *")
    _check(lib.dpd_account_steps_for(a, float(eps), float(delta), count, r, err), err, "account")
    del keep
    return dict(_result(r), steps=int(count[0]))
