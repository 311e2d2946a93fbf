#!/usr/bin/env bash
# Random-features reproduction study (MATH.md 2; Bombari & Mondelli, PNAS 122 (2025)
# e2423072122, the synthetic experiment of its released code). Writes into docs/figures/:
#   rf_psweep.png / rf_psweep.tsv / rf_psweep_best.tsv
#       test risk of DP-GD (best T in {2d, 5d, 10d} per p and epsilon) and of theta* = Phi^+ y
#       against p = 32 ... 1.03e5 (12 log-spaced values, plus p = n), d = 100, n = 2000,
#       epsilon in {1, 2, 4}, delta = 1/n, C_clip = 0.5 sqrt(p), eta = 1/p, 2 replicates;
#   rf_heatmap.png / rf_heatmap.tsv
#       test risk over (C_clip / sqrt(p), tau = eta T) at p = 4000, 8 x 8 log-spaced grid,
#       epsilon in {1, 2, 4}, 1 replicate per cell;
#   rf_compare_unclipped.png, rf_compare_seed_scaling.png
#       dpdyn compare on models/rf/ou_unclipped.ini and models/rf/seed_scaling.ini;
#   rf_seed_scaling_p.txt: the seed's scaling at p = 1000 ... 64000, simulation against OU;
#   rf_study.txt: the tables quoted in docs/rf.md.
# About an hour on 2 cores (the p = 1e5 problem alone holds 2.4 GB of features): p sweep 30,
# heat map 20, comparisons 10 minutes.
# usage: scripts/reproduce_rf.sh [STAGE ...]   (BUILD=dir for another build directory)
#   stages: psweep heatmap compare plots (default: all four); `plots` alone redraws the figures
#   and tables from the files already in docs/figures/.
# SPDX-License-Identifier: MIT
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
figs=$src/docs/figures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$figs"
for exe in dpdyn dpd_study_rf; do
  [ -x "$build/$exe" ] || { echo "reproduce_rf: $build/$exe not built (scripts/setup.sh)" >&2; exit 1; }
done
command -v gnuplot >/dev/null || { echo "reproduce_rf: gnuplot not installed" >&2; exit 1; }
step() { echo "== $*" >&2; }
n=2000
p_heat=4000

stages=${*:-psweep heatmap compare plots}
has() { [[ " $stages " == *" $1 "* ]]; }

if has psweep; then
  # 12 log-spaced p from 10^1.5 to 10^5.014 (= 1.03e5), plus p = n (the interpolation threshold).
  ps=$(awk -v n=$n 'BEGIN { for (i = 0; i < 12; i++) { p = int(10^(1.5 + i * 3.514 / 11) + 0.5);
                            printf "%s%d", (i ? "," : ""), p; if (p < n && int(10^(1.5 + (i + 1) * 3.514 / 11) + 0.5) > n) printf ",%d", n } }')
  step "p sweep: p = $ps"
  "$build/dpd_study_rf" psweep "$work/psweep.tsv" "$ps" 1,2,4 2,5,10 0.5 2
  cp "$work/psweep.tsv" "$figs/rf_psweep.tsv"
fi
if has heatmap; then
  step "heat map at p = $p_heat"
  "$build/dpd_study_rf" heatmap "$work/heatmap.tsv" $p_heat 1,2,4 0.01 31.6227766 8 0.1 100 8 1
  cp "$work/heatmap.tsv" "$figs/rf_heatmap.tsv"
fi
if has compare; then
  for m in ou_unclipped seed_scaling; do
    step "compare models/rf/$m.ini"
    "$build/dpdyn" compare "$src/models/rf/$m.ini" --out="$work/$m" >"$work/$m.txt"
    cp "$work/$m/rf_compare.png" "$figs/rf_compare_$m.png"
    grep -E '^(final_test_risk|final_test_risk_se|ou_final_test_risk|theta_star_test_risk|sigma|sigma_moments|epsilon_of_sigma_moments|clipped_fraction_final|clipped_fraction_mean|first_clip_step_median|ou_exit_step|sup_gap|sup_gap_in_se|final_gap|final_gap_in_se) ' \
      "$work/$m.txt" >"$figs/rf_compare_$m.txt"
  done
  # The seed's scaling at several p: clipped fraction and the gap to the (unclipped) OU curve.
  : >"$figs/rf_seed_scaling_p.txt"
  printf '%8s %10s %10s %10s %10s %10s %10s %12s %12s\n' p sim se ou gap gap_in_se \
    clip_mean clip_final ou_exit_step >>"$figs/rf_seed_scaling_p.txt"
  for p in 1000 4000 16000 64000; do
    step "compare, seed scaling, p = $p"
    "$build/dpdyn" compare "$src/models/rf/seed_scaling.ini" --p=$p --eta=$(awk -v p=$p 'BEGIN { print 1 / p }') \
      --seeds=8 --plot=0 --out="$work/ss$p" >"$work/ss$p.txt"
    awk -v p=$p '{ v[$1] = $2 } END { printf "%8d %10.5f %10.5f %10.5f %10.5f %10.1f %10.3f %12.3f %12d\n", p,
      v["final_test_risk"], v["final_test_risk_se"], v["ou_final_test_risk"], v["final_gap"],
      v["final_gap_in_se"], v["clipped_fraction_mean"], v["clipped_fraction_final"], v["ou_exit_step"] }' \
      "$work/ss$p.txt" >>"$figs/rf_seed_scaling_p.txt"
  done
