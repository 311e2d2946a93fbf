"""Python values given as keys: what C cannot carry (NUL bytes, lone surrogates) and values of
the wrong kind are dpdyn.Error naming the key; integral floats are integers."""
import numpy as np
import pytest

import dpdyn

SMALL = dict(d=20, n=80, seeds=3, grid=11)


@pytest.mark.parametrize("value", ["20\x00junk", "\x0020"])
def test_a_nul_byte_in_a_value_is_an_error_naming_the_key(value):
    """C would cut the text at the NUL: d='20\\x00junk' ran as d = 20."""
    with pytest.raises(dpdyn.Error, match=r"invalid value for 'd': '.*\\x00.*' .*NUL") as e:
        dpdyn.run("simulate", **dict(SMALL, d=value))
    assert e.value.status == -1


def test_a_nul_byte_in_a_key_name_is_an_error_naming_it():
    """A key 'd\\x00junk' set d."""
    with pytest.raises(dpdyn.Error, match=r"invalid key name 'd\\x00junk' .*NUL"):
        dpdyn.run("simulate", **{"d\x00junk": 30, "n": 80})


def test_a_lone_surrogate_is_an_error_naming_the_key():
    """It raised UnicodeEncodeError."""
    with pytest.raises(dpdyn.Error, match=r"invalid value for 'spectrum': '\\udc80' .*UTF-8"):
        dpdyn.run("simulate", **dict(SMALL, spectrum="\udc80"))
    with pytest.raises(dpdyn.Error, match=r"invalid key name 'd\\ud800' .*UTF-8"):
        dpdyn.run("simulate", **{"d\ud800": 20, "n": 80})


@pytest.mark.parametrize("n,seeds", [(8e1, 3.0), (np.float64(80), np.float32(3))])
def test_integral_floats_are_integers(n, seeds):
    """n=1e4 was refused as a float ('10000.0'); it is the same run as n=10000."""
    r = dpdyn.run("simulate", **dict(SMALL, n=n, seeds=seeds))
    ref = dpdyn.run("simulate", **dict(SMALL, n=80, seeds=3))
    assert r.params["n"] == 80 and r.params["seeds"] == 3
    assert r["final_excess_risk"] == ref["final_excess_risk"]
    assert r.tables["trajectory.tsv"].tobytes() == ref.tables["trajectory.tsv"].tobytes()


def test_a_large_integral_float_is_accepted():
    r = dpdyn.run("account", d=1000, n=1e4, c=1, rho=2)
    assert r.params["n"] == 10000


def test_a_fractional_float_for_an_integer_key_is_refused():
    with pytest.raises(dpdyn.Error) as e:
        dpdyn.run("simulate", **dict(SMALL, n=1.5))
    assert str(e.value).startswith("invalid value for 'n': 1.5 (must be an integer")
    assert "integer 1 <= n" in str(e.value)  # the allowed range, as the CLI says it


def test_none_is_refused_with_a_hint():
    with pytest.raises(dpdyn.Error, match=r"'c': None .*leave the key out"):
        dpdyn.run("simulate", **dict(SMALL, c=None))


def test_a_bool_for_a_key_that_is_not_on_off_is_refused():
    """n=True ran as n = 1."""
    with pytest.raises(dpdyn.Error, match=r"invalid value for 'n': True .*on/off"):
        dpdyn.run("simulate", **dict(SMALL, n=True))
    with pytest.raises(dpdyn.Error, match=r"invalid value for 'c': False"):
        dpdyn.run("simulate", **dict(SMALL, c=False))
    # a free-form key's "allowed" is its help, with the lists of the library's tables
    with pytest.raises(dpdyn.Error, match=r"'schedule': True \(allowed: .*: const \| sqrt \| "
                       r".* \| file:PATH") as e:
        dpdyn.run("simulate", **dict(SMALL, schedule=True))
    assert "{" not in str(e.value)
    # an on/off key (integer 0 <= key <= 1) takes True/False
    r = dpdyn.run("compare", **dict(SMALL, seeds=8, sde=True))
    assert r.params["sde"] == 1


@pytest.mark.parametrize("value,kind", [([1, 2], "list"), (b"20", "bytes"), ({"a": 1}, "dict"),
                                        (1j, "complex")])
def test_other_types_are_refused_naming_the_type(value, kind):
    with pytest.raises(dpdyn.Error, match=r"invalid value for 'd': .* of type %s" % kind):
        dpdyn.run("simulate", **dict(SMALL, d=value))
