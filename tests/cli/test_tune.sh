#!/usr/bin/env bash
# dpdyn tune end to end: the output contract (summary keys, heatmap.tsv layout, trajectory and
# release tables, the figure and its re-rendering by `dpdyn plot`), the optimum not beaten by
# any surface point, the optimum recorded as the parameters in effect, and bad input (exit 1,
# one line naming key, value and range, nothing written).
# usage: test_tune.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
json() { python3 -c "import json,sys; v=json.load(open('$1'))$2; print(v)"; }

# 1. A private constant-noise run with a small surface and a short confirmation.
if "$dpdyn" tune --d=100 --gamma=0.08 --rho=1.3 --zeta=0.45 --schedule=sqrt --heatmap=9 \
  --confirm_seeds=8 --seed=5 --threads=2 --out="$work/t" >"$work/stdout" 2>"$work/stderr"; then
  ok "tune ran"
else
  bad "tune failed: $(cat "$work/stderr")"
fi
for f in summary.json heatmap.tsv trajectory.tsv release.tsv tune.png tune.gp; do
  [ -s "$work/t/$f" ] || bad "missing $f"
done
for key in final_excess_risk excess_risk_before_release release_jump optimum tuned \
  confirm_final_excess_risk confirm_final_excess_risk_se confirm_gap_in_se \
  heatmap_beating_optimum heatmap_best_excess_risk iterations evaluations params seed version \
  wall_seconds; do
  grep -q "\"$key\":" "$work/t/summary.json" || bad "summary.json lacks '$key'"
done
ok "summary.json keys"
[ "$(json "$work/t/summary.json" "['heatmap_beating_optimum']")" = "0" ] &&
  ok "no surface point beats the optimum" || bad "a surface point beats the optimum"
[ "$(json "$work/t/summary.json" "['tuned']")" = "['c', 'eta0']" ] && ok "default tune list c,eta0" ||
  bad "tuned list: $(json "$work/t/summary.json" "['tuned']")"
# The optimum is the parameter set in effect: params.c equals optimum.c.
if python3 - "$work/t/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
o, p = s["optimum"], s["params"]
assert abs(p["c"] - o["c"]) <= 1e-12 * o["c"], (p["c"], o["c"])
assert abs(p["eta0"] - o["eta0"]) <= 1e-12 * o["eta0"]
assert o["eta_sup"] < 0.99 * o["stability_limit"] * (1 + 1e-12)
assert s["heatmap_best_excess_risk"] >= s["final_excess_risk"]
assert s["final_excess_risk_se"] == 0
PY
then ok "optimum recorded in params, within the stability limit"; else bad "optimum/params mismatch"; fi
# heatmap.tsv: 9 scanlines of 9 rows, a blank line after each, 3 columns.
rows=$(tsv_rows "$work/t/heatmap.tsv" | grep -c .)
blanks=$(tsv_rows "$work/t/heatmap.tsv" | grep -c '^$')
cols=$(tsv_rows "$work/t/heatmap.tsv" | awk 'NF { print NF }' | sort -u)
if [ "$rows" -eq 81 ] && [ "$blanks" -eq 9 ] && [ "$cols" = "3" ] &&
  [ "$(tsv_header "$work/t/heatmap.tsv")" = "$(printf 'c\teta0\texcess_risk')" ]; then
  ok "heatmap.tsv layout"
else
  bad "heatmap.tsv layout: $rows rows, $blanks blank lines, columns '$cols'"
fi
grep -q '^# command: tune$' "$work/t/trajectory.tsv" && ok "trajectory header names the command" ||
  bad "trajectory.tsv lacks '# command: tune'"
[ "$(tsv_rows "$work/t/release.tsv" | awk '{ print NF }')" = "9" ] && ok "release.tsv columns" ||
  bad "release.tsv columns"
rm "$work/t/tune.png"
if "$dpdyn" plot "$work/t" && [ -s "$work/t/tune.png" ] && "$dpdyn" plot "$work/t" --format=svg &&
  grep -q '<svg' "$work/t/tune.svg"; then
  ok "dpdyn plot re-renders tune.png and tune.svg"
else
  bad "dpdyn plot of a tune directory"
fi
if ls -A "$work/t" | grep -v '^\.dpdyn$' | grep -q '^\.'; then
  bad "temporary files left in the output directory"
