#!/usr/bin/env bash
# model=nc end to end: simulate and compare against the exact one-step error through the CLI,
# the privacy calibration, and bad input naming the key.
# usage: test_nc.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
json() { python3 -c "import json,sys; v=json.load(open('$1'))$2; print(v)"; }

# 1. K = 10, n = 100, sigma = 10 (notes B.5: exact 0.6231): simulation within 3 SE of the exact
#    one-step error; 400 replicates redraw the noise and the test points (no shifts: the training
#    data are the ETF columns themselves).
if "$dpdyn" compare --model=nc --K=10 --p=50 --n=100 --n_test=200 --sigma=10 --seeds=400 \
  --seed=11 --out="$work/c" >/dev/null 2>"$work/err"; then
  python3 - "$work/c/summary.json" <<'PY' && ok "compare: exact one-step 0.6231, simulation within 3 SE" || bad "compare numbers: $(json "$work/c/summary.json" "['gap_in_se']")"
import json, sys
s = json.load(open(sys.argv[1]))
assert abs(s["theory_test_error"] - 0.623142544) < 1e-8, s["theory_test_error"]
assert abs(s["gap_in_se"]) < 3, s["gap_in_se"]
assert s["bound_d1_printed"] > 1.2 and s["bound_d1_union"] > 1.9
PY
else
  bad "compare failed: $(head -1 "$work/err")"
fi
[ -s "$work/c/classes.tsv" ] && [ "$(grep -vc '^#' "$work/c/replicates.tsv")" = 400 ] &&
  ok "classes.tsv and 400 rows of replicates.tsv" || bad "nc tables"

# 2. The same run with sigma x 1.2 is rejected by the exact error (the test can fail).
"$dpdyn" simulate --model=nc --K=10 --p=50 --n=100 --n_test=200 --sigma=12 --seeds=400 \
  --seed=11 --out="$work/s12" >/dev/null 2>&1
python3 - "$work/s12/summary.json" <<'PY' && ok "sigma x 1.2: the simulation is > 3 SE from the exact error at sigma" || bad "sigma x 1.2 not distinguished"
import json, sys
s = json.load(open(sys.argv[1]))
assert abs(s["test_error"] - 0.623142544) / s["test_error_se"] > 3, s
PY

# 3. Privacy: zcdp of the whole run gives sigma = G / sqrt(2 zcdp / T), and the report.
"$dpdyn" account --model=nc --K=10 --p=50 --n=100 --zcdp=0.5 --steps=2 --out="$work/a" \
  >/dev/null || bad "account failed"
python3 - "$work/a/summary.json" <<'PY' && ok "account: sigma = G sqrt(T / (2 zcdp)), privacy object" || bad "nc account: $(cat "$work/a/summary.json" | head -c 300)"
import json, math, sys
s = json.load(open(sys.argv[1]))
assert abs(s["sigma"] - s["G"] * math.sqrt(2 / (2 * 0.5))) < 1e-9 * s["sigma"], s
assert abs(s["privacy"]["zcdp"] - 0.5) < 1e-12 and s["privacy"]["epsilon_conversion"] == "gdp", s
PY

# 4. Bad input names the key.
err() {
  local name=$1 pattern=$2
  shift 2
  if "$dpdyn" "$@" --out="$work/err-$name" >/dev/null 2>"$work/stderr"; then
    bad "$name: exit 0"
  elif grep -Eq "$pattern" "$work/stderr" && [ ! -e "$work/err-$name" ]; then
    ok "$name: $(head -1 "$work/stderr")"
  else
    bad "$name: $(head -1 "$work/stderr")"
  fi
}
err K1 "'K': '1'" simulate --model=nc --K=1
err p_lt_K "'p': 5 \(allowed: p >= K = 10\)" simulate --model=nc --p=5
err beta_neg "'beta': -0.1" simulate --model=nc --beta=-0.1 --shift=cube
err shift_unknown "'shift': 'gauss' \(allowed: none, cube, rademacher\)" simulate --model=nc --shift=gauss
err beta_zero "'beta': 0 with shift = cube" simulate --model=nc --shift=cube
err two_budgets "'sigma': given together with epsilon" simulate --model=nc --epsilon=1 --delta=1e-4 --sigma=1
err normalize_unknown "'normalize': 'pca' \(allowed: none, center, l2, center_l2\)" simulate --model=nc --normalize=pca
err normalize_center_n1 "'normalize': center \(allowed with n >= 2" simulate --model=nc --K=2 --n=1 --normalize=center

# 5. normalize = center cancels an offset carried by training and test features (same noise).
"$dpdyn" simulate --model=nc --K=10 --p=1000 --n=200 --sigma=8 --seeds=16 --offset=0.5 \
  --offset_at_test=yes --normalize=center --out="$work/cen" >/dev/null 2>"$work/err" || bad "center run failed: $(head -1 "$work/err")"
"$dpdyn" simulate --model=nc --K=10 --p=1000 --n=200 --sigma=8 --seeds=16 --normalize=center \
  --out="$work/cen0" >/dev/null 2>"$work/err" || bad "center run failed: $(head -1 "$work/err")"
python3 - "$work/cen/summary.json" "$work/cen0/summary.json" <<'PY' && ok "normalize=center: offset 0.5 and offset 0 give the same error, G without the offset" || bad "normalize=center"
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert abs(a["test_error"] - b["test_error"]) <= 3 * math.hypot(a["test_error_se"], b["test_error_se"]), (a, b)
assert abs(a["G"] - 2 * math.sqrt(0.9) * (1 + 200 / 199)) < 1e-9, a["G"]
PY
finish nc
