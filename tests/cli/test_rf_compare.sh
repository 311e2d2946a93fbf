#!/usr/bin/env bash
# dpdyn compare --model=rf: the residual panel draws the very numbers the summary reports
# (issue 26; compare.h):
#   - trajectory.tsv has the column gap_in_se, and its maximum over the grid is the summary's
#     sup_gap_in_se, its last row final_gap_in_se (2 seeds, one data draw per replicate: the
#     gap's SE is that of the paired differences, the column gap_se; and resample = noise: the
#     simulation's SE, the column test_risk_se);
#   - each row is |ou_test_risk - test_risk| / that SE (so the panel no longer divides by the
#     simulation's SE when the summary divides by the paired SE: 32.6 against 8.43 here before);
#   - plots/rf_compare.gp's residual panel reads that column by name;
#   - the seeds warning comes once for 2 seeds, not for 8.
# usage: test_rf_compare.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
src=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

small=(--model=rf --d=8 --n=40 --n_test=30 --p=60 --steps=50 --grid=11 --epsilon=2 --clip=1
  --plot=0 --threads=1)

# check DIR SE_COLUMN: the gap_in_se column against the summary and against |theory - sim| / SE
check() {
  python3 - "$1" "$2" <<'EOF'
import json, math, sys
d, se_name = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(d + "/trajectory.tsv") if not l.startswith("#")]
head, data = rows[0], [r for r in rows[1:] if r != [""]]
if "gap_in_se" not in head:
    sys.exit("no column gap_in_se in trajectory.tsv: " + " ".join(head))
col = {name: [float(r[k]) for r in data] for k, name in enumerate(head)}
s = json.load(open(d + "/summary.json"))
sup, fin = s["sup_gap_in_se"], s["final_gap_in_se"]
z = col["gap_in_se"]
if not math.isclose(max(z), sup, rel_tol=1e-9):
    sys.exit(f"max of gap_in_se {max(z)!r} != sup_gap_in_se {sup!r}")
if not math.isclose(z[-1], fin, rel_tol=1e-9):
    sys.exit(f"last gap_in_se {z[-1]!r} != final_gap_in_se {fin!r}")
for j, (a, b, e) in enumerate(zip(col["ou_test_risk"], col["test_risk"], col[se_name])):
    # SE 0 (step 0: both start at the same risk): 0 for a gap at rounding level (the file's
    # 10 digits), else inf; the file's rounding leaves about 1e-6 on a ratio of differences
    want = abs(a - b) / e if e > 0 else (0.0 if abs(a - b) <= 1e-9 * max(abs(a), abs(b)) else math.inf)
    if not math.isclose(z[j], want, rel_tol=1e-6, abs_tol=1e-6):
        sys.exit(f"row {j}: gap_in_se {z[j]!r} != |ou - sim| / {se_name} {want!r}")
print(f"sup_gap_in_se {sup:.6g} = max of gap_in_se (SE: {se_name})")
EOF
}

for mode in all noise; do
  se=gap_se
  [ "$mode" = noise ] && se=test_risk_se
  out="$work/$mode"
  if ! "$dpdyn" compare "${small[@]}" --seeds=2 --resample=$mode --out="$out" >/dev/null \
    2>"$work/stderr-$mode"; then
    bad "compare resample=$mode: $(head -1 "$work/stderr-$mode")"
    continue
  fi
  if msg=$(check "$out" $se 2>&1); then
    ok "resample=$mode: $msg"
  else
    bad "resample=$mode: $msg"
  fi
  # negative control: the old panel's numbers, |ou - sim| / test_risk_se, are not the summary's
  if [ "$mode" = all ] && ! check "$out" test_risk_se >/dev/null 2>&1; then
    ok "resample=all: the simulation's SE (the old panel) gives other numbers"
  elif [ "$mode" = all ]; then
    bad "resample=all: the check does not tell the paired SE from the simulation's"
  fi
  n=$(grep -c "seeds = 2 < 8" "$work/stderr-$mode")
  [ "$n" -eq 1 ] && ok "resample=$mode: one seeds warning" || bad "resample=$mode: $n seeds warnings"
done

if "$dpdyn" compare "${small[@]}" --seeds=8 --out="$work/s8" >/dev/null 2>"$work/stderr-8" &&
  ! grep -q "< 8" "$work/stderr-8" && msg=$(check "$work/s8" gap_se 2>&1); then
  ok "seeds=8: no warning; $msg"
else
  bad "seeds=8: $(cat "$work/stderr-8") $msg"
fi

gp="$src/plots/rf_compare.gp"
if awk '/residual panel/ { p = 1 } p && /^  plot / { print; exit }' "$gp" | grep -q '"gap_in_se"'; then
  ok "rf_compare.gp: the residual panel plots the column gap_in_se"
else
  bad "rf_compare.gp: the residual panel does not plot gap_in_se"
fi
if command -v gnuplot >/dev/null 2>&1; then
  if gnuplot -c "$gp" "$work/all/trajectory.tsv" "$work/all/clipping.tsv" "$work/f.png" \
    2>"$work/gp.err" && [ -s "$work/f.png" ] && ! grep -q "gap_in_se" "$work/gp.err"; then
    ok "rf_compare.gp renders the 2-seed comparison"
  else
    bad "rf_compare.gp: $(head -3 "$work/gp.err")"
  fi
fi
finish test_rf_compare
