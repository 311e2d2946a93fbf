#!/usr/bin/env bash
# Linear-regression simulator benchmark, all figures from one run:
#   (a) wall time of `dpdyn simulate --d=1000 --n=4000 --seeds=64 --c=1 --rho=1 --schedule=sqrt
#       --eta0=1` (and of the library-level driver dpd_bench_sim on the same workload; the
#       driver is timed alone when the CLI is not built),
#   (b) a NumPy implementation of the same workload batched over the 64 replicates,
#   (c) the machine's Gaussian-generation limit (dpd_bench_gauss, all threads),
# then the ratios numpy_time / dpdyn_time (target >= 5 on 2 cores) and the simulator's achieved
# Gaussian rate (2 d n seeds + n seeds draws per run) / limit (target >= 0.5), and
#   (d) the table of that ratio for d = 1e3, 1e4, 1e5 and threads = 1 .. nproc, the simulator
#       and the limit on the same threads measured alternately in one process, best of
#       RATIO_REPEATS (default 5) each (`dpd_bench_sim ratio`; target >= 0.8).
# Usage: bench/bench_linreg.sh            (BUILD=dir to use another build directory,
#                                            PYTHON=interpreter with NumPy)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
d=1000 n=4000 seeds=64
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in dpd_bench_sim dpd_bench_gauss; do
  if [ ! -x "$build/$t" ]; then
    echo "bench_linreg: $build/$t not built (cmake --build $build)" >&2
    exit 1
  fi
done
python=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then
    python=$p
    break
  fi
done

# Wall time of a command in seconds (bash's EPOCHREALTIME: no fork in the measurement).
elapsed() {
  local t0=$EPOCHREALTIME
  "$@" >"$tmp/last.out" 2>"$tmp/last.err" || { cat "$tmp/last.err" >&2; return 1; }
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'
}
value() { sed -n "s/^$1=//p" "$2" | tail -n 1; }

echo "# dpdyn linreg benchmark: d=$d n=$n seeds=$seeds c=1 rho=1 schedule=sqrt eta0=1"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

# (a) dpdyn: the CLI when it is built, and the library-level driver.
t_cli=""
if [ -x "$build/dpdyn" ] && "$build/dpdyn" simulate --help >/dev/null 2>&1; then
  t_cli=$(elapsed "$build/dpdyn" simulate --d=$d --n=$n --seeds=$seeds --c=1 --rho=1 \
    --schedule=sqrt --eta0=1 --out="$tmp/out")
  echo "dpdyn_simulate_seconds=$t_cli"
else
  echo "# dpdyn simulate not available; timing the library driver only"
fi
t_lib=$(elapsed "$build/dpd_bench_sim" $d $n $seeds)
cp "$tmp/last.out" "$tmp/lib.out"
echo "dpd_bench_sim_seconds=$t_lib"
echo "dpd_bench_sim_final_risk=$(value final_risk "$tmp/lib.out") +- $(value final_risk_se "$tmp/lib.out")"
t_dpdyn=${t_cli:-$t_lib}

# (b) NumPy, batched over replicates (its own timer covers the simulation loop only; the
# process time including the NumPy import is reported too).
t_np=""
if [ -n "$python" ]; then
  t_np_proc=$(elapsed "$python" "$root/bench/bench_linreg_numpy.py" --d $d --n $n \
    --seeds $seeds --c 1 --rho 1 --schedule sqrt --eta0 1)
  t_np=$(value seconds "$tmp/last.out")
  echo "numpy_seconds=$t_np"
  echo "numpy_process_seconds=$t_np_proc"
  echo "numpy_final_risk=$(value final_risk "$tmp/last.out") +- $(value final_risk_se "$tmp/last.out")"
else
  echo "# NumPy not found (set PYTHON=...); skipping the NumPy baseline"
fi

# (c) Gaussian-generation limit.
"$build/dpd_bench_gauss" 1 >"$tmp/gauss.out"
grep '^# path' "$tmp/gauss.out" || true
limit=$(value gaussians_per_second_all_threads "$tmp/gauss.out")
single=$(value gaussians_per_second_single_thread "$tmp/gauss.out")
echo "gaussians_per_second_single_thread=$single"
echo "gaussians_per_second_all_threads=$limit"

awk -v d=$d -v n=$n -v s=$seeds -v td="$t_dpdyn" -v tl="$t_lib" -v tn="$t_np" -v lim="$limit" '
BEGIN {
  draws = 2 * d * n * s + n * s
  printf "simulator_gaussians=%.6e\n", draws
  printf "simulator_gaussians_per_second=%.6e\n", draws / td
  printf "gaussian_efficiency=%.3f   # achieved / limit, target >= 0.5\n", draws / td / lim
  printf "gaussian_efficiency_library=%.3f\n", draws / tl / lim
  if (tn != "") printf "numpy_over_dpdyn=%.2f   # target >= 5\n", tn / td
}'

# (d) Ratio table: simulator / Gaussian limit on the same threads, by d and threads.
echo "# load average before the ratio table: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$build/dpd_bench_sim" ratio "${RATIO_REPEATS:-5}"

# Hook for the ODE benchmark when it exists.
if [ -f "$root/bench/bench_ode.sh" ]; then
  echo "# --- bench/bench_ode.sh ---"
  bash "$root/bench/bench_ode.sh"
fi
