#!/usr/bin/env bash
# Per-replicate values (save_replicates, docs/output.md "Per-replicate values"):
#   - replicates.tsv exists exactly when asked (linreg and rf: save_replicates >= 1; nc and
#     semipriv: by default, save_replicates = 0 drops it), replicates_trajectory.tsv exactly at 2;
#     summary.json's data_files lists them;
#   - replicates.tsv has `seeds` rows and the columns of its model and command;
#     replicates_trajectory.tsv seeds x grid rows (replicate-major, t repeating);
#   - the mean of a replicate column is the summary's mean (to the file's %.10g: rtol 1e-8) and
#     its sample SD / sqrt(seeds) the summary's standard error (rtol 1e-7); a column paired with
#     the wrong summary key is rejected by the same check (negative control);
#   - a bad value is exit 1 naming save_replicates and its allowed values, nothing written; a
#     command without replicates (ode) notes that the flag had no effect;
#   - the memory estimate counts the tables.
# usage: test_replicates.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

# summary NUMBER: the first (top-level) "KEY": value of summary.json
summary() { awk -v k="\"$2\":" '$1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$1/summary.json"; }
# stats FILE COLUMN: "rows mean sd" of a column, found by its name
stats() {
  awk -F'\t' -v c="$2" '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == c) k = i; h = 1; next }
    { n++; x[n] = $k; s += $k } END { if (!k) { print "none"; exit } m = s / n; for (i = 1; i <= n; i++) q += (x[i] - m)^2
      printf "%d %.17g %.17g\n", n, m, (n > 1 ? sqrt(q / (n - 1)) : 0) }' "$1"
}
# close A B RTOL: |A - B| <= RTOL |B| + 1e-14
close() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b; exit !(d <= r * s + 1e-14) }'; }

# check_mean DIR COLUMN MEAN_KEY [SE_KEY]: the replicate column reproduces the summary
check_mean() {
  local dir=$1 col=$2 mk=$3 sk=${4:-} n m sd want se
  read -r n m sd <<<"$(stats "$dir/replicates.tsv" "$col")"
  want=$(summary "$dir" "$mk")
  if [ "$n" = none ] || [ -z "$want" ] || ! close "$m" "$want" 1e-8; then
    bad "$dir: mean of $col = $m, summary $mk = $want"
    return
  fi
  if [ -n "$sk" ]; then
    se=$(awk -v s="$sd" -v n="$n" 'BEGIN { printf "%.17g", s / sqrt(n) }')
    if ! close "$se" "$(summary "$dir" "$sk")" 1e-7; then
      bad "$dir: SD/sqrt(seeds) of $col = $se, summary $sk = $(summary "$dir" "$sk")"
      return
    fi
  fi
  ok "$(basename "$dir"): $col: mean${sk:+ and SE} = summary $mk${sk:+, $sk} ($n replicates)"
}

LR=(--d=20 --n=80 --c=1 --rho=2 --grid=6 --seeds=5 --threads=1 --plot=0)
RF=(--model=rf --d=8 --n=40 --n_test=30 --p=60 --steps=30 --grid=7 --seeds=5 --epsilon=2 --clip=1
  --threads=1 --plot=0)
NC=(--model=nc --K=4 --p=20 --n=40 --n_test=50 --sigma=2 --seeds=5 --threads=1 --plot=0)
SP=(--model=semipriv --d=30 --k=3 --n=60 --n_public=200 --n_test=200 --seeds=4 --threads=1 --plot=0)

