#!/usr/bin/env bash
# model=rf, interpolate and sensitivity (issue 30; docs/overparameterization.md):
#   1. bad input exits 1 before any work, naming the key: a malformed p/n list, several p/n for
#      sensitivity, n_list with p_list, an activation outside the sensitivity theorem (its
#      Hermite coefficient mu_1 = E phi'(G) = 0) with predict = theorem, n < 2, sizes beyond the
#      memory limit (naming the list that drives them), an unknown activation;
#   2. interpolate: lambda_min > 0 once p > n and rising with p, the residual at rounding level,
#      the slides' bound below the kernel's limit; threads = 1 and 2 give the same bits;
#   3. sensitivity, the exponent (a statistical test, fixed seed 1; each of the 6 replicates
#      redraws inputs, labels, features and test points): tanh at n <= d (d = 200, p = 2000,
#      n = 12..100), where the slides' two-sided bounds give S = Theta(sqrt(n)): the fitted
#      exponent within 3 SE of 1/2 (measured 0.541 +- 0.023); the exponent printed equals a
#      least-squares fit of the table redone here; the figure is drawn.
# usage: test_rf_overparam.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive
M=(--model=rf --plot=0)

# 1. Bad input.
err p_over_n_list "'p_over_n': '1,x' \(allowed: 1 to 32 numbers > 0" interpolate "${M[@]}" --p_over_n=1,x
err p_over_n_zero "'p_over_n': '0,1'" interpolate "${M[@]}" --p_over_n=0,1
err sens_two_ratios "'p_over_n': '1,2' \(allowed for sensitivity: one number" sensitivity "${M[@]}" --p_over_n=1,2
err n_and_p_list "'p_list': given together with n_list" sensitivity "${M[@]}" --n_list=10,20 --p_list=50,100
err n_list_float "'n_list': '10,2.5'" sensitivity "${M[@]}" --n_list=10,2.5
err theorem_abs "'activation': abs_centered with predict = theorem \(its Hermite coefficient mu_1 = E phi'\(G\) is 0; allowed: .*tanh" sensitivity "${M[@]}" --activation=abs_centered --predict=theorem --n_list=10,20
err n_one "'n_list': 1 \(allowed: n >= 2" sensitivity "${M[@]}" --n_list=1,4
err memory "'p_over_n'.*max_memory" interpolate "${M[@]}" --n=2000 --p_over_n=1,1000 --max_memory=1G
err too_large "'p': .*(sizes too large|max_memory)" interpolate "${M[@]}" --n=1000 --p=2000000000 --d=3000
err activation "'activation': 'sigmoid'" interpolate "${M[@]}" --activation=sigmoid

# 2. interpolate.
run_interp() {
  "$dpdyn" interpolate "${M[@]}" --n=60 --d=15 --p_over_n=0.5,2,8 --seeds=2 --activation=relu \
    --input=sphere --threads="$1" --out="$work/int$1" >/dev/null 2>"$work/int$1.err"
}
if run_interp 1 && run_interp 2; then
  ok "interpolate ran"
  if [ "$(tsv_rows "$work/int1/interpolate.tsv")" = "$(tsv_rows "$work/int2/interpolate.tsv")" ] &&
    [ "$(grep -Ev 'wall_seconds|"threads"|"out"' "$work/int1/summary.json")" = \
      "$(grep -Ev 'wall_seconds|"threads"|"out"' "$work/int2/summary.json")" ]; then
    ok "interpolate: threads = 1 and 2 give the same bits"
  else
    bad "interpolate: threads change the output"
  fi
  if tsv_rows "$work/int1/interpolate.tsv" | awk '
      NR == 1 { if ($3 > 1e-10 * $5) bad = 1 }             # p < n: singular
      NR >= 2 { if (!($3 > prev)) bad = 1; if ($11 > 1e-10) bad = 1 }  # rises; interpolates
      { prev = $3; if (!($17 <= $18)) bad = 1 }             # bound <= kernel limit
      END { exit bad }'; then
    ok "interpolate: lambda_min rises past p = n, residual ~ 0, bound <= kernel limit"
  else
    bad "interpolate: $(tsv_rows "$work/int1/interpolate.tsv" | cut -d' ' -f1-5)"
  fi
else
  bad "interpolate: $(cat "$work/int1.err" "$work/int2.err")"
fi

# 3. sensitivity: the exponent at n <= d against 1/2.
if "$dpdyn" sensitivity "${M[@]}" --plot=1 --n_list=12,25,50,100 --p=2000 --d=200 --seeds=6 \
  --zeta=0.5 --dpgd=off --out="$work/sens" >"$work/sens.out" 2>"$work/sens.err"; then
  b=$(awk '$1 == "exponent" { print $2 }' "$work/sens.out")
  se=$(awk '$1 == "exponent_se" { print $2 }' "$work/sens.out")
  pred=$(awk '$1 == "predicted_exponent" { print $2 }' "$work/sens.out")
  if awk -v b="$b" -v se="$se" -v p="$pred" 'BEGIN { exit !(p == 0.5 && se > 0 && (b - p) < 3 * se && (p - b) < 3 * se) }'; then
    ok "sensitivity: exponent $b +- $se within 3 SE of the predicted $pred"
  else
    bad "sensitivity: exponent $b +- $se, predicted $pred"
  fi
  # least squares of log S on log n redone from the table
  refit=$(tsv_rows "$work/sens/sensitivity.tsv" | awk '{ x[NR] = log($2); y[NR] = log($5); m = NR }
    END { for (k = 1; k <= m; k++) { mx += x[k] / m; my += y[k] / m }
          for (k = 1; k <= m; k++) { sxx += (x[k] - mx)^2; sxy += (x[k] - mx) * (y[k] - my) }
          printf "%.9f", sxy / sxx }')
  if awk -v a="$b" -v r="$refit" 'BEGIN { d = a - r; exit !(d < 1e-8 && d > -1e-8) }'; then
    ok "sensitivity: the exponent is the least-squares slope of the table ($refit)"
  else
    bad "sensitivity: exponent $b, refit $refit"
  fi
  if [ -s "$work/sens/rf_sensitivity.png" ] || ! command -v gnuplot >/dev/null; then
    ok "sensitivity: figure"
  else
    bad "sensitivity: no figure: $(cat "$work/sens.err")"
  fi
else
  bad "sensitivity: $(cat "$work/sens.err")"
fi
finish rf_overparam
