#!/usr/bin/env bash
# The accountant as a user runs it (dpdyn account, automatic grid, default accuracy 0.01) against
# the stored high-resolution reference tests/pld_reference_table.tsv: one line per row with
# epsilon / eps_up_ref, whether it is never below eps_low_ref, and the wall time.
# Usage: bench/account_vs_reference.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf 'id\tq\tsigma\tT\tdelta\tneighbours\tepsilon\testimate\tlower\tref_low\tref_up\tup_over_ref\tnever_below\tseconds\n'
grep -v '^#' tests/pld_reference_table.tsv | tail -n +2 |
  while IFS=$'\t' read -r id q sigma T delta nb lo up method h secs; do
    mech=(--mechanism=subsampled_gaussian --q="$q")
    [ "$q" = 1 ] && mech=(--mechanism=gaussian)
    start=$(date +%s.%N)
    if "$build/dpdyn" account "${mech[@]}" --noise_multiplier="$sigma" --steps="$T" \
         --delta="$delta" --neighbours="$nb" --plot=0 --out="$out/r$id" >/dev/null 2>"$out/err$id"; then
      end=$(date +%s.%N)
      python3 - "$out/r$id/summary.json" "$id" "$q" "$sigma" "$T" "$delta" "$nb" "$lo" "$up" "$start" "$end" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
i, q, s, T, d, nb, lo, up, t0, t1 = sys.argv[2:]
e, est, low = j["epsilon"], j["epsilon_estimate"], j["epsilon_lower"]
print("\t".join([i, q, s, T, "%g" % float(d), nb, "%.7g" % e, "%.7g" % est, "%.7g" % low,
                 "%.7g" % float(lo), "%.7g" % float(up), "%.5f" % (e / float(up)),
                 "yes" if e >= float(lo) else "NO", "%.2f" % (float(t1) - float(t0))]))
PY
    else
      printf '%s\t%s\t%s\t%s\t%s\t%s\trefused: %s\n' "$id" "$q" "$sigma" "$T" "$delta" "$nb" \
        "$(head -c 160 "$out/err$id")"
    fi
  done
