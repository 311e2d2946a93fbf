#!/usr/bin/env bash
# One privacy vocabulary (docs/privacy.md): the budget keys every model takes, their equivalences,
# their exclusions, and the "privacy" object of summary.json listing every guarantee.
# usage: test_privacy.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
json() { python3 -c "import json,sys; v=json.load(open('$1'))$2; print(v)"; }
rows() { tsv_rows "$1"; }

# 1. linreg: zcdp = rho^2/2 is the same run as rho (rho is the documented alias).
L=(--d=40 --n=160 --c=1 --schedule=sqrt --seed=3 --grid=11)
"$dpdyn" ode "${L[@]}" --rho=2 --out="$work/rho" >/dev/null &&
  "$dpdyn" ode "${L[@]}" --zcdp=2 --out="$work/zcdp" >/dev/null || bad "linreg rho/zcdp runs"
if cmp -s <(rows "$work/rho/trajectory.tsv") <(rows "$work/zcdp/trajectory.tsv"); then
  ok "linreg: zcdp = 2 gives the trajectory of rho = 2"
else
  bad "linreg: zcdp = 2 differs from rho = 2"
fi
[ "$(json "$work/zcdp/summary.json" "['privacy']['zcdp']")" = 2 ] &&
  [ "$(json "$work/zcdp/summary.json" "['privacy']['epsilon_conversion']")" = zcdp_tight ] &&
  [ "$(json "$work/zcdp/summary.json" "['privacy'].get('mu', 'none')")" = none ] &&
  ok "linreg summary: zcdp, the tight zCDP epsilon, no GDP claim" ||
  bad "linreg summary privacy object: $(json "$work/zcdp/summary.json" "['privacy']")"
# delta defaults to 1/n for the reported epsilon
[ "$(json "$work/zcdp/summary.json" "['privacy']['delta']")" = 0.00625 ] &&
  ok "linreg: epsilon reported at delta = 1/n by default" || bad "linreg default delta"

# 2. rf: mu and zcdp = mu^2/2 fix sigma = sqrt(eta T)/mu exactly.
R=(--model=rf --d=8 --n=40 --n_test=30 --p=60 --steps=50 --eta=0.02 --clip=1 --seeds=3 --grid=6)
"$dpdyn" simulate "${R[@]}" --mu=0.5 --out="$work/mu" >/dev/null &&
  "$dpdyn" simulate "${R[@]}" --zcdp=0.125 --out="$work/rz" >/dev/null &&
  "$dpdyn" simulate "${R[@]}" --sigma=2 --out="$work/sg" >/dev/null || bad "rf mu/zcdp/sigma runs"
if cmp -s <(rows "$work/mu/trajectory.tsv") <(rows "$work/sg/trajectory.tsv") &&
  cmp -s <(rows "$work/rz/trajectory.tsv") <(rows "$work/sg/trajectory.tsv"); then
  ok "rf: mu = 0.5 and zcdp = 0.125 give the run of sigma = sqrt(eta T)/mu = 2"
else
  bad "rf: mu / zcdp / sigma runs differ"
fi
m=$(json "$work/mu/summary.json" "['privacy']")
python3 - "$work/mu/summary.json" <<'PY' && ok "rf summary: mu, zcdp = mu^2/2, eps_gdp <= eps_zcdp <= eps_BS" || bad "rf privacy object: $m"
import json, sys
p = json.load(open(sys.argv[1]))["privacy"]
assert p["mu"] == 0.5 and p["zcdp"] == 0.125, p
assert p["epsilon"] == p["epsilon_gdp"] <= p["epsilon_zcdp_tight"] <= p["epsilon_bun_steinke"], p
assert p["epsilon_conversion"] == "gdp", p
PY

