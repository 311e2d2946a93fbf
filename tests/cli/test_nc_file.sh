#!/usr/bin/env bash
# model=nc on feature files end to end: diagnose (against numpy's own computation), simulate and
# compare on .npy and text files, the ETF law's rows written to a file give the synthetic run's
# replicates bit for bit, and every malformed file exits 1 naming its key.
# usage: test_nc_file.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
py=$(numpy_python)


# 1. Bad files (text, hand-written): exit 1, the key named, nothing written.
d=$work/in
mkdir -p "$d"
printf '0 1 2\n1 2 3\n' >"$d/ok.txt"
printf '0 1 2\n1 2\n' >"$d/ragged.txt"
printf '0 1 2\n1 2 nan\n' >"$d/nan.txt"
printf '0 1 2\n1.5 2 3\n' >"$d/frac.txt"
printf '0 1 2\n-1 2 3\n' >"$d/neg.txt"
printf '0 1 2\n2 2 3\n0 3 3\n' >"$d/gap.txt"
printf '0 1 2\n0 2 3\n' >"$d/one.txt"
printf '# nothing here\n' >"$d/empty.txt"
printf '1 2\n2 3\n' >"$d/feat2.txt"
printf '0\n1\n1\n' >"$d/lab3.txt"
printf '0 1 2 3\n1 2 3 4\n' >"$d/wide.txt"
printf 'NUMPY but not really' >"$d/magic.npy"
F="simulate --model=nc --test_features=file:$d/ok.txt --x_bound=5 --sigma=1"
err missing_file "'features': cannot open" $F --features=file:"$d/none.txt"
err not_file "'features': 'foo' \(allowed: etf, file:PATH\)" $F --features=foo
err ragged "'features': .*line 2 has 2 columns" $F --features=file:"$d/ragged.txt"
err nan "'features': .*line 2 column 3 is not a finite number" $F --features=file:"$d/nan.txt"
err frac_label "'features': label 1.5 in row 2" $F --features=file:"$d/frac.txt"
err neg_label "'features': label -1 in row 2" $F --features=file:"$d/neg.txt"
err empty_class "'features': class 1 has no row" $F --features=file:"$d/gap.txt"
err one_class "'features': .*single class" $F --features=file:"$d/one.txt"
err empty "'features': .*no data rows" $F --features=file:"$d/empty.txt"
printf '0\n1\n' >"$d/lab2.txt"
err rows_vs_labels "'labels': .*3 labels for the 2 rows" $F --features=file:"$d/feat2.txt" --labels=file:"$d/lab3.txt" \
  --test_features=file:"$d/feat2.txt" --test_labels=file:"$d/lab2.txt"
err K_disagrees "'K': 5 \(allowed: 2, the number of classes" $F --features=file:"$d/ok.txt" --K=5
err test_p "'test_features': .*2 features per row \(allowed: p = 3, as in 'features'" simulate --model=nc --features=file:"$d/wide.txt" --test_features=file:"$d/ok.txt" --x_bound=5
err x_bound_missing "missing value for 'x_bound'.*required with features = file:PATH unless normalize = l2" simulate --model=nc --features=file:"$d/ok.txt" --test_features=file:"$d/ok.txt"
printf '0 1\n1 0\n0 1.1\n1 0.1\n' >"$d/Xonly.txt"
printf '0\n1\n0\n1\n' >"$d/yonly.txt"
# labels apart but test_labels not: test_features' first column was silently taken as labels
err labels_without_test_labels "missing value for 'test_labels'.*required with labels and test_features" \
  simulate --model=nc --features=file:"$d/Xonly.txt" --labels=file:"$d/yonly.txt" \
  --test_features=file:"$d/Xonly.txt" --x_bound=5
err test_missing "missing value for 'test_features'" simulate --model=nc --features=file:"$d/ok.txt" --x_bound=1
err labels_with_etf "'labels': given with features = etf" simulate --model=nc --labels=file:"$d/lab3.txt"
err magic "'features': .*magic" diagnose --model=nc --features=file:"$d/magic.npy"

# 2. With numpy: diagnose against numpy, simulate/compare, the bit-for-bit equivalence.
if [ -z "$py" ]; then
  echo "skip numpy parts: no python3 with numpy"
  finish nc_file
  exit $?
fi
"$py" - "$d" <<'PY' || bad "numpy: writing the files"
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20261124)
K, p, n, nt = 4, 20, 200, 200
M = np.zeros((K, p))
for k in range(K):
    M[k, :K] = np.sqrt(K / (K - 1)) * ((np.arange(K) == k) - 1 / K)
y = rng.integers(0, K, n); y[:K] = np.arange(K)
yt = rng.integers(0, K, nt); yt[:K] = np.arange(K)
X = M[y] + 0.15 * rng.standard_normal((n, p))
Xt = M[yt] + 0.15 * rng.standard_normal((nt, p))
np.save(f"{d}/train.npy", np.column_stack([y, X]))
np.save(f"{d}/test.npy", np.column_stack([yt, Xt]))
np.save(f"{d}/X.npy", np.asfortranarray(X))
np.save(f"{d}/y.npy", y.astype(np.int32))
np.savetxt(f"{d}/train.csv", np.column_stack([y, X]), delimiter=",", fmt="%.17g",
           header="label x_1 ... x_p")
