#!/usr/bin/env bash
# Times the risk ODE (dpd_ode_solve) on power-law spectra with d = 1e3 .. 1e6
# distinct eigenvalues, to show that the cost is linear in d.
# SPDX-License-Identifier: MIT
#
# Usage: bench/bench_ode.sh [BUILD_DIR [METHOD [MAX_D]]]
#   BUILD_DIR  CMake build directory holding dpd_bench_ode (default: build)
#   METHOD     bdf (default: BDF + Sherman-Morrison), bdf-spgmr or adams
#   MAX_D      largest dimension (default: 1000000)
# Parameters (fixed in bench/bench_ode.c): gamma = 0.5, zeta = 0.5, c = 1,
# rho = 1, schedule sqrt (eta0 = 1), theta* random (seed 1), rtol 1e-8.
# Columns: d, alpha, lambda_max, wall seconds, CVODE steps, rhs evaluations,
# nonlinear iterations, SPGMR iterations, nanoseconds per (step * d), R_out.
set -euo pipefail

build=${1:-build}
method=${2:-bdf}
max_d=${3:-1000000}
bench="$build/dpd_bench_ode"
if [[ ! -x "$bench" ]]; then
  echo "bench_ode.sh: $bench not found (build the target dpd_bench_ode first)" >&2
  exit 1
fi

printf '# dpd_bench_ode, method %s, %s, %s CPU(s)\n' "$method" "$(uname -m)" "$(nproc)"
printf '# %-8s %5s %11s %9s %6s %7s %7s %7s %11s %14s\n' d alpha lambda_max wall_s steps \
  rhs nonlin lin 'ns/(step*d)' final_risk
for alpha in 1.5 1.0; do
  for d in 1000 10000 100000 1000000; do
    if (( d > max_d )); then
      continue
    fi
    read -r dd a lmax wall steps rhs nonlin lin per_step final < <("$bench" "$d" "$alpha" "$method")
    printf '  %-8s %5s %11.5g %9.4f %6s %7s %7s %7s %11.2f %14.10g\n' "$dd" "$a" "$lmax" "$wall" \
      "$steps" "$rhs" "$nonlin" "$lin" "$per_step" "$final"
  done
done
