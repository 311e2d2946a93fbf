#!/usr/bin/env bash
# linreg on a real dataset, all figures from one run (issue 27 §5): Fashion-MNIST's 60,000 x 784
# training images (float32, exported by scripts/datasets.sh), 64 replicates.
#   (a) `dpdyn simulate` on the rows (c = 1, rho = 2, schedule sqrt, eta0 = 1) and its peak RSS,
#   (b) a NumPy implementation of the same replicates, batched over them
#       (bench/bench_real_data_numpy.py),
#   (c) the library driver dpd_bench_real_data: the data's preparation (Sigma^ + eigen + fit +
#       diagnostics), the simulation with and without noise, the memory-bandwidth baseline of
#       streaming the same rows and the Gaussian-generation baseline, on the same threads,
# then the ratios numpy / dpdyn (target >= 10) and simulation / bandwidth limit (target >= 0.5),
# and peak memory against the data + O(d^2).
# Usage: bench/bench_real_data.sh [DATADIR]   (default: a temporary export; BUILD=dir,
#        SEEDS=64, NUMPY_N=rows for the NumPy baseline, default all: set it lower to save time,
#        the per-step cost being what is compared)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
seeds=${SEEDS:-64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=${1:-}
if [ -z "$data" ]; then
  data=$tmp/data
  mkdir -p "$data"
  "$root/scripts/datasets.sh" "$data" --only fmnist >/dev/null
fi
x=$data/fmnist_train_x.npy
y=$data/fmnist_train_yreg.npy
for f in "$x" "$y" "$build/dpdyn" "$build/dpd_bench_real_data"; do
  [ -e "$f" ] || { echo "bench_real_data: $f missing" >&2; exit 1; }
done
py=/usr/bin/python3

echo "# dpdyn real-data benchmark: Fashion-MNIST train, seeds=$seeds, c=1 rho=2 schedule=sqrt eta0=1"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "# isa: $(grep -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"

t0=$EPOCHREALTIME
/usr/bin/time -f 'max_rss_kib=%M' -o "$tmp/time" "$build/dpdyn" simulate \
  "--features=file:$x" "--targets=file:$y" --c=1 --rho=2 --schedule=sqrt --eta0=1 \
  "--seeds=$seeds" --plot=0 "--out=$tmp/out" >/dev/null
t1=$EPOCHREALTIME
t_cli=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
echo "dpdyn_simulate_seconds=$t_cli"
cat "$tmp/time"
rss=$(sed -n 's/^max_rss_kib=//p' "$tmp/time")

n_np=${NUMPY_N:-0}
"$py" "$root/bench/bench_real_data_numpy.py" "$x" "$y" --seeds "$seeds" --n "$n_np" >"$tmp/np"
sed 's/^/numpy_/' "$tmp/np"
t_np=$(sed -n 's/^seconds=//p' "$tmp/np")

if [ -x "$build/dpd_bench_lrdata_phases" ]; then
  "$build/dpd_bench_lrdata_phases" "$x" "$y"     # Sigma^ + eigen: target < 1 s
fi
"$build/dpd_bench_real_data" "$x" "$y" "$seeds" | tee "$tmp/lib"
t_lib=$(sed -n 's/^sim_noisy_seconds=//p' "$tmp/lib")

awk -v tn="$t_np" -v nn="$n_np" -v tl="$t_lib" -v rss="$rss" -v bytes="$(stat -c %s "$x")" '
BEGIN {
  rows = 60000
  scale = (nn > 0) ? rows / nn : 1      # NumPy on fewer rows: per-step cost scaled to all rows
  printf "numpy_over_dpdyn=%.1f   # same replicates, library driver time; target >= 10\n", tn * scale / tl
  printf "peak_rss_over_data=%.2f  # data %.0f MiB, O(d^2) = 3 x 784^2 doubles = 14 MiB\n", rss * 1024 / bytes, bytes / 1048576
}'
