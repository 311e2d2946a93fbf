"""Shared set-up of the pytest suite of the Python package (python/tests).

The CLI and the library under test: DPDYN_CLI and DPDYN_LIBRARY (ctest sets both to its build),
else <repo>/build/dpdyn and the package's own search (<repo>/build/libdpdyn.so)."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("cffi", reason="python3-cffi is not installed")
pytest.importorskip("numpy", reason="python3-numpy is not installed")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import dpdyn  # noqa: E402

CLI = os.environ.get("DPDYN_CLI", os.path.join(REPO, "build", "dpdyn"))


def registry():
    """(model, command) for every command of every model of the registry."""
    return [(m, c) for m in dpdyn.models() for c in dpdyn.commands(m)]


def cli(command, model, keys, out=None):
    """Runs the CLI: (exit status, stderr). keys: {key: text}."""
    argv = [CLI, command] + (["--model=" + model] if model is not None else [])
    argv += ["--%s=%s" % (k, v) for k, v in keys.items()]
    if out is not None:
        argv.append("--out=" + str(out))
    p = subprocess.run(argv, capture_output=True, text=True, cwd=REPO,
                       env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    return p.returncode, p.stderr


@pytest.fixture(scope="session")
def cli_path():
    if not os.access(CLI, os.X_OK):
        pytest.skip("no dpdyn executable at %s (build it: scripts/setup.sh)" % CLI)
    return CLI
