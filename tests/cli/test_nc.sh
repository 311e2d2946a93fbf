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
[ -s "$work/c/classes.tsv" ] && [ "$(tsv_rows "$work/c/replicates.tsv" | grep -c .)" = 400 ] &&
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
# 6. The exact one-step error under a random test perturbation and centring: evaluated on each
#    replicate's own test points (conditionally exact), finite and within 3 SE of the simulation
#    (200 replicates redraw the training shifts, the noise and the test perturbations).
if "$dpdyn" compare --model=nc --K=3 --p=50 --n=60 --n_test=100 --sigma=14 --seeds=200 --seed=3 \
  --shift=cube --beta=0.1 --test_shift=cube --beta_test=0.1 --normalize=center \
  --out="$work/tc" >/dev/null 2>"$work/err"; then
  python3 - "$work/tc/summary.json" <<'PY' && ok "compare: finite theory_test_error under test_shift=cube, normalize=center, within 3 SE" || bad "test_shift=cube theory: $(head -c 400 "$work/tc/summary.json")"
import json, math, sys
s = json.load(open(sys.argv[1]))
t = s["theory_test_error"]
assert isinstance(t, float) and math.isfinite(t) and 0.05 < t < 0.6, t
assert abs(s["gap_in_se"]) < 3, s["gap_in_se"]
assert "bound_thm34" in s["not_available"], s["not_available"]
PY
else
  bad "compare test_shift=cube failed: $(head -1 "$work/err")"
fi

# 7. Thm 3.4 (binary projected NoisyGD): a finite bound at K = 2 with a radius and a step within
#    its rule; the exact theory is n/a for steps > 1 and for adversarial test points, with reasons.
"$dpdyn" compare --model=nc --K=2 --p=50 --n=100 --n_test=20 --sigma=3 --seeds=4 --steps=3 \
  --radius=0.05 --eta=1e-4 --out="$work/t34" >/dev/null 2>"$work/err" || bad "thm34 run: $(head -1 "$work/err")"
"$dpdyn" compare --model=nc --K=3 --p=50 --n=60 --n_test=20 --sigma=3 --seeds=4 \
  --test_shift=adversarial --beta_test=0.01 --out="$work/adv" >/dev/null 2>"$work/err" || bad "adversarial run: $(head -1 "$work/err")"
python3 - "$work/t34/summary.json" "$work/adv/summary.json" <<'PY' && ok "compare: bound_thm34 at K = 2 with a radius; n/a with reasons for steps > 1 and adversarial tests" || bad "thm34 / n/a: $(head -c 400 "$work/t34/summary.json")"
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert 0 <= a["bound_thm34"] <= 1 and a["bound_thm34_t"] > 0, a
# t solves the proof's step rule for theta = W_1 - W_2: 2 eta = sqrt(2) R / (n + sqrt(p + sqrt(p t) + t))
t, n, p = a["bound_thm34_t"], 100, 50
assert abs(2e-4 - math.sqrt(2) * 0.05 / (n + math.sqrt(p + math.sqrt(p * t) + t))) < 1e-12, t
assert "one step" in a["not_available"]["theory_test_error"], a["not_available"]
assert "noise" in b["not_available"]["theory_test_error"], b["not_available"]
assert "K = 2" in b["not_available"]["bound_thm34"], b["not_available"]
PY
finish nc
