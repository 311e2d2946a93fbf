#!/usr/bin/env bash
# dpdyn audit (docs/privacy.md, "Empirical audit"): the empirical lower bounds sit below the
# accountant's upper bounds for linreg and rf, the linreg audit with the constant schedule comes
# within a stated factor of its upper bound at the default 2000 runs per side, the runs do not
# depend on the threads, the files and the figure are written, a sweep over seeds runs it, and
# bad input is exit 1 naming the key before any work.
# usage: test_audit.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
json() { python3 -c "import json,sys; v=json.load(open('$1'))$2; print(v)"; }
# check NAME EXPR (python on s = the summary of $work/NAME)
check() {
  python3 -c "import json,sys; s=json.load(open('$work/$1/summary.json')); sys.exit(0 if ($2) else 1)"
}

# 1. linreg, constant schedule (all privacy noise at the release: the last iterate is exactly a
# Gaussian mechanism of mu = rho): lower <= upper; at 2000 runs per side (the default) the
# epsilon bound is within a factor 4 of the upper bound at delta = 1e-3 and mu_hat within 10 %
# of rho; the mu lower bound within a factor 1.5.
L=(--d=20 --n=200 --c=1 --rho=1 --delta=1e-3 --plot=1)
"$dpdyn" audit "${L[@]}" --threads=1 --out="$work/lr" >/dev/null 2>"$work/lr.err" ||
  bad "linreg audit: $(cat "$work/lr.err")"
check lr "s['epsilon_lower'] <= s['epsilon_upper'] and s['mu_lower'] <= s['mu_upper']" &&
  ok "linreg: epsilon_lower $(json "$work/lr/summary.json" "['epsilon_lower']") <= epsilon_upper $(json "$work/lr/summary.json" "['epsilon_upper']")" ||
  bad "linreg: a lower bound above the upper bound"
check lr "s['runs'] == 2000 and s['epsilon_lower'] >= s['epsilon_upper'] / 4 and abs(s['mu_hat'] - 1) < 0.1 and s['mu_lower'] >= 1 / 1.5 and s['mu_canary'] == 1" &&
  ok "linreg const: epsilon within a factor 4, mu_hat $(json "$work/lr/summary.json" "['mu_hat']") within 10 % of rho = 1, mu_lower within 1.5" ||
  bad "linreg const: not within the stated factors: $(json "$work/lr/summary.json" "['epsilon_lower'], v['mu_hat'], v['mu_lower']")"
check lr "s['audit_confidence'] == 0.95 and s['runs_needed'] > 0 and s['privacy']['delta'] == 1e-3 and s['threshold_selection'].startswith('split-half') and s['nonexpansive']" &&
  ok "linreg: confidence, runs_needed, delta and the threshold rule in summary.json" ||
  bad "linreg: summary keys"
for f in audit_runs.tsv audit_tradeoff.tsv audit_curve.tsv audit.png; do
  [ -s "$work/lr/$f" ] || bad "linreg: no $f"
done
[ "$(tsv_rows "$work/lr/audit_runs.tsv" | wc -l)" -eq 4000 ] && ok "linreg: audit_runs.tsv has 2 x 2000 runs" ||
  bad "linreg: audit_runs.tsv rows"
"$dpdyn" audit "${L[@]}" --plot=0 --threads=2 --out="$work/lr2" >/dev/null 2>&1
cmp -s <(tsv_rows "$work/lr/audit_runs.tsv") <(tsv_rows "$work/lr2/audit_runs.tsv") &&
  ok "linreg: the runs are bit-identical for 1 and 2 threads" || bad "linreg: runs depend on threads"

# 2. linreg, sqrt schedule (noise at every step): still below the upper bound.
"$dpdyn" audit --d=20 --n=200 --c=1 --rho=1 --schedule=sqrt --runs=400 --plot=0 \
  --out="$work/lrs" >/dev/null 2>&1 || bad "linreg sqrt audit"
check lrs "s['epsilon_lower'] <= s['epsilon_upper'] and s['mu_lower'] <= s['mu_upper'] and s['mu_canary'] is None" &&
  ok "linreg sqrt: lower bounds below the upper bounds (mu_canary null)" || bad "linreg sqrt bounds"

# canary = first: the largest step, the better canary with noise at every step
"$dpdyn" audit --d=20 --n=200 --c=1 --rho=1 --schedule=sqrt --canary=first --runs=400 --plot=0 \
  --out="$work/lrf" >/dev/null 2>&1 || bad "linreg sqrt first audit"
check lrf "s['epsilon_lower'] <= s['epsilon_upper'] and s['mu_lower'] <= s['mu_upper'] and s['mu_hat'] > 0.4" &&
  ok "linreg sqrt, canary = first: mu_hat $(json "$work/lrf/summary.json" "['mu_hat']"), below the upper bounds" ||
  bad "linreg sqrt first: $(json "$work/lrf/summary.json" "['mu_hat']")"

# 3. rf, d > n (the canary's features nearly orthogonal to the others'): lower <= upper, and
# mu_hat within 4 SE of the exact mu of the statistic (mu_canary).
R=(--model=rf --d=100 --n=40 --p=1000 --steps=50 --mu=1 --clip=1 --runs=500 --plot=0)
"$dpdyn" audit "${R[@]}" --out="$work/rf" >/dev/null 2>"$work/rf.err" || bad "rf audit: $(cat "$work/rf.err")"
check rf "s['epsilon_lower'] <= s['epsilon_upper'] and s['mu_lower'] <= s['mu_upper'] and s['mu_canary'] <= s['mu_upper']" &&
  ok "rf: epsilon_lower $(json "$work/rf/summary.json" "['epsilon_lower']") <= epsilon_upper $(json "$work/rf/summary.json" "['epsilon_upper']")" ||
  bad "rf: a lower bound above the upper bound"
check rf "abs(s['mu_hat'] - s['mu_canary']) <= 2 * (s['mu_hat_hi'] - s['mu_hat_lo']) / 1.96 and s['mu_canary'] > 0.8" &&
  ok "rf: mu_hat $(json "$work/rf/summary.json" "['mu_hat']") agrees with the exact mu_canary $(json "$work/rf/summary.json" "['mu_canary']")" ||
  bad "rf: mu_hat against mu_canary"

# 4. A sweep over the seed: independent audits, one point each (resumable as every sweep).
"$dpdyn" sweep audit --d=20 --n=200 --c=1 --rho=1 --runs=100 --seed=1,2 --plot_y=epsilon_lower \
  --out="$work/sw" >/dev/null 2>"$work/sw.err" && [ -s "$work/sw/sweep.tsv" ] &&
  ok "sweep audit --seed=1,2 writes sweep.tsv" || bad "sweep audit: $(tail -2 "$work/sw.err")"

# 5. Bad input: exit 1 naming the key, nothing written.
A=(audit --d=20 --n=200 --c=1)
err linreg-nonprivate "'rho'" "${A[@]}"
err linreg-runs "'runs'" "${A[@]}" --rho=1 --runs=5
err linreg-confidence "'confidence'" "${A[@]}" --rho=1 --confidence=1
err linreg-confidence0 "'confidence'" "${A[@]}" --rho=1 --confidence=0
err linreg-delta "'delta'" "${A[@]}" --rho=1 --delta=1
err linreg-canary "'canary'" "${A[@]}" --rho=1 --canary=middle
err rf-nonprivate "'epsilon'" audit --model=rf --clip=1
err rf-sigma0 "'sigma'" audit --model=rf --clip=1 --sigma=0
err rf-noclip "'clip'" audit --model=rf --mu=1

finish test_audit
