#!/usr/bin/env bash
# The study of docs/real_data.md: DP-SGD on real datasets against the deterministic equivalent
# built from each dataset's own spectrum, with the published (Gaussian) clipping factors and with
# the rows' own (data-driven) factors; then the tuner on real data, confirmed on the rows.
# Writes OUT/table.tsv (one row per dataset and setting: sim +- SE, both theories, gaps in SE,
# diagnostics), OUT/tune.tsv, the figures OUT/<name>.png and every run's directory OUT/runs/.
# Usage: bench/real_data_study.sh OUT [DATADIR]   (DATADIR: an export of scripts/datasets.sh;
#        default OUT/data). SEEDS (default 64) replicates per run; BUILD=dir.
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
seeds=${SEEDS:-64}
out=${1:?usage: real_data_study.sh OUT [DATADIR]}
mkdir -p -- "$out/runs"
data=${2:-$out/data}
if [ ! -e "$data/fmnist_train_x.npy" ]; then
  mkdir -p -- "$data"
  "$root/scripts/datasets.sh" "$data" >/dev/null
fi
dpdyn=$build/dpdyn
py=/usr/bin/python3

# the control: Gaussian rows with a 1/i spectrum written to a file (50,000 x 200, float32),
# labels <x, theta*> + 0.5 N(0, 1) from the file; here the equivalent must hold
if [ ! -e "$data/gauss_x.npy" ]; then
  "$py" - "$data" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(3)
N, d = 50000, 200
lam = np.arange(1, d + 1) ** -1.0
lam *= d / lam.sum()
x = (rng.standard_normal((N, d)) * np.sqrt(lam)).astype(np.float32)
np.save(sys.argv[1] + "/gauss_x.npy", x)
th = rng.standard_normal(d)
th /= np.linalg.norm(th)
np.save(sys.argv[1] + "/gauss_y.npy", x.astype(np.float64) @ th + 0.5 * rng.standard_normal(N))
PY
fi
# name | features | targets | extra keys | eta0 (below the stability limit 2/(gamma max|x|^2/d))
datasets=(
  "fmnist|fmnist_train_x.npy|file:fmnist_train_yreg.npy||10"
  "fmnist_model|fmnist_train_x.npy|model|--zeta=0.5|10"
  "digits|digits_x.npy|file:digits_y.npy||5"
  "diabetes|diabetes_x.npy|file:diabetes_y.npy||5"
  "gauss_control|gauss_x.npy|file:gauss_y.npy||10"
)
# setting | keys (eta0 = the dataset's times the factor)
settings=(
  "c1_rho2_sqrt|--c=1 --rho=2 --schedule=sqrt|1"
  "c0.3_rho0.5_sqrt|--c=0.3 --rho=0.5 --schedule=sqrt|1"
  "nonprivate_const|--c=inf --rho=inf --schedule=const|0.5"
)
for ds in "${datasets[@]}"; do
  IFS='|' read -r name xf tg extra eta0 <<<"$ds"
  targets=$tg
  case $tg in file:*) targets="file:$data/${tg#file:}" ;; esac
  for st in "${settings[@]}"; do
    IFS='|' read -r sname skeys efac <<<"$st"
    e=$(awk -v a="$eta0" -v b="$efac" 'BEGIN { print a * b }')
    # one pass over distinct rows (the default), and i.i.d. rows (the theory's own sampling)
    for rep in 0 1; do
      tag=${name}_${sname}_$([ "$rep" = 1 ] && echo iid || echo pass)
      run=$out/runs/$tag
      rm -rf -- "$run"
      # shellcheck disable=SC2086
      "$dpdyn" compare "--features=file:$data/$xf" "--targets=$targets" $extra $skeys \
        "--eta0=$e" "--replacement=$rep" "--seeds=$seeds" --grid=41 "--out=$run" >/dev/null
      cp -- "$run/compare_data.png" "$out/$tag.png"
    done
  done
done
"$py" - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
cols = ["run", "sampling", "n", "d", "seeds", "sim", "sim_se", "theory_gaussian", "theory_data",
        "gap_gaussian_se", "gap_data_se", "sup_gap_gaussian_se", "sup_gap_data_se",
        "norm_cv", "kurt_top1", "kurt_resid", "eff_rank", "leverage_ratio", "clipped"]
rows = []
for run in sorted(glob.glob(os.path.join(out, "runs", "*"))):
    s = json.load(open(os.path.join(run, "summary.json")))
    D = s["data"]["diagnostics"]
    k = D["excess_kurtosis_residuals"]
    rows.append([os.path.basename(run),
                 "iid" if s["data"]["with_replacement"] else "one pass", s["n"], s["d"], s["seeds"], s["final_excess_risk"],
                 s["final_excess_risk_se"], s["ode_gaussian_final_excess_risk"],
                 s["ode_data_final_excess_risk"], s["gaussian_final_gap_in_se"],
                 s["data_final_gap_in_se"], s["gaussian_sup_gap_in_se"], s["data_sup_gap_in_se"],
                 D["norm_cv"], D["excess_kurtosis_top"][0], k if isinstance(k, float) else "na",
                 D["effective_rank"], D["leverage_max_over_mean"], s["clipped_fraction"]])
with open(os.path.join(out, "table.tsv"), "w") as f:
    f.write("\t".join(cols) + "\n")
    for r in rows:
        f.write("\t".join(x if isinstance(x, str) else "%.4g" % x for x in r) + "\n")
PY
# the tuner on real data: the optimum of the theory, confirmed by DP-SGD on the rows
# (data-driven factors on Fashion-MNIST cost about 4 ms per evaluation over its 60,000 rows:
# hundreds of solves would take an hour, so its tuner runs on the Gaussian factors)
for run_spec in digits:gaussian digits:data fmnist:gaussian; do
  name=${run_spec%%:*} f=${run_spec#*:}
  case $name in
    digits) xf=digits_x.npy yf=digits_y.npy ;;
    fmnist) xf=fmnist_train_x.npy yf=fmnist_train_yreg.npy ;;
  esac
  {
    run=$out/runs_tune/${name}_$f
    rm -rf -- "$run"
    mkdir -p -- "$out/runs_tune"
    "$dpdyn" tune "--features=file:$data/$xf" "--targets=file:$data/$yf" --rho=2 \
      --schedule=sqrt "--factors=$f" "--confirm_seeds=$seeds" --heatmap=21 "--out=$run" >/dev/null
    cp -- "$run/tune.png" "$out/tune_${name}_$f.png"
  }
done
"$py" - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
with open(os.path.join(out, "tune.tsv"), "w") as f:
    f.write("run\tc\teta0\ttheory\tconfirm\tconfirm_se\tconfirm_gap_in_se\n")
    for run in sorted(glob.glob(os.path.join(out, "runs_tune", "*"))):
        s = json.load(open(os.path.join(run, "summary.json")))
        f.write("%s\t%.4g\t%.4g\t%.4g\t%.4g\t%.2g\t%.3g\n" % (
            os.path.basename(run), s["optimum.c"] if "optimum.c" in s else s["optimum"]["c"],
            s["optimum"]["eta0"], s["final_excess_risk"], s["confirm_final_excess_risk"],
            s["confirm_final_excess_risk_se"], s["confirm_gap_in_se"]))
PY
echo "real_data_study: $out/table.tsv $out/tune.tsv"
