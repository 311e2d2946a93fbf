#!/usr/bin/env bash
# model=rf on a data file (issue 27 §2; docs/rf.md, "Inputs from a file"):
#   1. bad input exits 1 before any work, naming the key: ragged rows, NaN (text and .npy), too
#      few rows for n + n_test (naming n or n_test with N), a d that disagrees, a targets file
#      with the wrong row count or shape, constant inputs or targets, target = file without
#      input = file, an empty or missing path;
#   2. compare with input = file (float32 .npy of a non-Gaussian law) and target = file: the
#      summary's preprocessing factors equal numpy's (centre each feature, one scale to mean
#      |x|^2 = d; targets to unit variance), the rows and the gap fields are there and finite,
#      every replicate of resample = all has its own rows (replicates.tsv data_rows_hash), and
#      without clipping or noise the OU theory of each draw is DP-GD itself (gap ~ 1e-16);
#   3. simulate with resample = noise: every replicate on the rows of draw 0, the same rows as
#      replicate 0 of resample = all; threads = 1 and 2 give the same bits;
#   4. the target rules on the real inputs (target = linear), d from the file, the same run from
#      a text file of the same (float64) values gives the same numbers as the .npy.
# usage: test_rf_data.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive
py=$(numpy_python)

d=$work/in
mkdir -p "$d"
S=(--model=rf --p=30 --steps=20 --seeds=3 --grid=5 --plot=0 --threads=1)

# 1. Bad input (text files written by hand).
printf '1 2 3\n4 5\n6 7 8\n' >"$d/ragged.txt"
printf '1 2\n3 nan\n4 5\n' >"$d/nan.txt"
printf '1 2\n1 2\n1 2\n' >"$d/const.txt"
printf '1 2\n2 1\n3 5\n0 1\n' >"$d/x4.txt"
printf '1\n2\n3\n' >"$d/t3.txt"
printf '1 2\n3 4\n5 6\n7 8\n' >"$d/t4x2.txt"
printf '1\n1\n1\n1\n' >"$d/tconst.txt"
printf '1\n2\n3\n4\n' >"$d/t4.txt"
err ragged "'input': .*line 2 has 2 columns" compare "${S[@]}" --input=file:"$d/ragged.txt" --n=1 --n_test=1
err nan_text "'input': .*line 2 column 2 is not a finite number" compare "${S[@]}" --input=file:"$d/nan.txt" --n=1 --n_test=1
err n_too_big "'n': 4 with n_test = 1 \(allowed: n \+ n_test <= N = 4" compare "${S[@]}" --input=file:"$d/x4.txt" --n=4 --n_test=1
err n_test_too_big "'n_test': 2 with n = 3 \(allowed: n \+ n_test <= N = 4" compare "${S[@]}" --input=file:"$d/x4.txt" --n=3 --n_test=2
err n_default "'n': 2000 with n_test = 1000 \(allowed: n \+ n_test <= N = 4" simulate "${S[@]}" --input=file:"$d/x4.txt"
err d_disagrees "'d': 3 \(allowed: d = 2, the columns of the input file" compare "${S[@]}" --input=file:"$d/x4.txt" --n=2 --n_test=2 --d=3
err target_rows "'target': .*3 x 1 values \(allowed: N = 4 values" compare "${S[@]}" --input=file:"$d/x4.txt" --target=file:"$d/t3.txt" --n=2 --n_test=2
err target_shape "'target': .*4 x 2 values \(allowed: N = 4 values" compare "${S[@]}" --input=file:"$d/x4.txt" --target=file:"$d/t4x2.txt" --n=2 --n_test=2
err input_const "'input': .*mean squared distance of its 3 rows from their mean is 0" ou "${S[@]}" --input=file:"$d/const.txt" --n=1 --n_test=1
err target_const "'target': .*variance of its 4 values is 0" ou "${S[@]}" --input=file:"$d/x4.txt" --target=file:"$d/tconst.txt" --n=2 --n_test=2
err target_without_input "'target': 'file:.*' with input = gaussian \(allowed: file:PATH only with input = file:PATH" compare "${S[@]}" --d=2 --n=4 --n_test=2 --target=file:"$d/t4.txt"
err empty_path "'input': 'file:' \(allowed: gaussian, sphere, file:PATH with a non-empty PATH\)" compare "${S[@]}" --input=file:
err missing "'input': cannot open" compare "${S[@]}" --input=file:"$d/none.npy"
err bare_file "'input': 'file' \(allowed: gaussian, sphere, file:PATH\)" compare "${S[@]}" --input=file
err bad_target "'target': 'cubic' \(allowed: linear, sign, hermite2, file:PATH\)" compare "${S[@]}" --input=file:"$d/x4.txt" --target=cubic --n=2 --n_test=2

