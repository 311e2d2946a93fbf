#!/usr/bin/env bash
# Gap table of MATH.md 1.6-1.7: |mean - ODE| (sup over the grid and at the released final
# iterate) for the DP-SGD simulation and for the homogenized SDE, at n in {500, 2000, 8000} with
# gamma = 0.25 (d = n/4), isotropic spectrum, c = 0.5, rho = 1, sqrt schedule (eta0 = 1),
# zeta = 0.5, 64 replicates, grid 101, with standard errors and the gaps times sqrt(n).
# The work is done by the C driver dpd_gap_table (scripts/gap_table.c), which calls the library.
# Usage: scripts/sde_gap_table.sh [seeds [grid [threads [n1 n2 ...]]]]
#        (BUILD=dir to use another build directory)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
if [ ! -x "$build/dpd_gap_table" ]; then
  echo "sde_gap_table: $build/dpd_gap_table not built (cmake --build $build)" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  set -- 64 101 0 500 2000 8000
fi
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
"$build/dpd_gap_table" "$@"
