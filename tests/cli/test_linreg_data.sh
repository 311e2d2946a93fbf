#!/usr/bin/env bash
# model=linreg on a dataset from a file end to end (docs/real_data.md): compare with both kinds
# of clipping factors reports both equivalents and their gaps; simulate is byte-identical across
# thread counts and between a float32 .npy, a Fortran-order .npy and a text copy of the same
# values; held-out rows; every bad input exits 1 naming its key, value and allowed range, with
# nothing written.
# usage: test_linreg_data.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
py=$(numpy_python)
if [ -z "$py" ]; then
  echo "skipped: no python3 with numpy"
  exit 77
fi
d=$work/in
mkdir -p "$d"
"$py" - "$d" <<'PY' || { bad "numpy: writing the files"; finish linreg_data; exit 1; }
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
N, p = 400, 12
# non-Gaussian rows: a heavy-tailed radial part times a correlated Gaussian, integer-valued
a = rng.gamma(2.0, 0.5, size=N)
g = rng.standard_normal((N, p)) @ np.diag(np.linspace(2.0, 0.3, p))
x = np.round(4.0 * np.sqrt(a)[:, None] * g).astype(np.float32)  # exact in float32 and text
y = x[:, :3].sum(axis=1) + np.round(rng.standard_normal(N) * 3.0)
np.save(d + "/x.npy", x)
np.save(d + "/x64.npy", x.astype(np.float64))
np.save(d + "/xf.npy", np.asfortranarray(x))
np.savetxt(d + "/x.txt", x, fmt="%d")
np.save(d + "/y.npy", y)
np.save(d + "/y_short.npy", y[:-1])
bad = x.copy(); bad[6, 2] = np.nan
np.save(d + "/x_nan.npy", bad)
np.save(d + "/x_const.npy", np.ones((N, p), dtype=np.float32))
np.save(d + "/x_one.npy", x[:1])
np.save(d + "/x_be.npy", x.astype(">f8"))
np.save(d + "/x_c.npy", x.astype(np.complex128))
np.save(d + "/x_big.npy", rng.standard_normal((40000, 12)))  # 3.8 MB
PY
X="--features=file:$d/x.npy"
Y="--targets=file:$d/y.npy"
small="--c=1 --rho=2 --schedule=sqrt --eta0=1 --grid=11 --plot=0"

# 1. compare: both equivalents, their gaps, the diagnostics.
if "$dpdyn" compare "$X" "$Y" $small --seeds=32 --out="$work/cmp" >/dev/null 2>"$work/e"; then
  "$py" - "$work/cmp" <<'PY' && ok "compare: both equivalents and the data object" || bad "compare summary: $(cat "$work/e")"
import json, sys, math
s = json.load(open(sys.argv[1] + "/summary.json"))
D = s["data"]
assert D["rows"] == 400 and D["rows_per_replicate"] == 400 and D["held_out_rows"] == 0, D
assert D["factors"] == "gaussian" and "rows" in D["replicates_redraw"], D
pre = D["preprocessing"]
assert pre["center"] is True and pre["scale"] == "trace" and pre["feature_scale"] > 0, pre
for k in ("norm_cv", "effective_rank", "leverage_max", "excess_kurtosis_residuals"):
    assert math.isfinite(D["diagnostics"][k]), k
assert len(D["diagnostics"]["excess_kurtosis_top"]) == 5
assert D["diagnostics"]["norm_cv"] > 0.3, D["diagnostics"]  # the gamma radial part
for p in ("gaussian_", "data_"):
    for k in ("sup_gap_in_se", "final_gap_in_se", "final_gap_se"):
        assert math.isfinite(s[p + k]), p + k
    assert math.isfinite(s["ode_" + p + "final_excess_risk"])
# the run's own equivalent is the Gaussian one
assert s["ode_final_excess_risk"] == s["ode_gaussian_final_excess_risk"]
assert s["ode_gaussian_final_excess_risk"] != s["ode_data_final_excess_risk"]
head = open(sys.argv[1] + "/trajectory.tsv").read().splitlines()
names = [l for l in head if not l.startswith("#")][0].split("\t")
for c in ("ode_gaussian_excess_risk", "ode_data_excess_risk", "gaussian_gap_in_se",
          "data_gap_in_se", "excess_risk", "excess_risk_se"):
    assert c in names, (c, names)
PY
else
  bad "compare: $(cat "$work/e")"
fi
if "$dpdyn" compare "$X" "$Y" $small --seeds=8 --factors=data --out="$work/cmpd" >/dev/null 2>"$work/e"; then
  "$py" - "$work/cmpd" <<'PY' && ok "compare factors=data: the run's equivalent is the data one" || bad "factors=data summary"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert s["data"]["factors"] == "data"
assert s["ode_final_excess_risk"] == s["ode_data_final_excess_risk"]
PY
else
  bad "compare factors=data: $(cat "$work/e")"
fi

# 2. simulate: the same bytes for 1 and 2 threads, f32/f64/Fortran/text copies of the values.
sim="simulate $Y $small --seeds=6 --n=300"
for v in "x.npy --threads=1" "x.npy --threads=2" "x64.npy" "xf.npy" "x.txt"; do
  set -- $v
  tag=$(echo "$v" | tr -c 'a-z0-9' '_')
  "$dpdyn" $sim --features=file:"$d/$1" ${2:-} --out="$work/s_$tag" >/dev/null 2>"$work/e" ||
    bad "simulate $v: $(cat "$work/e")"
