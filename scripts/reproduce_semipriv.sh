#!/usr/bin/env bash
# Semi-private learning (model=semipriv) reproduction study (docs/semipriv.md; notes part C), as
# `dpdyn sweep simulate` grids. Every point is an ordinary `dpdyn simulate --model=semipriv` run:
# replicates that redraw the labelled, public and test samples and the Noisy-SGD noise (on the
# digits files: the noise only). Writes into docs/figures/ (BUILD/reproduce_semipriv/quick/figures
# with --quick):
#   semipriv_sweep_k.png / .tsv        test accuracy against k at eps in {0.1, 0.7, inf}, d = 200
#                                      (issue 12 figure 1; k = d: no PCA)
#   semipriv_sweep_n.png / .tsv        against n for k in {5, d} at eps in {0.1, 0.7} (figure 2)
#   semipriv_sweep_npublic.png / .tsv  against n_public at k = 5 (figure 3)
#   semipriv_sweep_digits.png / .tsv   scikit-learn digits 3 vs 8 against k (figure 4; needs
#                                      /usr/bin/python3 with sklearn: scripts/setup.sh)
# The tables have the columns the plots/semipriv_*.gp scripts read (d n n_public eps k variant R
# acc acc_se diff diff_se cos cos_se xi_hat zeta; the paired columns diff, cos are NaN here: a
# sweep's points are separate runs). The sweeps live in $SWEEPS (default
# BUILD/reproduce_semipriv/{full,quick}); a stopped full run resumes where it stopped.
# usage: scripts/reproduce_semipriv.sh [--quick]   (BUILD=dir for another build directory;
#   THREADS sets every point's threads, default 0 = all cores; MPIRUN="mpirun -np 2" shares points)
# SPDX-License-Identifier: MIT
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
figs=$src/docs/figures
mode=full
[ "${1:-}" = "--quick" ] && mode=quick
sweeps=${SWEEPS:-$build/reproduce_semipriv/$mode}
# absolute, so that gnuplot never reads a name of ours as a pipe (docs/output.md)
sweeps=$(realpath -m -- "$sweeps")
threads=${THREADS:-0}
[ $mode = quick ] && [ -z "${SWEEPS:-}" ] && rm -rf "$sweeps"
[ $mode = quick ] && figs=$sweeps/figures
mkdir -p "$figs" "$sweeps"
[ -x "$build/dpdyn" ] || { echo "reproduce_semipriv: $build/dpdyn not built (scripts/setup.sh)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "reproduce_semipriv: gnuplot not installed" >&2; exit 1; }
sweep() { ${MPIRUN:-} "$build/dpdyn" sweep simulate --model=semipriv "$@" --threads="$threads" --plot_y=none >/dev/null; }
step() { echo "== $*" >&2; }
tag=$([ $mode = quick ] && echo " (quick run)" || true)

if [ $mode = quick ]; then
  ks='1|5|20|none' eps='0.1|inf' s1=6 ns=100,200 s2=4 nps=20,200 s3=4 s4=8
else
  ks='1|2|3|5|10|20|50|100|none' eps='0.1|0.7|inf' s1=100 ns=100,200,300,500,700,1000 s2=40
  nps=10,20,50,100,300,1000,5000 s3=60 s4=200
fi

# table OUT.tsv D N N_PUBLIC SWEEP_DIR...: the plots' columns from the sweeps' sweep.tsv (k = none
# is d; D, N, N_PUBLIC fill the columns of keys the sweep held fixed).
table() {
  local out=$1 d=$2 n=$3 np=$4
  shift 4
  echo "d n n_public eps k variant R acc acc_se diff diff_se cos cos_se xi_hat zeta" >"$out"
  for s in "$@"; do
    awk -F'\t' -v d="$d" -v n="$n" -v np="$np" '
      /^#/ { next }
      !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
      function v(name, dflt) { return (name in c && $c[name] != "" && $c[name] != "nan") ? $c[name] : dflt }
      { k = v("k", d); if (k == "none") k = d
        e = v("epsilon", "inf"); if (e == "inf" || e == "INFINITY") e = "inf"
        printf "%s %s %s %s %s default %s %s %s NaN NaN NaN NaN %s %s\n", v("d", d), v("n", n),
          v("n_public", np), e, k, v("seeds", "NaN"), v("test_accuracy", "NaN"),
          v("test_accuracy_se", "NaN"), v("xi_k", "NaN"), v("zeta", "NaN") }' "$s/sweep.tsv" >>"$out"
  done
}

# 1. accuracy against k, d = 200, n = 500, n_public = 5000
step "k sweep (k = $ks, epsilon = $eps, $s1 replicates)"
sweep --d=200 --n=500 --n_public=5000 --k="$ks" --epsilon="$eps" --seeds=$s1 --seed=1 --out="$sweeps/k"
table "$figs/semipriv_sweep_k.tsv" 200 500 5000 "$sweeps/k"
gnuplot -c "$src/plots/semipriv_k.gp" "$figs/semipriv_sweep_k.tsv" "$figs/semipriv_sweep_k.png" \
  "semipriv sweep$tag: d = 200, n = 500, n_{public} = 5000, δ = 10^{-5}; $s1 replicates (data and noise redrawn)"

# 2. accuracy against n for k in {5, d}
step "n sweep (n = $ns, $s2 replicates)"
sweep --d=200 --n_public=5000 --n="$ns" --k='5|none' --epsilon='0.1|0.7' --seeds=$s2 --seed=2 --out="$sweeps/n"
table "$figs/semipriv_sweep_n.tsv" 200 NaN 5000 "$sweeps/n"
gnuplot -c "$src/plots/semipriv_n.gp" "$figs/semipriv_sweep_n.tsv" "$figs/semipriv_sweep_n.png" \
  "semipriv sweep$tag: d = 200, n_{public} = 5000; $s2 replicates" 200

# 3. accuracy against n_public at k = 5
step "n_public sweep (n_public = $nps, $s3 replicates)"
sweep --d=200 --n=500 --n_public="$nps" --k=5 --epsilon='0.7|inf' --seeds=$s3 --seed=3 --out="$sweeps/npublic"
table "$figs/semipriv_sweep_npublic.tsv" 200 500 NaN "$sweeps/npublic"
gnuplot -c "$src/plots/semipriv_npublic.gp" "$figs/semipriv_sweep_npublic.tsv" \
  "$figs/semipriv_sweep_npublic.png" "semipriv sweep$tag: d = 200, n = 500, k = 5; $s3 replicates"

# 4. real features: scikit-learn digits 3 vs 8 (the replicates redraw the noise only)
if /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
  step "digits 3 vs 8 ($s4 replicates)"
  data=$sweeps/digits-data
  mkdir -p "$data"
  /usr/bin/python3 "$src/scripts/semipriv_digits.py" "$data" >/dev/null
  sweep --features=file:"$data/priv_X.npy" --labels=file:"$data/priv_y.npy" \
    --public_features=file:"$data/pub_X.npy" --test_features=file:"$data/test_X.npy" \
    --test_labels=file:"$data/test_y.npy" --zeta=0.1 --k='1|2|5|10|20|none' \
    --epsilon='0.1|0.7|3|10|inf' --seeds=$s4 --seed=4 --out="$sweeps/digits"
  table "$figs/semipriv_sweep_digits.tsv" 64 NaN NaN "$sweeps/digits"
  gnuplot -c "$src/plots/semipriv_digits.gp" "$figs/semipriv_sweep_digits.tsv" \
    "$figs/semipriv_sweep_digits.png" "semipriv sweep$tag: scikit-learn digits 3 vs 8, ζ = 0.1; $s4 replicates"
else
  step "digits skipped: /usr/bin/python3 has no sklearn (scripts/setup.sh installs python3-sklearn)"
fi
step "wrote $figs/semipriv_sweep_*.png and their .tsv"
