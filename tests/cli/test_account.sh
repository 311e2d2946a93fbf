#!/usr/bin/env bash
# dpdyn account --model=privacy (docs/privacy.md, "Accounting subsampled DP-SGD"): the summary's
# epsilon and its bounds, delta(epsilon), the inverse that never overshoots, segments files,
# curve.tsv and its figure; bad input exits 1 naming the key, with nothing written.
# usage: test_account.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
json() { python3 -c "import json,sys; v=json.load(open('$1'))$2; print(v)"; }
check() { # check NAME DIR PYTHON-EXPRESSION-ON-j
  if python3 -c "import json,math,sys; j=json.load(open('$2/summary.json')); sys.exit(0 if ($3) else 1)"; then
    ok "$1"
  else
    bad "$1: $(head -c 600 "$2/summary.json")"
  fi
}
P=(account --model=privacy)

# 1. eps at delta: the PLD bounds around the estimate, RDP and the CLT beside, names in words
"$dpdyn" "${P[@]}" --noise_multiplier=1 --q=0.01 --steps=1000 --delta=1e-5 --out="$work/e" \
  >"$work/e.out" 2>"$work/e.err" || bad "epsilon run: $(cat "$work/e.err")"
check "epsilon: lower <= estimate <= upper <= RDP, width within accuracy" "$work/e" \
  "j['epsilon_lower'] <= j['epsilon_estimate'] <= j['epsilon'] <= j['epsilon_rdp'] and j['accuracy_met'] and 1.8 < j['epsilon'] < 1.86"
check "epsilon: the words and the CLT (approximation)" "$work/e" \
  "j['neighbours'] == 'add_remove' and j['mechanism'] == 'subsampled_gaussian' and j['sampling'] == 'poisson' and abs(j['mu_clt'] - 0.01*math.sqrt(1000*math.expm1(1))) < 1e-12"
grep -q "CLT approximation" "$work/e.err" && ok "note: the CLT epsilon is an approximation" ||
  bad "no CLT note: $(cat "$work/e.err")"
if [ -s "$work/e/curve.tsv" ] && [ "$(tsv_header "$work/e/curve.tsv")" = "$(printf 'eps\tdelta_up\tdelta_low\tdelta_rdp\tdelta_clt\treported')" ] &&
  tsv_rows "$work/e/curve.tsv" | awk 'NR > 1 && ($2 > p + 1e-300 || $3 > $2) { bad = 1 } { p = $2 } END { exit bad }'; then
  ok "curve.tsv: delta_up non-increasing, delta_low <= delta_up"
else
  bad "curve.tsv: $(head -c 400 "$work/e/curve.tsv")"
fi
if command -v gnuplot >/dev/null; then
  [ -s "$work/e/account.png" ] && [ -s "$work/e/account.gp" ] && ok "figure account.png" ||
    bad "no figure: $(ls "$work/e")"
fi

# 2. delta at eps (epsilon without delta)
"$dpdyn" "${P[@]}" --noise_multiplier=1 --q=0.01 --steps=1000 --epsilon=1.84 --plot=0 \
  --out="$work/d" >/dev/null 2>&1 || bad "delta run"
check "delta(epsilon = 1.84) <= 1e-5 (the epsilon above is >= ...)" "$work/d" \
  "0 <= j['delta_lower'] <= j['delta'] <= 1.01e-5 and j['delta_rdp'] >= j['delta_lower']"

# 3. the inverse: at the noise multiplier found, epsilon <= the target
"$dpdyn" "${P[@]}" --q=0.02 --steps=200 --epsilon=1 --delta=1e-5 --solve=noise_multiplier \
  --plot=0 --out="$work/s" >/dev/null 2>&1 || bad "solve noise_multiplier run"
check "solve = noise_multiplier: epsilon <= 1 at the sigma found, within 1 %" "$work/s" \
  "0.99 <= j['epsilon'] <= 1 and 1.2 < j['noise_multiplier'] < 1.6"
"$dpdyn" "${P[@]}" --q=0.02 --noise_multiplier=1.2 --epsilon=1 --delta=1e-5 --solve=steps \
  --plot=0 --out="$work/t" >/dev/null 2>&1 || bad "solve steps run"
check "solve = steps: epsilon <= 1 at the steps found" "$work/t" \
  "j['epsilon'] <= 1 and j['steps'] >= 1 and j['total_steps'] == j['steps']"