# 1. present exactly when asked
# run NAME ARGS...: into $work/NAME, exit 0 required
run() {
  local name=$1
  shift
  "$dpdyn" "$@" --out="$work/$name" >/dev/null 2>"$work/$name.err" || bad "$name: $(head -1 "$work/$name.err")"
}
has() { [ -e "$work/$1/replicates.tsv" ] && echo 1 || echo 0; }
hast() { [ -e "$work/$1/replicates_trajectory.tsv" ] && echo 1 || echo 0; }
listed() { grep -q "\"data_files\":.*\"$2\"" "$work/$1/summary.json" && echo 1 || echo 0; }
for spec in "lr-sim|simulate ${LR[*]}|0 0" "lr-sim1|simulate ${LR[*]} --save_replicates=1|1 0" \
  "lr-sim2|simulate ${LR[*]} --save_replicates=2|1 1" "lr-sim0|simulate ${LR[*]} --save_replicates=0|0 0" \
  "lr-sde2|sde ${LR[*]} --save_replicates=2|1 1" "lr-cmp3|compare ${LR[*]} --sde=1 --seeds=8 --save_replicates=2|1 1" \
  "rf-sim|simulate ${RF[*]}|0 0" "rf-sim2|simulate ${RF[*]} --save_replicates=2|1 1" \
  "rf-cmp1|compare ${RF[*]} --seeds=8 --save_replicates=1|1 0" \
  "nc-sim|simulate ${NC[*]}|1 0" "nc-sim0|simulate ${NC[*]} --save_replicates=0|0 0" \
  "nc-cmp|compare ${NC[*]} --seeds=8|1 0" \
  "sp-sim|simulate ${SP[*]}|1 0" "sp-sim0|simulate ${SP[*]} --save_replicates=0|0 0"; do
  name=${spec%%|*}
  rest=${spec#*|}
  # shellcheck disable=SC2086 # the arguments are words
  run "$name" ${rest%|*}
  want=${rest##*|}
  got="$(has "$name") $(hast "$name")"
  lst="$(listed "$name" replicates.tsv) $(listed "$name" replicates_trajectory.tsv)"
  if [ "$got" = "$want" ] && [ "$lst" = "$want" ]; then
    ok "$name: replicates.tsv, replicates_trajectory.tsv present: $got (data_files agree)"
  else
    bad "$name: present $got, listed $lst, want $want"
  fi
done

# 2. rows and columns
# shape NAME FILE ROWS HEADER
shape() {
  local rows header
  rows=$(tsv_rows "$work/$1/$2" | grep -c .)
  header=$(tsv_header "$work/$1/$2" | tr '\t' ' ')
  if [ "$rows" = "$3" ] && [ "$header" = "$4" ]; then
    ok "$1/$2: $rows rows, columns $header"
  else
    bad "$1/$2: $rows rows (want $3), columns '$header' (want '$4')"
  fi
}
shape lr-sim1 replicates.tsv 5 "replicate final_excess_risk excess_risk_before_release clipped_fraction"
shape lr-sim2 replicates_trajectory.tsv 30 "replicate t excess_risk clipped_fraction"
shape lr-sde2 replicates.tsv 5 \
  "replicate final_excess_risk excess_risk_before_release expected_clipped_fraction"
shape lr-cmp3 replicates.tsv 8 "replicate final_excess_risk excess_risk_before_release clipped_fraction sde_final_excess_risk sde_excess_risk_before_release sde_expected_clipped_fraction"
shape lr-cmp3 replicates_trajectory.tsv 48 \
  "replicate t excess_risk clipped_fraction sde_excess_risk sde_expected_clipped_fraction"
shape rf-sim2 replicates.tsv 5 "replicate final_test_risk final_train_risk first_clip_step theta_star_test_risk"
shape rf-sim2 replicates_trajectory.tsv 35 "replicate t step train_risk test_risk"
shape rf-cmp1 replicates.tsv 8 "replicate final_test_risk final_train_risk first_clip_step theta_star_test_risk ou_final_test_risk"
shape nc-sim replicates.tsv 5 "replicate test_error w_norm"
[ "$(tsv_header "$work/sp-sim/replicates.tsv" | cut -f1-2 | tr '\t' ' ')" = "replicate test_accuracy" ] &&
  [ "$(tsv_rows "$work/sp-sim/replicates.tsv" | grep -c .)" = 4 ] &&
  ok "sp-sim/replicates.tsv: 4 rows, replicate test_accuracy ..." || bad "sp-sim/replicates.tsv shape"
# long format: replicate-major, the grid's t repeating for every replicate, equal to trajectory.tsv's
if awk -F'\t' '/^#/ || !NF { next } !h { h = 1; next } { if ($1 != int((NR0++) / 6)) bad = 1; t[NR0 % 6] = t[NR0 % 6] " " $2 }
    END { for (j in t) { split(t[j], a, " "); for (i in a) if (a[i] != a[1]) bad = 1 } exit bad }' \
  "$work/lr-sim2/replicates_trajectory.tsv" &&
  [ "$(awk -F'\t' '/^#/ || !NF { next } !h { h = 1; next } $1 == 3 { print $2 }' "$work/lr-sim2/replicates_trajectory.tsv")" = \
    "$(awk -F'\t' '/^#/ || !NF { next } !h { h = 1; next } { print $1 }' "$work/lr-sim2/trajectory.tsv")" ]; then
  ok "replicates_trajectory.tsv: replicate-major rows, each replicate on trajectory.tsv's t grid"
else
  bad "replicates_trajectory.tsv: rows not replicate-major or t not the grid"
fi

# 3. the replicate columns reproduce the summary's means and standard errors
check_mean "$work/lr-sim1" final_excess_risk final_excess_risk final_excess_risk_se
check_mean "$work/lr-sim1" excess_risk_before_release excess_risk_before_release \
  excess_risk_before_release_se
check_mean "$work/lr-sim1" clipped_fraction clipped_fraction
check_mean "$work/lr-sde2" final_excess_risk final_excess_risk final_excess_risk_se
check_mean "$work/lr-sde2" expected_clipped_fraction expected_clipped_fraction
check_mean "$work/lr-cmp3" sde_final_excess_risk sde_final_excess_risk sde_final_excess_risk_se
check_mean "$work/rf-sim2" final_test_risk final_test_risk final_test_risk_se
check_mean "$work/rf-sim2" final_train_risk final_train_risk final_train_risk_se
check_mean "$work/rf-cmp1" final_test_risk final_test_risk final_test_risk_se
check_mean "$work/rf-sim2" theta_star_test_risk theta_star_test_risk theta_star_test_risk_se
check_mean "$work/rf-cmp1" ou_final_test_risk ou_final_test_risk ou_final_test_risk_se
check_mean "$work/nc-sim" test_error test_error test_error_se
check_mean "$work/nc-cmp" test_error test_error test_error_se
check_mean "$work/sp-sim" test_accuracy test_accuracy test_accuracy_se
# negative control: the check rejects a column paired with another summary key
read -r n m sd <<<"$(stats "$work/lr-sim1/replicates.tsv" excess_risk_before_release)"
if ! close "$m" "$(summary "$work/lr-sim1" final_excess_risk)" 1e-8; then
  ok "negative control: mean of excess_risk_before_release != final_excess_risk"
else
  bad "negative control: the mean check accepts the wrong column"
fi
# the trajectory's mean over replicates at each t is trajectory.tsv's excess_risk
if paste <(awk -F'\t' '/^#/ || !NF { next } !h { h = 1; next } { s[$2] += $3; n[$2]++; o[$2] = ++k }
      END { for (t in s) printf "%d %.17g\n", o[t], s[t] / n[t] }' "$work/lr-sim2/replicates_trajectory.tsv" |
      sort -n | head -6 | cut -d' ' -f2) \
    <(awk -F'\t' '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == "excess_risk") k = i; h = 1; next } { print $k }' \
      "$work/lr-sim2/trajectory.tsv") |
  awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-8 * ($2 < 0 ? -$2 : $2) + 1e-14) bad = 1 } END { exit bad }'; then
  ok "replicates_trajectory.tsv: mean over replicates = trajectory.tsv's excess_risk at every t"
