#!/usr/bin/env bash
# The semi-private protocol (seed 003, Figures 2 and 4; docs/protocols.md), as `dpdyn sweep
# simulate --model=semipriv --trainer=dpsgd` grids on one feature set of scripts/features.sh:
#
#   1. accuracy against the PCA dimension k in {10, 20, 40, ...} (< d) and k = d (no PCA), at
#      epsilon in {0.1, 0.7, inf}, delta = 1e-5: PCA on a public unlabelled split of
#      public_fraction = 0.1 of the training rows, DP-SGD (softmax cross-entropy, Poisson
#      sampling) on the rest; every replicate redraws the split, the sampling and the noise;
#   2. the low-data regime: private_fraction in {0.05, 0.1, 0.25, 0.5, 0.75} of the private rows
#      (redrawn per replicate) at epsilon = 0.7, for the best k < d of step 1 at epsilon = 0.7
#      and for k = d.
#
# Writes into OUTDIR: sweeps/{k,lowdata}/ (the sweeps; a stopped run resumes where it stopped),
# DATASET_semipriv_k.tsv, DATASET_semipriv_lowdata.tsv (the tables of the figures) and
# DATASET_semipriv_k.png, DATASET_semipriv_lowdata.png (plots/protocol_k.gp, protocol_lowdata.gp).
#
# Usage: scripts/protocol_semipriv.sh [options] [--] DATASET OUTDIR
#   DATASET        a set of scripts/features.sh: digits, fmnist_pixels, fmnist_rf, fmnist_rf768
#                  (files DATA/DATASET_{train,test}_{x,y}.npy; made by features.sh when missing)
#   --data DIR     where the feature files are (default OUTDIR/data)
#   --quick        a smoke run: k in {10, d}, epsilon in {0.7, inf}, 2 replicates, 2 epochs,
#                  fractions {0.25, 0.5}; features made with --max-rows 600 (fmnist) when missing
#   --replicates R (default 5), --threads T (every point's threads, default 2),
#   --ks LIST      the k values below d, '|'-separated (default 10|20|40|... below d)
#   --q Q --epochs N --clip C   DP-SGD's hyperparameters (defaults per DATASET below;
#                  docs/protocols.md "Hyperparameters" says how they were chosen)
#   --eta 0.1:E1,0.7:E2,inf:E3   the learning rate at each epsilon (each epsilon is its own
#                  sweep, sweeps/k-eps<EPS>; the low-data regime uses E2)
#   --skip-lowdata only step 1
# Environment: BUILD (default SOURCE/build) holds dpdyn.
# SPDX-License-Identifier: MIT
set -euo pipefail

src=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$src/build}
prog=protocol_semipriv
# usage, die, quoted, step, positive_numbers, protocol_setup
. "$src/scripts/protocol_lib.sh"

quick=0 data="" reps=5 threads=2 ks="" etas="" q="" epochs="" clip="" lowdata=1 args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --quick) quick=1; shift ;;
    --skip-lowdata) lowdata=0; shift ;;
    --data | --replicates | --threads | --ks | --eta | --q | --epochs | --clip)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --data) data=$2 ;; --replicates) reps=$2 ;; --threads) threads=$2 ;; --ks) ks=$2 ;;
        --eta) etas=$2 ;; --q) q=$2 ;; --epochs) epochs=$2 ;; --clip) clip=$2 ;;
      esac
      shift 2
      ;;
    --) shift; args+=("$@"); break ;;
    -*) die "unknown option $(quoted "$1") (an OUTDIR that starts with '-' goes after --)" ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 2 ] || die "expected DATASET OUTDIR (usage: scripts/protocol_semipriv.sh [options] DATASET OUTDIR)"
dataset=${args[0]} outdir=${args[1]}
case $dataset in
  digits) d_etas=0.1:1,0.7:1,inf:30 d_q=0.1 d_epochs=10 d_clip=1 ;;
  fmnist_pixels | fmnist_rf | fmnist_rf768) d_etas=0.1:3,0.7:10,inf:30 d_q=0.01 d_epochs=10 d_clip=1 ;;
  *) die "DATASET $(quoted "$dataset") (allowed: digits, fmnist_pixels, fmnist_rf, fmnist_rf768)" ;;