done
ref=$work/s_$(echo "x.npy --threads=1" | tr -c 'a-z0-9' '_')
for v in "x.npy --threads=2" "x64.npy" "xf.npy" "x.txt"; do
  tag=$(echo "$v" | tr -c 'a-z0-9' '_')
  # the values (the '#' lines record the keys, which differ by construction)
  if cmp -s <(grep -v '^#' "$ref/trajectory.tsv") <(grep -v '^#' "$work/s_$tag/trajectory.tsv") &&
     cmp -s <(grep -v '^#' "$ref/release.tsv") <(grep -v '^#' "$work/s_$tag/release.tsv"); then
    ok "simulate $v: byte-identical to x.npy on 1 thread"
  else
    bad "simulate $v differs from x.npy on 1 thread"
  fi
done

# 3. held-out rows, targets=model.
if "$dpdyn" simulate "$X" "$Y" $small --seeds=4 --test_fraction=0.25 --out="$work/ho" >/dev/null 2>"$work/e" &&
   "$py" -c 'import json,sys,math; D=json.load(open(sys.argv[1]))["data"]; assert D["held_out_rows"]==100 and D["population_rows"]==300 and D["rows_per_replicate"]==300 and math.isfinite(D["held_out_risk"]), D' "$work/ho/summary.json"; then
  ok "test_fraction = 0.25: 100 rows held out, their risk reported"
else
  bad "test_fraction: $(cat "$work/e")"
fi
if "$dpdyn" compare "$X" --targets=model --zeta=0.3 $small --seeds=4 --factors=data --out="$work/tm" >/dev/null 2>"$work/e"; then
  ok "targets=model with data factors"
else
  bad "targets=model: $(cat "$work/e")"
fi

if "$dpdyn" simulate "$X" "$Y" $small --seeds=4 --replacement=1 --n=600 --out="$work/iid" >/dev/null 2>"$work/e" &&
   "$py" -c 'import json,sys; s=json.load(open(sys.argv[1])); D=s["data"]; assert D["with_replacement"] is True and D["rows_per_replicate"]==600 and "i.i.d." in D["replicates_redraw"], D' "$work/iid/summary.json"; then
  ok "replacement = 1: 600 i.i.d. rows from 400"
else
  bad "replacement = 1: $(cat "$work/e")"
fi

if "$dpdyn" compare "$X" "$Y" $small --seeds=8 --sde=1 --out="$work/sde" >/dev/null 2>"$work/e" &&
   "$py" -c 'import json,sys,math; s=json.load(open(sys.argv[1])); assert math.isfinite(s["sde_final_excess_risk"]) and s["params"]["zeta"] == s["data"]["zeta_hat"], s["params"]["zeta"]' "$work/sde/summary.json"; then
  ok "compare --sde=1: the SDE on the data's spectrum, zeta = the fit's"
else
  bad "compare --sde=1: $(cat "$work/e")"
fi

# 4. Bad input: exit 1, the key, the value and the allowed range named, nothing written.
err nan "'features': .*row 7, column 3" simulate --features=file:"$d/x_nan.npy" $Y
err rows "'targets': .*399.*400" simulate "$X" --targets=file:"$d/y_short.npy"
err n_over "'n': n = 500 .*allowed: 1 <= n <= 400" simulate "$X" "$Y" --n=500
err n_over_held "'n': .*allowed: 1 <= n <= 300" simulate "$X" "$Y" --n=350 --test_fraction=0.25
err d_disagrees "'d': 10 but the features file has 12 columns" simulate "$X" "$Y" --d=10
err constant "'features': .*constant" simulate --features=file:"$d/x_const.npy" $Y
err one_row "'features': .*" simulate --features=file:"$d/x_one.npy"
err big_endian "'features': .*(big-endian|>f8|dtype)" simulate --features=file:"$d/x_be.npy"
err complex "'features': .*(dtype|c16|complex)" simulate --features=file:"$d/x_c.npy"
err spectrum "'spectrum': given with features = file:PATH" simulate "$X" --spectrum=powerlaw:1
err zeta_file "'zeta': given with targets = file:PATH" simulate "$X" "$Y" --zeta=0.1
err scale_none "'scale': none with a command that solves" compare "$X" "$Y" --scale=none
err features_bad "'features': 'foo' \(allowed: gaussian, file:PATH\)" simulate --features=foo
err targets_bad "'targets': 'bar' \(allowed: model, file:PATH\)" simulate "$X" --targets=bar
err targets_alone "'targets': given with features = gaussian" simulate "$Y"
err memory "'features': .*max_memory" simulate --features=file:"$d/x_big.npy" --max_memory=2M
err missing "'features': cannot open" simulate --features=file:"$d/none.npy"
"$dpdyn" simulate --features=file:"$d/x.npy" --targets=file:"$d/x.npy" --out="$work/err-2d" >/dev/null 2>"$work/e"
if [ $? -eq 1 ] && grep -q "'targets'" "$work/e" && [ ! -e "$work/err-2d" ]; then
  ok "targets with 12 columns refused: $(head -1 "$work/e")"
else
  bad "targets with 12 columns: $(head -1 "$work/e")"
fi
finish linreg_data