else
  bad "replicates_trajectory.tsv: mean over replicates differs from trajectory.tsv"
fi

# 4. errors, before any work; no effect where there are no replicates
err lr-bad "invalid value for 'save_replicates': '3' \(allowed: integer 0 <= save_replicates <= 2\)" \
  simulate "${LR[@]}" --save_replicates=3
err lr-text "invalid value for 'save_replicates'.*allowed" simulate "${LR[@]}" --save_replicates=yes
err rf-bad "invalid value for 'save_replicates'.*allowed" simulate "${RF[@]}" --save_replicates=-1
err nc-bad "invalid value for 'save_replicates': '2' \(allowed: integer 0 <= save_replicates <= 1\)" \
  simulate "${NC[@]}" --save_replicates=2
if "$dpdyn" ode --d=20 --n=80 --grid=6 --save_replicates=2 --out="$work/ode" >/dev/null 2>"$work/ode.err" &&
  grep -q "'--save_replicates=2' has no effect on ode" "$work/ode.err" && [ ! -e "$work/ode/replicates.tsv" ]; then
  ok "ode: --save_replicates has no effect (noted), no replicates.tsv"
else
  bad "ode with save_replicates: $(head -1 "$work/ode.err")"
fi

# 5. the memory estimate counts the tables (and max_memory refuses them before any work)
m0=$(summary "$work/lr-sim0" memory_estimate_bytes)
m2=$(summary "$work/lr-sim2" memory_estimate_bytes)
if [ -n "$m0" ] && [ -n "$m2" ] && awk -v a="$m0" -v b="$m2" 'BEGIN { exit !(b - a >= 16 * 5 * 6 * 4) }'; then
  ok "memory estimate: $m0 bytes without, $m2 with save_replicates=2"
else
  bad "memory estimate: $m0 without, $m2 with save_replicates=2"
fi
M=(--d=20 --n=2000 --grid=1000 --seeds=40 --threads=1 --max_memory=1M)
if "$dpdyn" simulate "${M[@]}" --out="$work/mem" >/dev/null 2>&1; then
  ok "max_memory=1M: seeds=40 x grid=1000 fits without per-replicate tables"
else
  bad "max_memory=1M: seeds=40 x grid=1000 refused without per-replicate tables"
fi
err lr-mem "invalid value for 'seeds'.*max_memory" simulate "${M[@]}" --save_replicates=2

# rf theta_star = off: the same DP-GD bits (theta* is computed beside the run, from no random
# stream), no theta_star_* in the summary, nan in the tables' theta_star column
run rf-nostar simulate "${RF[@]}" --save_replicates=1 --theta_star=off
a=$(summary "$work/rf-sim2" final_test_risk)
b=$(summary "$work/rf-nostar" final_test_risk)
if [ -n "$a" ] && [ "$a" = "$b" ] && ! grep -q '"theta_star_test_risk"' "$work/rf-nostar/summary.json" &&
  grep -q '"theta_star_test_risk"' "$work/rf-sim2/summary.json" &&
  [ "$(awk -F'\t' '/^#/ || !NF { next } !h { for (i = 1; i <= NF; i++) if ($i == "theta_star_test_risk") k = i; h = 1; next }
      { print (k ? $k : "none") }' "$work/rf-nostar/replicates.tsv" | sort -u)" = nan ]; then
  ok "rf theta_star=off: final_test_risk $b unchanged, no theta* in the summary, nan in replicates.tsv"
else
  bad "rf theta_star=off: final_test_risk $a (on) against $b (off), or theta* still reported"
fi

finish replicates