esac
[[ $reps =~ ^[1-9][0-9]{0,5}$ ]] || die "--replicates $(quoted "$reps") (allowed: a positive integer)"
[[ $threads =~ ^[0-9]{1,4}$ ]] || die "--threads $(quoted "$threads") (allowed: an integer >= 0)"
[ -n "$outdir" ] || die "OUTDIR is empty"
[ $quick -eq 0 ] || { reps=2 d_epochs=2; }
etas=${etas:-$d_etas} q=${q:-$d_q} epochs=${epochs:-$d_epochs} clip=${clip:-$d_clip}
[[ $etas =~ ^0\.1:[0-9.eE+-]+,0\.7:[0-9.eE+-]+,inf:[0-9.eE+-]+$ ]] || die "--eta $(quoted "$etas") (allowed: 0.1:E1,0.7:E2,inf:E3)"
# eta_of EPS: the learning rate at EPS
eta_of() { local x=${etas#*"$1":}; echo "${x%%,*}"; }
positive_numbers "eta:$(eta_of 0.1)" "eta:$(eta_of 0.7)" "eta:$(eta_of inf)" "q:$q" "epochs:$epochs" "clip:$clip"
protocol_setup
# d: the width of the training file (the path reaches Python as an argument)
d=$("$py" -c 'import sys, numpy; print(numpy.load(sys.argv[1], mmap_mode="r").shape[1])' "${f}_train_x.npy")
if [ -z "$ks" ]; then
  k=10 ks=""
  while [ "$k" -lt "$d" ]; do ks=$ks${ks:+|}$k; k=$((k * 2)); done
  [ $quick -eq 0 ] || ks=10
fi
eps='0.1|0.7|inf'
[ $quick -eq 0 ] || eps='0.7|inf'
files=(--features=file:"${f}_train_x.npy" --labels=file:"${f}_train_y.npy"
  --test_features=file:"${f}_test_x.npy" --test_labels=file:"${f}_test_y.npy")
train=(--trainer=dpsgd --loss=ce --sampling=poisson --q="$q" --epochs="$epochs"
  --clip="$clip" --delta=1e-5 --public_fraction=0.1 --seeds="$reps")
sweep() { "$build/dpdyn" sweep simulate --model=semipriv "${files[@]}" "${train[@]}" "$@" --threads="$threads" --plot_y=none >/dev/null; }
note=$([ $quick -eq 1 ] && echo " (quick run)" || true)
# the data set as a figure title shows it (an underscore escaped for enhanced text)
label=${dataset//_/\\_}

# table OUT.tsv D HEADER SWEEP...: the figure's columns from the sweeps' sweep.tsv, by column
# name (k = none is D; a fixed key's column is absent: its value comes from the sweep's
# '# key = value' lines).
table() {
  local out=$1 d=$2 hdr=$3 s
  shift 3
  echo "$hdr" >"$out"
  for s in "$@"; do table1 "$s" "$d" "$hdr" >>"$out"; done
}
table1() {
  awk -F'\t' -v d="$2" -v hdr="$3" '
    /^# [a-z_]+ = / { split(substr($0, 3), kv, " = "); fixed[kv[1]] = kv[2]; next }
    /^#/ { next }
    !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
    function v(name, dflt) { return (name in c && $c[name] != "") ? $c[name] : ((name in fixed) ? fixed[name] : dflt) }
    { k = v("k", d); if (k == "none") k = d
      e = v("epsilon", "inf"); if (e == "INFINITY" || e == "Infinity") e = "inf"
      line = hdr; n = split(hdr, names, " "); out = ""
      for (j = 1; j <= n; j++) {
        nm = names[j]
        if (nm == "k") x = k; else if (nm == "epsilon") x = e
        else if (nm == "acc") x = v("test_accuracy", "NaN")
        else if (nm == "acc_se") x = v("test_accuracy_se", "NaN")
        else if (nm == "R") x = v("seeds", "NaN")
        else if (nm == "fraction") x = v("private_fraction", "1")
        else if (nm == "noise_multiplier") x = v("privacy.noise_multiplier", "NaN")
        else if (nm == "n_trained") x = v("privacy.n", "NaN")
        else x = v(nm, "NaN")
        out = out (j > 1 ? " " : "") x
      }
      print out }' "$1/sweep.tsv"
}

# 1. accuracy against k
step "$dataset: k = $ks|none (d = $d), epsilon = $eps, $reps replicates, q = $q, $epochs epochs, eta = $etas, clip = $clip"
kdirs=()
for e in ${eps//|/ }; do
  eta=$(eta_of "$e")
  step "  epsilon = $e, eta = $eta"
  sweep --k="$ks|none" --epsilon="$e" --eta="$eta" --seed=3 --out="$outdir/sweeps/k-eps$e"
  kdirs+=("$outdir/sweeps/k-eps$e")
done
ktab=$outdir/${dataset}_semipriv_k.tsv
table "$ktab" "$d" "k epsilon eta acc acc_se R noise_multiplier steps" "${kdirs[@]}"
gnuplot -c "$src/plots/protocol_k.gp" "$ktab" "$outdir/${dataset}_semipriv_k.png" "$label" "$d" "$reps" "$note"

[ $lowdata -eq 1 ] || { step "wrote $ktab and its figure"; exit 0; }
# 2. the low-data regime at epsilon = 0.7: the best k < d of step 1 (the first on a tie) and d
kbest=$(awk -v d="$d" '!h { h = 1; next } $2 == "0.7" && $1 + 0 < d + 0 && $4 == $4 + 0 && (best == "" || $4 + 0 > bacc) { best = $1; bacc = $4 + 0 } END { print best }' "$ktab")
[ -n "$kbest" ] || kbest=10
fr='0.05,0.1,0.25,0.5,0.75'
[ $quick -eq 0 ] || fr='0.25,0.5'
step "$dataset: low data, private_fraction = $fr, k = $kbest|none, epsilon = 0.7"
sweep --private_fraction="$fr" --k="$kbest|none" --epsilon=0.7 --eta="$(eta_of 0.7)" --seed=4 --out="$outdir/sweeps/lowdata"
ltab=$outdir/${dataset}_semipriv_lowdata.tsv
table "$ltab" "$d" "fraction k epsilon eta acc acc_se R n_trained" "$outdir/sweeps/lowdata"
gnuplot -c "$src/plots/protocol_lowdata.gp" "$ltab" "$outdir/${dataset}_semipriv_lowdata.png" "$label" "$d" "$kbest" "$reps" "$note"
step "wrote $ktab, $ltab and their figures"
