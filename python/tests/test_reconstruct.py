"""dpdyn.run("reconstruct", model="rf", ...): the data-reconstruction attack from Python
(docs/overparameterization.md, "Reconstruction"): the fraction recovered from theta* at
p = 20 n d, the per-replicate table, the (B2) warning, bad input naming the key."""
import pytest

import dpdyn


def test_rf_reconstruct_recovers_a_small_training_set():
    with pytest.warns(RuntimeWarning, match=r"hermite13 fails assumption \(B2\)"):
        r = dpdyn.run("reconstruct", model="rf", n=4, d=5, p=400, activation="hermite13",
                      seeds=2, seed=3, threads=1)
    s = r.summary
    assert s["reconstructed_fraction"] >= 0.9
    assert s["p_over_nd"] == 20 and s["b2_holds"] == 0
    t = r.tables["reconstruct.tsv"]
    assert t.shape == (2,)
    assert abs(t["reconstructed_fraction"].mean() - s["reconstructed_fraction"]) < 1e-12
    assert any("(B2)" in note for note in r.notes)


def test_rf_reconstruct_refuses_p_below_n():
    with pytest.raises(dpdyn.Error, match="'p'"):
        dpdyn.run("reconstruct", model="rf", n=4, d=5, p=3)
