#!/usr/bin/env bash
# Neural-collapse (model=nc) reproduction study (docs/nc.md; notes part B, B.5), as `dpdyn sweep
# compare` grids. Every point is an ordinary `dpdyn compare --model=nc` run: NoisyGD replicates
# (one step from W = 0), the exact one-step error on each replicate's training statistics
# (theory_test_error; n/a for adversarial test points) and, for balanced perfect collapse, the papers' D.1 bounds.
# Writes into docs/figures/:
#   nc_psweep.png / nc_psweep.tsv
#       test error against p = 10 ... 1e6 (1e4 with --quick) at K = 10, n = 1000,
#       (1, 1e-4)-DP (exact GDP calibration): perfect collapse, and shift=cube with
#       beta in {0.01, 0.03, 0.1}; simulation +- 2 SE, the exact one-step error, the D.1 bounds;
#   nc_kformula.png / nc_kformula.tsv
#       the papers' K-class formula (bound_d1_printed), the union bound, the exact one-step error
#       and the simulation against n = 20 ... 600, K = 10, sigma = 10 (perfect collapse, balanced);
#   nc_sec52.png / nc_sec52.tsv
#       the seed's section 5.2: accuracy against p at K = 10, n = 1e4, (1, 1e-4)-DP: perfect,
#       9:1 imbalance (5 x 1800 + 5 x 200), imbalance + training offset |nu|_inf = 0.1, test
#       perturbation (rademacher, beta_test = 0.1); simulation +- 2 SE and the exact curve;
#   nc_sec52_notes.tsv
#       the same four settings at p = 1e4, 1e5, 1e6 under the notes' zCDP conversion (B.5 table);
#   nc_fixes.png / nc_fixes.tsv
#       the fixes of seed section 4: accuracy and G against p = 10 ... 1e5 (1e3 with --quick) at
#       K = 10, n = 1000, (1, 1e-4)-DP, offset 0.1 on training and test points, cube beta = 0.01:
#       raw, normalize = center, pca_k in {9, 50, 100} (n_public = 1000, centred PCA).
# The nc_*.tsv tables are whitespace columns extracted (by name) from the sweeps' sweep.tsv,
# each gnuplot index block opening with a row of the column names the plots/nc_*.gp read;
# missing numbers (no exact theory under an adversarial test, no D.1 bound off balanced perfect
# collapse) are NaN. The sweeps live in $SWEEPS (default BUILD/reproduce_nc/{full,quick}): a
# stopped full run resumes where it stopped (rm -rf it to start over; --quick always starts over). THREADS sets every point's
# threads (default 0 = all cores); MPIRUN="mpirun -np 2" shares each sweep's points among ranks.
# usage: scripts/reproduce_nc.sh [--quick]   (BUILD=dir for another build directory)
#   --quick: fewer p, n and replicates (about 5 seconds on 2 cores); the figures say "quick run"
#   and go to BUILD/reproduce_nc/quick/figures/ instead of docs/figures/ (a smoke test).
# SPDX-License-Identifier: MIT
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
figs=$src/docs/figures
mode=full
[ "${1:-}" = "--quick" ] && mode=quick
sweeps=${SWEEPS:-$build/reproduce_nc/$mode}
# absolute, so that gnuplot never reads a name of ours as a pipe (a leading "<") or relative to
# the wrong directory (docs/output.md "No command from data")
sweeps=$(realpath -m -- "$sweeps")
threads=${THREADS:-0}
# the quick run is cheap: it always starts over (a full run resumes)
[ $mode = quick ] && [ -z "${SWEEPS:-}" ] && rm -rf "$sweeps"
# the quick run writes its figures and tables next to its sweeps, not over docs/figures
[ $mode = quick ] && figs=$sweeps/figures
mkdir -p "$figs" "$sweeps"
[ -x "$build/dpdyn" ] || { echo "reproduce_nc: $build/dpdyn not built (scripts/setup.sh)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "reproduce_nc: gnuplot not installed" >&2; exit 1; }
sweep() { ${MPIRUN:-} "$build/dpdyn" sweep compare --model=nc "$@" --threads="$threads" --plot_y=none >/dev/null; }
step() { echo "== $*" >&2; }

if [ $mode = quick ]; then
  p1=log:10:10000:4 s1=16 n2=20,50,100,150,200,250,300,350,400,450,500,600 s2=100 p3=log:10:10000:4 s3=8
  p5=10,100,1000 p5k=100,1000 s5=8
else
  p1=log:10:1000000:11 s1=32 n2=lin:20:600:30 s2=400 p3=log:10:1000000:11 s3=32
  p5=log:10:100000:9 p5k=log:100:100000:7 s5=32
fi

# extract OUT.tsv SWEEP.tsv LABEL COLUMN...: LABEL then the named columns of a sweep.tsv, one row
# per point; "nan" (no theory / no bound) becomes NaN for gnuplot.
extract() {
  local out=$1 tsv=$2 label=$3
  shift 3
  awk -F'\t' -v label="$label" -v cols="$*" '
    /^#/ { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; nc = split(cols, want, " "); h = 1; next }
    { line = label
      for (j = 1; j <= nc; j++) { v = (want[j] in c) ? $c[want[j]] : "nan"
        if (v == "nan" || v == "") v = "NaN"; line = line " " v }
      print line }' "$tsv" >>"$out"
}

# 1. error against p at K = 10, n = 1000, (1, 1e-4)-DP
step "p sweep (p = $p1, $s1 replicates)"
fix1=(--K=10 --n=1000 --n_test=1000 --epsilon=1 --delta=1e-4 --seeds=$s1 --seed=1 --p=$p1)
sweep "${fix1[@]}" --out="$sweeps/psweep_perfect"
sweep "${fix1[@]}" --shift=cube --beta=0.01,0.03,0.1 --out="$sweeps/psweep_cube"
cols1="p sigma G test_error test_error_se theory_test_error bound_d1_printed bound_d1_union gap_in_se"
{
  echo "# dpdyn sweep compare --model=nc (scripts/reproduce_nc.sh, $mode): K=10 n=1000 n_test=1000 epsilon=1 delta=1e-4 (GDP calibration), one step, CE, seeds=$s1"
  echo "# blocks (gnuplot index): 0 perfect collapse, 1 cube beta=0.01, 2 cube beta=0.03, 3 cube beta=0.1"
  echo "# columns: beta $cols1"
  echo "beta $cols1"
} >"$figs/nc_psweep.tsv"
extract "$figs/nc_psweep.tsv" "$sweeps/psweep_perfect/sweep.tsv" 0 $cols1
for b in 0.01 0.03 0.1; do
  printf '\n\nbeta %s\n' "$cols1" >>"$figs/nc_psweep.tsv"
  awk -F'\t' -v b=$b '/^#/ { print; next }
    !h { for (i = 1; i <= NF; i++) if ($i == "beta") cb = i; h = 1; print; next }
    $cb + 0 == b + 0' \
    "$sweeps/psweep_cube/sweep.tsv" >"$sweeps/psweep_cube_$b.tsv"
  extract "$figs/nc_psweep.tsv" "$sweeps/psweep_cube_$b.tsv" $b $cols1
done
gnuplot -c "$src/plots/nc_psweep.gp" "$figs/nc_psweep.tsv" "$figs/nc_psweep.png" "$s1" "$mode"

# 2. the papers' K-class formula, K = 10, sigma = 10 (p does not enter perfect collapse)
step "K-class formula (n = $n2, $s2 replicates)"
sweep --K=10 --p=10 --sigma=10 --n_test=1000 --seeds=$s2 --seed=2 --n=$n2 --out="$sweeps/kformula"
cols2="n test_error test_error_se theory_test_error bound_d1_printed bound_d1_union gap_in_se"
{
  echo "# dpdyn sweep compare --model=nc (scripts/reproduce_nc.sh, $mode): K=10 p=10 sigma=10 n_test=1000 balanced perfect collapse, one step, CE, seeds=$s2"
  echo "# columns: K $cols2"
  echo "K $cols2"
} >"$figs/nc_kformula.tsv"
extract "$figs/nc_kformula.tsv" "$sweeps/kformula/sweep.tsv" 10 $cols2
gnuplot -c "$src/plots/nc_kformula.gp" "$figs/nc_kformula.tsv" "$figs/nc_kformula.png" "$s2" "$mode"

# 3. the seed's section 5.2: K = 10, n = 1e4, (1, 1e-4)-DP, accuracy against p
step "section 5.2 (p = $p3, $s3 replicates)"
fix3=(--K=10 --n=10000 --n_test=1000 --epsilon=1 --delta=1e-4 --seeds=$s3 --seed=3 --p=$p3)
imb=(--imbalance_ratio=9 --imbalance_fraction=0.5)
sweep "${fix3[@]}" --out="$sweeps/sec52_perfect"
sweep "${fix3[@]}" "${imb[@]}" --out="$sweeps/sec52_imbalance"
sweep "${fix3[@]}" "${imb[@]}" --offset=0.1 --out="$sweeps/sec52_offset"
sweep "${fix3[@]}" --test_shift=rademacher --beta_test=0.1 --out="$sweeps/sec52_testpert"
cols3="p sigma G test_error test_error_se theory_test_error gap_in_se"
{
  echo "# dpdyn sweep compare --model=nc (scripts/reproduce_nc.sh, $mode): K=10 n=10000 n_test=1000 epsilon=1 delta=1e-4 (GDP calibration), one step, CE, seeds=$s3"
  echo "# blocks (gnuplot index): 0 perfect, 1 imbalance 9:1 (5 x 1800 + 5 x 200), 2 imbalance + offset |nu|_inf = 0.1, 3 test perturbation rademacher beta_test = 0.1 (balanced)"
  echo "# columns: setting $cols3"
} >"$figs/nc_sec52.tsv"
i=0
for s in perfect imbalance offset testpert; do
  [ $i -gt 0 ] && printf '\n\n' >>"$figs/nc_sec52.tsv"
  echo "setting $cols3" >>"$figs/nc_sec52.tsv"
  extract "$figs/nc_sec52.tsv" "$sweeps/sec52_$s/sweep.tsv" $s $cols3
  i=$((i + 1))
done
gnuplot -c "$src/plots/nc_sec52.gp" "$figs/nc_sec52.tsv" "$figs/nc_sec52.png" "$s3" "$mode"

# 3b. the notes' B.5 illustrative table uses the zCDP conversion eps = rho + 2 sqrt(rho log(1/delta))
# (rho = 0.025757, sigma = 4.405 G) rather than the exact GDP calibration: the same four settings
# at p = 1e4, 1e5, 1e6 (1e3, 1e4 with --quick) with --zcdp=rho, for the table in docs/nc.md.
rho=$(awk 'BEGIN { l = log(1e4); r = sqrt(l + 1) - sqrt(l); printf "%.10g", r * r }')
p4=$([ $mode = quick ] && echo 1000,10000 || echo 10000,100000,1000000)
step "notes' calibration, zcdp = $rho (p = $p4, $s3 replicates)"
fix4=(--K=10 --n=10000 --n_test=1000 --zcdp=$rho --seeds=$s3 --seed=4 --p=$p4)
sweep "${fix4[@]}" --out="$sweeps/notes_perfect"
sweep "${fix4[@]}" "${imb[@]}" --out="$sweeps/notes_imbalance"
sweep "${fix4[@]}" "${imb[@]}" --offset=0.1 --out="$sweeps/notes_offset"
sweep "${fix4[@]}" --test_shift=rademacher --beta_test=0.1 --out="$sweeps/notes_testpert"
{
  echo "# dpdyn sweep compare --model=nc (scripts/reproduce_nc.sh, $mode): K=10 n=10000 n_test=1000 zcdp=$rho (the notes' (1, 1e-4) conversion), one step, CE, seeds=$s3"
  echo "# columns: setting $cols3"
} >"$figs/nc_sec52_notes.tsv"
for s in perfect imbalance offset testpert; do
  extract "$figs/nc_sec52_notes.tsv" "$sweeps/notes_$s/sweep.tsv" $s $cols3
done
# 4. the fixes (seed section 4): a common offset on training and test points (a feature-extractor
# bias) and small cube shifts; raw, centred, and projected on the top pca_k directions of a public
# sample (pca_k = K - 1, 5K, 10K; pca_k <= p, so 50 and 100 start at p = 100).
step "fixes (p = $p5, $s5 replicates)"
fix5=(--K=10 --n=1000 --n_test=1000 --epsilon=1 --delta=1e-4 --seeds=$s5 --seed=5 --offset=0.1
  --offset_at_test=yes --shift=cube --beta=0.01 --n_public=1000)
sweep "${fix5[@]}" --p=$p5 --out="$sweeps/fixes_raw"
sweep "${fix5[@]}" --p=$p5 --normalize=center --out="$sweeps/fixes_center"
sweep "${fix5[@]}" --p=$p5 --pca_k=9 --out="$sweeps/fixes_pca9"
sweep "${fix5[@]}" --p=$p5k --pca_k=50 --out="$sweeps/fixes_pca50"
sweep "${fix5[@]}" --p=$p5k --pca_k=100 --out="$sweeps/fixes_pca100"
cols5="p sigma G test_error test_error_se pca_etf_residual pca_x_bound"
{
  echo "# dpdyn sweep compare --model=nc (scripts/reproduce_nc.sh, $mode): K=10 n=1000 n_test=1000 epsilon=1 delta=1e-4 (GDP calibration), one step, CE, offset=0.1 offset_at_test=yes shift=cube beta=0.01 n_public=1000 pca_center=yes, seeds=$s5"
  echo "# blocks (gnuplot index): 0 raw, 1 normalize=center, 2 pca_k=9, 3 pca_k=50, 4 pca_k=100"
  echo "# columns: fix $cols5"
} >"$figs/nc_fixes.tsv"
i=0
for s in raw center pca9 pca50 pca100; do
  [ $i -gt 0 ] && printf '\n\n' >>"$figs/nc_fixes.tsv"
  echo "fix $cols5" >>"$figs/nc_fixes.tsv"
  extract "$figs/nc_fixes.tsv" "$sweeps/fixes_$s/sweep.tsv" $s $cols5
  i=$((i + 1))
done
gnuplot -c "$src/plots/nc_fixes.gp" "$figs/nc_fixes.tsv" "$figs/nc_fixes.png" "$s5" "$mode"
step "wrote $figs/nc_psweep.png nc_kformula.png nc_sec52.png nc_fixes.png, their .tsv, nc_sec52_notes.tsv"
