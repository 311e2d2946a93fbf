"""DPD_ISA (docs/kernels.md): a bad value is a dpdyn.Error as the CLI refuses it, a forced path is
the one in use, and every path gives the same bits. Each case runs in a child interpreter, since
the library reads DPD_ISA once per process."""
import os
import subprocess
import sys

import pytest

import dpdyn

CHILD = r"""
import sys, dpdyn
try:
    r = dpdyn.run("simulate", d=40, n=160, c=0.5, rho=2, seeds=4, grid=6, threads=2)
except dpdyn.Error as e:
    print("ERROR", e)
    sys.exit(0)
print("PATH", dpdyn.kernel_path())
print("BYTES", r.tables["trajectory.tsv"].tobytes().hex()[:4000], repr(r["final_excess_risk"]))
"""


def child(isa):
    env = dict(os.environ)
    if isa is None:
        env.pop("DPD_ISA", None)
    else:
        env["DPD_ISA"] = isa
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                         timeout=120, cwd=os.path.dirname(os.path.dirname(dpdyn.__file__)))
    assert out.returncode == 0, out.stderr
    return out.stdout


def available():
    paths = ["scalar"]
    for p in ("avx2", "avx512"):
        if "PATH " + p in child(p):
            paths.append(p)
    return paths


@pytest.mark.parametrize("value", ["avx3", "AVX2", " scalar"])
def test_an_unknown_path_is_an_error_naming_the_variable(value):
    out = child(value)
    assert out.startswith("ERROR environment variable DPD_ISA: unknown kernel path '%s'" % value)


def test_every_path_gives_the_same_bits_and_is_the_one_in_use():
    paths = available()
    outs = {p: child(p) for p in paths}
    for p in paths:
        assert "PATH %s\n" % p in outs[p]
    bytes_lines = {p: outs[p].split("BYTES", 1)[1] for p in paths}
    assert len(set(bytes_lines.values())) == 1, paths
    default = child(None)
    assert "PATH %s\n" % paths[-1] in default  # the fastest this CPU has
    for p in ("avx2", "avx512"):
        if p not in paths:
            assert "cannot run the %s path" % p in child(p)
