#!/usr/bin/env bash
# Gaussian generator per thread: dpdyn's paths (scalar, AVX2, AVX-512 where the CPU has them)
# against NumPy's np.random.default_rng(0).standard_normal, all measured in one run:
#   (a) NumPy, one thread (OPENBLAS_NUM_THREADS=1; its generator is single-threaded anyway),
#       filling a 4096-double buffer in place (standard_normal(out=buf)) in short windows,
#   (b) dpd_bench_gauss on one thread, the paths taking turns in short windows, same buffer,
#   (c) NumPy again,
# then the ratios of each path to NumPy. Each figure is the best window (the machine may be
# shared: a window that was descheduled is slow, never fast); the median window and the
# 10th-percentile one give the spread. Names the CPU and the ISA flags.
# Usage: bench/bench_gauss.sh        (BUILD=dir for another build directory, PYTHON=interpreter
#                                     with NumPy, SECONDS_PER_FIGURE=2, WINDOWS=1000)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
secs=${SECONDS_PER_FIGURE:-2}
windows=${WINDOWS:-1000}
len=4096
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$build/dpd_bench_gauss" ]; then
  echo "bench_gauss: $build/dpd_bench_gauss not built (cmake --build $build --target dpd_bench_gauss)" >&2
  exit 1
fi
python=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then
    python=$p
    break
  fi
done

# NumPy's rate in `windows` windows of secs/windows seconds: best, median, 10th percentile.
numpy_rates() {
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$python" - "$secs" "$windows" "$len" <<'EOF'
import sys, time
import numpy as np
secs, windows, n = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
g = np.random.default_rng(0)
buf = np.empty(n)
g.standard_normal(out=buf)
w = secs / windows
rates = []
for _ in range(windows):
    t0 = time.perf_counter()
    reps = 0
    while True:
        for _ in range(4):
            g.standard_normal(out=buf)
        reps += 4
        dt = time.perf_counter() - t0
        if dt >= w:
            break
    rates.append(reps * n / dt)
rates.sort()
print(f"{rates[-1]:.6e} {rates[len(rates) // 2]:.6e} {rates[len(rates) // 10]:.6e} {np.__version__}")
EOF
}

echo "# dpdyn Gaussian generator vs NumPy, one thread, buffer $len doubles, $windows windows per figure"
if [ -n "$python" ]; then
  numpy_rates >"$tmp/np1"
fi
OMP_NUM_THREADS=1 "$build/dpd_bench_gauss" "$secs" "$len" "$windows" >"$tmp/c.out"
if [ -n "$python" ]; then
  numpy_rates >"$tmp/np2"
fi
grep '^# CPU' "$tmp/c.out"
grep '^# path' "$tmp/c.out"
value() { sed -n "s/^$1=//p" "$tmp/c.out" | tail -n 1; }
echo "cpu_model=$(value cpu_model)"
echo "isa_flags=$(value isa_flags)"
paths=$(sed -n 's/^gaussians_per_second_\(scalar\|avx2\|avx512\)=.*/\1/p' "$tmp/c.out")
for p in $paths; do
  echo "gaussians_per_second_$p=$(value "gaussians_per_second_$p")"
  echo "gaussians_per_second_${p}_median=$(value "gaussians_per_second_${p}_median")"
done
if [ -z "$python" ]; then
  echo "# NumPy: not found (PYTHON=interpreter with NumPy); no ratios"
  exit 0
fi
# NumPy: best of both halves; median and 10th percentile of the half with the better median.
read -r b1 m1 s1 ver <"$tmp/np1"
read -r b2 m2 s2 _ <"$tmp/np2"
read -r np_best np_med np_slow < <(awk -v b1="$b1" -v m1="$m1" -v s1="$s1" -v b2="$b2" \
  -v m2="$m2" -v s2="$s2" 'BEGIN { b = b1 > b2 ? b1 : b2;
    if (m1 > m2) print b, m1, s1; else print b, m2, s2 }')
awk -v b="$np_best" -v m="$np_med" -v s="$np_slow" -v v="$ver" -v b1="$b1" -v b2="$b2" 'BEGIN {
  printf "# NumPy %s default_rng(0).standard_normal: %7.1f M Gaussians/s per thread (best; " \
    "median %.1f, 10th percentile %.1f; best before/after the C run %.1f / %.1f)\n",
    v, b / 1e6, m / 1e6, s / 1e6, b1 / 1e6, b2 / 1e6 }'
echo "numpy_gaussians_per_second=$np_best"
echo "numpy_gaussians_per_second_median=$np_med"
for p in $paths; do
  awk -v p="$p" -v c="$(value "gaussians_per_second_$p")" \
    -v cm="$(value "gaussians_per_second_${p}_median")" -v n="$np_best" -v nm="$np_med" 'BEGIN {
    printf "# ratio %-6s / NumPy: %.2fx (best / best), %.2fx (median / median)\n", p, c / n, cm / nm
    printf "ratio_%s_numpy=%.3f\n", p, c / n }'
done
