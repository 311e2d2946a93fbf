#!/usr/bin/env bash
# The neural-collapse protocol (seed 000 section 5.2, Figure 2(b); docs/protocols.md), as `dpdyn
# sweep simulate --model=nc --trainer=dpsgd` grids on one feature set of scripts/features.sh:
#
#   the feature dimension p varied by random subsets of the p0 coordinates (resize=subset,
#   p = p0/8, p0/4, p0/2), the features themselves (p = p0) and copies of all coordinates
#   (resize=copies, p = 2 p0, 4 p0; 8 p0 too when p0 <= 128); test features clean and perturbed
#   by N(0, 0.1) per coordinate (test_shift=gaussian, beta_test = sqrt(0.1), the standard
#   deviation); DP-SGD for 10 epochs at (epsilon, delta) = (1, 1e-4) and non-private; plus the
#   collapse diagnostics of the features (dpdyn diagnose --model=nc).
#
# Writes into OUTDIR: sweeps/{subset,none,copies}/ (the sweeps; a stopped run resumes),
# diagnose/ (dpdyn diagnose's output), DATASET_nc.tsv (the figure's table), DATASET_nc_diagnose.tsv
# (the diagnostics in one row) and DATASET_nc.png (plots/protocol_nc.gp).
#
# Usage: scripts/protocol_nc.sh [options] [--] DATASET OUTDIR
#   DATASET        a set of scripts/features.sh: digits, fmnist_pixels, fmnist_rf768 (the
#                  768-wide emulation of the paper's ViT features), fmnist_rf
#                  (files DATA/DATASET_{train,test}_{x,y}.npy; made by features.sh when missing)
#   --data DIR     where the feature files are (default OUTDIR/data)
#   --quick        a smoke run: p in {p0/2, p0, 2 p0}, 2 replicates, 2 epochs; features made
#                  with --max-rows 600 (fmnist) when missing
#   --replicates R (default 5), --threads T (every point's threads, default 2)
#   --ps-subset LIST, --ps-copies LIST   the p values of each resize, ','-separated
#   --q Q --epochs N --clip C   DP-SGD's hyperparameters (defaults: 10 epochs, clip 1; q 0.1
#                  for digits, 0.01 for Fashion-MNIST)
#   --eta 1:E1,inf:E2   the learning rate at epsilon = 1 and at epsilon = inf (each epsilon and
#                  resize is its own sweep: sweeps/<resize>-eps<EPS>); docs/protocols.md says how
#                  the defaults were chosen
# The training rows are used as they are (x_bound = inf: no feature clipping; DP-SGD's per-sample
# clipping bounds the sensitivity), with no intercept (the nc trainer's linear layer).
# Environment: BUILD (default SOURCE/build) holds dpdyn.
# SPDX-License-Identifier: MIT
set -euo pipefail

src=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$src/build}
prog=protocol_nc
# usage, die, quoted, step, positive_numbers, protocol_setup
. "$src/scripts/protocol_lib.sh"

quick=0 data="" reps=5 threads=2 pss="" psc="" etas="" q="" epochs="" clip="" args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --quick) quick=1; shift ;;
    --data | --replicates | --threads | --ps-subset | --ps-copies | --eta | --q | --epochs | --clip)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --data) data=$2 ;; --replicates) reps=$2 ;; --threads) threads=$2 ;;
        --ps-subset) pss=$2 ;; --ps-copies) psc=$2 ;;
        --eta) etas=$2 ;; --q) q=$2 ;; --epochs) epochs=$2 ;; --clip) clip=$2 ;;
      esac
      shift 2
      ;;
    --) shift; args+=("$@"); break ;;
    -*) die "unknown option $(quoted "$1") (an OUTDIR that starts with '-' goes after --)" ;;
    *) args+=("$1"); shift ;;
  esac
done
[ ${#args[@]} -eq 2 ] || die "expected DATASET OUTDIR (usage: scripts/protocol_nc.sh [options] DATASET OUTDIR)"
dataset=${args[0]} outdir=${args[1]}
case $dataset in
  digits) d_etas=1:1,inf:10 d_q=0.1 d_clip=1 ;;
  fmnist_pixels | fmnist_rf | fmnist_rf768) d_etas=1:1,inf:10 d_q=0.01 d_clip=1 ;;
  *) die "DATASET $(quoted "$dataset") (allowed: digits, fmnist_pixels, fmnist_rf768, fmnist_rf)" ;;
