#!/usr/bin/env bash
# Cost of dpdyn reconstruct --model=rf against n, d and p (docs/overparameterization.md,
# "Reconstruction", "Cost"). One evaluation of the loss and its gradient is two GEMMs of n p d, a SYRK of n^2 p and
# an n x n Cholesky solve: O(n p d + n^2 p + n^3). Measured per evaluation as
#   (wall(K iterations) - wall(1 iteration)) / (evaluations(K) - evaluations(1)),
# one replicate, one start, one thread (the set-up, theta* by dgelsd in O(n^2 p), cancels), and
# the whole default attack (restarts until the loss is below 1e-8, one replicate) beside it, with
# the iterations it took. The exponent column is the log-log slope against the row before.
# Usage: bench/bench_reconstruct.sh [BUILD_DIR] [K]   (default: build, K = 300)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
K=${2:-300}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
num() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
run() { # run NAME ITER ARGS...: wall seconds and evaluations of one replicate
  local name=$1 iter=$2
  shift 2
  "$build/dpdyn" reconstruct --model=rf --seeds=1 --threads=1 --activation=tanh \
    --attack_iterations="$iter" "$@" --out="$out/$name" >/dev/null 2>&1
  echo "$(num "$out/$name/summary.json" wall_seconds) $(num "$out/$name/summary.json" evaluations)"
}
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) ($(nproc) cores), OpenBLAS 1 thread"
printf 'vary\tn\td\tp\tms_per_evaluation\texponent\tattack_seconds\titerations\tfraction\n'
for vary in n d p; do
  prev_x="" prev_t=""
  for v in 1 2 3 4; do
    n=8 d=10 p=2000
    case $vary in
    n) n=$((4 << (v - 1))) ;;
    d) d=$((5 << (v - 1))) ;;
    p) p=$((1000 << (v - 1))) ;;
    esac
    sz=(--n="$n" --d="$d" --p="$p")
    read -r w1 e1 < <(run a1 1 "${sz[@]}" --restarts=1)
    read -r wk ek < <(run ak "$K" "${sz[@]}" --restarts=1)
    ms=$(awk -v a="$w1" -v b="$wk" -v c="$e1" -v e="$ek" 'BEGIN{printf "%.4g", 1000*(b-a)/(e-c)}')
    x=$(eval echo "\$$vary")
    slope=$([ -n "$prev_x" ] && awk -v x0="$prev_x" -v x1="$x" -v t0="$prev_t" -v t1="$ms" \
      'BEGIN{printf "%.2f", log(t1/t0)/log(x1/x0)}' || echo "")
    read -r wa _ < <(run full 2000 "${sz[@]}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n' "$vary" "$n" "$d" "$p" "$ms" "$slope" "$wa" \
      "$(num "$out/full/summary.json" iterations)" \
      "$(num "$out/full/summary.json" reconstructed_fraction)"
    prev_x=$x prev_t=$ms
  done
done
