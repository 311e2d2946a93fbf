"""DP-SGD for linear classifiers on features (include/dpdyn/dpsgd.h; docs/dpsgd.md), called
directly through cffi.

    from dpdyn import dpsgd
    m = dpsgd.train(X, y, classes=10, q=256 / 54000, epochs=1, clip=1, epsilon=1, delta=1e-5)
    m.noise_multiplier, m.epsilon          # calibrated z; the accountant's eps there (<= target)
    m.W, m.train_loss, m.train_accuracy    # weights (rows x (d + bias)) and what training saw
    m.evaluate(X_test, y_test)             # (accuracy, mean loss)
    m.predict(X_test)                      # int32 labels

X: a 2-D array of floats (n x d; converted to float64 C-contiguous, copied only if needed), y:
integer labels 0 .. classes-1 (floats with integer values are accepted). The keys are those of
the CLI's trainer=dpsgd (loss ce | hinge | logistic, sampling poisson | fixed, q, batch, epochs,
steps, eta, lr_schedule, clip, noise_multiplier, epsilon, delta); the random stream is
(seed, stream).
Privacy: give noise_multiplier (z; `epsilon` is then the accountant's eps at delta for it), or
epsilon (+ delta, default 1e-5): z is calibrated by dpd_dpsgd_calibrate, never above the target;
epsilon=inf or neither: z = 0 (non-private, the same steps; `epsilon` inf).
Invalid input raises dpdyn.Error with the library's message naming the key. Ctrl-C stops a
training at its next step (KeyboardInterrupt; the library is usable afterwards).
"""
import math

import numpy as np

from . import _lib
from ._run import Error, _check, _wait_interruptible

LOSSES = ("ce", "hinge", "logistic")
SCHEDULES = ("const", "cosine", "step", "sqrt")
SAMPLINGS = ("poisson", "fixed")
DELTA_DEFAULT = 1e-5

__all__ = ["train", "Model", "LOSSES", "SAMPLINGS", "SCHEDULES"]


def _choice(value, allowed, key):
    if value not in allowed:
        raise Error("invalid value for '%s': %r (allowed: %s)" % (key, value, " | ".join(allowed)))
    return allowed.index(value)


def _count(value, key, low=0):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise Error("invalid value for '%s': %r (allowed: an integer >= %d)" % (key, value, low))
    return int(value)


def _number(value, key):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Error("invalid value for '%s': %r (allowed: a number)" % (key, value)) from None


def _features(X, key="X", d=None):
    try:
        a = np.ascontiguousarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise Error("invalid value for '%s': not an array of numbers (%s)" % (key, e)) from None
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise Error("invalid value for '%s': shape %s (allowed: a 2-D array, rows x d >= 1)" %
                    (key, a.shape))
    if d is not None and a.shape[1] != d:
        raise Error("invalid value for '%s': %d columns (allowed: d = %d, as trained)" %
                    (key, a.shape[1], d))
    if not np.all(np.isfinite(a)):
        i = int(np.argwhere(~np.isfinite(a))[0][0])
        raise Error("invalid value for '%s': a value that is not finite in row %d" % (key, i + 1))
    return a


def _labels(y, n, key="labels"):
    a = np.asarray(y)
    if a.ndim != 1 or a.shape[0] != n:
        raise Error("invalid value for '%s': shape %s (allowed: one label per row, %d)" %
                    (key, a.shape, n))
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.round(a))
        if bad.any():
            i = int(np.argmax(bad))
            raise Error("invalid value for '%s': %r in row %d (allowed: integers)" %
                        (key, a[i].item(), i + 1))
    elif a.dtype.kind not in "iub":
        raise Error("invalid value for '%s': dtype %s (allowed: integers)" % (key, a.dtype))
    out = np.ascontiguousarray(a, dtype=np.int64)
    lo, hi = (int(out.min()), int(out.max())) if n else (0, 0)
    if lo < -2**31 or hi >= 2**31:
        i = int(np.argmax((out < -2**31) | (out >= 2**31)))
        raise Error("invalid value for '%s': %d in row %d (allowed: integers 0 .. classes-1)" %
                    (key, out[i], i + 1))
    return np.ascontiguousarray(out, dtype=np.int32)


