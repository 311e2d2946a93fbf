#!/usr/bin/env bash
# Times the Volterra/FFT solver against the risk ODE on power-law spectra with 10^4, 10^5 and
# 10^6 distinct eigenvalues: constant schedule, no clipping, privacy noise through a constant
# sigma~^2 (the case where both solve the same equation, docs/math.md §1.9).
# SPDX-License-Identifier: MIT
#
# Usage: bench/bench_volterra.sh [BUILD_DIR [ODE_RTOL [MAX_D]]]
#   BUILD_DIR  CMake build directory holding dpd_bench_volterra (default: build)
#   ODE_RTOL   relative tolerance of the ODE (default: 1e-8, the library default)
#   MAX_D      largest dimension (default: 1000000)
# Parameters (fixed in bench/bench_volterra.c): eta0 = 1, gamma = 0.5, zeta = 0.5, c = 1,
# mu = nu = 1, sigma~^2 = 0.3, rho = inf, theta* random (seed 1), grid = 101; Volterra with
# its defaults (N = 400 steps, Richardson extrapolation from 2N, graded start).
# Columns: d, alpha, lambda_max, ODE and Volterra wall and CPU seconds, speed-ups (ODE time /
# Volterra time), the largest relative difference of the risk over the 101 grid points, CVODE
# steps, Volterra steps (finest mesh).
set -euo pipefail

build=${1:-build}
rtol=${2:-1e-8}
max_d=${3:-1000000}
bench="$build/dpd_bench_volterra"
if [[ ! -x "$bench" ]]; then
  echo "bench_volterra.sh: $bench not found (build the target dpd_bench_volterra first)" >&2
  exit 1
fi

printf '# dpd_bench_volterra, ODE rtol %s, %s, %s CPU(s)\n' "$rtol" "$(uname -m)" "$(nproc)"
printf '# %-8s %5s %11s %9s %9s %9s %9s %8s %8s %10s %6s %6s\n' d alpha lambda_max ode_wall \
  ode_cpu vol_wall vol_cpu x_wall x_cpu max_rel ode_st vol_st
for alpha in 1.5 1.0; do
  for d in 10000 100000 1000000; do
    if (( d > max_d )); then
      continue
    fi
    read -r dd a lmax ow oc vw vc sw sc diff ost vst _ _ < <("$bench" "$d" "$alpha" "$rtol")
    printf '  %-8s %5s %11.5g %9.4f %9.4f %9.4f %9.4f %8.2f %8.2f %10.3e %6s %6s\n' "$dd" "$a" \
      "$lmax" "$ow" "$oc" "$vw" "$vc" "$sw" "$sc" "$diff" "$ost" "$vst"
  done
done