fi
has plots || exit 0

step "figures and tables"
# Best stopping time per (p, epsilon): one block per epsilon for gnuplot's `index`.
awk '$1 == "dpgd" { key = $2 " " $3; if (!(key in best) || $8 < best[key]) { best[key] = $8; row[key] = $0 } }
     END { for (k in row) print row[k] }' "$figs/rf_psweep.tsv" |
  sort -k3,3g -k2,2n | awk '{ if (NR > 1 && $3 != eps) printf "\n\n"; eps = $3;
    $1 = ""; $3 = $3 " " ; print substr($0, 2) }' | sed 's/  / /g' >"$work/best_body.tsv"
{
  echo "# best stopping time per (p, epsilon) from rf_psweep.tsv"
  echo "# columns: p eps clip ctime T sigma test test_se train clipped_final clipped_mean"
  cat "$work/best_body.tsv"
} >"$figs/rf_psweep_best.tsv"
awk '$1 == "star" { print $2, $3, $4 }' "$figs/rf_psweep.tsv" >"$work/star.tsv"
# rf_psweep.gp reads: p eps ctime T sigma test test_se ...: drop the clip column.
awk 'NF == 0 { print; next } /^#/ { next } { print $1, $2, $4, $5, $6, $7, $8, $9, $10, $11 }' \
  "$figs/rf_psweep_best.tsv" >"$work/best.tsv"
gnuplot -c "$src/plots/rf_psweep.gp" "$work/best.tsv" "$work/star.tsv" "$figs/rf_psweep.png" $n
gnuplot -c "$src/plots/rf_heatmap.gp" "$figs/rf_heatmap.tsv" "$figs/rf_heatmap.png" $p_heat

{
  echo "Random features, d = 100, n = $n, n_test = 1000, sign target, tanh, eta = 1/p, delta = 1/n"
  echo
  echo "Test risk against p (DP-GD: C_clip = 0.5 sqrt(p), best T in {2d, 5d, 10d}, mean +- SE of 2 replicates)"
  echo
  python3 - "$work/star.tsv" "$figs/rf_psweep_best.tsv" <<'PY'
import sys
star = {int(l.split()[0]): float(l.split()[1]) for l in open(sys.argv[1]) if l.strip()}
best = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 8 and not line.startswith("#"):
        best[(int(f[0]), float(f[1]))] = (float(f[6]), float(f[7]), int(f[4]))
eps = sorted({e for _, e in best})
print("%8s %12s" % ("p", "theta*") + "".join("   %-28s" % ("DP-GD eps=%g" % e) for e in eps))
for p in sorted(star):
    cells = []
    for e in eps:
        v = best.get((p, e))
        cells.append("   %-28s" % ("%.4f +- %.4f (T=%d)" % v if v else "-"))
    print("%8d %12.4g" % (p, star[p]) + "".join(cells))
PY
  echo
  echo "Heat map at p = $p_heat: best cell per epsilon (tau = ctime d / p)"
  awk '!/^#/ && NF { if (!($1 in b) || $6 < b[$1]) { b[$1] = $6; r[$1] = $0 } }
       END { for (e in r) { split(r[e], a, " ");
             printf "eps = %s: test risk %.4f at C_clip/sqrt(p) = %.3g, tau = %.3g (T = %d), clipped fraction at the end %.3f\n",
               e, a[6], a[2], a[3] * 100 / '$p_heat', a[4], a[9] } }' "$figs/rf_heatmap.tsv" | sort
  if [ -f "$figs/rf_seed_scaling_p.txt" ]; then
    echo
    echo "Seed scaling (C_clip = 0.5 sqrt(p), eps = 4, eta = 1/p, T = 5d, 8 replicates): DP-GD vs OU"
    cat "$figs/rf_seed_scaling_p.txt"
  fi
  for m in ou_unclipped seed_scaling; do
    if [ -f "$figs/rf_compare_$m.txt" ]; then
      echo
      echo "dpdyn compare models/rf/$m.ini"
      cat "$figs/rf_compare_$m.txt"
    fi
  done
} >"$figs/rf_study.txt"
cat "$figs/rf_study.txt"
