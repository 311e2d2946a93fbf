#!/usr/bin/env bash
# Random-features DP-GD benchmark (dpd_bench_rf): seconds per step of the library's simulator
# (dpd_rf_sim_run: one fused fixed-order pass over Phi per step) against two OpenBLAS dgemv per
# step measured in the same run on the same Phi, for n p >= 1e7 (default n=2000 p=5000 d=200).
# Then the dgemv reproducibility check: the bit pattern of Phi^T v from dgemv with
# OPENBLAS_NUM_THREADS=1 and with all threads (a differing hash means OpenBLAS dgemv results
# depend on its thread count, the reason rf_sim.c uses its own loops).
# Usage: scripts/bench_rf.sh [n p d T]    (BUILD=dir for another build directory, THREADS=n)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
threads=${THREADS:-$(nproc)}
n=${1:-2000} p=${2:-5000} d=${3:-200} T=${4:-50}
if [ ! -x "$build/dpd_bench_rf" ]; then
  echo "bench_rf: $build/dpd_bench_rf not built (cmake --build $build)" >&2
  exit 1
fi
echo "# machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
out=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$build/dpd_bench_rf" "$n" "$p" "$d" "$T" "$threads" 3)
echo "$out"
h_all=$(sed -n 's/^gemv_hash=//p' <<<"$out")
h_one=$(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$build/dpd_bench_rf" "$n" "$p" "$d" 2 1 1 |
  sed -n 's/^gemv_hash=//p')
echo "gemv_hash_threads_$threads=$h_all gemv_hash_threads_1=$h_one"
if [ "$h_all" = "$h_one" ]; then
  echo "dgemv_bits_depend_on_threads=no (this OpenBLAS build and size)"
else
  echo "dgemv_bits_depend_on_threads=yes"
fi