# 4. segments file: two equal rows = one segment of their steps (up to the grid); shuffle
printf '# noise_multiplier q steps\n1.5 0.05 100\n1.5 0.05 100\n' >"$work/seg.txt"
"$dpdyn" "${P[@]}" --segments="file:$work/seg.txt" --delta=1e-6 --plot=0 --out="$work/g" \
  >/dev/null 2>&1 &&
  "$dpdyn" "${P[@]}" --noise_multiplier=1.5 --q=0.05 --steps=200 --delta=1e-6 --plot=0 \
    --out="$work/h" >/dev/null 2>&1 || bad "segments runs"
e1=$(json "$work/g/summary.json" "['epsilon']")
e2=$(json "$work/h/summary.json" "['epsilon']")
python3 -c "import sys; sys.exit(0 if abs($e1 - $e2) <= 0.02 * $e2 else 1)" &&
  ok "segments: two rows of 100 steps = 200 steps ($e1, $e2)" || bad "segments: $e1 vs $e2"
"$dpdyn" "${P[@]}" --mechanism=shuffle --noise_multiplier=3 --epochs=10 --delta=1e-5 --plot=0 \
  --out="$work/sh" >"$work/sh.out" 2>"$work/sh.err" || bad "shuffle run: $(cat "$work/sh.err")"
grep -q "no amplification by shuffling" "$work/sh.err" && ok "shuffle: its caveat" ||
  bad "shuffle note: $(cat "$work/sh.err")"
"$dpdyn" "${P[@]}" --sampling=fixed --neighbours=replace_one --noise_multiplier=1 --batch=64 \
  --n=6400 --steps=100 --delta=1e-5 --plot=0 --out="$work/fx" >/dev/null 2>"$work/fx.err" &&
  check "fixed batches, replace-one: an epsilon, no RDP" "$work/fx" \
    "j['epsilon'] > 0 and j['epsilon_rdp'] is None and 'epsilon_rdp' in j['not_available']" ||
  bad "fixed run: $(cat "$work/fx.err")"

# 5. bad input: exit 1 naming the key, nothing written
err q_range "'q'.*allowed: 0 < q <= 1" "${P[@]}" --noise_multiplier=1 --q=2 --steps=10 --delta=1e-5
err sigma_zero "'noise_multiplier'.*allowed: 0 < noise_multiplier" "${P[@]}" --noise_multiplier=0 \
  --q=0.1 --steps=10 --delta=1e-5
err delta_range "'delta'.*allowed: 0 < delta < 1" "${P[@]}" --noise_multiplier=1 --q=0.1 \
  --steps=10 --delta=1
err steps_zero "'steps'.*allowed: integer 1 <=" "${P[@]}" --noise_multiplier=1 --q=0.1 --steps=0 \
  --delta=1e-5
err steps_memory "'steps'.*max_memory" "${P[@]}" --noise_multiplier=1 --q=0.5 \
  --steps=1000000000000 --delta=1e-5 --max_memory=8G
err unreachable "epsilon = 1e-09 is invalid" "${P[@]}" --q=0.1 --steps=10 --epsilon=1e-9 \
  --delta=1e-10 --solve=noise_multiplier
err fixed_add_remove "neighbours = add_remove is invalid with sampling = fixed" "${P[@]}" \
  --sampling=fixed --noise_multiplier=1 --batch=10 --n=100 --steps=10 --delta=1e-5
err batch_above_n "'batch'.*n = 100" "${P[@]}" --sampling=fixed --neighbours=replace_one \
  --noise_multiplier=1 --batch=200 --n=100 --steps=10 --delta=1e-5
err q_with_gaussian "'q'.*only with sampling = poisson" "${P[@]}" --mechanism=gaussian \
  --noise_multiplier=1 --q=0.5 --steps=10 --delta=1e-5
printf '1 0.1 10\n1 3 10\n' >"$work/bad.txt"
err segments_row "'segments': row 2 .* q = 3" "${P[@]}" --segments="file:$work/bad.txt" --delta=1e-5
err eps_and_delta "'epsilon': given with delta" "${P[@]}" --noise_multiplier=1 --q=0.1 --steps=10 \
  --epsilon=1 --delta=1e-5

finish test_account
