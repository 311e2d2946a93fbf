#!/usr/bin/env bash
# PLD accountant speed (issue 28 s1 target: <= 50 ms for 1e4 homogeneous steps), in one run:
#   (a) dpd_bench_pld: build one Poisson-subsampled Gaussian step at grid step h, compose it T
#       times by an FFT power, read eps(delta) (add/remove); median and min of REPEATS runs, the
#       composed PLD's points, eps_up/eps_low; and the RDP accountant's time and eps,
#   (b) NumPy: the reference's algorithm (tests/pld_highres.py, the upper bound) at the same h
#       (bench/bench_pld_numpy.py), same T,
# then the table: dpdyn and NumPy times, their ratio, points, eps (PLD up/low, NumPy up, RDP).
# Names the CPU and its ISA flags. Not a test: nothing is asserted.
# Usage: bench/bench_pld.sh     (BUILD=dir, PYTHON=interpreter with numpy+scipy, Q=0.01, SIGMA=1,
#                                DELTA=1e-5, H=1e-4, REPEATS=5, STEPS="10000 100000")
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
q=${Q:-0.01}
sigma=${SIGMA:-1}
delta=${DELTA:-1e-5}
h=${H:-1e-4}
repeats=${REPEATS:-5}
steps=${STEPS:-10000 100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$build/dpd_bench_pld" ]; then
  echo "bench_pld: $build/dpd_bench_pld not built (cmake --build $build --target dpd_bench_pld)" >&2
  exit 1
fi
python=""
for p in ${PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy, scipy' 2>/dev/null; then
    python=$p
    break
  fi
done

echo "# dpdyn PLD benchmark: Poisson-subsampled Gaussian, add/remove, q=$q sigma=$sigma delta=$delta h=$h, median of $repeats"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "# isa: $(grep -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# shellcheck disable=SC2086
"$build/dpd_bench_pld" "$q" "$sigma" "$delta" "$h" "$repeats" $steps >"$tmp/dpd"
grep '^#' "$tmp/dpd" | sed -n '1p'
if [ -n "$python" ]; then
  # shellcheck disable=SC2086
  OPENBLAS_NUM_THREADS=1 "$python" "$root/bench/bench_pld_numpy.py" "$q" "$sigma" "$delta" "$h" \
    "$repeats" $steps >"$tmp/np"
else
  echo "# NumPy/SciPy not found: no baseline" >&2
  : >"$tmp/np"
fi
get() { sed -n "s/^$2=//p" "$1"; }
printf '# %8s %11s %11s %8s %10s %10s %12s %12s %12s %10s %12s\n' T dpd_med_s numpy_med_s \
  np/dpd dpd_points np_points pld_eps_up pld_eps_low numpy_eps_up rdp_med_s rdp_eps
for T in $steps; do
  d=$(get "$tmp/dpd" "pld_T${T}_seconds_median")
  n=$(get "$tmp/np" "numpy_T${T}_seconds_median")
  ratio=$(awk -v a="$n" -v b="$d" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }')
  printf '  %8s %11s %11s %8s %10s %10s %12s %12s %12s %10s %12s\n' "$T" "${d:--}" "${n:--}" "$ratio" \
    "$(get "$tmp/dpd" "pld_T${T}_points")" "$(get "$tmp/np" "numpy_T${T}_points")" \
    "$(get "$tmp/dpd" "pld_T${T}_eps_up")" "$(get "$tmp/dpd" "pld_T${T}_eps_low")" \
    "$(get "$tmp/np" "numpy_T${T}_eps_up")" "$(get "$tmp/dpd" "rdp_T${T}_seconds_median")" \
    "$(get "$tmp/dpd" "rdp_T${T}_eps")"
done
echo "# target: dpdyn <= 0.050 s at T = 10000"
cat "$tmp/dpd" "$tmp/np" | grep -v '^#'
