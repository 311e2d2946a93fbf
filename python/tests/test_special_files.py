"""File reading refuses what is not a regular file at once (a FIFO with no writer hung)."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO

# A child interpreter, so that a hang (the old behaviour) is a failure after TIMEOUT_S and not
# a stuck suite.
TIMEOUT_S = 30
CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, %r)
    import dpdyn
    what, path = sys.argv[1], sys.argv[2]
    try:
        {"read_ini": dpdyn.read_ini, "read_table": dpdyn.read_table, "load": dpdyn.load}[what](path)
        print("read")
    except dpdyn.Error as e:
        print("dpdyn.Error:", e)
""") % os.path.join(REPO, "python")


def child(what, path):
    p = subprocess.run([sys.executable, "-c", CHILD, what, str(path)], capture_output=True,
                       text=True, timeout=TIMEOUT_S)
    return p.stdout.strip() + p.stderr.strip()


@pytest.mark.parametrize("what", ["read_ini", "read_table"])
def test_a_fifo_is_refused_at_once(what, tmp_path):
    fifo = tmp_path / "keys.ini"
    os.mkfifo(fifo)
    assert child(what, fifo) == "dpdyn.Error: '%s' is a FIFO (allowed: a regular file)" % fifo


def test_a_link_to_a_device_is_refused(tmp_path):
    link = tmp_path / "zero.ini"
    link.symlink_to("/dev/zero")
    assert child("read_ini", link) == \
        "dpdyn.Error: '%s' is a character device (allowed: a regular file)" % link


def test_a_directory_is_refused(tmp_path):
    assert child("read_ini", tmp_path) == \
        "dpdyn.Error: '%s' is a directory (allowed: a regular file)" % tmp_path


def test_load_refuses_a_fifo_summary(tmp_path):
    os.mkfifo(tmp_path / "summary.json")
    assert child("load", tmp_path) == \
        "dpdyn.Error: '%s' is a FIFO (allowed: a regular file)" % (tmp_path / "summary.json")

