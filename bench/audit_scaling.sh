#!/usr/bin/env bash
# Thread scaling of dpdyn audit (OpenMP over runs; the runs' statistics are the same for every
# thread count): wall time of a linreg and an rf audit at 1, 2, 4, ... threads, ratio to 1 thread.
# Usage: bench/audit_scaling.sh [BUILD_DIR] [THREADS...]   (default: build, 1 2 up to nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
threads=("$@")
if [ ${#threads[@]} -eq 0 ]; then
  t=1; while [ "$t" -le "$(nproc)" ]; do threads+=("$t"); t=$((t * 2)); done
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) ($(nproc) cores); $("$build/dpdyn" --version | grep 'kernel path' | cut -d'(' -f1)"
printf 'model\tthreads\tseconds\tspeedup\tsame_statistics\n'
for what in linreg rf; do
  if [ "$what" = linreg ]; then
    args=(--d=200 --n=2000 --c=0.5 --rho=1 --schedule=const --runs=20000)
  else
    args=(--model=rf --d=100 --n=40 --p=1000 --runs=4000 --mu=1 --clip=1 --steps=50)
  fi
  base=""
  for t in "${threads[@]}"; do
    s=$(date +%s%N)
    OPENBLAS_NUM_THREADS=1 "$build/dpdyn" audit "${args[@]}" --threads="$t" --plot=0 \
      --out="$out/$what$t" >/dev/null 2>&1
    e=$(date +%s%N)
    ms=$(((e - s) / 1000000))
    [ -z "$base" ] && base=$ms
    same=$(cmp -s <(grep -v '^#' "$out/${what}${threads[0]}/audit_runs.tsv") \
      <(grep -v '^#' "$out/$what$t/audit_runs.tsv") && echo yes || echo NO)
    printf '%s\t%s\t%s\t%s\t%s\n' "$what" "$t" "$(awk -v m="$ms" 'BEGIN{printf "%.2f", m/1000}')" \
      "$(awk -v b="$base" -v m="$ms" 'BEGIN{printf "%.2f", b/m}')" "$same"
  done
done
