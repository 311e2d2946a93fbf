#!/usr/bin/env bash
# model=nc with the PCA fix (pca_k, n_public, pca_center) end to end: the summary's PCA facts,
# the fix against raw features under an offset, and bad input naming the key.
# usage: test_nc_pca.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

# 1. Perfect collapse with an offset on training and test points (K = 10, sigma = 8): the centred
#    PCA with pca_k = K - 1 spans the ETF exactly, at p = 200 (covariance route) as at p = 2000
#    (Gram route), and the first 10 offset signs are the same for both p: the projected features
#    agree up to a rotation, so G agrees and the errors agree within 3 SE (the fix is
#    dimension-free), while the raw run at p = 2000 fails. 32 replicates redraw the noise and the
#    test points; the public sample (300 points) is the problem's.
fix=(--model=nc --K=10 --n=200 --sigma=8 --seeds=32 --offset=0.3 --offset_at_test=yes)
"$dpdyn" simulate "${fix[@]}" --p=2000 --pca_k=9 --n_public=300 --out="$work/pca" >/dev/null 2>"$work/err" ||
  bad "pca run failed: $(head -1 "$work/err")"
"$dpdyn" simulate "${fix[@]}" --p=200 --pca_k=9 --n_public=300 --out="$work/pca200" >/dev/null 2>"$work/err" ||
  bad "pca run failed: $(head -1 "$work/err")"
"$dpdyn" simulate "${fix[@]}" --p=2000 --out="$work/raw" >/dev/null 2>"$work/err" ||
  bad "raw run failed: $(head -1 "$work/err")"
python3 - "$work/pca/summary.json" "$work/pca200/summary.json" "$work/raw/summary.json" <<'PY' &&
import json, math, sys
a, c, r = (json.load(open(f)) for f in sys.argv[1:4])
assert a["pca_k"] == 9 and a["n_public"] == 300 and a["pca_center"] == "yes", a
assert a["pca_route"] == "gram" and c["pca_route"] == "covariance" and len(a["pca_eigenvalues"]) == 9, a
assert a["pca_etf_residual"] < 1e-9 and a["pca_beta0"] < 1e-9 and c["pca_etf_residual"] < 1e-9, a
# 9 eigenvalues 1/(K-1) of the balanced ETF, times m/(m-1) for the sample covariance
assert all(abs(e - (300 / 299) / 9) < 1e-9 for e in a["pca_eigenvalues"]), a["pca_eigenvalues"]
assert abs(a["G"] - c["G"]) < 1e-9 * a["G"], (a["G"], c["G"])
assert abs(a["test_error"] - c["test_error"]) <= 3 * math.hypot(a["test_error_se"], c["test_error_se"]), (a["test_error"], c["test_error"])
assert r["test_error"] > a["test_error"] + 0.3, (r["test_error"], a["test_error"])
assert a["G"] < r["G"] / 5, (a["G"], r["G"])
PY
  ok "pca_k = K-1 spans the ETF under an offset: the same error at p = 200 and 2000, raw fails" ||
  bad "pca_k = K-1 under an offset"

# 2. K = 2: the Thm 4.1 sample complexity is reported with its gamma.
"$dpdyn" account --model=nc --K=2 --p=50 --n=100 --shift=cube --beta=0.01 --zcdp=0.5 --pca_k=1 \
  --n_public=400 --out="$work/acc" >/dev/null 2>"$work/err" || bad "account failed: $(head -1 "$work/err")"
python3 - "$work/acc/summary.json" <<'PY' && ok "account with pca_k: samples_thm41 reported" || bad "thm41: $(head -c 300 "$work/acc/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["samples_thm41_gamma"] == 0.05 and s["samples_thm41"] > 0, s
assert s["pca_x_bound"] == s["x_norm_max"], s
PY

# 3. Bad input names the key.
err pca_k_gt_p "'pca_k': 21 \(allowed: 0 = off, or 1 <= pca_k <= p = 20\)" simulate --model=nc --K=3 --p=20 --pca_k=21
err pca_k_adversarial "'test_shift': adversarial \(allowed with pca_k > 0" simulate --model=nc --K=3 --p=20 --pca_k=2 --test_shift=adversarial --beta_test=0.1
err n_public_1 "'n_public': 1 \(allowed: n_public >= 2 with pca_center = yes" simulate --model=nc --K=3 --p=20 --pca_k=2 --n_public=1
err pca_k_rank "'pca_k': 5 \(allowed: at most the numerical rank" simulate --model=nc --K=3 --p=20 --pca_k=5 --n_public=30 --offset=0.1
err pca_center_bad "'pca_center': 'maybe'" simulate --model=nc --K=3 --p=20 --pca_k=2 --pca_center=maybe
finish nc_pca
