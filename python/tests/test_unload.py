"""The library stays loaded until the process ends (RTLD_NODELETE): at interpreter exit cffi
closes its handle, and unmapping libdpdyn (and with it libgomp) under OpenMP's idle worker
threads crashed the interpreter after a successful run (SIGSEGV at exit, 9 of 60 runs with two
busy loops beside it). Checked deterministically: after an explicit dlclose the library is still
mapped."""
import os
import subprocess
import sys

import dpdyn

CHILD = r"""
import dpdyn
from dpdyn import _lib
dpdyn.run("simulate", d=40, n=160, c=0.5, rho=2, seeds=4, grid=6, threads=2)
path = os.path.realpath(_lib.path())
_lib.ffi.dlclose(_lib.lib())
maps = open("/proc/self/maps").read()
print("MAPPED" if path in maps else "UNMAPPED", flush=True)
os._exit(0)  # the handle is closed by hand above: skip cffi's own close at exit
"""


def test_the_library_is_never_unloaded():
    env = dict(os.environ)
    # cwd: the child imports this very package (sys.path[0] is the working directory with -c)
    out = subprocess.run([sys.executable, "-c", "import os\n" + CHILD], env=env,
                         capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(dpdyn.__file__)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("MAPPED") and "UNMAPPED" not in out.stdout, out.stdout
