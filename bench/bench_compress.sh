#!/usr/bin/env bash
# Spectral compression of the risk ODE against the uncompressed solve (docs/ode.md), one run:
# max relative differences over the grid, group counts, times and speed-ups, then the
# compressed `dpdyn ode` at d = 1e9 (time and peak memory).
# SPDX-License-Identifier: MIT
#
# Usage: bench/bench_compress.sh [BUILD_DIR [MAX_D]]
#   BUILD_DIR  CMake build directory holding dpd_bench_compress and dpdyn (default: build)
#   MAX_D      largest d of the comparison (default 1000000; the d = 1e6 rows take minutes)
# Rows (bench/bench_compress.c): d, spectrum, schedule, private (1: c = 0.5, rho = 1), theta*,
# groups of the full problem, groups after compression (6 Gauss nodes per band and measure,
# 3 bands per decade), seconds uncompressed, seconds compressed (building included), speed-up,
# max relative difference of R, of the lower and upper bounds, of the released risk; then the
# max relative error of R of the uncompressed and of the compressed solve against a reference
# (12 nodes per band at rtol 1e-12: which of the two carries the difference); for d = 1e4 that
# reference against the uncompressed problem at rtol 1e-12 (ref_check).
# Library defaults for both solves: BDF + Sherman-Morrison, rtol 1e-10, atol 1e-14.
set -euo pipefail

build=${1:-build}
max_d=${2:-1000000}
bench="$build/dpd_bench_compress"
dpdyn="$build/dpdyn"
for p in "$bench" "$dpdyn"; do
  if [[ ! -x "$p" ]]; then
    echo "bench_compress.sh: $p not found (build first)" >&2
    exit 1
  fi
done

printf '# dpd_bench_compress, %s, %s CPU(s), %s\n' "$(uname -m)" "$(nproc)" "$(date -u +%F)"
printf '# %-8s %-13s %-10s %4s %-6s %8s %6s %9s %9s %8s %9s %9s %9s %9s %9s %9s %9s\n' d \
  spectrum schedule priv theta groups nodes t_full_s t_comp_s speedup dR dlower dupper dfinal \
  err_full err_comp ref_check
row() {
  read -r -a f < <("$bench" "$@")
  printf '  %-8s %-13s %-10s %4s %-6s %8s %6s %9.4g %9.4g %8.1f %9s %9s %9s %9s %9s %9s %9s\n' "${f[@]}"
}
for d in 10000 100000; do
  (( d > max_d )) && continue
  for alpha in 0.5 1 1.5 2; do
    for sched in const sqrt hyperbolic optimal step cosine file; do
      for priv in 0 1; do
        row "$d" "powerlaw:$alpha" "$sched" "$priv" random
      done
    done
  done
  row "$d" powerlaw:1 sqrt 1 flat
  row "$d" iso sqrt 1 random
  row "$d" levels sqrt 1 random
done
if (( max_d >= 1000000 )); then
  for alpha in 0.5 1 1.5 2; do
    row 1000000 "powerlaw:$alpha" sqrt 1 random
  done
  for sched in const hyperbolic optimal step cosine file; do
    row 1000000 powerlaw:1 "$sched" 1 random
  done
fi

printf '# dpdyn ode at d = 1e9 (n = 4e9, powerlaw:1, sqrt, eta0 = 2, c = 0.5, rho = 1): no array of d\n'
printf '# numbers; the summary'"'"'s groups, error estimates, wall seconds and peak memory\n'
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for theta in flat random; do
  /usr/bin/time -f '%e %M' -o "$out/time" "$dpdyn" ode --d=1000000000 --n=4000000000 \
    --spectrum=powerlaw:1 --theta_star=$theta --c=0.5 --rho=1 --schedule=sqrt --eta0=2 \
    --zeta=0.5 --out="$out/o" --plot=0 >/dev/null 2>&1
  read -r wall kb <"$out/time"
  /usr/bin/python3 - "$out/o/summary.json" "$theta" "$wall" "$kb" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"  theta {sys.argv[2]:6s} groups {j['ode_groups']:.0f} nodes/band {j['compress_nodes_per_band']:.0f}"
      f" compress_error_estimate {j['compress_error_estimate']:.2e}"
      f" ode_error_estimate {j['ode_error_estimate']:.2e} R_out {j['final_excess_risk']:.10g}"
      f" wall {float(sys.argv[3]):.2f} s peak RSS {int(sys.argv[4]) / 1024:.1f} MiB")
PY
done
