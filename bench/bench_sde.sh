#!/usr/bin/env bash
# H-DP-SGD (SDE) integrator benchmark, all figures from one run, on the workload
#   d=1000 n=4000 seeds=64 c=1 rho=1 schedule=sqrt eta0=1 (isotropic, dt = 1/n):
#   (a) dpd_bench_sde: the library's Euler-Maruyama integrator (dpd_linreg_sde_run),
#   (b) dpd_bench_sim: the DP-SGD simulator (dpd_linreg_sim_run) on the same workload,
#   (c) a NumPy Euler-Maruyama of the same SDE batched over the 64 replicates,
#   (d) the machine's Gaussian-generation limit (dpd_bench_gauss, all threads),
# then steps per second (one step = one time step of one replicate) of each, the ratios, and
# the SDE's achieved Gaussian rate (2 d per step) against the limit. The two C drivers are run
# three times each and the fastest run is kept, as is the highest of three measurements of the
# limit (the machine may be shared); NumPy runs once.
# Usage: bench/bench_sde.sh            (BUILD=dir to use another build directory,
#                                         PYTHON=interpreter with NumPy, THREADS=n)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
threads=${THREADS:-0}
d=1000 n=4000 seeds=64
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in dpd_bench_sde dpd_bench_sim dpd_bench_gauss; do
  if [ ! -x "$build/$t" ]; then
    echo "bench_sde: $build/$t not built (cmake --build $build)" >&2
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

value() { sed -n "s/^$1=//p" "$2" | tail -n 1; }
# Fastest of three runs of a driver: leaves its output in $tmp/$1.out.
best_of_three() {
  local name=$1 best="" s
  shift
  for _ in 1 2 3; do
    "$@" >"$tmp/run.out"
    s=$(value seconds "$tmp/run.out")
    if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$s
      cp "$tmp/run.out" "$tmp/$name.out"
    fi
  done
}

echo "# dpdyn SDE benchmark: d=$d n=$n seeds=$seeds c=1 rho=1 schedule=sqrt eta0=1 dt=1/n"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

best_of_three sde "$build/dpd_bench_sde" $d $n $seeds "$threads"
best_of_three sim "$build/dpd_bench_sim" $d $n $seeds "$threads"
grep '^#' "$tmp/sde.out"
t_sde=$(value seconds "$tmp/sde.out")
t_sim=$(value seconds "$tmp/sim.out")
echo "sde_seconds=$t_sde"
echo "sde_final_risk=$(value final_risk "$tmp/sde.out") +- $(value final_risk_se "$tmp/sde.out")"
echo "sim_seconds=$t_sim"
echo "sim_final_risk=$(value final_risk "$tmp/sim.out") +- $(value final_risk_se "$tmp/sim.out")"

t_np=""
if [ -n "$python" ]; then
  "$python" "$root/bench/bench_sde_numpy.py" --d $d --n $n --seeds $seeds --c 1 --rho 1 \
    --schedule sqrt --eta0 1 >"$tmp/np.out"
  t_np=$(value seconds "$tmp/np.out")
  echo "numpy_seconds=$t_np"
  echo "numpy_final_risk=$(value final_risk "$tmp/np.out") +- $(value final_risk_se "$tmp/np.out")"
else
  echo "# NumPy not found (set PYTHON=...); skipping the NumPy baseline"
fi

# The limit for the threads in use: all threads, or one with THREADS=1.
key=gaussians_per_second_all_threads
if [ "$threads" = 1 ]; then
  key=gaussians_per_second_single_thread
fi
limit=""
for _ in 1 2 3; do # the highest of three measurements of the limit
  "$build/dpd_bench_gauss" 1 >"$tmp/gauss.out"
  l=$(value $key "$tmp/gauss.out")
  if [ -z "$limit" ] || awk -v a="$l" -v b="$limit" 'BEGIN { exit !(a > b) }'; then
    limit=$l
  fi
done
echo "$key=$limit"

awk -v d=$d -v n=$n -v s=$seeds -v ts="$t_sde" -v tm="$t_sim" -v tn="$t_np" -v lim="$limit" '
BEGIN {
  steps = n * s
  printf "sde_steps_per_second=%.6e\n", steps / ts
  printf "sim_steps_per_second=%.6e\n", steps / tm
  if (tn != "") printf "numpy_sde_steps_per_second=%.6e\n", steps / tn
  printf "sde_over_sim=%.2f   # SDE steps/s over DP-SGD simulator steps/s\n", tm / ts
  if (tn != "") printf "sde_over_numpy=%.2f   # SDE steps/s over NumPy EM steps/s\n", tn / ts
  draws = (2 * d * n + d) * s
  printf "sde_gaussians_per_second=%.6e\n", draws / ts
  printf "sde_gaussian_efficiency=%.3f   # achieved / generation limit\n", draws / ts / lim
}'
