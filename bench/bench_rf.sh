#!/usr/bin/env bash
# Random-features DP-GD benchmark, all figures from one run on the same shapes (default n=2000
# p=5000 d=200, n p = 1e7, T=50 steps, eta=0.05 clip=0.5 sigma=1):
#   (a) dpd_bench_rf: seconds per step of the library's simulator (dpd_rf_sim_run: one fused
#       fixed-order pass over Phi per step) with one replicate on one thread, and per
#       replicate-step with THREADS replicates on THREADS threads; and two OpenBLAS dgemv per
#       step (Phi theta, then Phi^T v) with THREADS OpenBLAS threads, on the same Phi;
#   (b) bench/bench_rf_numpy.py: the same DP-GD step written in NumPy (Phi @ theta,
#       Phi.T @ v, precomputed row norms, default_rng().standard_normal(p)) with
#       OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=THREADS, and once with one thread;
#   (c) the dgemv reproducibility check: the bit pattern of Phi^T v from dgemv with
#       OPENBLAS_NUM_THREADS=1 and with THREADS threads (a differing hash means OpenBLAS dgemv
#       results depend on its thread count, the reason rf_sim.c uses its own loops).
# Each timing is the fastest of 3 runs of T steps, and (a) and (b) alternate in ROUNDS rounds
# (default 3), the fastest round counting for each figure. The script ends with key=value lines:
# seconds per step, the ratios and the effective bandwidth (bytes of Phi read per step over the
# time: dpdyn reads Phi once per step, dgemv and NumPy twice).
# Usage: bench/bench_rf.sh [n p d T]    (BUILD=dir for another build directory, THREADS=n,
#                                          PYTHON=interpreter with NumPy, ROUNDS=k)
#
# bench/bench_rf.sh --scaling [n p d T]: one replicate (dpd_rf_sim_run, seeds = 1, its row
# blocks on t threads) against two OpenBLAS dgemv on t OpenBLAS threads, for t = 1, 2, 4, ...
# and THREADS (default nproc), in the same process on the same Phi (dpd_bench_rf --scaling).
# ROUNDS rounds (default 3), each the fastest of 3 runs of T steps; the fastest round counts for
# each figure. Prints one row per t: milliseconds per step of each, the fraction (dgemv time /
# replicate time: the replicate's share of the two-dgemv throughput, target >= 0.8), the
# effective bandwidths, and whether the replicate gave the same bits at every t.
# SPDX-License-Identifier: MIT
set -euo pipefail
scaling=0
if [ "${1:-}" = "--scaling" ]; then
  scaling=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
threads=${THREADS:-$(nproc)}
n=${1:-2000} p=${2:-5000} d=${3:-200} T=${4:-50}
reps=3 rounds=${ROUNDS:-3}
if [ ! -x "$build/dpd_bench_rf" ]; then
  echo "bench_rf: $build/dpd_bench_rf not built (cmake --build $build)" >&2
  exit 1
fi
python=""
for py in ${PYTHON:-/usr/bin/python3 python3}; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' 2>/dev/null; then
    python=$py
    break
  fi
