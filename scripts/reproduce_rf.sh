#!/usr/bin/env bash
# Random-features reproduction study (docs/math.md §2; Bombari & Mondelli, PNAS 122 (2025)
# e2423072122, the synthetic experiment of its released code), as `dpdyn sweep` grids. Writes into
# docs/figures/:
#   rf_psweep.png / rf_psweep.tsv / rf_psweep_best.tsv
#       test risk of DP-GD (best T in {2d, 5d, 10d} per p and epsilon) and of theta* = Phi^+ y
#       against p = 32 ... 1.03e5 (12 log-spaced values, plus p = n), d = 100, n = 2000,
#       epsilon in {1, 2, 4}, delta = 1/n, C_clip = 0.5 sqrt(p), eta = 1/p, 8 replicates:
#       dpdyn sweep simulate --model=rf --p=... --epsilon=1,2,4 --steps=200,500,1000;
#   rf_heatmap.png / rf_heatmap.tsv
#       test risk over (C_clip / sqrt(p), tau = eta T) at p = 4000, 8 x 8 log-spaced grid,
#       epsilon in {1, 2, 4}, 8 replicates per cell:
#       dpdyn sweep simulate --model=rf --epsilon=1,2,4 --clip=log:... --steps=log:10:10000:8;
#   rf_compare_unclipped.png, rf_compare_seed_scaling.png
#       dpdyn compare on models/rf/ou_unclipped.ini and models/rf/seed_scaling.ini;
#   rf_seed_scaling_p.txt: the seed's scaling at p = 1000 ... 64000, simulation against OU
#       (dpdyn sweep compare --p=1000,4000,16000,64000);
#   rf_study.txt: the tables quoted in docs/rf.md.
# rf_psweep.tsv and rf_heatmap.tsv keep the layout the figures and tables read (rf_heatmap.tsv and
# rf_psweep_best.tsv: each gnuplot index block opens with a row of column names); their numbers are
# the sweeps' sweep.tsv columns (sigma, final_test_risk(_se), final_train_risk,
# clipped_fraction_final, clipped_fraction_mean, theta_star_test_risk, theta_star_train_risk).
# Every point is an ordinary `dpdyn simulate` run with resample = all: each of its replicates
# draws its own data set, features and test set and computes its own theta* (docs/rf.md,
# "Replicates: what varies"), so the error bars are those of independent runs. With 8 replicates
# a point costs 8 feature builds, 8 least-squares problems and 8 DP-GD runs (the former 2-replicate
# p sweep built one problem per point; the 1-replicate heat map one per cell): an estimated 4-6
# hours for the p sweep and 4-5 hours for the heat map on 2 cores (p = 1e5 alone: 9 points of 8
# problems of 2.4 GB of features and a 2000 x 1.03e5 least-squares problem each; set-up measured
# at 4.6 s per problem at p = 4000, linear in p). QUICK=1 runs every stage on a small grid (p up to
# 600, 8 replicates) into BUILD/reproduce_rf_quick, to check that the script works (minutes).
# The sweeps live in $SWEEPS (default BUILD/reproduce_rf): a stopped run
# resumes where it stopped (rm -rf it to start over). MPIRUN="mpirun -np 2" runs each sweep's
# points on 2 Open MPI ranks; THREADS sets every point's threads (default 0 = all cores; with
# MPIRUN give cores / ranks).
# usage: scripts/reproduce_rf.sh [STAGE ...]   (BUILD=dir for another build directory; FIGS=dir
#   writes the figures and tables there instead of docs/figures; QUICK=1: see above)
#   stages: psweep heatmap compare plots (default: all four); `plots` alone redraws the figures
#   and tables from the files already in docs/figures/.
# SPDX-License-Identifier: MIT
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
quick=${QUICK:-0}
if [ "$quick" = 1 ]; then
  figs=${FIGS:-$build/reproduce_rf_quick/figures}
  sweeps=${SWEEPS:-$build/reproduce_rf_quick}
else
  figs=${FIGS:-$src/docs/figures}
  sweeps=${SWEEPS:-$build/reproduce_rf}
