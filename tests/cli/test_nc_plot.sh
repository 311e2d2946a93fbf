#!/usr/bin/env bash
# model=nc figures (issue 26): --plot=1 draws the figure of simulate, compare and diagnose (the
# script next to a non-empty PNG, named in summary.json with its data files), on the ETF law and
# on feature files; account has nothing to draw and says so; `dpdyn plot DIR` renders an nc
# directory again (png and svg); the scripts read their columns by name.
# usage: test_nc_plot.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
src=${2:-.}
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
if ! command -v gnuplot >/dev/null; then
  echo "test_nc_plot: gnuplot not found, skipped"
  exit 0
fi

# figure DIR NAME FIRST SECOND: DIR holds NAME.gp and a non-empty NAME.png, and its summary
# names the figure and its data files.
figure() {
  local dir=$1 name=$2
  if [ -s "$dir/$name.png" ] && [ -s "$dir/$name.gp" ] &&
    python3 - "$dir/summary.json" "$name" "$3" "$4" <<'PY'; then
import json, sys
s = json.load(open(sys.argv[1]))
assert s["figure"] == {"name": sys.argv[2], "data": sys.argv[3:5]}, s.get("figure")
PY
    ok "$name: $dir has $name.png and $name.gp, named in summary.json"
  else
    bad "$name: $(ls "$dir" 2>/dev/null | tr '\n' ' ')"
  fi
}

law=(--model=nc --K=4 --p=12 --n=40 --n_test=40 --seed=3)
"$dpdyn" simulate "${law[@]}" --sigma=2 --seeds=10 --plot=1 --out="$work/sim" >/dev/null 2>"$work/e" ||
  bad "simulate --plot=1 failed: $(head -1 "$work/e")"
figure "$work/sim" nc_simulate classes.tsv replicates.tsv
"$dpdyn" compare "${law[@]}" --sigma=2 --seeds=10 --plot=1 --out="$work/cmp" >/dev/null 2>"$work/e" ||
  bad "compare --plot=1 failed: $(head -1 "$work/e")"
figure "$work/cmp" nc_compare classes.tsv replicates.tsv
# without replicates.tsv the figure reads classes.tsv alone; theory not available (steps = 2)
"$dpdyn" compare "${law[@]}" --sigma=2 --seeds=10 --steps=2 --save_replicates=0 --plot=1 \
  --out="$work/cmp2" >/dev/null 2>"$work/e" || bad "compare steps=2 --plot=1 failed: $(head -1 "$work/e")"
figure "$work/cmp2" nc_compare classes.tsv classes.tsv
# one replicate: no standard errors (nan columns), still a figure
"$dpdyn" simulate "${law[@]}" --sigma=2 --seeds=1 --plot=1 --out="$work/one" >/dev/null 2>"$work/e" ||
  bad "simulate seeds=1 --plot=1 failed: $(head -1 "$work/e")"
figure "$work/one" nc_simulate classes.tsv replicates.tsv
"$dpdyn" diagnose "${law[@]}" --plot=1 --out="$work/dg" >/dev/null 2>"$work/e" ||
  bad "diagnose --plot=1 failed: $(head -1 "$work/e")"
figure "$work/dg" nc_diagnose classes.tsv cosines.tsv
# no figure unless asked (plot = 0 by default)
"$dpdyn" simulate "${law[@]}" --sigma=2 --seeds=4 --out="$work/noplot" >/dev/null 2>&1
if [ ! -e "$work/noplot/nc_simulate.png" ]; then ok "no figure without --plot=1"; else bad "figure without --plot=1"; fi

# feature files: simulate and diagnose
python3 - "$work" <<'PY'
import random, sys
random.seed(7)
for name, n in (("train", 30), ("test", 24)):
    with open(f"{sys.argv[1]}/{name}.txt", "w") as f:
        for i in range(n):
            y = i % 3
            f.write(" ".join([str(y)] + ["%.5f" % ((j == y) + random.gauss(0, 0.3)) for j in range(6)]) + "\n")
PY
files=(--model=nc --features=file:"$work/train.txt" --test_features=file:"$work/test.txt" --x_bound=2)
"$dpdyn" simulate "${files[@]}" --sigma=3 --seeds=8 --plot=1 --out="$work/fsim" >/dev/null 2>"$work/e" ||
  bad "simulate on files --plot=1 failed: $(head -1 "$work/e")"
figure "$work/fsim" nc_simulate classes.tsv replicates.tsv
"$dpdyn" diagnose "${files[@]}" --plot=1 --out="$work/fdg" >/dev/null 2>"$work/e" ||
  bad "diagnose on files --plot=1 failed: $(head -1 "$work/e")"
figure "$work/fdg" nc_diagnose classes.tsv cosines.tsv

# account: nothing to draw, said on stderr, and no figure file
if "$dpdyn" account "${law[@]}" --epsilon=1 --plot=1 --out="$work/acc" >/dev/null 2>"$work/e" &&
  grep -q "nothing to draw for account" "$work/e" && ! ls "$work/acc"/*.png >/dev/null 2>&1; then
  ok "account --plot=1: $(head -1 "$work/e")"
else
  bad "account --plot=1: $(head -1 "$work/e")"
fi

if ! "$dpdyn" plot "$work/acc" >/dev/null 2>"$work/e" && grep -q "has no figure" "$work/e"; then
  ok "dpdyn plot on account's directory: $(head -1 "$work/e")"
else
  bad "dpdyn plot on account's directory: $(head -1 "$work/e")"
fi

# dpdyn plot DIR draws an nc directory again, as png and svg
for d in sim cmp cmp2 dg fdg; do
  name=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['figure']['name'])" "$work/$d/summary.json")
  rm -f "$work/$d/$name.png"
  if "$dpdyn" plot "$work/$d" >/dev/null 2>"$work/e" && [ -s "$work/$d/$name.png" ] &&
    "$dpdyn" plot "$work/$d" --format=svg >/dev/null 2>>"$work/e" && [ -s "$work/$d/$name.svg" ]; then
    ok "dpdyn plot $d: $name.png and $name.svg"
  else
    bad "dpdyn plot $d: $(head -1 "$work/e")"
  fi
done

# the scripts read their columns by name: no $N column references and no positional using
for s in nc_simulate nc_compare nc_diagnose; do
  if grep -Eq '\$[0-9]|u(sing)? [0-9]+:' "$src/plots/$s.gp"; then
    bad "plots/$s.gp reads a column by position"
  else
    ok "plots/$s.gp reads its columns by name"
  fi
done
finish test_nc_plot
