#!/usr/bin/env bash
# dpdyn reconstruct --model=rf (docs/overparameterization.md, "Reconstruction"):
#   - the attack recovers >= 90 % of a small training set from theta* at p = 20 n d (n = 4,
#     d = 5, p = 400, hermite13, seed 3, 2 replicates), and the summary's fraction is the mean of
#     reconstruct.tsv's column;
#   - the same bits with threads = 1 and 2 (reconstruct.tsv's rows, every summary number but the
#     run's own: wall_seconds, memory_estimate_bytes);
#   - an activation failing (B2) is a warning (tanh: no even coefficient of order >= 3) and
#     b2_holds = 0; hermite134 holds it (no warning, b2_holds = 1);
#   - theta = file:PATH of p values runs; refusals naming the key, exit 1 before any output:
#     p < n, a theta file of the wrong size, theta = star with epsilon, an unknown theta,
#     require_b2 = on with tanh (naming the coefficient), n d too large for max_memory;
#   - dpdyn sweep runs it over p and reports reconstructed_fraction.
# usage: test_rf_reconstruct.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

small=(--model=rf --n=4 --d=5 --p=400 --activation=hermite13 --seeds=2 --seed=3)

for t in 1 2; do
  if "$dpdyn" reconstruct "${small[@]}" --threads=$t --out="$work/t$t" >/dev/null 2>"$work/stderr$t"; then
    ok "reconstruct threads=$t runs"
  else
    bad "reconstruct threads=$t: $(cat "$work/stderr$t")"
  fi
done

python3 - "$work/t1" <<'EOF' && ok "fraction >= 0.9, summary = mean of reconstruct.tsv" || bad "fraction or summary"
import json, math, sys
d = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open(d + "/reconstruct.tsv") if not l.startswith("#")]
head, data = rows[0], rows[1:]
col = {name: [float(r[k]) for r in data] for k, name in enumerate(head)}
s = json.load(open(d + "/summary.json"))
assert len(data) == 2, data
mean = sum(col["reconstructed_fraction"]) / 2
assert math.isclose(s["reconstructed_fraction"], mean, rel_tol=1e-9), (s["reconstructed_fraction"], mean)
assert s["reconstructed_fraction"] >= 0.9, s["reconstructed_fraction"]
assert s["matching_error"] < 0.1, s["matching_error"]
assert s["loss"] < 1e-4 and s["p_over_nd"] == 20, (s["loss"], s["p_over_nd"])
print("fraction", s["reconstructed_fraction"], "error", s["matching_error"], "loss", s["loss"])
EOF

if cmp -s <(tsv_rows "$work/t1/reconstruct.tsv") <(tsv_rows "$work/t2/reconstruct.tsv") &&
  diff <(grep -Ev '"(wall_seconds|memory_estimate_bytes|threads|out)"' "$work/t1/summary.json") \
    <(grep -Ev '"(wall_seconds|memory_estimate_bytes|threads|out)"' "$work/t2/summary.json") >/dev/null; then
  ok "threads 1 and 2: the same bits"
else
  bad "threads 1 and 2 differ"
fi

# every ISA path this CPU has (DPD_ISA: the Gaussian fills and dpdyn's kernels; OpenBLAS and
# libm do not change with it): the same rows as the default path
for isa in scalar avx2 avx512; do
  DPD_ISA=$isa "$dpdyn" --version 2>/dev/null | grep -q "^kernel path: $isa " || continue
  DPD_ISA=$isa "$dpdyn" reconstruct "${small[@]}" --threads=1 --out="$work/isa-$isa" >/dev/null 2>&1
  if cmp -s <(tsv_rows "$work/t1/reconstruct.tsv") <(tsv_rows "$work/isa-$isa/reconstruct.tsv"); then
    ok "DPD_ISA=$isa: the same rows"
  else
    bad "DPD_ISA=$isa: rows differ"
  fi
done

# (B2): hermite13 (odd) and tanh fail it with a warning; hermite134 holds it
if grep -q "warning: activation hermite13 fails assumption (B2)" "$work/stderr1" &&
  grep -q '"b2_holds":[[:space:]]*0' "$work/t1/summary.json"; then
  ok "hermite13: (B2) warning"
else
  bad "hermite13: no (B2) warning: $(cat "$work/stderr1")"
fi
if "$dpdyn" reconstruct --model=rf --n=2 --d=3 --p=60 --seeds=1 --activation=hermite134 \
  --restarts=1 --attack_iterations=20 --out="$work/h134" >/dev/null 2>"$work/stderr" &&
  ! grep -q "(B2)" "$work/stderr" && grep -q '"b2_holds":[[:space:]]*1' "$work/h134/summary.json"; then
  ok "hermite134: (B2) holds, no warning"
else
  bad "hermite134: $(cat "$work/stderr")"
fi