done
value() { sed -n "s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | tail -n 1; }

if [ "$scaling" = 1 ]; then
  echo "# machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# command: bench/bench_rf.sh --scaling $n $p $d $T  (THREADS=$threads, ROUNDS=$rounds)"
  echo "# load average before the run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  all=""
  for ((k = 1; k <= rounds; k++)); do
    o=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
      "$build/dpd_bench_rf" --scaling "$n" "$p" "$d" "$T" "$threads" "$reps")
    [ "$k" = 1 ] && grep -m1 '^n=' <<<"$o"
    while read -r line; do echo "# round $k/$rounds: $line"; done < <(grep '^threads=' <<<"$o")
    all+="$o"$'\n'
  done
  echo "# load average after the run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  echo "# --- fastest of $rounds rounds: n=$n p=$p T=$T; fraction = dgemv2 time / replicate time ---"
  awk -v n="$n" -v p="$p" '
  /^threads=/ {
    for (f = 1; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
    t = v["threads"] + 0
    if (!(t in s) || v["rep1_step_s"] + 0 < s[t]) s[t] = v["rep1_step_s"] + 0
    if (!(t in g) || v["gemv2_step_s"] + 0 < g[t]) g[t] = v["gemv2_step_s"] + 0
    if (!(t in h)) h[t] = v["theta_hash"]
    if (h[t] != v["theta_hash"]) h[t] = "differs"
    if (t > tmax) tmax = t
  }
  /^bit_identical_across_threads=/ { if ($0 != "bit_identical_across_threads=yes") bad = 1 }
  END {
    bytes = 8 * n * p
    printf "%-8s %-14s %-14s %-9s %-10s %s\n", "threads", "1rep_ms/step", "2dgemv_ms/step", "fraction", "1rep_GBps", "2dgemv_GBps"
    for (t = 1; t <= tmax; t++) if (t in s)
      printf "%-8d %-14.3f %-14.3f %-9.3g %-10.3g %.3g\n", t, 1e3 * s[t], 1e3 * g[t], g[t] / s[t], bytes / s[t] / 1e9, 2 * bytes / g[t] / 1e9
    for (t = 1; t <= tmax; t++) if (t in s) printf "fraction_threads_%d=%.3g\n", t, g[t] / s[t]
    printf "bit_identical_across_threads=%s\n", bad ? "no" : "yes"
  }' <<<"$all"
  if [ "$(nproc)" -lt 16 ]; then
    echo "# note: this machine has $(nproc) cores; thread counts above that cannot be measured here"
  fi
  exit 0
fi

echo "# machine: $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# command: bench/bench_rf.sh $n $p $d $T  (THREADS=$threads)"
# Other processes on the cores change the multithreaded figures most; the load shows them.
echo "# load average before the run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

# (a) dpdyn simulator and two dgemv, (b) NumPy with the dgemv thread count and with one thread,
# interleaved in ROUNDS rounds; each figure is the fastest over all rounds (each round itself
# reports the fastest of its $reps runs), which keeps load from other processes, whenever it
# comes, out of the comparison as far as possible.
np_args=(--n "$n" --p "$p" --d "$d" --T "$T" --reps "$reps" --eta 0.05 --clip 0.5 --sigma 1)
if [ -z "$python" ]; then
  echo "# NumPy not found (tried ${PYTHON:-/usr/bin/python3 python3}); skipping the NumPy baseline"
fi
lower() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || (b != "" && b + 0 < a + 0)) ? b : a }'; }
s1="" sT="" sN="" gv="" tn="" tn1="" out=""
for ((k = 1; k <= rounds; k++)); do
  o=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$build/dpd_bench_rf" "$n" "$p" "$d" \
    "$T" "$threads" "$reps")
  if [ "$k" = 1 ]; then
    out=$o
    echo "$out"
    case "$(value gemv_library "$out")" in
      *openblas*) ;;
      *) echo "# warning: cblas_dgemv is not OpenBLAS's; gemv2 is not an OpenBLAS baseline" ;;
    esac
  fi
  s1=$(lower "$s1" "$(value sim1_step_s "$o")")
  sT=$(lower "$sT" "$(value simT_step_s "$o")")
  sN=$(lower "$sN" "$(value simN_step_s "$o")")
  gv=$(lower "$gv" "$(value gemv2_step_s "$o")")
  line="# round $k/$rounds: sim1_step_s=$(value sim1_step_s "$o") simT_step_s=$(value simT_step_s "$o")"
  line+=" simN_step_s=$(value simN_step_s "$o") gemv2_step_s=$(value gemv2_step_s "$o")"
  if [ -n "$python" ]; then
    np_out=$(OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads \
      "$python" "$root/bench/bench_rf_numpy.py" "${np_args[@]}")
    np1_out=$(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
      "$python" "$root/bench/bench_rf_numpy.py" "${np_args[@]}")
    if [ "$k" = 1 ]; then
      echo "# numpy: $python bench/bench_rf_numpy.py ${np_args[*]}  (threads=$threads, and 1)"
      echo "$np_out"
    fi
    tn=$(lower "$tn" "$(value numpy_s_per_step "$np_out")")
    tn1=$(lower "$tn1" "$(value numpy_s_per_step "$np1_out")")
    line+=" numpy_s_per_step=$(value numpy_s_per_step "$np_out")"
    line+=" numpy_1thread_s_per_step=$(value numpy_s_per_step "$np1_out")"
  fi
  echo "$line"
done

