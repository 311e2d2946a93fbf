"""Errors raise dpdyn.Error whose message is the CLI's (stderr after 'dpdyn COMMAND: ')."""
import pytest

import dpdyn
from conftest import cli

CASES = [
    ("simulate", "linreg", {"d": "-3", "n": "80"}),               # out of range (library getter)
    ("simulate", "linreg", {"d": "20", "n": "80", "c": "abc"}),   # malformed number
    ("simulate", "linreg", {"d": "20", "n": "80", "schedule": "zigzag"}),  # not a choice
    ("simulate", "linreg", {"d": "20", "n": "80", "p": "3"}),     # another model's key
    ("simulate", "linreg", {"d": "20", "n": "80", "frobnicate": "1"}),  # nobody's key
    ("ode", "linreg", {"n": "80"}),                               # a key the user must give
    ("simulate", "rf", {"p": "60", "epsilon": "nan"}),            # nan refused
    ("ou", "linreg", {"d": "20"}),                                # the model lacks the command
    ("simulate", "mlp", {}),                                      # no such model
    ("diagnose", "nc", {"K": "1"}),
    ("account", "semipriv", {"d": "20", "k": "30"}),
]


@pytest.mark.parametrize("command,model,keys", CASES)
def test_error_message_is_the_clis(command, model, keys, tmp_path, cli_path):
    code, err = cli(command, model, keys, tmp_path / "out")
    assert code == 1, err
    with pytest.raises(dpdyn.Error) as e:
        dpdyn.run(command, model=model, **keys)
    assert e.value.status == -1
    assert "dpdyn %s: %s\n" % (command, e.value) == err


def test_unknown_command():
    with pytest.raises(dpdyn.Error, match="unknown command 'fly'"):
        dpdyn.run("fly")


def test_the_error_carries_the_status():
    """The library's status travels with the error (a step beyond the stability limit is an
    input error: -1, the CLI's exit 1)."""
    with pytest.raises(dpdyn.Error) as e:
        dpdyn.run("simulate", d=20, n=80, eta0=1e9)
    assert e.value.status < 0 and str(e.value)