if [ -z "$py" ]; then
  echo "skip numpy parts: no python3 with numpy"
  finish rf_data
  exit $?
fi

# 2. A non-Gaussian dataset: 300 x 8, exponential and uniform features, correlated, off-centre.
"$py" - "$d" <<'PY' || bad "numpy: writing the files"
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20261128)
N, p = 300, 8
X = 2 * rng.exponential(1.0, (N, p)) + rng.uniform(-1, 1, (N, p)) @ np.triu(np.ones((p, p))) + 5
y = np.sin(X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.1 * rng.standard_normal(N)
np.save(f"{d}/X.npy", X.astype(np.float32))
np.save(f"{d}/X64.npy", X)
np.savetxt(f"{d}/X64.txt", X, fmt="%.17g")
np.save(f"{d}/y.npy", y)
Xn = X.copy(); Xn[17, 3] = np.nan
np.save(f"{d}/Xnan.npy", Xn.astype(np.float32))
PY
err nan_npy "'input': .*row 18, column 4" compare "${S[@]}" --input=file:"$d/Xnan.npy" --n=10 --n_test=10

F=(--input=file:"$d/X.npy" --n=150 --n_test=100 --p=40 --steps=30 --grid=6 --plot=0)
if "$dpdyn" compare --model=rf "${F[@]}" --target=file:"$d/y.npy" --seeds=4 --save_replicates=1 \
  --threads=1 --out="$work/cmp" >/dev/null 2>"$work/cmp.err"; then
  if "$py" - "$d" "$work/cmp" <<'PY' >"$work/cmp.check" 2>&1; then
import json, math, sys
import numpy as np
d, o = sys.argv[1], sys.argv[2]
s = json.load(open(o + "/summary.json"))
X = np.load(d + "/X.npy").astype(np.float64)
y = np.load(d + "/y.npy")
m = X.mean(axis=0)
scale = math.sqrt(X.shape[1] / ((X - m) ** 2).sum(axis=1).mean())
want = {"data_rows": 300, "data_input_scale": scale, "data_input_mean_norm": np.linalg.norm(m),
        "data_target_mean": y.mean(), "data_target_scale": 1 / y.std()}
for k, v in want.items():
    if not math.isclose(s[k], v, rel_tol=1e-9):
        sys.exit(f"{k} = {s[k]!r}, numpy {v!r}")
assert s["data_input_dtype"] == "float32" and s["data_input_file"].endswith("/X.npy"), s
assert s["data_target_file"].endswith("/y.npy") and s["params"]["d"] == 8, s
assert s["data_draws"] == 4 and s["resample"] == "all", s
for k in ["final_test_risk", "final_test_risk_se", "ou_final_test_risk", "ou_final_test_risk_se",
          "theta_star_test_risk", "sup_gap", "sup_gap_in_se", "final_gap", "final_gap_se",
          "final_gap_in_se"]:
    if not (isinstance(s.get(k), (int, float)) and math.isfinite(s[k])):
        sys.exit(f"{k} = {s.get(k)!r}: not a finite number")
# no clipping, no noise: DP-GD is the OU mean path of its own draw, to rounding
if not abs(s["final_gap"]) < 1e-12 or not s["sup_gap"] < 1e-12:
    sys.exit(f"final_gap {s['final_gap']!r}, sup_gap {s['sup_gap']!r}: not ~0")
rows = [l.split() for l in open(o + "/replicates.tsv") if not l.startswith("#")]
h = rows[0].index("data_rows_hash")
hashes = [r[h] for r in rows[1:] if r]
if len(hashes) != 4 or len(set(hashes)) != 4:
    sys.exit(f"resample = all: the replicates' rows should differ: {hashes}")
print(f"factors = numpy's (scale {scale:.6g}, |m| {np.linalg.norm(m):.6g}), final_gap "
      f"{s['final_gap']:.3g}, 4 distinct row sets")
PY
    ok "compare input=file target=file: $(tail -1 "$work/cmp.check")"
  else
    bad "compare input=file target=file: $(tail -3 "$work/cmp.check")"
  fi
else
  bad "compare input=file target=file: exit $?: $(head -3 "$work/cmp.err")"
fi

# 3. resample = noise: the rows of draw 0 for every replicate (= replicate 0 of resample = all).
hash_column() { awk -F'\t' '/^#/ { next } !h { for (i = 1; i <= NF; i++) if ($i == "data_rows_hash") c = i; h = 1; next } NF { print $c }' "$1"; }
P=(--clip=1 --epsilon=2 --seeds=3 --save_replicates=1)
for t in 1 2; do
  "$dpdyn" simulate --model=rf "${F[@]}" "${P[@]}" --resample=noise --threads=$t \
    --out="$work/noise$t" >/dev/null 2>&1 || bad "simulate resample=noise threads=$t: exit $?"
done
"$dpdyn" simulate --model=rf "${F[@]}" "${P[@]}" --resample=all --threads=1 \
  --out="$work/all" >/dev/null 2>&1 || bad "simulate resample=all: exit $?"
noise=$(hash_column "$work/noise1/replicates.tsv" | sort -u)
all0=$(hash_column "$work/all/replicates.tsv" | head -1)
nall=$(hash_column "$work/all/replicates.tsv" | sort -u | wc -l)
if [ "$(echo "$noise" | wc -l)" = 1 ] && [ -n "$noise" ] && [ "$noise" = "$all0" ] && [ "$nall" = 3 ]; then
  ok "resample=noise: the 3 replicates share the rows of draw 0 ($noise), replicate 0 of all too; all: 3 row sets"
else
  bad "resample=noise rows: noise '$noise', all replicate 0 '$all0', all distinct $nall"
fi
if [ "$(tsv_rows "$work/noise1/trajectory.tsv")" = "$(tsv_rows "$work/noise2/trajectory.tsv")" ] &&
  [ -n "$(tsv_rows "$work/noise1/trajectory.tsv")" ] &&
  grep -q '"data_draws":	1' "$work/noise1/summary.json"; then
  ok "resample=noise: one data draw; threads=1 and 2 give the same trajectory.tsv rows"
else
  bad "resample=noise: threads=1 and 2 differ, or data_draws != 1"
fi

# 4. The target rules on the real inputs; the text file of the same values gives the same numbers.
for src in X64.npy X64.txt; do
  "$dpdyn" compare --model=rf "${F[@]/X.npy/$src}" --target=linear --seeds=2 --threads=1 \
    --out="$work/lin_$src" >/dev/null 2>&1 || bad "compare target=linear on $src: exit $?"
done
if "$py" - "$work/lin_X64.npy" "$work/lin_X64.txt" <<'PY' >"$work/lin.check" 2>&1; then
import json, math, sys
a, b = (json.load(open(p + "/summary.json")) for p in sys.argv[1:3])
assert "data_target_file" not in a and "data_target_mean" not in a, a
assert a["data_input_dtype"] == "float64", a
for k in ["final_test_risk", "ou_final_test_risk", "final_gap_in_se", "data_input_scale"]:
    assert math.isfinite(a[k]) and a[k] == b[k], (k, a[k], b[k])
print(f"final_test_risk {a['final_test_risk']:.6g} from both")
PY
  ok "target=linear on the file's rows, .npy = text: $(tail -1 "$work/lin.check")"
else
  bad "target=linear on the file's rows: $(tail -3 "$work/lin.check")"
fi

finish rf_data
