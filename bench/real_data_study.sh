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

# name | features | targets | extra keys
datasets=(
  "fmnist|fmnist_train_x.npy|file:fmnist_train_yreg.npy|"
  "fmnist_model|fmnist_train_x.npy|model|--zeta=0.5"
  "digits|digits_x.npy|file:digits_y.npy|"
  "diabetes|diabetes_x.npy|file:diabetes_y.npy|"
)
# setting | keys
settings=(
  "c1_rho2_sqrt|--c=1 --rho=2 --schedule=sqrt --eta0=1"
  "c0.3_rho0.5_sqrt|--c=0.3 --rho=0.5 --schedule=sqrt --eta0=1"
  "c3_rho8_const|--c=3 --rho=8 --schedule=const --eta0=0.5"
)
for ds in "${datasets[@]}"; do
  IFS='|' read -r name xf tg extra <<<"$ds"
  targets=$tg
  case $tg in file:*) targets="file:$data/${tg#file:}" ;; esac
  for st in "${settings[@]}"; do
    IFS='|' read -r sname skeys <<<"$st"
    run=$out/runs/${name}_$sname
    rm -rf -- "$run"
    # shellcheck disable=SC2086
    "$dpdyn" compare "--features=file:$data/$xf" "--targets=$targets" $extra $skeys \
      "--seeds=$seeds" --grid=41 "--out=$run" >/dev/null
    cp -- "$run/compare.png" "$out/${name}_$sname.png"
  done
done
"$py" - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
cols = ["run", "n", "d", "seeds", "sim", "sim_se", "theory_gaussian", "theory_data",
        "gap_gaussian_se", "gap_data_se", "sup_gap_gaussian_se", "sup_gap_data_se",
        "norm_cv", "kurt_top1", "kurt_resid", "eff_rank", "leverage_ratio", "clipped"]
rows = []
for run in sorted(glob.glob(os.path.join(out, "runs", "*"))):
    s = json.load(open(os.path.join(run, "summary.json")))
    D = s["data"]["diagnostics"]
    k = D["excess_kurtosis_residuals"]
    rows.append([os.path.basename(run), s["n"], s["d"], s["seeds"], s["final_excess_risk"],
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
for name in digits fmnist; do
  case $name in
    digits) xf=digits_x.npy yf=digits_y.npy ;;
    fmnist) xf=fmnist_train_x.npy yf=fmnist_train_yreg.npy ;;
  esac
  for f in gaussian data; do
    run=$out/runs_tune/${name}_$f
    rm -rf -- "$run"
    mkdir -p -- "$out/runs_tune"
    "$dpdyn" tune "--features=file:$data/$xf" "--targets=file:$data/$yf" --rho=2 \
      --schedule=sqrt "--factors=$f" "--confirm_seeds=$seeds" --heatmap=21 "--out=$run" >/dev/null
    cp -- "$run/tune.png" "$out/tune_${name}_$f.png"
  done
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