fi
# absolute, so that gnuplot never reads a name of ours as a pipe (docs/output.md)
figs=$(realpath -m -- "$figs")
sweeps=$(realpath -m -- "$sweeps")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
threads=${THREADS:-0}
mkdir -p "$figs" "$sweeps"
[ -x "$build/dpdyn" ] || { echo "reproduce_rf: $build/dpdyn not built (scripts/setup.sh)" >&2; exit 1; }
# MPIRUN (e.g. "mpirun -np 2") shares each sweep's points among ranks; unset: one process.
sweep() { ${MPIRUN:-} "$build/dpdyn" sweep "$@" --threads="$threads" --plot_y=none >/dev/null; }
# the setting of the seed's experiment: d = 100, n = 2000, n_test = 1000, x ~ N(0, I_d),
# y = sign(u^T x), tanh features, eta = 1/p and delta = 1/n (the defaults), exact calibration;
# every replicate an independent run (resample = all, the default, given here for the record)
seeds=8
rf=(--model=rf --d=100 --n=2000 --n_test=1000 --target=sign --activation=tanh --input=gaussian
    --zeta=0 --calibration=exact --seed=1 --grid=2 --resample=all)
# tsv_awk PROGRAM FILE: awk on a tab-separated sweep.tsv (the program finds its columns by name
# in the row of column names, c["final_test_risk"])
tsv_awk() { awk -F'\t' "$1" "${@:2}"; }
command -v gnuplot >/dev/null || { echo "reproduce_rf: gnuplot not installed" >&2; exit 1; }
step() { echo "== $*" >&2; }
n=2000
p_heat=4000
# the grids (QUICK=1: small ones, to check the script)
ps_exp=(1.5 3.514 11) # 12 log-spaced p from 10^1.5 to 10^(1.5 + 3.514)
steps_p=200,500,1000
clip_heat=log:0.01:31.6227766:8
steps_heat=log:10:10000:8
p_scaling=1000,4000,16000,64000
compare_extra=()
if [ "$quick" = 1 ]; then
  ps_exp=(1.8 0.6 1) # p = 63, 251
  steps_p=200,500
  p_heat=300
  clip_heat=log:0.1:3.16227766:2
  steps_heat=log:100:1000:2
  p_scaling=300,600
  compare_extra=(--p=500 --seeds=8 --plot=1)
fi

stages=${*:-psweep heatmap compare plots}
has() { [[ " $stages " == *" $1 "* ]]; }

if has psweep; then
  # 12 log-spaced p from 10^1.5 to 10^5.014 (= 1.03e5), plus p = n (the interpolation threshold).
  ps=$(awk -v n=$n -v a="${ps_exp[0]}" -v w="${ps_exp[1]}" -v m="${ps_exp[2]}" '
    BEGIN { for (i = 0; i <= m; i++) { p = int(10^(a + i * w / m) + 0.5);
              printf "%s%d", (i ? "," : ""), p; if (p < n && int(10^(a + (i + 1) * w / m) + 0.5) > n) printf ",%d", n } }')
  step "p sweep: p = $ps"
  # DP-GD on the p x epsilon x T grid without theta* (its SVD, O(n^2 p), would be repeated at
  # every point of a p); theta* once per p and draw in a second sweep. The draws depend only
  # on the seed and the replicate, so both sweeps see the same 8 data sets per p.
  sweep simulate "${rf[@]}" --clip=0.5 --seeds=$seeds --p="$ps" --epsilon=1,2,4 --steps=$steps_p \
    --theta_star=off --out="$sweeps/psweep_dpgd"
  step "theta* at p = $ps"
  sweep simulate "${rf[@]}" --clip=0.5 --seeds=$seeds --p="$ps" --epsilon=4 --steps=1 \
    --theta_star=on --out="$sweeps/psweep_star"
  # the layout of rf_psweep.tsv: per p a star row, then its DP-GD rows (p is the slowest axis)
  tsv_awk 'FNR == 1 { h = 0; f++ } /^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    f == 1 { star[$c["p"]] = sprintf("star %d %.8g %.8g", $c["p"], $c["theta_star_test_risk"],
               $c["theta_star_train_risk"]); next }
    { p = $c["p"]
      if (!(p in done)) { done[p] = 1; print star[p] }
      printf "dpgd %d %g %.6g %.6g %d %.8g %.8g %.4g %.8g %.6g %.6g\n", p, $c["epsilon"], 0.5,
        $c["steps"] / 100, $c["steps"], $c["sigma"], $c["final_test_risk"], $c["final_test_risk_se"],
        $c["final_train_risk"], $c["clipped_fraction_final"], $c["clipped_fraction_mean"] }' \
    "$sweeps/psweep_star/sweep.tsv" "$sweeps/psweep_dpgd/sweep.tsv" >"$work/psweep_rows.tsv"
  {
    echo "# dpdyn sweep simulate --model=rf (scripts/reproduce_rf.sh, $sweeps/psweep_dpgd and psweep_star): d=100 n=2000 n_test=1000 sign target, tanh, eta=1/p, delta=1/n, exact calibration, clip=0.5, seeds=$seeds, resample=all (star rows: theta* mean over the $seeds draws)"
    echo "# star rows: star p theta_star_test theta_star_train"
    echo "# dpgd rows: dpgd p eps clip ctime T sigma test test_se train clipped_final clipped_mean"
    cat "$work/psweep_rows.tsv"
  } >"$figs/rf_psweep.tsv"