esac
d_epochs=10
[[ $reps =~ ^[1-9][0-9]{0,5}$ ]] || die "--replicates $(quoted "$reps") (allowed: a positive integer)"
[[ $threads =~ ^[0-9]{1,4}$ ]] || die "--threads $(quoted "$threads") (allowed: an integer >= 0)"
[ -n "$outdir" ] || die "OUTDIR is empty"
[ $quick -eq 0 ] || { reps=2 d_epochs=2; }
etas=${etas:-$d_etas} q=${q:-$d_q} epochs=${epochs:-$d_epochs} clip=${clip:-$d_clip}
[[ $etas =~ ^1:[0-9.eE+-]+,inf:[0-9.eE+-]+$ ]] || die "--eta $(quoted "$etas") (allowed: 1:E1,inf:E2)"
# eta_of EPS: the learning rate at EPS
eta_of() { local x=${etas#*"$1":}; echo "${x%%,*}"; }
positive_numbers "eta:$(eta_of 1)" "eta:$(eta_of inf)" "q:$q" "epochs:$epochs" "clip:$clip"
for v in "ps-subset:$pss" "ps-copies:$psc"; do
  [ -z "${v#*:}" ] || [[ ${v#*:} =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--${v%%:*} $(quoted "${v#*:}") (allowed: a ','-separated list of positive integers)"
done
protocol_setup
p0=$("$py" -c 'import sys, numpy; print(numpy.load(sys.argv[1], mmap_mode="r").shape[1])' "${f}_train_x.npy")
if [ -z "$pss" ]; then
  pss=""
  for m in 8 4 2; do
    p=$((p0 / m))
    [ "$p" -lt 16 ] || pss=$pss${pss:+,}$p
  done
  [ $quick -eq 0 ] || pss=$((p0 / 2))
fi
if [ -z "$psc" ]; then
  psc=$((2 * p0)),$((4 * p0))
  [ "$p0" -gt 128 ] || psc=$psc,$((8 * p0))
  [ $quick -eq 0 ] || psc=$((2 * p0))
fi
files=(--features=file:"${f}_train_x.npy" --labels=file:"${f}_train_y.npy"
  --test_features=file:"${f}_test_x.npy" --test_labels=file:"${f}_test_y.npy")
train=(--trainer=dpsgd --loss=ce --sampling=poisson --q="$q" --epochs="$epochs" --clip="$clip"
  --x_bound=inf --delta=1e-4 --seeds="$reps" --test_shift='none|gaussian'
  --beta_test=0.316227766016838)
sweep() { "$build/dpdyn" sweep simulate --model=nc "${files[@]}" "${train[@]}" "$@" --threads="$threads" --plot_y=none >/dev/null; }
note=$([ $quick -eq 1 ] && echo " (quick run)" || true)
# the data set as a figure title shows it (an underscore escaped for enhanced text)
label=${dataset//_/\\_}

step "$dataset: p0 = $p0; subsets p = $pss; copies p = $psc; $reps replicates, q = $q, $epochs epochs, eta = $etas, clip = $clip"
dirs=()
for e in 1 inf; do
  eta=$(eta_of "$e")
  step "  epsilon = $e, eta = $eta"
  if [ -n "$pss" ]; then
    sweep --resize=subset --resize_p="$pss" --epsilon="$e" --eta="$eta" --seed=5 --out="$outdir/sweeps/subset-eps$e"
    dirs+=("subset:$outdir/sweeps/subset-eps$e")
  fi
  sweep --resize=none --epsilon="$e" --eta="$eta" --seed=5 --out="$outdir/sweeps/none-eps$e"
  sweep --resize=copies --resize_p="$psc" --epsilon="$e" --eta="$eta" --seed=5 --out="$outdir/sweeps/copies-eps$e"
  dirs+=("none:$outdir/sweeps/none-eps$e" "copies:$outdir/sweeps/copies-eps$e")
done

# the figure's table (plots/protocol_nc.gp), sorted by p
tab=$outdir/${dataset}_nc.tsv
{
  echo "p resize epsilon eta shift acc acc_se R noise_multiplier clipped_fraction w_norm nc1 trace_ratio beta_median x_norm_max"
  for rd in "${dirs[@]}"; do
    r=${rd%%:*} dir=${rd#*:}
    awk -F'\t' -v r="$r" -v p0="$p0" '
      /^# [a-z_]+ = / { split(substr($0, 3), kv, " = "); fixed[kv[1]] = kv[2]; next }
      /^#/ { next }
      !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
      function v(name, dflt) { return (name in c && $c[name] != "") ? $c[name] : ((name in fixed) ? fixed[name] : dflt) }
      { p = (r == "none") ? p0 : v("resize_p", "NaN")
        # the key as given (a fixed key: its # line), not the epsilon column of the accountant
        e = ("epsilon" in fixed) ? fixed["epsilon"] : v("epsilon", "inf")
        if (e == "INFINITY" || e == "Infinity") e = "inf"
        err = v("test_error", "NaN"); acc = (err == "NaN" || err == "nan") ? "NaN" : 1 - err
        print p, r, e, v("eta", "NaN"), v("test_shift", "none"), acc, v("test_error_se", "NaN"), v("seeds", "NaN"), v("noise_multiplier", "NaN"), v("clipped_fraction", "NaN"), v("w_norm", "NaN"),
          v("collapse.nc1", "NaN"), v("collapse.trace_ratio", "NaN"), v("collapse.beta_median", "NaN"), v("collapse.x_norm_max", "NaN") }' \
      "$dir/sweep.tsv"
  done | sort -n -k1,1
} >"$tab"
gnuplot -c "$src/plots/protocol_nc.gp" "$tab" "$outdir/${dataset}_nc.png" "$label" "$p0" "$reps" "$note"

# the collapse diagnostics of the features themselves (p = p0)
step "$dataset: collapse diagnostics (dpdyn diagnose --model=nc)"
"$build/dpdyn" diagnose --model=nc "${files[@]}" --x_bound=inf --out="$outdir/diagnose" >/dev/null 2>&1
"$py" - "$outdir/diagnose/summary.json" "$outdir/${dataset}_nc_diagnose.tsv" "$dataset" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
def get(path):
    v = s
    for k in path.split("."):
        if not isinstance(v, dict) or k not in v:
            return float("nan")
        v = v[k]
    return v
cols = ["K", "p", "n", "cos_etf", "cos_mean", "cos_max_dev", "nc1", "trace_ratio",
        "within_trace", "between_trace", "beta_mean", "beta_quantiles.median",
        "beta_quantiles.q90", "x_norm_mean", "x_norm_max", "G_estimated"]
with open(sys.argv[2], "w") as f:
    f.write("dataset " + " ".join(c.replace("beta_quantiles.", "beta_") for c in cols) + "\n")
    f.write(sys.argv[3] + " " + " ".join("%.6g" % get(c) if isinstance(get(c), (int, float)) else str(get(c)) for c in cols) + "\n")
EOF
step "wrote $tab, ${dataset}_nc_diagnose.tsv and ${dataset}_nc.png"
