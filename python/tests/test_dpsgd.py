"""dpdyn.dpsgd (the DP-SGD trainer of include/dpdyn/dpsgd.h through cffi): the same seed gives
the same model and another seed another; calibration never exceeds the target; bad input raises
dpdyn.Error naming the key; a tiny non-private problem is learned; Ctrl-C stops a training."""
import math
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dpdyn
from conftest import REPO


def blobs(n=300, d=5, k=3, seed=3, spread=0.6):
    """k well-separated Gaussian classes in d dimensions (a problem a linear model learns)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    centres = 3.0 * np.eye(k, d)
    return centres[y] + spread * rng.standard_normal((n, d)), y


def test_same_seed_same_model_other_seed_other():
    X, y = blobs()
    keys = dict(classes=3, q=0.1, epochs=3, eta=0.5, clip=1.0, noise_multiplier=1.3)
    a = dpdyn.dpsgd.train(X, y, seed=11, **keys)
    b = dpdyn.dpsgd.train(X, y, seed=11, **keys)
    c = dpdyn.dpsgd.train(X, y, seed=12, **keys)
    d = dpdyn.dpsgd.train(X, y, seed=11, stream=1, **keys)
    assert np.array_equal(a.W, b.W)
    assert a.train_loss == b.train_loss and a.mean_batch == b.mean_batch
    assert not np.array_equal(a.W, c.W)
    assert not np.array_equal(a.W, d.W)
    assert a.W.shape == (3, 6) and a.steps == 30
    assert 0 <= a.clipped_fraction <= 1
    assert a.noise_multiplier == 1.3
    # epsilon: the accountant's at z = 1.3 (PLD upper bound), with its lower bound below it
    ref = dpdyn.account.epsilon(noise_multiplier=1.3, q=0.1, steps=30, delta=1e-5)
    assert a.epsilon == ref["epsilon"]
    assert a.epsilon_lower <= a.epsilon


@pytest.mark.parametrize("eps,delta,sampling", [(1.0, 1e-5, "poisson"), (3.0, 1e-6, "poisson"),
                                                (2.0, 1e-5, "fixed")])
def test_calibration_never_above_the_target(eps, delta, sampling):
    X, y = blobs(n=400)
    keys = dict(q=0.05) if sampling == "poisson" else dict(batch=20)
    m = dpdyn.dpsgd.train(X, y, sampling=sampling, epochs=2, epsilon=eps, delta=delta, **keys)
    assert m.noise_multiplier > 0
    assert m.epsilon <= eps
    assert m.epsilon >= eps * (1 - 1e-3)
    assert m.delta == delta
    if sampling == "fixed":
        assert m.mean_batch == 20


def test_infinite_epsilon_and_no_privacy_are_noise_free():
    X, y = blobs()
    a = dpdyn.dpsgd.train(X, y, q=0.2, epochs=2, epsilon=math.inf)
    b = dpdyn.dpsgd.train(X, y, q=0.2, epochs=2)
    assert a.noise_multiplier == 0 and b.noise_multiplier == 0
    assert math.isinf(a.epsilon) and math.isinf(b.epsilon)
    assert np.array_equal(a.W, b.W)


def test_a_tiny_problem_is_learned():
    X, y = blobs(n=600, seed=5)
    Xt, yt = blobs(n=400, seed=6)
    m = dpdyn.dpsgd.train(X, y, q=0.1, epochs=20, eta=1.0, clip=10.0)
    assert m.train_accuracy > 0.97
    acc, loss = m.evaluate(Xt, yt)
    assert acc > 0.95 and loss < 0.3
    pred = m.predict(Xt)
    assert pred.dtype == np.int32 and pred.shape == (400,)
    assert np.mean(pred == yt) == acc
    # the binary losses: labels 0/1
    yb = (y == 1).astype(np.int64)
    for loss_name in ("hinge", "logistic"):
        mb = dpdyn.dpsgd.train(X, yb, loss=loss_name, q=0.1, epochs=20, clip=10.0)
        assert mb.W.shape == (1, 6)
        assert mb.train_accuracy > 0.95, loss_name


def test_schedules_change_the_steps_not_the_noise_draws():
    X, y = blobs()
    keys = dict(q=0.2, epochs=3, noise_multiplier=0.7, seed=4)
    ws = {s: dpdyn.dpsgd.train(X, y, lr_schedule=s, **keys).W for s in dpdyn.dpsgd.SCHEDULES}
    assert np.array_equal(ws["const"], dpdyn.dpsgd.train(X, y, **keys).W)
    for s in ("cosine", "step", "sqrt"):
        assert not np.array_equal(ws[s], ws["const"]), s
    raises_naming("lr_schedule", lr_schedule="linear")


def test_inputs_are_converted():
    X, y = blobs(n=50)
    a = dpdyn.dpsgd.train(X, y, q=0.5, steps=4)
    b = dpdyn.dpsgd.train(np.asfortranarray(X), y.astype(float), q=0.5, steps=4)
    c = dpdyn.dpsgd.train(X.tolist(), y.tolist(), q=0.5, steps=4)
    assert np.array_equal(a.W, b.W) and np.array_equal(a.W, c.W)


def raises_naming(key, **keys):
    X, y = keys.pop("X", None), keys.pop("y", None)
    if X is None:
        X, y = blobs(n=40)
    with pytest.raises(dpdyn.Error) as e:
        dpdyn.dpsgd.train(X, y, **keys)
    assert "'%s'" % key in str(e.value), str(e.value)
    return str(e.value)


def test_bad_input_raises_naming_the_key():
    X, y = blobs(n=40)
    raises_naming("q", q=0)
    raises_naming("q", q=1.5)
    raises_naming("batch", sampling="fixed", batch=41)
    raises_naming("batch", sampling="fixed", batch=0)
    raises_naming("batch", batch=5)  # poisson
    raises_naming("epochs", epochs=0)
    raises_naming("eta", eta=-1)
    raises_naming("clip", clip=0)
    raises_naming("noise_multiplier", noise_multiplier=-0.5)
    raises_naming("epsilon", epsilon=0)
    raises_naming("epsilon", epsilon=1, noise_multiplier=1)
    raises_naming("delta", epsilon=1, delta=1.5)
    raises_naming("delta", noise_multiplier=1, delta=0)
    raises_naming("classes", classes=1)
    raises_naming("classes", loss="hinge", classes=3)
    raises_naming("loss", loss="square")
    raises_naming("sampling", sampling="shuffle")
    raises_naming("steps", steps=0)
    raises_naming("labels", classes=2)  # labels 0..2 with 2 classes
    raises_naming("labels", X=X, y=y + 0.5)
    raises_naming("labels", X=X, y=y[:-1])
    bad = X.copy()
    bad[3, 1] = np.nan
    assert "row 4" in raises_naming("X", X=bad, y=y)
    raises_naming("X", X=np.zeros((0, 3)), y=np.zeros(0, dtype=int))
    m = dpdyn.dpsgd.train(X, y, q=0.5, steps=2)
    with pytest.raises(dpdyn.Error) as e:
        m.evaluate(X[:, :4], y)
    assert "'X'" in str(e.value)


def test_ctrl_c_stops_a_training():
    """SIGINT 1.5 s into a long training: KeyboardInterrupt soon after, the package usable."""
    child = textwrap.dedent("""
        import sys, time
        sys.path.insert(0, %r)
        import numpy as np
        import dpdyn
        X = np.random.default_rng(1).standard_normal((20000, 400))
        y = np.arange(20000) %% 10
        print("start", flush=True)
        t0 = time.monotonic()
        try:
            dpdyn.dpsgd.train(X, y, classes=10, q=0.5, steps=100000, noise_multiplier=1)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("KeyboardInterrupt %%.3f" %% (time.monotonic() - t0), flush=True)
            m = dpdyn.dpsgd.train(X[:50], y[:50], classes=10, q=0.5, steps=2)
            print("after %%d" %% m.steps, flush=True)
    """) % os.path.join(REPO, "python")
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    assert p.stdout.readline().strip() == "start"
    import time
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    lines = out.split("\n")
    assert lines[0].startswith("KeyboardInterrupt"), out
    assert float(lines[0].split()[1]) < 1.5 + 5.0
    assert lines[1] == "after 2"
