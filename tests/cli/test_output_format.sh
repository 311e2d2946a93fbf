#!/usr/bin/env bash
# The output format (docs/output.md), for the main commands of every model:
#   - every data file (*.tsv) is `#` metadata lines, then one header row of column names, then
#     rows with exactly one field per name, fields separated by tabs, numbers or inf/-inf/nan;
#   - it is read by column name with NumPy (genfromtxt names=True over the non-`#` lines), with a
#     plain tab split (awk -F'\t', the column found by its name) and with gnuplot
#     (`set key autotitle columnheader`, `using "NAME1":"NAME2"`), all three giving the same
#     numbers;
#   - summary.json has one type per key: no "inf"/"nan" strings, no NaN/Infinity literals; every
#     null is explained under "not_available" or "nonfinite" (dotted paths), and every entry of
#     "nonfinite" names a null;
#   - output directories: the default is ./dpdyn-out/<command>-<model>; a run replaces the files
#     of an earlier run (a stale compare.png is gone after a simulate into the same directory)
#     and never anything else (a directory holding a user's file is refused and the file kept;
#     an invalid value writes and removes nothing).
# usage: test_output_format.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
py=$(numpy_python)
have_gp=$(command -v gnuplot || true)
[ -n "$py" ] || echo "note: no python3 with numpy: the NumPy and summary.json checks are skipped"
[ -n "$have_gp" ] || echo "note: no gnuplot: the gnuplot checks are skipped"

