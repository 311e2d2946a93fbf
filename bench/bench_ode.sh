#!/usr/bin/env bash
# Times the risk ODE (dpd_ode_solve) on power-law spectra with d = 1e3 .. 1e7 distinct
# eigenvalues against a memory-bandwidth baseline measured in the same run, to show how the
# cost per step and eigenvalue depends on d, with the vector kernels before and after they
# were queued and cache-blocked (src/linreg/ode_nvector.c).
# SPDX-License-Identifier: MIT
#
# Usage: bench/bench_ode.sh [BUILD_DIR [METHOD [MAX_D [MODES [ALPHAS]]]]]
#   BUILD_DIR  CMake build directory holding dpd_bench_ode (default: build)
#   METHOD     bdf (default: BDF + Sherman-Morrison), bdf-spgmr or adams
#   MAX_D      largest dimension (default: 10000000)
#   MODES      vector-kernel modes, space-separated (default: "1 0"): 1 = the default (one pass per
#              CVODE vector operation), 0 = after (queued and cache-blocked from 262144 groups
#              on; below that the same as 1)
#   ALPHAS     power-law exponents (default: "1.0")
# Parameters (fixed in bench/bench_ode.c): gamma = 0.5, zeta = 0.5, c = 1, rho = 1, schedule
# sqrt (eta0 = 1), theta* random (seed 1), rtol 1e-10 (the library default).
# Each line is the best (least CPU time) of 3 (d <= 1e5), 2 (1e6) or 1 (1e7) runs.
# Columns: d, alpha, lambda_max, triad ns per entry and GB/s over three d-vectors (the
# baseline), mode, CPU seconds of the solve (wall time would also count other jobs' turns on a
# shared machine), CVODE steps, rhs evaluations, Newton iterations, ns of CPU per (step * d),
# and the same expressed in vector passes: ns/(step*d) divided by the triad's ns per entry and pass (a third of its ns per entry), i.e. how many streams of d doubles through
# memory at triad speed one step costs. R_out must agree across modes (bit for bit).
set -euo pipefail

build=${1:-build}
method=${2:-bdf}
max_d=${3:-10000000}
modes=${4:-1 0}
alphas=${5:-1.0}
bench="$build/dpd_bench_ode"
if [[ ! -x "$bench" ]]; then
  echo "bench_ode.sh: $bench not found (build the target dpd_bench_ode first)" >&2
  exit 1
fi

printf '# dpd_bench_ode, method %s, %s, %s CPU(s), %s, load %s\n' "$method" "$(uname -m)" \
  "$(nproc)" "$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '# %-8s %5s %9s %7s %6s %4s %8s %5s %5s %6s %11s %7s %14s\n' d alpha lambda_max \
  triad_ns GB/s mode cpu_s steps rhs newton 'ns/(step*d)' passes final_risk
for alpha in $alphas; do
  for d in 1000 10000 100000 1000000 10000000; do
    if ((d > max_d)); then
      continue
    fi
    read -r _ triad_ns gbs _ < <("$bench" triad "$d")
    # Best of 3 (d <= 1e5), 2 (1e6) or 1 (1e7) runs per mode, the modes interleaved, so that
    # other load on the machine affects every mode alike.
    reps=$((d <= 100000 ? 3 : (d <= 1000000 ? 2 : 1)))
    declare -A line=()
    for ((r = 0; r < reps; r++)); do
      for mode in $modes; do
        out=$("$bench" "$d" "$alpha" "$method" - "$mode")
        read -r _ _ _ cpu _ <<<"$out"
        if [[ -z ${line[$mode]:-} ]] || awk -v a="$cpu" -v b="${line[$mode]}" \
          'BEGIN { split(b, f, " "); exit !(a < f[4]) }'; then
          line[$mode]=$out
        fi
      done
    done
    for mode in $modes; do
      read -r dd a lmax cpu steps rhs nonlin _ per_step final _ <<<"${line[$mode]}"
      passes=$(awk -v p="$per_step" -v t="$triad_ns" 'BEGIN { printf "%.0f", 3 * p / t }')
      printf '  %-8s %5s %9.4g %7.3f %6.1f %4s %8.3f %5s %5s %6s %11.2f %7s %14.10g\n' "$dd" \
        "$a" "$lmax" "$triad_ns" "$gbs" "$mode" "$cpu" "$steps" "$rhs" "$nonlin" \
        "$per_step" "$passes" "$final"
    done
    unset line
  done
done
