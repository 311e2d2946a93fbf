#!/usr/bin/env bash
# DP-SGD trainer speed (issue 29 s4: >= 10x NumPy per epoch on Fashion-MNIST, one epoch within a
# few times the two GEMMs it needs), in one run, single-threaded on every side:
#   (a) bench/bench_dpsgd_numpy.py export: the first ROWS Fashion-MNIST training rows, pixels in
#       [0, 1] standardised (d = 784), and random features ReLU(X V^T / sqrt(784)) (p = FEATURES),
#   (b) dpd_bench_dpsgd: one epoch of dpd_dpsgd_train (Poisson, softmax over 10 classes, bias,
#       clip 1, z = 1, lr 1), the two GEMMs of an epoch by OpenBLAS, and where the time goes,
#   (c) NumPy: the same epoch as a library user writes it (per-sample gradients by einsum) and
#       with the norm trick (bench/bench_dpsgd_numpy.py time),
# for every expected batch in BATCHES and every d in {784, FEATURES}; then the table: times
# (median of REPEATS), ratios NumPy/dpdyn and dpdyn/GEMMs. Names the CPU, its ISA flags and the
# load. Not a test: nothing is asserted.
# Usage: bench/bench_dpsgd.sh   (BUILD=dir, PYTHON=interpreter with numpy, ROWS=54000,
#                                FEATURES=2000, BATCHES="64 256 1024", REPEATS=5, Z=1,
#                                DATA=dir of an earlier export (kept), ISA=auto)
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
rows=${ROWS:-54000}
features=${FEATURES:-2000}
batches=${BATCHES:-64 256 1024}
repeats=${REPEATS:-5}
z=${Z:-1}
isa=${ISA:-auto}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc --all)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

if [ ! -x "$build/dpd_bench_dpsgd" ]; then
  echo "bench_dpsgd: $build/dpd_bench_dpsgd not built (cmake --build $build --target dpd_bench_dpsgd)" >&2
  exit 1
fi
python=""
for p in ${PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then
    python=$p
    break
  fi
done
if [ -z "$python" ]; then
  echo "bench_dpsgd: no Python with NumPy (the data export needs it)" >&2
  exit 1
fi
data=${DATA:-$tmp}
if [ ! -f "$data/x784.f64" ]; then
  "$python" "$root/bench/bench_dpsgd_numpy.py" export "$data" --rows "$rows" --features "$features" >&2
fi

echo "# dpdyn DP-SGD benchmark: Fashion-MNIST, first $rows training rows, K=10, Poisson, clip 1, z=$z, lr 1, one epoch, median of $repeats, 1 thread"
echo "# machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "# isa: $(grep -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
get() { sed -n "s/^$2=//p" "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.1f", a / b }'; }
lines=()
for dim in 784 "$features"; do
  for b in $batches; do
    q=$(awk -v b="$b" -v n="$rows" 'BEGIN { printf "%.17g", b / n }')
    tag="d${dim}_b${b}"
    "$build/dpd_bench_dpsgd" "$data/x$dim.f64" "$data/y.i32" "$rows" "$dim" "$q" 10 "$z" \
      "$repeats" "$isa" >"$tmp/dpd_$tag"
    "$python" "$root/bench/bench_dpsgd_numpy.py" time "$data/x$dim.f64" "$data/y.i32" "$rows" \
      "$dim" --q "$q" --z "$z" --reps "$repeats" >"$tmp/np_$tag"
    D=$tmp/dpd_$tag N=$tmp/np_$tag
    lines+=("$(printf '  %5s %5s %6s %9s %9s %9s %9s %8s %8s %8s %9s %9s %9s %9s %9s %9s %8s' "$dim" "$b" \
      "$(get "$D" dpd_steps)" "$(get "$D" dpd_seconds_median)" "$(get "$N" numpy_einsum_seconds_median)" \
      "$(get "$N" numpy_normtrick_seconds_median)" "$(get "$D" gemm_seconds_median)" \
      "$(ratio "$(get "$N" numpy_einsum_seconds_median)" "$(get "$D" dpd_seconds_median)")" \
      "$(ratio "$(get "$N" numpy_normtrick_seconds_median)" "$(get "$D" dpd_seconds_median)")" \
      "$(ratio "$(get "$D" dpd_seconds_median)" "$(get "$D" gemm_seconds_median)")" \
      "$(get "$D" dpd_z0_seconds_median)" "$(get "$D" dpd_k2_seconds_median)" \
      "$(get "$D" eval_seconds_median)" "$(get "$D" uniform_seconds_median)" \
      "$(get "$D" dpd_epoch_marginal_seconds)" \
      "$(get "$D" dpd_train_loss)" "$(get "$N" numpy_einsum_train_loss)")")
    sed "s/^/# $tag /" "$D" | grep -v '^# [^ ]* #' >&2 || true
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# NumPy's BLAS: $(get "$tmp/np_d784_b${batches%% *}" numpy_blas)"
echo "# dpdyn kernel path: $(get "$tmp/dpd_d784_b${batches%% *}" dpd_isa)"
printf '# %5s %5s %6s %9s %9s %9s %9s %8s %8s %8s %9s %9s %9s %9s %9s %9s %8s\n' d batch steps dpd_s \
  np_ein_s np_nt_s gemm2_s ein/dpd nt/dpd dpd/gemm z0_s K2_s eval_s unif_s epoch_mg dpd_loss \
  np_loss
printf '%s\n' "${lines[@]}"
echo "# target (issue 29): ein/dpd >= 10 at d=784 batch 256; dpd/gemm a few"