fi

# 2. The optimal family without confirmation or surface, and rho = inf (c3 ignored).
"$dpdyn" tune --d=20 --gamma=0.05 --schedule=optimal --heatmap=0 --confirm_seeds=0 --plot=0 \
  --out="$work/o" >/dev/null 2>"$work/stderr" || bad "tune optimal failed"
[ ! -e "$work/o/heatmap.tsv" ] && ok "heatmap=0 writes no heatmap.tsv" || bad "heatmap.tsv written"
[ "$(json "$work/o/summary.json" "['ignored']")" = "['c3']" ] && grep -q "c3 has no effect" "$work/stderr" &&
  ok "c3 ignored with rho = inf" || bad "c3 not reported as ignored"
grep -q confirm_final_excess_risk "$work/o/summary.json" && bad "confirmation without seeds" ||
  ok "confirm_seeds=0 skips the simulation"
# the same with a coarser simplex (xtol, restarts): recorded in the tuner, fewer evaluations,
# the same optimum to well within the ODE's accuracy
"$dpdyn" tune --d=20 --gamma=0.05 --schedule=optimal --heatmap=0 --confirm_seeds=0 --plot=0 \
  --xtol=1e-5 --restarts=1 --out="$work/o2" >/dev/null 2>"$work/stderr" || bad "tune xtol failed"
if python3 - "$work/o/summary.json" "$work/o2/summary.json" <<'PY'; then
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert b["tuner"]["xtol"] == 1e-5 and b["tuner"]["restarts"] == 1, b["tuner"]
assert a["tuner"]["xtol"] == 1e-8 and a["tuner"]["restarts"] == 3, a["tuner"]
assert b["evaluations"] < a["evaluations"], (a["evaluations"], b["evaluations"])
assert abs(b["final_excess_risk"] / a["final_excess_risk"] - 1) < 1e-6, (a["final_excess_risk"], b["final_excess_risk"])
PY
  ok "xtol=1e-5 restarts=1: recorded, fewer evaluations, the same optimum"
else
  bad "xtol/restarts"
fi

# 3. Bad input.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  local out="$work/err-$name"
  "$dpdyn" tune --d=30 --gamma=0.1 --rho=1 "$@" --out="$out" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  if [ "$rc" -ne 1 ]; then
    bad "$name: exit $rc (want 1): $(cat "$work/stderr")"
  elif [ "$(wc -l <"$work/stderr")" -ne 1 ] || ! grep -qE -- "$pattern" "$work/stderr"; then
    bad "$name: message does not match /$pattern/: $(cat "$work/stderr")"
  elif [ -e "$out" ]; then
    bad "$name: output directory was created"
  else
    ok "$name: $(cat "$work/stderr")"
  fi
}
expect_error tune_foreign "invalid value for 'tune': 'c,a' \(allowed: .*c, eta0 for schedule const\)" --tune=c,a
expect_error tune_repeat "invalid value for 'tune': 'eta0,eta0'" --tune=eta0,eta0
expect_error tune_empty "invalid value for 'tune': ''" --tune=
expect_error heatmap_one "invalid value for 'heatmap': 1 \(allowed" --heatmap=1
expect_error heatmap_axis "invalid value for 'heatmap_eta': 'cubic' \(allowed: log, linear\)" --heatmap_eta=cubic
expect_error c_min_zero "invalid value for 'c_min': 0 \(allowed" --c_min=0
expect_error c_max_low "invalid value for 'c_max': 0.001 \(allowed" --c_max=0.001
expect_error confirm_negative "invalid value for 'confirm_seeds': '-2' \(allowed" --confirm_seeds=-2
expect_error xtol_zero "invalid value for 'xtol': 0 \(allowed: 0 < xtol < 1\)" --xtol=0
expect_error restarts_many "invalid value for 'restarts': '101' \(allowed: integer 0 <= restarts <= 100\)" --restarts=101
expect_error table_schedule "invalid value for 'schedule': 'file:x' \(allowed with tune" --schedule=file:x
expect_error fixed_c_inf "invalid value for 'c': inf with rho = 1" --tune=eta0
expect_error optimal_eta0 "invalid value for 'tune': 'eta0' \(allowed: .*c, c1, c2, c3" --schedule=optimal --tune=eta0

finish tune