class Model:
    """A trained classifier: W (rows x (d + bias), float64), rows (classes for ce, 1 for the
    binary losses), classes, d, bias, loss; what training saw: steps, mean_batch,
    clipped_fraction, train_loss, train_accuracy; its privacy: noise_multiplier, clip, eta, q,
    batch, sampling, epsilon (the accountant's upper bound at delta; inf when z = 0),
    epsilon_lower, delta."""

    def __init__(self, ptr, **info):
        self._ptr = ptr  # dpd_dpsgd_model *, freed with the object
        m = ptr
        self.loss = LOSSES[m.loss]
        self.classes, self.d, self.rows, self.bias = int(m.classes), int(m.d), int(m.rows), bool(m.bias)
        p = self.rows * (self.d + int(self.bias))
        self.W = np.frombuffer(_lib.ffi.buffer(m.W, 8 * p), dtype=np.float64).reshape(
            self.rows, self.d + int(self.bias)).copy()
        self.steps = int(m.steps)
        self.mean_batch = float(m.mean_batch)
        self.clipped_fraction = float(m.clipped_fraction)
        self.noise_multiplier = float(m.noise_multiplier)
        self.clip = float(m.clip)
        self.eta = float(m.lr)
        self.train_loss = float(m.train_loss)
        self.train_accuracy = float(m.train_accuracy)
        for k, v in info.items():
            setattr(self, k, v)

    def evaluate(self, X, y):
        """(accuracy, mean loss) on rows X with labels y; labels outside 0 .. classes-1 count as
        errors."""
        X = _features(X, "X", self.d)
        y = _labels(y, X.shape[0])
        ffi = _lib.ffi
        acc, loss = ffi.new("double *"), ffi.new("double *")
        _lib.lib().dpd_dpsgd_evaluate(self._ptr, ffi.cast("const double *", X.ctypes.data),
                                      ffi.cast("const int32_t *", y.ctypes.data), X.shape[0], acc,
                                      loss)
        return acc[0], loss[0]

    def predict(self, X):
        """Predicted labels (int32) of rows X."""
        X = _features(X, "X", self.d)
        out = np.empty(X.shape[0], dtype=np.int32)
        ffi = _lib.ffi
        _lib.lib().dpd_dpsgd_predict(self._ptr, ffi.cast("const double *", X.ctypes.data),
                                     X.shape[0], ffi.cast("int32_t *", out.ctypes.data))
        return out

    def __repr__(self):
        return ("dpdyn.dpsgd.Model(loss=%s, classes=%d, d=%d, steps=%d, noise_multiplier=%.6g, "
                "epsilon=%.6g, train_accuracy=%.4f)" % (self.loss, self.classes, self.d,
                                                        self.steps, self.noise_multiplier,
                                                        self.epsilon, self.train_accuracy))


_callback = None


def _progress():
    """The C progress callback (created once): returns the int its user pointer points to."""
    global _callback
    if _callback is None:
        @_lib.ffi.callback("int(void *, size_t, size_t)")
        def stop_flag(user, done, total):  # noqa: ARG001 -- the library's signature
            return _lib.ffi.cast("int *", user)[0]
        _callback = stop_flag
    return _callback


def _interruptible(call, flag):
    """Runs call() so that Ctrl-C reaches this thread (_run._wait_interruptible): *flag = 1 stops
    the training at its next step, and KeyboardInterrupt is raised once the call is done."""
    return _wait_interruptible(call, flag, "dpdyn.dpsgd")


def _schedule(name):
    """The dpd_schedule of lr_schedule (None for const): eta0 = 1; cosine to 0; step: two drops
    by 0.1; sqrt: sqrt(1 - t). Freed with the returned object."""
    _choice(name, SCHEDULES, "lr_schedule")
    if name == "const":
        return None
    lib, ffi = _lib.lib(), _lib.ffi
    sc = lib.dpd_schedule_config_default()
    sc.eta0 = 1.0
    if name == "cosine":
        sc.kind, sc.eta_min = lib.DPD_SCHEDULE_COSINE, 0.0
    elif name == "step":
        sc.kind, sc.drops, sc.factor = lib.DPD_SCHEDULE_STEP, 2, 0.1
    else:
        sc.kind = lib.DPD_SCHEDULE_SQRT
    out, err = ffi.new("dpd_schedule **"), ffi.new("dpd_err *")
    _check(lib.dpd_schedule_create(ffi.addressof(sc), out, err), err, "dpsgd")
    return ffi.gc(out[0], lib.dpd_schedule_free)