np.save(f"{d}/Xbig.npy", X.astype(">f8"))
np.save(f"{d}/Xnan.npy", np.where(np.arange(n * p).reshape(n, p) == 47, np.nan, X))
with open(f"{d}/short.npy", "wb") as f:
    f.write(open(f"{d}/train.npy", "rb").read()[:-8])
# the ETF law itself (shift none, balanced, class order): K = 3, p = 8, n = n_test = 30
K3, p3 = 3, 8
M3 = np.zeros((K3, p3))
for k in range(K3):
    M3[k, :K3] = np.sqrt(K3 / (K3 - 1)) * ((np.arange(K3) == k) - 1 / K3)
y3 = np.repeat(np.arange(K3), 10)
np.savetxt(f"{d}/etf.txt", np.column_stack([y3, M3[y3]]), fmt="%.17g")
PY
err big_endian "'features': .*big-endian" diagnose --model=nc --features=file:"$d/Xbig.npy" --labels=file:"$d/y.npy"
err npy_nan "'features': nan in row 3, feature column 8" diagnose --model=nc --features=file:"$d/Xnan.npy" --labels=file:"$d/y.npy"
err truncated "'features': .*the file is truncated" diagnose --model=nc --features=file:"$d/short.npy"

# diagnose: .npy with a label column, text, and features + labels (Fortran order, i4 labels)
# give the same numbers, equal to numpy's computation.
for v in npy:"--features=file:$d/train.npy" csv:"--features=file:$d/train.csv" \
  split:"--features=file:$d/X.npy --labels=file:$d/y.npy"; do
  # shellcheck disable=SC2086
  "$dpdyn" diagnose --model=nc ${v#*:} --out="$work/dg-${v%%:*}" >/dev/null 2>"$work/err" ||
    bad "diagnose ${v%%:*}: $(head -1 "$work/err")"
done
"$py" - "$d" "$work" <<'PY' && ok "diagnose: npy, csv and split files agree with numpy (cosines, beta quantiles, G, NC1)" || bad "diagnose numbers"
import json, sys
import numpy as np
d, w = sys.argv[1:3]
a = np.load(f"{d}/train.npy"); y = a[:, 0].astype(int); X = a[:, 1:]
K, (n, p) = y.max() + 1, X.shape
M = np.array([X[y == k].mean(0) for k in range(K)])
mu = X.mean(0); C = M - mu
cos = [C[j] @ C[k] / np.linalg.norm(C[j]) / np.linalg.norm(C[k]) for j in range(K) for k in range(j + 1, K)]
beta = np.abs(X - M[y]).max(1)
q = np.quantile(beta, [0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1])
R = X - M[y]
Sw = R.T @ R / n; Sb = C.T @ C / K
nc1 = np.trace(Sw @ np.linalg.pinv(Sb)) / K
G = np.sqrt((K - 1) / K) * np.linalg.norm(X, axis=1).max()
for v in ("npy", "csv", "split"):
    s = json.load(open(f"{w}/dg-{v}/summary.json"))
    assert abs(s["cos_mean"] - np.mean(cos)) < 1e-12 and abs(s["cos_min"] - min(cos)) < 1e-12, (v, s)
    assert abs(s["cos_max_dev"] - max(abs(c + 1 / (K - 1)) for c in cos)) < 1e-12
    got = [s["beta_quantiles"][k] for k in ("min", "q10", "q25", "median", "q75", "q90", "q99", "max")]
    assert np.allclose(got, q, rtol=1e-12, atol=0), (got, q)
    assert abs(s["G_estimated"] - G) < 1e-12 * G and abs(s["nc1"] - nc1) < 1e-9 * nc1, (s["nc1"], nc1)
    rows = [l for l in open(f"{w}/dg-{v}/cosines.tsv") if not l.startswith("#")]
    assert rows[0].rstrip("\n").split("\t") == ["class_j", "class_k", "cosine"], rows[0]
    assert len(rows) == 1 + K * (K - 1) // 2
    cls = np.genfromtxt([l for l in open(f"{w}/dg-{v}/classes.tsv") if l[0] != "#"], names=True, delimiter="\t")
    assert (cls["count"] == np.bincount(y)).all()
PY

# diagnose of the ETF law without shifts: the cosines are the ETF's.
"$dpdyn" diagnose --model=nc --K=5 --p=30 --n=100 --out="$work/dg-etf" >/dev/null 2>&1 || bad "diagnose etf"
"$py" - "$work/dg-etf/summary.json" <<'PY' && ok "diagnose of the ETF law: cos = -1/(K-1), beta = 0, NC1 = 0" || bad "diagnose etf numbers"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["cos_etf"] == -0.25 and s["cos_max_dev"] < 1e-13 and s["beta_quantiles"]["max"] < 1e-14 and s["nc1"] < 1e-20, s
PY

# 3. The ETF law's rows as a file: the same noise (stream (seed, r), region tag 2) on the same
#    rows gives the synthetic run's replicates bit for bit, and the same exact one-step error.
"$dpdyn" compare --model=nc --K=3 --p=8 --n=30 --n_test=30 --sigma=25 --seeds=40 --seed=5 \
  --out="$work/etf-law" >/dev/null 2>&1 || bad "etf law run"
"$dpdyn" compare --model=nc --features=file:"$d/etf.txt" --test_features=file:"$d/etf.txt" \
  --x_bound=1 --sigma=25 --seeds=40 --seed=5 --out="$work/etf-file" >/dev/null 2>"$work/err" ||
  bad "etf file run: $(head -1 "$work/err")"
if cmp -s <(grep -v '^#' "$work/etf-law/replicates.tsv") <(grep -v '^#' "$work/etf-file/replicates.tsv"); then
  ok "ETF rows from a file: replicates.tsv identical to the synthetic run's"
else
  bad "ETF rows from a file: replicates differ"
fi
"$py" - "$work/etf-law/summary.json" "$work/etf-file/summary.json" <<'PY' && ok "ETF rows from a file: same G, test error and exact one-step error" || bad "etf file vs law summaries"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["test_error"] == b["test_error"] and a["G"] == b["G"], (a["test_error"], b["test_error"])
assert abs(a["theory_test_error"] - b["theory_test_error"]) < 1e-12, (a["theory_test_error"], b["theory_test_error"])
PY

# 4. compare on the noisy file: the simulation within 3 SE of the exact error given the rows
#    (the replicates redraw only the noise, so the SE is the noise's); sigma x 1.2 is rejected.
run="--features=file:$d/train.npy --test_features=file:$d/test.npy --x_bound=1.6 --seeds=600 --seed=3"
# shellcheck disable=SC2086
"$dpdyn" compare --model=nc $run --sigma=60 --out="$work/cf" >/dev/null 2>"$work/err" || bad "compare file: $(head -1 "$work/err")"
# shellcheck disable=SC2086
"$dpdyn" simulate --model=nc $run --sigma=72 --out="$work/sf12" >/dev/null 2>&1 || bad "simulate sigma x 1.2"
grep -q "redraw only the noise" "$work/err" && ok "the note says what replicates redraw" || bad "no redraw note"
"$py" - "$work/cf/summary.json" "$work/sf12/summary.json" <<'PY' && ok "compare on file features: gap within 3 SE; sigma x 1.2 is > 3 SE away" || bad "compare on file features"
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert 0.1 < a["theory_test_error"] < 0.6 and abs(a["gap_in_se"]) < 3, a
assert abs(a["G"] - math.sqrt(3 / 4) * 1.6) < 1e-12 and a["features"]["n_test"] == 200, a
assert abs(b["test_error"] - a["theory_test_error"]) / b["test_error_se"] > 3, (b["test_error"], a["theory_test_error"])
PY

# p < K is allowed for file features (the ETF law needs p >= K, a file does not).
printf '0 1 0\n1 0 1\n2 -1 0\n0 0.9 0.1\n1 0.1 0.9\n2 -0.9 0\n' >"$d/pk.txt"
"$dpdyn" simulate --model=nc --features=file:"$d/pk.txt" --test_features=file:"$d/pk.txt" \
  --x_bound=2 --sigma=0.1 --seeds=2 --out="$work/pk" >/dev/null 2>"$work/err" &&
  ok "file features with p = 2 < K = 3 run" || bad "p < K file: $(head -1 "$work/err")"

# 5. account on file features: G from the public bound and the training file's n and K (no
#    test file needed); without x_bound it refuses, naming the key.
"$dpdyn" account --model=nc --features=file:"$d/train.npy" --x_bound=1.6 --epsilon=1 \
  --delta=1e-5 --out="$work/acf" >/dev/null 2>"$work/err" || bad "account file: $(head -1 "$work/err")"
"$dpdyn" account --model=nc --features=file:"$d/train.npy" --normalize=center_l2 --epsilon=1 \
  --delta=1e-5 --out="$work/acf2" >/dev/null 2>&1 || bad "account file center_l2"
"$py" - "$work/acf/summary.json" "$work/acf2/summary.json" "$work/cf/summary.json" <<'PY' && ok "account on file features: G = c R (as compare's), center_l2: c (2n - 1)" || bad "account on file features"
import json, math, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:4])
c4 = math.sqrt(3 / 4)
assert abs(a["G"] - c4 * 1.6) < 1e-12 and a["G"] == c["G"], (a["G"], c["G"])
assert abs(b["G"] - c4 * (2 * 200 - 1)) < 1e-9, b["G"]
PY
err account_no_bound "missing value for 'x_bound'" account --model=nc --features=file:"$d/train.npy" --epsilon=1 --delta=1e-5
finish nc_file