# (c) dgemv bits with one thread and with all threads (meaningful only if Phi, which comes from
# an OpenBLAS dgemm, has the same bits in both runs).
h_all=$(value gemv_hash "$out")
one=$(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$build/dpd_bench_rf" "$n" "$p" "$d" 2 1 1)
h_one=$(value gemv_hash "$one")
echo "gemv_hash_threads_$threads=$h_all gemv_hash_threads_1=$h_one"
if [ "$(value phi_hash "$out")" != "$(value phi_hash "$one")" ]; then
  echo "dgemv_bits_depend_on_threads=undetermined (Phi itself differs between the two runs)"
elif [ "$h_all" = "$h_one" ]; then
  echo "dgemv_bits_depend_on_threads=no (this OpenBLAS build and size)"
else
  echo "dgemv_bits_depend_on_threads=yes"
fi

# Contention check: THREADS replicates on THREADS threads should take about 1/THREADS of the
# single-replicate time per replicate-step; at n p >= 1e7 far less speedup means that other
# processes held cores in every round, and then the multithreaded figures (dgemv2, numpy) are
# slowed too (on small problems thread start-up alone also lowers it).
speedup=$(awk -v a="$s1" -v b="$sN" 'BEGIN { printf "%.3g", a / b }')
if [ "$threads" -gt 1 ] && awk -v s="$speedup" -v t="$threads" 'BEGIN { exit !(s < 0.75 * t) }'; then
  echo "# warning: dpdyn parallel speedup $speedup on $threads threads: other load on the cores" \
    "(or a small problem); the multithreaded figures are then pessimistic (rerun when idle)"
fi

# Summary. dpdyn_s_per_step: one replicate on one thread (the simulator's unit of work);
# dgemv and NumPy use $threads BLAS threads.
echo "# --- summary (fastest of $rounds rounds): n=$n p=$p T=$T; dpdyn: 1 replicate on 1 thread;" \
  "dgemv2 and numpy: $threads BLAS threads; fraction target >= 0.5 at n p >= 1e7 ---"
awk -v n="$n" -v p="$p" -v s1="$s1" -v sT="$sT" -v sN="$sN" -v gv="$gv" -v tn="$tn" -v tn1="$tn1" '
BEGIN {
  bytes = 8 * n * p
  printf "dpdyn_s_per_step=%.6g\n", s1
  printf "dpdyn_1rep_all_threads_s_per_step=%.6g\n", sT
  printf "dpdyn_parallel_s_per_replicate_step=%.6g\n", sN
  printf "dpdyn_parallel_speedup=%.3g\n", s1 / sN
  printf "dgemv2_s_per_step=%.6g\n", gv
  if (tn != "") printf "numpy_s_per_step=%.6g\n", tn
  if (tn1 != "") printf "numpy_1thread_s_per_step=%.6g\n", tn1
  if (tn != "") printf "numpy_over_dpdyn=%.3g\n", tn / s1
  if (tn != "") printf "numpy_over_dpdyn_1rep_all_threads=%.3g\n", tn / sT
  if (tn != "") printf "numpy_over_dpdyn_parallel=%.3g\n", tn / sN
  if (tn1 != "") printf "numpy_1thread_over_dpdyn=%.3g\n", tn1 / s1
  if (tn != "") printf "numpy_over_dgemv2=%.3g\n", tn / gv
  printf "dpdyn_fraction_of_dgemv_throughput=%.3g\n", gv / s1
  printf "dpdyn_1rep_all_threads_fraction_of_dgemv_throughput=%.3g\n", gv / sT
  printf "dpdyn_parallel_fraction_of_dgemv_throughput=%.3g\n", gv / sN
  printf "dpdyn_GBps=%.3g\n", bytes / s1 / 1e9
  printf "dpdyn_1rep_all_threads_GBps=%.3g\n", bytes / sT / 1e9
  printf "dpdyn_parallel_GBps=%.3g\n", bytes / sN / 1e9
  printf "dgemv2_GBps=%.3g\n", 2 * bytes / gv / 1e9
  if (tn != "") printf "numpy_GBps=%.3g\n", 2 * bytes / tn / 1e9
  if (tn1 != "") printf "numpy_1thread_GBps=%.3g\n", 2 * bytes / tn1 / 1e9
}'