L=(--d=20 --n=60 --grid=5 --seeds=2 --plot=0)
runs=(
  "linreg-ode|ode ${L[*]}"
  "linreg-ode-private|ode ${L[*]} --c=1 --rho=1"
  "linreg-simulate|simulate ${L[*]} --save_replicates=2"
  "linreg-compare|compare ${L[*]} --c=1 --rho=2"
  "linreg-sde|sde ${L[*]}"
  "linreg-compare3|compare ${L[*]} --sde=1 --save_replicates=1"
  "linreg-tune|tune ${L[*]} --confirm_seeds=2"
  "linreg-account|account --d=20 --n=60 --c=1 --epsilon=2 --delta=1e-5"
  "rf-simulate|simulate --model=rf --d=10 --n=40 --p=30 --steps=20 --seeds=2 --save_replicates=2"
  "rf-compare|compare --model=rf --d=10 --n=40 --p=30 --steps=20 --seeds=2 --plot=0"
  "rf-ou|ou --model=rf --d=10 --n=40 --p=30 --steps=20"
  "nc-simulate|simulate --model=nc --K=4 --p=20 --n=40 --n_test=50 --sigma=2 --seeds=3"
  "nc-compare|compare --model=nc --K=4 --p=20 --n=40 --n_test=50 --sigma=2 --seeds=3 --plot=0"
  "nc-diagnose|diagnose --model=nc --K=4 --p=20 --n=40"
  "semipriv-simulate|simulate --model=semipriv --d=30 --k=3 --n=60 --n_public=200 --n_test=200 --seeds=2"
  "semipriv-compare|compare --model=semipriv --d=30 --k=3 --n=60 --n_public=200 --n_test=200 --seeds=2 --plot=0"
)
# (save_replicates: replicates.tsv and replicates_trajectory.tsv of linreg and rf are read too;
# nc and semipriv write replicates.tsv by default)
ntsv=0
for r in "${runs[@]}"; do
  name=${r%%|*}
  # shellcheck disable=SC2086 # the arguments are words
  if ! "$dpdyn" ${r#*|} --out="$work/$name" >/dev/null 2>"$work/$name.err"; then
    bad "$name: $(head -1 "$work/$name.err")"
    continue
  fi
  for f in "$work/$name"/*.tsv; do
    [ -e "$f" ] || continue
    ntsv=$((ntsv + 1))
    short="$name/$(basename "$f")"
    header=$(tsv_header "$f")
    # the layout: metadata first, then the header, then rows of as many tab-separated fields
    if msg=$(awk -F'\t' '
        /^#/ { if (h) { print "a # line after the header, line " NR; exit 1 } next }
        !h { h = 1; n = NF; for (i = 1; i <= NF; i++) if ($i !~ /^[A-Za-z_][A-Za-z0-9_.]*$/) {
               print "column name \"" $i "\""; exit 1 } next }
        /^$/ { next }
        NF != n { print "line " NR ": " NF " fields for " n " names"; exit 1 }
        { for (i = 1; i <= NF; i++) if ($i !~ /^-?(inf|nan|[0-9.]+([eE][-+]?[0-9]+)?)$/) {
            print "line " NR ": field \"" $i "\""; exit 1 }; rows++ }
        END { if (!h) { print "no header row"; exit 1 } if (!rows) { print "no rows"; exit 1 } }' "$f"); then
      ok "$short: # lines, one header row ($(echo "$header" | tr '\t' ' ')), tab-separated rows"
    else
      bad "$short: $msg"
      continue
    fi
    a=$(printf '%s' "$header" | cut -f1)
    # b: the last column holding a finite number (gnuplot plots nothing from an all-nan column)
    b=$(awk -F'\t' '/^#/ || !NF { next } !h { h = 1; for (i = 1; i <= NF; i++) name[i] = $i; next }
      { for (i = 1; i <= NF; i++) if ($i !~ /nan|inf/) fin[i] = 1 }
      END { for (i = length(name); i >= 1; i--) if (fin[i]) { print name[i]; exit } }' "$f")
    # a plain tab split, the columns found by name
    awk -F'\t' -v a="$a" -v b="$b" '/^#/ { next } !h { for (i = 1; i <= NF; i++) { if ($i == a) ia = i; if ($i == b) ib = i } h = 1; next }
      NF { print $ia, $ib }' "$f" >"$work/awk.txt"
    # NumPy by name
    if [ -n "$py" ]; then
      if msg=$("$py" - "$f" "$a" "$b" "$work/awk.txt" <<'PY' 2>&1
import sys
import numpy as np
f, a, b, ref = sys.argv[1:]
t = np.genfromtxt([l for l in open(f) if not l.startswith("#")], names=True, delimiter="\t",
                  deletechars="", dtype=float)
t = np.atleast_1d(t)
header = [l for l in open(f) if not l.startswith("#")][0].rstrip("\n").split("\t")
assert list(t.dtype.names) == header, (t.dtype.names, header)
want = np.atleast_2d(np.loadtxt(ref, dtype=float))
got = np.column_stack([t[a], t[b]])
assert got.shape == want.shape, (got.shape, want.shape)
assert np.array_equal(got, want, equal_nan=True), "numpy and awk differ"
print(len(t))
PY
      ); then
        ok "$short: NumPy reads '$a' and '$b' by name ($msg rows), equal to the tab split"
      else
        bad "$short: NumPy: $(echo "$msg" | tail -1)"
      fi
    fi
    # gnuplot by name (columnheader)
    if [ -n "$have_gp" ]; then
      rm -f "$work/gp.txt"
      if gnuplot -e "set datafile separator '\t'; set key autotitle columnheader; set table '$work/gp.txt'; plot '$f' using \"$a\":\"$b\" with points" 2>"$work/gp.err" &&
        ! grep -v 'Warning: empty [xy] range' "$work/gp.err" | grep -q . &&
        [ "$(awk '/^#/ || !NF { next } { n++ } END { print n + 0 }' "$work/gp.txt")" = "$(grep -c . "$work/awk.txt")" ]; then
        ok "$short: gnuplot using \"$a\":\"$b\" (columnheader) reads every row"
      else
        bad "$short: gnuplot: $(grep -v 'Warning: empty' "$work/gp.err" | head -2) $(awk '/^#/ || !NF { next } { n++ } END { print n + 0 }' "$work/gp.txt" 2>/dev/null) points for $(grep -c . "$work/awk.txt") rows"
      fi
    fi
  done
  # summary.json: one type per key
  if [ -n "$py" ]; then
    if msg=$("$py" - "$work/$name/summary.json" <<'PY' 2>&1
import json, sys
def bad_constant(c):
    raise ValueError("literal " + c)
j = json.load(open(sys.argv[1]), parse_constant=bad_constant)
nf = j.get("nonfinite", {})
na = j.get("not_available", {})
assert all(v in ("inf", "-inf", "nan") for v in nf.values()), nf
def at(path):
    o = j
    for part in path.split("."):
        o = o[int(part)] if isinstance(o, list) else o[part]
    return o
for p in nf:
    assert at(p) is None, ("nonfinite names a non-null", p)
def walk(o, path):
    if isinstance(o, dict):
        for k, v in o.items():
            if path == "" and k in ("nonfinite", "not_available"):
                continue
            walk(v, path + "." + k if path else k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            walk(v, f"{path}.{i}")
    elif isinstance(o, str):
        assert o.lower() not in ("inf", "-inf", "+inf", "nan", "infinity"), ("string", path, o)
    elif o is None:
        leaf = path.rsplit(".", 1)
        sub = at(leaf[0]) if len(leaf) == 2 else j
        why = sub.get("not_available", {}) if isinstance(sub, dict) else {}
        assert path in nf or leaf[-1] in why or path in na, ("unexplained null", path)
walk(j, "")
print(len(nf))
PY
    ); then
      ok "$name/summary.json: one type per key ($msg non-finite values under \"nonfinite\")"
    else
      bad "$name/summary.json: $(echo "$msg" | tail -1)"
    fi
  fi
done
[ "$ntsv" -ge 20 ] && ok "$ntsv data files checked" || bad "only $ntsv data files checked"

# A non-finite number in a data file: the tokens inf/nan (ode with a power-law spectrum whose
# upper bound overflows, as in test_regression), read by NumPy as floats.
"$dpdyn" ode --d=20000 --n=40000 --spectrum=powerlaw:1.5 --eta0=1.2 --grid=5 --method=bdf \
  --out="$work/nf" >/dev/null 2>&1 || bad "ode with an overflowing bound failed"
if grep -qP '\tinf(\t|$)' "$work/nf/trajectory.tsv" && ! grep -qiP '(^|\t)(-?nan\(|-nan|infinity)' "$work/nf/trajectory.tsv"; then
  ok "non-finite values written as the token inf"
else
  bad "non-finite tokens: $(tsv_rows "$work/nf/trajectory.tsv" | head -2)"
fi

# Output directories.
cd "$work" || exit 1
"$dpdyn" ode --d=20 --n=60 --grid=5 >/dev/null 2>&1 && "$dpdyn" simulate --d=20 --n=60 --grid=5 \
  --seeds=2 >/dev/null 2>&1
if [ -s dpdyn-out/ode-linreg/trajectory.tsv ] && [ -s dpdyn-out/simulate-linreg/summary.json ] &&
  grep -q '^# out = ./dpdyn-out/ode-linreg$' dpdyn-out/ode-linreg/trajectory.tsv; then
  ok "default out: ./dpdyn-out/<command>-<model>, one directory per command"
else
  bad "default out: $(ls -R dpdyn-out 2>&1 | tr '\n' ' ')"
fi
"$dpdyn" compare --d=20 --n=60 --grid=5 --seeds=2 --plot=1 --out="$work/od" >/dev/null 2>&1
"$dpdyn" simulate --d=20 --n=60 --grid=5 --seeds=2 --out="$work/od" >/dev/null 2>&1
if [ ! -e "$work/od/compare.png" ] && [ ! -e "$work/od/compare.gp" ] && [ -s "$work/od/trajectory.tsv" ] &&
  grep -q '^# command: simulate$' "$work/od/trajectory.tsv"; then
  ok "a run replaces an earlier run's files: no stale compare.png after simulate"
else
  bad "stale files after simulate: $(ls "$work/od" | tr '\n' ' ')"
fi
echo "mine" >"$work/od/notes.txt"
before=$(ls -A "$work/od" | tr '\n' ' ')
if "$dpdyn" simulate --d=20 --n=60 --grid=5 --seeds=2 --out="$work/od" >/dev/null 2>"$work/od.err"; then
  bad "a directory holding a user's file was replaced"
elif grep -q "notes.txt" "$work/od.err" && [ "$(cat "$work/od/notes.txt")" = mine ] &&
  [ "$(ls -A "$work/od" | tr '\n' ' ')" = "$before" ]; then
  ok "a user's file is kept (the run is refused, nothing removed): $(head -1 "$work/od.err")"
else
  bad "user's file: $(head -1 "$work/od.err"); $(ls -A "$work/od" | tr '\n' ' ')"
fi
rm "$work/od/notes.txt"
before=$(ls -A "$work/od" | tr '\n' ' ')
if ! "$dpdyn" compare --d=20 --n=60 --grid=5 --seeds=-1 --out="$work/od" >/dev/null 2>&1 &&
  [ "$(ls -A "$work/od" | tr '\n' ' ')" = "$before" ] && grep -q '^# command: simulate$' "$work/od/trajectory.tsv"; then
  ok "an invalid value writes and removes nothing"
else
  bad "invalid value touched the directory: $(ls -A "$work/od" | tr '\n' ' ')"
fi
# The words of the simulate/sde figure follow the command (read from the trajectory's column names):
# an SVG of each, drawn by `dpdyn plot`, names DP-SGD or the SDE and its (expected) clipped fraction.
for cmd in simulate sde; do
  "$dpdyn" "$cmd" --d=20 --n=60 --c=0.3 --rho=1 --seeds=4 --grid=5 --plot=0 \
    --out="$work/words-$cmd" >/dev/null 2>&1 &&
    "$dpdyn" plot "$work/words-$cmd" --format=svg >/dev/null 2>&1
done
sim_svg=$work/words-simulate/simulate.svg sde_svg=$work/words-sde/sde.svg
if [ -s "$sim_svg" ] && [ -s "$sde_svg" ] && grep -q "DP-SGD mean" "$sim_svg" && ! grep -q "SDE" "$sim_svg" &&
  grep -q "SDE (H-DP-SGD) mean" "$sde_svg" && ! grep -q "DP-SGD mean" "$sde_svg" &&
  grep -q "expected clipped fraction" "$sde_svg"; then
  ok "the simulate and sde figures name their own curves"
else
  bad "figure words: simulate $(grep -o 'DP-SGD mean\|SDE[^<]*mean' "$sim_svg" | head -1), sde $(grep -o 'DP-SGD mean\|SDE[^<]*mean' "$sde_svg" | head -1)"
fi
# sde has its own figure script (plots/sde.gp), written next to the figure
if [ -s "$work/words-sde/sde.gp" ] && grep -q '^# dpdyn sde:' "$work/words-sde/sde.gp"; then
  ok "sde is drawn by its own script sde.gp"
else
  bad "sde figure script: $(head -1 "$work/words-sde/sde.gp" 2>/dev/null)"
fi
# Every single-run figure's title names the privacy as the user gave it: epsilon and delta (not
# the 6-digit rho derived from them), zCDP, or rho; rf the same (epsilon with its delta, sigma).
# (the symbols ε, δ, ρ, σ are the title's: the caption below names the keys as typed, rho = ...)
title_of() { grep -o '<text>[^<]*' "$1" | sed 's/<text>//' | grep -E '^(linreg|rf) |[εδρσ] = |zCDP' | tr '\n' ' '; }
P=(--d=20 --n=60 --grid=5 --seeds=2 --c=0.5 --plot=0)
R=(--model=rf --d=10 --n=40 --p=30 --steps=20 --seeds=2 --clip=0.5 --plot=0)
titles=(
  "simulate|simulate ${P[*]} --epsilon=1 --delta=1e-5|ε = 1, δ = 1e-05"
  "ode|ode ${P[*]} --epsilon=1 --delta=1e-5|ε = 1, δ = 1e-05"
  "compare|compare ${P[*]} --epsilon=1 --delta=1e-5|ε = 1, δ = 1e-05"
  "compare3|compare ${P[*]} --sde=1 --zcdp=0.5|0.5-zCDP"
  "sde|sde ${P[*]} --epsilon=2 --delta=1e-6|ε = 2, δ = 1e-06"
  "tune|tune --d=20 --n=60 --grid=5 --confirm_seeds=2 --plot=0 --epsilon=1 --delta=1e-5|ε = 1, δ = 1e-05"
  "rf_simulate|simulate ${R[*]} --epsilon=1 --delta=1e-3|ε = 1, δ = 0.001"
  "rf_ou|ou ${R[*]} --sigma=2|σ = 2"
  "rf_compare|compare ${R[*]} --epsilon=1|ε = 1, δ = 0.025"
  "compare|compare ${P[*]} --rho=1.5|ρ = 1.5"
)
for t in "${titles[@]}"; do
  fig=${t%%|*} rest=${t#*|}
  args=${rest%%|*} want=${rest#*|}
  dir=$work/title-$fig-$(printf '%s' "$args" | cksum | cut -d' ' -f1)
  # shellcheck disable=SC2086 # the arguments are words
  "$dpdyn" $args --out="$dir" >/dev/null 2>&1 && "$dpdyn" plot "$dir" --format=svg >/dev/null 2>&1
  svg=$dir/$fig.svg
  if [ -s "$svg" ] && title_of "$svg" | grep -qF "$want" && ! title_of "$svg" | grep -q 'ρ = 0\.[0-9]\{4\}'; then
    ok "$fig title names the privacy as given: $want"
  else
    bad "$fig title ($args): $(title_of "$svg" 2>/dev/null)"
  fi
done
finish output_format