# 3. One budget at a time, and keys that do not apply.
err rf_mu_sigma "'mu': given together with sigma" account "${R[@]}" --sigma=1 --mu=1
err rf_zcdp_eps "'zcdp': given together with epsilon" account "${R[@]}" --epsilon=1 --zcdp=1
err rf_mu_zero "'mu': 0 \(allowed" account "${R[@]}" --mu=0
err linreg_zcdp_rho "'zcdp': give one of rho, zcdp" ode "${L[@]}" --rho=1 --zcdp=1
err linreg_eps_zcdp "'epsilon': give either zcdp" ode "${L[@]}" --zcdp=1 --epsilon=1 --delta=1e-5
err linreg_mu "key 'mu' does not apply to model=linreg ode" ode "${L[@]}" --mu=1
err linreg_sigma "key 'sigma' does not apply to model=linreg" simulate "${L[@]}" --sigma=1
# 4. linreg: the last-iterate GDP (docs/privacy.md, "Last-iterate GDP of one-pass linreg") beside
# the zCDP values, with its assumption checked: every row's |x|^2 <= 2 / max_k eta_k. A data file
# of small rows holds it; the same file with one far row fails it (null with a reason and a note);
# replacement = 1 (rows reused) fails it; Gaussian rows make it conditional, with a tail bound.
mkdir -p "$work/gdp"
awk 'BEGIN { srand(7); for (i = 0; i < 40; i++) printf "%.4f %.4f %.4f %.4f\n", rand() - 0.5,
  rand() - 0.5, rand() - 0.5, rand() - 0.5 }' >"$work/gdp/good.txt"
{ head -39 "$work/gdp/good.txt"; echo "30 30 30 30"; } >"$work/gdp/far.txt"
G=(--c=1 --rho=2 --delta=1e-5 --seeds=2 --grid=5 --plot=0)
"$dpdyn" simulate --features=file:"$work/gdp/good.txt" "${G[@]}" --out="$work/gdp/good" \
  >/dev/null 2>"$work/gdp/good.err" &&
  "$dpdyn" simulate --features=file:"$work/gdp/far.txt" "${G[@]}" --out="$work/gdp/far" \
    >/dev/null 2>"$work/gdp/far.err" &&
  "$dpdyn" simulate --features=file:"$work/gdp/good.txt" "${G[@]}" --replacement=1 \
    --out="$work/gdp/repl" >/dev/null 2>"$work/gdp/repl.err" &&
  "$dpdyn" ode "${L[@]}" --rho=2 --delta=1e-6 --out="$work/gdp/gauss" >/dev/null &&
  "$dpdyn" account "${L[@]}" --rho=2 --delta=1e-6 --out="$work/gdp/acc" >/dev/null ||
  bad "linreg last-iterate GDP runs"
printf '0.1 0\n0.1 0.05\n0.05 0.1\n' >"$work/gdp/seq.txt"
"$dpdyn" account --sequence="$work/gdp/seq.txt" --delta=1e-6 --out="$work/gdp/seq" >/dev/null ||
  bad "account --sequence"
if python3 - "$work/gdp" <<'PY'; then
import json, math, sys
d = sys.argv[1]
s = {k: json.load(open(f"{d}/{k}/summary.json")) for k in ("good", "far", "repl", "gauss", "acc", "seq")}
g = s["good"]
assert g["last_iterate_gdp"]["status"] == "holds" and g["last_iterate_gdp"]["rows"] == "data", g
assert g["gdp_max_row_norm2"] <= g["gdp_norm2_bound"] == 80, g  # 2 n / eta0, n = 40 rows
assert g["gdp_mu"] == g["rho"] == 2 and g["epsilon_gdp"] < g["epsilon_tight"], g
assert abs(g["epsilon_tight_over_gdp"] - g["epsilon_tight"] / g["epsilon_gdp"]) < 1e-12, g
for k in ("far", "repl"):
    f = s[k]
    assert f["last_iterate_gdp"]["status"] == "fails", f
    assert f["epsilon_gdp"] is None and f["gdp_mu"] is None, f
    assert "no last-iterate GDP" in f["not_available"]["epsilon_gdp"], f
    assert f["epsilon_tight"] == g["epsilon_tight"], f  # the zCDP keys stay as they were
assert s["far"]["gdp_max_row_norm2"] > s["far"]["gdp_norm2_bound"], s["far"]
assert "replacement" in s["repl"]["last_iterate_gdp"]["why"], s["repl"]
for k in ("gauss", "acc"):
    q = s[k]
    assert q["last_iterate_gdp"]["status"] == "conditional", q
    assert q["last_iterate_gdp"]["rows"] == "gaussian", q
    assert 0 <= q["gdp_row_tail"] <= q["gdp_run_tail"] <= 1, q
    assert q["epsilon_gdp"] < q["epsilon_tight"], q
q = s["seq"]  # rho_eff = max(0.1 / sqrt(0.0125), 0.1 / 0.1, 0.05 / 0.1) = 0.894...
assert abs(q["gdp_mu"] - q["rho_eff"]) < 1e-15 and q["gdp_norm2_bound"] == 20, q
assert q["last_iterate_gdp"]["rows"] == "unknown", q
PY
  ok "linreg last-iterate GDP: holds on small rows, fails (null, reason) on a far row and with" \
    "replacement, conditional with a tail bound on Gaussian rows and for a sequence"
else
  bad "linreg last-iterate GDP summaries"
fi
grep -q "note: no last-iterate GDP guarantee: a data row has" "$work/gdp/far.err" &&
  [ ! -s "$work/gdp/good.err" ] && ok "linreg last-iterate GDP: a note when it fails, none when it holds" ||
  bad "linreg last-iterate GDP notes: $(cat "$work/gdp/far.err" "$work/gdp/good.err")"
finish privacy