fi
if has heatmap; then
  step "heat map at p = $p_heat"
  # C_clip / sqrt(p) from 0.01 to 10^1.5, T from 10 to 10^4 (tau = T / p), 8 log-spaced values
  sweep simulate "${rf[@]}" --p=$p_heat --seeds=$seeds --epsilon=1,2,4 --clip=$clip_heat \
    --steps=$steps_heat --theta_star=off --out="$sweeps/heatmap"
  # rf_heatmap.gp's layout: scans over T separated by a blank line, epsilon blocks by two
  tsv_awk '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    { if (rows++ > 0 && $c["clip"] != clip) printf "\n"
      # gnuplot 5.4 reads the column names from the first row of each index block
      if (rows > 1 && $c["epsilon"] != eps) printf "\n"
      if (rows == 1 || $c["epsilon"] != eps)
        print "eps clip ctime T sigma test test_se train clipped_final clipped_mean"
      clip = $c["clip"]; eps = $c["epsilon"]
      printf "%g %.6g %.6g %d %.8g %.8g %.4g %.8g %.6g %.6g\n", $c["epsilon"], $c["clip"],
        $c["steps"] / 100, $c["steps"], $c["sigma"], $c["final_test_risk"], $c["final_test_risk_se"],
        $c["final_train_risk"], $c["clipped_fraction_final"], $c["clipped_fraction_mean"] }
    END { printf "\n\n" }' "$sweeps/heatmap/sweep.tsv" >"$work/heatmap_rows.tsv"
  {
    echo "# dpdyn sweep simulate --model=rf (scripts/reproduce_rf.sh, $sweeps/heatmap): p=$p_heat d=100 n=2000 n_test=1000 sign target, tanh, eta=1/p, delta=1/n, exact calibration, seeds=$seeds, resample=all, ctime = T / d"
    echo "# columns: eps clip ctime T sigma test test_se train clipped_final clipped_mean"
    cat "$work/heatmap_rows.tsv"
  } >"$figs/rf_heatmap.tsv"
fi
if has compare; then
  for m in ou_unclipped seed_scaling; do
    step "compare models/rf/$m.ini"
    "$build/dpdyn" compare "$src/models/rf/$m.ini" "${compare_extra[@]}" --out="$work/$m" \
      >"$work/$m.txt"
    cp "$work/$m/rf_compare.png" "$figs/rf_compare_$m.png"
    grep -E '^(final_test_risk|final_test_risk_se|ou_final_test_risk|theta_star_test_risk|sigma|sigma_moments|epsilon_of_sigma_moments|clipped_fraction_final|clipped_fraction_mean|first_clip_step_median|ou_exit_step|sup_gap|sup_gap_in_se|final_gap|final_gap_in_se) ' \
      "$work/$m.txt" >"$figs/rf_compare_$m.txt"
  done
  # The seed's scaling at several p: clipped fraction and the gap to the (unclipped) OU curve.
  # eta = 1/p at every p: the INI without its eta line (1/p is the default of model=rf).
  grep -Ev '^eta[[:space:]]*=' "$src/models/rf/seed_scaling.ini" >"$work/seed_scaling_p.ini"
  step "compare, seed scaling, p = $p_scaling"
  sweep compare "$work/seed_scaling_p.ini" --p=$p_scaling --seeds=$seeds --plot=0 \
    --out="$sweeps/seed_scaling_p"
  {
    printf '%8s %10s %10s %10s %10s %10s %10s %12s %12s\n' p sim se ou gap gap_in_se \
      clip_mean clip_final ou_exit_step
    tsv_awk '/^#/ { next } !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
      { printf "%8d %10.5f %10.5f %10.5f %10.5f %10.1f %10.3f %12.3f %12d\n", $c["p"],
          $c["final_test_risk"], $c["final_test_risk_se"], $c["ou_final_test_risk"], $c["final_gap"],
          $c["final_gap_in_se"], $c["clipped_fraction_mean"], $c["clipped_fraction_final"],
          $c["ou_exit_step"] }' "$sweeps/seed_scaling_p/sweep.tsv"
  } >"$figs/rf_seed_scaling_p.txt"
