#!/usr/bin/env bash
# Noisy-SGD speed of the semi-private model against NumPy, measured in the same run:
#   (a) dpd_bench_semipriv: dpd_semipriv_sgd_run (one thread), steps per second and Gaussians per
#       second, for each k of the list;
#   (b) bench/bench_semipriv_numpy.py: the same loop in NumPy (Python loop over steps, noise and
#       indices drawn in blocks), OPENBLAS_NUM_THREADS=1, on the same rows;
#   (c) dpd_bench_gauss: this machine's Gaussian-generation limit on one thread, the ceiling of
#       (a) at large k.
# Each figure is the fastest of REPS runs (default 2) of T = n^2 steps. Ends with key=value lines.
# Usage: bench/bench_semipriv.sh [n epsilon "k1 k2 ..."]   (BUILD=dir, PYTHON=interpreter, REPS=r)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
n=${1:-500} eps=${2:-0.1} ks=${3:-"5 50 200 1000"}
reps=${REPS:-2}
for b in dpd_bench_semipriv dpd_bench_gauss; do
  if [ ! -x "$build/$b" ]; then
    echo "bench_semipriv: $build/$b not built (cmake --build $build)" >&2
    exit 1
  fi
done
python=""
for py in ${PYTHON:-/usr/bin/python3 python3}; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' 2>/dev/null; then
    python=$py
    break
  fi
done
value() { sed -n "s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | tail -n 1; }
echo "# machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# command: bench/bench_semipriv.sh $n $eps \"$ks\"  (REPS=$reps)"
echo "# load average before the run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
g=$(OMP_NUM_THREADS=1 "$build/dpd_bench_gauss" 0.5)
gps=$(value gaussians_per_second_single_thread "$g")
echo "gaussians_per_s_limit_1thread=$gps"
[ -n "$python" ] || echo "# NumPy not found (tried ${PYTHON:-/usr/bin/python3 python3}); C figures only"
for k in $ks; do
  c=$(OMP_NUM_THREADS=1 "$build/dpd_bench_semipriv" "$n" "$k" "$eps" "$((n * n))" "$reps")
  cs=$(value dpdyn_steps_per_s "$c")
  cg=$(value dpdyn_gaussians_per_s "$c")
  line="k=$k dpdyn_steps_per_s=$cs dpdyn_gaussians_per_s=$cg"
  line+=" dpdyn_fraction_of_gaussian_limit=$(awk -v a="$cg" -v b="$gps" 'BEGIN{printf "%.3g", a/b}')"
  line+=" dpdyn_active_fraction=$(value active_fraction "$c")"
  if [ -n "$python" ]; then
    p=$(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$python" "$root/bench/bench_semipriv_numpy.py" \
      --n "$n" --k "$k" --epsilon "$eps" --T "$((n * n))" --reps "$reps")
    ps=$(value numpy_steps_per_s "$p")
    line+=" numpy_steps_per_s=$ps numpy_active_fraction=$(value active_fraction "$p")"
    line+=" dpdyn_over_numpy=$(awk -v a="$cs" -v b="$ps" 'BEGIN{printf "%.3g", a/b}')"
  fi
  echo "$line"
done