# theta = file:PATH (p values; random here: the run goes through, whatever it recovers)
python3 -c 'import random; random.seed(2); print("\n".join(str(random.gauss(0, 1)) for _ in range(400)))' >"$work/theta.txt"
if "$dpdyn" reconstruct "${small[@]}" --theta=file:"$work/theta.txt" --restarts=1 \
  --attack_iterations=30 --out="$work/file" >/dev/null 2>&1 &&
  [ "$(tsv_rows "$work/file/reconstruct.tsv" | wc -l)" -eq 1 ]; then
  ok "theta = file:PATH of p values runs (one replicate)"
else
  bad "theta = file:PATH"
fi
head -399 "$work/theta.txt" >"$work/theta399.txt"

err p_below_n "invalid value for 'p': 3 .*p >= n = 4" reconstruct --model=rf --n=4 --d=5 --p=3
err theta_size "invalid value for 'theta': .*399 values .*p = 400" reconstruct "${small[@]}" \
  --theta=file:"$work/theta399.txt"
err theta_missing "'theta'" reconstruct "${small[@]}" --theta=file:"$work/none.txt"
err theta_star_private "invalid value for 'theta': 'star' with epsilon" reconstruct "${small[@]}" \
  --theta=star --epsilon=2 --clip=1
err theta_unknown "invalid value for 'theta': 'thetastar'" reconstruct "${small[@]}" --theta=thetastar
err b2_required "invalid value for 'activation': tanh fails assumption \(B2\): no non-zero even" \
  reconstruct "${small[@]}" --activation=tanh --require_b2=on
err b2_relu "invalid value for 'activation': relu fails assumption \(B2\): phi_0" \
  reconstruct "${small[@]}" --activation=relu --require_b2=on
err memory "invalid value for 'n'.*max_memory" reconstruct --model=rf --n=20000 --d=100 \
  --p=2000000 --max_memory=1G
err dpgd_clip "'clip'" reconstruct "${small[@]}" --theta=dpgd --epsilon=2

# DP-GD's last iterate at a privacy level: runs and records the epsilon; theta = auto (the
# default) releases it when a budget is given, theta* otherwise
if "$dpdyn" reconstruct "${small[@]}" --theta=dpgd --epsilon=4 --clip=1 --restarts=1 \
  --attack_iterations=50 --out="$work/dpgd" >/dev/null 2>&1 &&
  grep -q '"epsilon":[[:space:]]*4' "$work/dpgd/summary.json" &&
  "$dpdyn" reconstruct "${small[@]}" --epsilon=4 --clip=1 --restarts=1 \
    --attack_iterations=50 --out="$work/auto" >/dev/null 2>&1 &&
  cmp -s <(tsv_rows "$work/dpgd/reconstruct.tsv") <(tsv_rows "$work/auto/reconstruct.tsv") &&
  grep -q '"released":[[:space:]]*"dpgd"' "$work/auto/summary.json" &&
  grep -q '"released":[[:space:]]*"star"' "$work/t1/summary.json"; then
  ok "theta = dpgd at epsilon = 4; theta = auto releases it with a budget, theta* without"
else
  bad "theta = dpgd / auto"
fi

# a sweep over p
if "$dpdyn" sweep reconstruct --model=rf --n=2 --d=3 --p=12,60 --seeds=1 --restarts=2 \
  --plot_y=reconstructed_fraction --out="$work/sweep" >/dev/null 2>"$work/stderr" &&
  tsv_header "$work/sweep/sweep.tsv" | tr '\t' '\n' | grep -qx reconstructed_fraction &&
  [ "$(tsv_rows "$work/sweep/sweep.tsv" | wc -l)" -eq 2 ]; then
  ok "dpdyn sweep reconstruct over p"
else
  bad "sweep: $(cat "$work/stderr")"
fi

# every number the sweeps produce is declared (dpd_model_command.numbers: a missing name would
# make `dpdyn sweep --plot_y=NAME` refuse a valid number), as tests/cli/test_sweep_plot_y.sh
# checks for the other commands
"$dpdyn" sweep reconstruct --model=rf --help |
  awk '/^values of plot_y for model=/ { on = 1; next } on && /^  / { for (i = 1; i <= NF; i++) print $i; next } on { exit }' |
  sort -u >"$work/declared"
for extra in "--theta=star|dpgd" "--theta=dpgd --clip=1 --mu=1|inf" "--theta=dpgd --clip=1 --epsilon=1,2"; do
  # shellcheck disable=SC2086
  "$dpdyn" sweep reconstruct --model=rf --n=2 --d=3 --p=12 --seeds=2 --restarts=1 \
    --attack_iterations=5 --activation="tanh|hermite134" $extra --out="$work/cov" >/dev/null 2>&1
  awk -F'\t' '/^#/ { next } { s = 0; for (i = 1; i <= NF; i++) { if (s) print $i; if ($i == "status") s = 1 } exit }' \
    "$work/cov/sweep.tsv" >>"$work/produced"
  rm -rf "$work/cov"
done
missing=$(sort -u "$work/produced" | comm -23 - "$work/declared" | tr '\n' ' ')
if [ -s "$work/produced" ] && [ -z "$missing" ]; then
  ok "every number of the sweeps is declared ($(sort -u "$work/produced" | wc -l) names)"
else
  bad "numbers not declared: $missing"
fi

finish test_rf_reconstruct