fi
has plots || exit 0

step "figures and tables"
# Best stopping time per (p, epsilon): one block per epsilon for gnuplot's `index`, each block
# opening with the row of column names (gnuplot 5.4 reads the names from the selected block).
awk '$1 == "dpgd" { key = $2 " " $3; if (!(key in best) || $8 < best[key]) { best[key] = $8; row[key] = $0 } }
     END { for (k in row) print row[k] }' "$figs/rf_psweep.tsv" |
  sort -k3,3g -k2,2n | awk '{ if (NR > 1 && $3 != eps) printf "\n\n"
    if (NR == 1 || $3 != eps) print "p eps clip ctime T sigma test test_se train clipped_final clipped_mean"
    eps = $3;
    $1 = ""; $3 = $3 " " ; print substr($0, 2) }' | sed 's/  / /g' >"$work/best_body.tsv"
{
  echo "# best stopping time per (p, epsilon) from rf_psweep.tsv"
  echo "# columns: p eps clip ctime T sigma test test_se train clipped_final clipped_mean"
  cat "$work/best_body.tsv"
} >"$figs/rf_psweep_best.tsv"
awk 'BEGIN { print "p theta_star_test theta_star_train" } $1 == "star" { print $2, $3, $4 }' \
  "$figs/rf_psweep.tsv" >"$work/star.tsv"
# rf_psweep.gp reads: p eps ctime T sigma test test_se ...: drop the clip column.
awk 'NF == 0 { print; next } /^#/ { next } { print $1, $2, $4, $5, $6, $7, $8, $9, $10, $11 }' \
  "$figs/rf_psweep_best.tsv" >"$work/best.tsv"
gnuplot -c "$src/plots/rf_psweep.gp" "$work/best.tsv" "$work/star.tsv" "$figs/rf_psweep.png" $n $seeds
gnuplot -c "$src/plots/rf_heatmap.gp" "$figs/rf_heatmap.tsv" "$figs/rf_heatmap.png" $p_heat $seeds

{
  echo "Random features, d = 100, n = $n, n_test = 1000, sign target, tanh, eta = 1/p, delta = 1/n"
  echo
  echo "Test risk against p (DP-GD: C_clip = 0.5 sqrt(p), best T in {2d, 5d, 10d}, mean +- SE of $seeds independent replicates; theta*: mean over their draws)"
  echo
  python3 - "$work/star.tsv" "$figs/rf_psweep_best.tsv" <<'PY'
import sys
star = {int(l.split()[0]): float(l.split()[1]) for l in open(sys.argv[1])
        if l.strip() and l.split()[0] != "p"}
best = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 8 and not line.startswith("#") and f[0] != "p":
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
  awk '!/^#/ && NF && $1 != "eps" { if (!($1 in b) || $6 < b[$1]) { b[$1] = $6; r[$1] = $0 } }
       END { for (e in r) { split(r[e], a, " ");
             printf "eps = %s: test risk %.4f +- %.4f at C_clip/sqrt(p) = %.3g, tau = %.3g (T = %d), clipped fraction at the end %.3f\n",
               e, a[6], a[7], a[2], a[3] * 100 / '$p_heat', a[4], a[9] } }' "$figs/rf_heatmap.tsv" | sort
  if [ -f "$figs/rf_seed_scaling_p.txt" ]; then
    echo
    echo "Seed scaling (C_clip = 0.5 sqrt(p), eps = 4, eta = 1/p, T = 5d, $seeds replicates, resample = all): DP-GD vs OU averaged over the draws"
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
