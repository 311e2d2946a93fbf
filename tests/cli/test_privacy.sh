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
finish privacy