def train(X, y, *, classes=None, loss="ce", q=None, batch=None, sampling="poisson", epochs=10,
          steps=None, eta=1.0, lr_schedule="const", clip=1.0, noise_multiplier=None,
          epsilon=None, delta=None, seed=1, stream=0, bias=True, tag=0):
    """Trains a linear classifier by DP-SGD (include/dpdyn/dpsgd.h) and returns a Model.

    classes: K (default: the largest label + 1, at least 2; the binary losses need 2);
    sampling "poisson" (rate q, default 0.01) or "fixed" (batch records per step; default
    round(q n)); `batch` with poisson is refused. epochs (T = ceil(epochs / q)) unless steps is
    given. lr_schedule: the step size eta * schedule(s / T), "const" | "cosine" (to 0) |
    "step" (two drops by 0.1) | "sqrt". noise_multiplier or epsilon (+ delta): see the
    module's help."""
    lib, ffi = _lib.lib(), _lib.ffi
    X = _features(X)
    n, d = X.shape
    y = _labels(y, n)
    c = lib.dpd_dpsgd_config_default()
    c.loss = _choice(loss, LOSSES, "loss")
    c.sampling = _choice(sampling, SAMPLINGS, "sampling")
    if classes is None:
        classes = max(2, int(y.max()) + 1) if n else 2
    c.classes = _count(classes, "classes")
    c.bias = 1 if bias else 0
    rate = 0.01 if q is None else _number(q, "q")
    if c.sampling == SAMPLINGS.index("poisson"):
        if batch is not None:
            raise Error("invalid value for 'batch': %r (allowed: only with sampling=fixed; "
                        "poisson draws each record with probability q)" % (batch,))
        c.q = rate
    else:
        if batch is None:
            if not (0 < rate <= 1):
                raise Error("invalid value for 'q': %r (allowed: 0 < q <= 1)" % (rate,))
            batch = max(1, int(round(rate * n)))
        c.batch = _count(batch, "batch")
        c.q = c.batch / n if 0 < c.batch <= n else 1.0
    c.epochs = _number(epochs, "epochs")
    c.steps = 0 if steps is None else _count(steps, "steps", 1)
    c.lr = _number(eta, "eta")
    schedule = _schedule(lr_schedule)
    if schedule is not None:
        c.schedule = schedule
    c.clip = _number(clip, "clip")
    c.seed = _count(seed, "seed")
    c.stream = _count(stream, "stream")
    c.tag = _count(tag, "tag")
    dl = DELTA_DEFAULT if delta is None else _number(delta, "delta")
    err = ffi.new("dpd_err *")
    _check(lib.dpd_dpsgd_check(ffi.addressof(c), n, d, err), err, "dpsgd")
    eps_target = None
    if noise_multiplier is not None and epsilon is not None:
        raise Error("invalid value for 'epsilon': %r (allowed: not with noise_multiplier, which "
                    "gives z directly)" % (epsilon,))
    at = ffi.new("dpd_account_result *")
    eps_out, eps_low = math.inf, math.inf
    if epsilon is not None:
        eps_target = _number(epsilon, "epsilon")
        z = ffi.new("double *")
        _check(lib.dpd_dpsgd_calibrate(ffi.addressof(c), n, eps_target, dl, z, at, err), err,
               "dpsgd")
        c.noise_multiplier = z[0]
        if z[0] > 0:
            eps_out, eps_low = at.epsilon, at.epsilon_lower
    else:
        c.noise_multiplier = 0.0 if noise_multiplier is None else _number(noise_multiplier,
                                                                           "noise_multiplier")
        _check(lib.dpd_dpsgd_check(ffi.addressof(c), n, d, err), err, "dpsgd")
        if not (0 < dl < 1):
            raise Error("invalid value for 'delta': %r (allowed: 0 < delta < 1)" % (dl,))
        if c.noise_multiplier > 0:
            a, seg = ffi.new("dpd_account *"), ffi.new("dpd_account_segment *")
            lib.dpd_dpsgd_account_of(ffi.addressof(c), n, c.noise_multiplier, a, seg)
            _check(lib.dpd_account_epsilon(a, dl, at, err), err, "dpsgd")
            eps_out, eps_low = at.epsilon, at.epsilon_lower
    flag = ffi.new("int *")
    c.progress = _progress()
    c.progress_user = flag
    out = ffi.new("dpd_dpsgd_model **")
    xp = ffi.cast("const double *", X.ctypes.data)
    yp = ffi.cast("const int32_t *", y.ctypes.data)
    status = _interruptible(lambda: lib.dpd_dpsgd_train(ffi.addressof(c), xp, yp, n, d, out, err),
                            flag)
    _check(status, err, "dpsgd")
    ptr = ffi.gc(out[0], lib.dpd_dpsgd_model_free)
    return Model(ptr, q=float(c.q), batch=int(c.batch) if c.sampling else None,
                 sampling=SAMPLINGS[c.sampling], epsilon=eps_out, epsilon_lower=eps_low,
                 delta=dl, epsilon_target=eps_target, seed=int(c.seed), stream=int(c.stream),
                 lr_schedule=lr_schedule)
