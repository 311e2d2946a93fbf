#!/usr/bin/env bash
# scripts/scaling.sh --quick end to end (docs/scaling.md): the tables exist and are readable by
# column name (docs/output.md), every tuned risk is finite and below R(0), the fitted slopes are
# finite and in a sane range, the report and (with gnuplot) the figure are written, a second
# run resumes from the rows of the first, and an unknown argument is refused.
# usage: test_scaling.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
src=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
py=$(numpy_python)
if [ -z "$py" ]; then
  echo "test_scaling: no python3 with numpy, skipped"
  exit 0
fi
# the machinery, not the numbers: the asymptotic equivalent keeps the quick grid to seconds
if DPDYN=$dpdyn PYTHON=$py EXTRA_KEYS=--finite_size=off "$src/scripts/scaling.sh" --quick --out="$work/s" >"$work/log" 2>&1; then
  ok "scaling.sh --quick ran"
else
  bad "scaling.sh --quick failed: $(tail -3 "$work/log")"
fi
for f in scaling.tsv scaling_slopes.tsv scaling_fit.tsv scaling.md; do
  [ -s "$work/s/$f" ] && ok "$f written" || bad "missing $f"
done
if command -v gnuplot >/dev/null; then
  [ -s "$work/s/scaling.png" ] && ok "scaling.png written" || bad "missing scaling.png"
fi
if "$py" - "$work/s" >"$work/check" 2>&1 <<'PY'; then
import math, sys
import numpy as np
d = sys.argv[1]
def load(name):
    lines = [l for l in open("%s/%s" % (d, name)) if not l.startswith("#")]
    t = np.genfromtxt(lines, delimiter="\t", names=True, dtype=None, encoding="utf-8")
    return np.atleast_1d(t)
pts = load("scaling.tsv")
assert len(pts) == 6, "6 tuned points expected, got %d" % len(pts)
R = pts["R_out"]
assert np.all(np.isfinite(R)) and np.all(R > 0) and np.all(R < 0.5), R
assert set(pts["family"]) == {"const", "sqrt"}, set(pts["family"])
assert np.allclose(pts["gamma"], pts["d"] / pts["n"], rtol=1e-9)
fit = load("scaling_fit.tsv")
assert len(fit) == 2, len(fit)
for r in fit:
    s = float(r["slope"])
    assert math.isfinite(s) and 0 < s < 2, ("slope", r["family"], s)
    assert math.isfinite(float(r["slope_se"])), r
sl = load("scaling_slopes.tsv")
assert len(sl) == 4 and np.all(np.isfinite(sl["slope"])), sl
# the risk grows with gamma for every family (more samples per dimension: lower risk)
assert np.all(sl["slope"] > 0), sl["slope"]
print("slopes", [(str(r["family"]), round(float(r["slope"]), 3)) for r in fit])
PY
  ok "tables read by column name; $(cat "$work/check")"
else
  bad "table check: $(tail -3 "$work/check")"
fi
grep -q "Fitted exponents" "$work/s/scaling.md" && ok "report has the exponent table" ||
  bad "report lacks the exponent table"
# resuming: a second run finds every row and tunes nothing; without one row it tunes that one
# alone and the table is the same; other settings are refused
cut -f1-15 "$work/s/scaling.tsv" | grep -v '^#' >"$work/first"
run_again() { DPDYN=$dpdyn PYTHON=$py EXTRA_KEYS=$1 "$src/scripts/scaling.sh" --quick --out="$work/s" >"$work/log2" 2>&1; }
if run_again --finite_size=off && grep -q "6 already in .*; 0 to run" "$work/log2"; then
  ok "a second run resumes with nothing to tune"
else
  bad "second run: $(grep -m1 'already in' "$work/log2")"
fi
rm -f "$work"/s/rows/2-1-sqrt-1000-1000000.tsv
if run_again --finite_size=off && grep -q "5 already in .*; 1 to run" "$work/log2" &&
  cut -f1-15 "$work/s/scaling.tsv" | grep -v '^#' | cmp -s - "$work/first"; then
  ok "a run without one row tunes that one and gives the same table"
else
  bad "resumed run: $(grep -m1 'already in' "$work/log2")"
fi
if ! run_again "" && grep -q "holds tunes made with other settings" "$work/log2"; then
  ok "rows made with other settings refused"
else
  bad "other settings: $(tail -1 "$work/log2")"
fi
if DPDYN=$dpdyn "$src/scripts/scaling.sh" --bogus >/dev/null 2>"$work/err"; then
  bad "unknown argument accepted"
else
  grep -q "unknown argument '--bogus'" "$work/err" && ok "unknown argument refused" ||
    bad "unknown argument: $(cat "$work/err")"
fi
if D=1e7 DPDYN=$dpdyn "$src/scripts/scaling.sh" --out="$work/bad" >/dev/null 2>"$work/err"; then
  bad "D=1e7 accepted"
else
  # the one line of the refusal, before any shell arithmetic on D
  grep -q "D must be a positive integer (the dimension), got '1e7'" "$work/err" &&
    [ "$(wc -l <"$work/err")" -eq 1 ] && [ ! -e "$work/bad" ] &&
    ok "D=1e7 refused, nothing written" || bad "D=1e7: $(cat "$work/err")"
fi
finish test_scaling
