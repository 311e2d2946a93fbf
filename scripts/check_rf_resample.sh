#!/usr/bin/env bash
# The peer check of resample (docs/rf.md, "Replicates: what varies"): does the standard error that
# `dpdyn simulate --model=rf` reports match the spread of independent runs?
#   A: one run of K replicates (resample = all: every replicate its own data set, features, test set
#      and noise), seed 1000: its final_test_risk_se;
#   B: K independent runs of one replicate each, seed = 1..K (what a user, or code that redraws
#      everything per seed, gets from K runs): the sample SD of their final_test_risk / sqrt(K);
#   N: for contrast, one run of K replicates with resample = noise (one data set, the noise
#      redrawn), seed 1000: the former behaviour.
# Setting (the issue's): d = 100, n = 2000, n_test = 1000, p = 500, sign target, tanh, epsilon = 4,
# delta = 1/n, clip = 0.5, calibration = moments, eta = 1/p, T = 500.
# Test: z = ln(v_A / v_B) / sqrt(2 V), V = 2/(K-1) + kappa/K (the variance of ln s^2 by the delta
# method; kappa = excess kurtosis of the B values; with kappa = 0 the normal approximation of
# ln F(K-1, K-1)); |z| <= 3.5 passes. Also the means: (mean_A - mean_B) / sqrt(SE_A^2 + SE_B^2).
# Cost: 2K + K problems of 2000 x 500 features with theta* and 500 DP-GD steps (K = 64: about
# 5 minutes on 2 cores).
# usage: scripts/check_rf_resample.sh [K]   (BUILD=dir for another build directory; THREADS)
# SPDX-License-Identifier: MIT
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
K=${1:-64}
threads=${THREADS:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$build/dpdyn" ] || { echo "check_rf_resample: $build/dpdyn not built" >&2; exit 1; }
rf=(--model=rf --d=100 --n=2000 --n_test=1000 --p=500 --target=sign --activation=tanh
    --epsilon=4 --clip=0.5 --calibration=moments --steps=500 --grid=2 --plot=0 --threads="$threads")
value() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

"$build/dpdyn" simulate "${rf[@]}" --seeds="$K" --seed=1000 --resample=all --out="$work/A" \
  >"$work/A.txt" 2>/dev/null
"$build/dpdyn" simulate "${rf[@]}" --seeds="$K" --seed=1000 --resample=noise --out="$work/N" \
  >"$work/N.txt" 2>/dev/null
for s in $(seq 1 "$K"); do
  "$build/dpdyn" simulate "${rf[@]}" --seeds=1 --seed="$s" --out="$work/B" >"$work/B.txt" 2>/dev/null
  value final_test_risk "$work/B.txt"
done >"$work/B.values"

awk -v K="$K" -v mA="$(value final_test_risk "$work/A.txt")" \
  -v seA="$(value final_test_risk_se "$work/A.txt")" \
  -v mN="$(value final_test_risk "$work/N.txt")" -v seN="$(value final_test_risk_se "$work/N.txt")" \
  -v sigma="$(value sigma "$work/A.txt")" '
  { x[NR] = $1; s += $1 }
  END {
    m = s / K; for (i = 1; i <= K; i++) { e = x[i] - m; s2 += e * e; s4 += e * e * e * e }
    v = s2 / (K - 1); kappa = (s4 / K) / (v * v) - 3; if (kappa < -1) kappa = -1
    V = 2 / (K - 1) + kappa / K; seB = sqrt(v / K)
    zA = log(seA * seA / (seB * seB)) / sqrt(2 * V); zN = log(seN * seN / (seB * seB)) / sqrt(2 * V)
    printf "K = %d, sigma (moments) = %.4f\n", K, sigma
    printf "B: %d independent runs (seed 1..%d): mean %.5f, SD %.5f, SD/sqrt(K) %.5f, excess kurtosis %.2f\n", K, K, m, sqrt(v), seB, kappa
    printf "A: resample=all, seeds=%d:   mean %.5f +- %.5f  SE ratio A/B %.3f  z(log var ratio) %+.2f  z(means) %+.2f  %s\n", K, mA, seA, seA / seB, zA, (mA - m) / sqrt(seA * seA + seB * seB), (zA <= 3.5 && zA >= -3.5) ? "PASS" : "FAIL"
    printf "N: resample=noise, seeds=%d: mean %.5f +- %.5f  SE ratio N/B %.3f  z(log var ratio) %+.2f  z(means) %+.2f  %s\n", K, mN, seN, seN / seB, zN, (mN - m) / sqrt(seN * seN + seB * seB), (zN <= 3.5 && zN >= -3.5) ? "consistent" : "inconsistent with independent runs"
    exit !(zA <= 3.5 && zA >= -3.5)
  }' "$work/B.values"
