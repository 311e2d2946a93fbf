#!/usr/bin/env bash
# Scaling laws of tuned DP-SGD on power-law spectra (docs/scaling.md), on the deterministic
# equivalent with `dpdyn tune`.
# SPDX-License-Identifier: MIT
#
# For every power-law exponent alpha (spectrum powerlaw:alpha, lambda_i ~ i^-alpha normalised to
# mean 1 at the dimension d), privacy rho and schedule family (const, sqrt, optimal), the released
# excess risk R_out of the ODE is minimised over the clipping scale c and the schedule parameters
# at every gamma of a log grid (10^(-k/2), k = 2..9: 0.1 ... 3.2e-5, 3.5 decades), at a fixed
# large d (default 1e6; n = round(d/gamma), the gamma recorded is d/n exactly). theta* is `flat`
# (equal energy in every eigendirection: the mean of a random direction, deterministic, and the
# compressed ODE then costs nothing in d). A second dimension (2d) is run for alpha = 1.5 and 2 at
# rho = 1 over the smallest gammas, to check that the fitted exponents do not move with d.
# The ODE is the deterministic equivalent at that d with the tune's default finite_size = auto
# (docs/finite_size.md: corrected where the spread of |x|^2/d matters, here alpha >= 1);
# EXTRA_KEYS is passed to every tune (e.g. EXTRA_KEYS="--finite_size=off" for the asymptotic
# equivalent everywhere).
#
# Writes OUT/scaling.tsv (every tuned point), OUT/scaling_slopes.tsv (local slopes),
# OUT/scaling_fit.tsv (fitted exponents, windows, theory), OUT/scaling.png and REPORT.
# Resumable: every finished tune keeps its row in ROWS (default BUILD/scaling_rows, or OUT/rows
# with --out), and a run skips the tunes whose rows are there, so a stopped study goes on where it
# stopped. ROWS also records the tune settings (accuracy, EXTRA_KEYS, zeta, dpdyn's version and
# the last commit that changed src/ or include/); a run with other settings is refused (rm -rf
# ROWS, or give another ROWS).
# usage: scripts/scaling.sh [--quick] [--refit] [--out=DIR] [--report=FILE.md]
#   default OUT = docs/figures, REPORT = docs/scaling.md; --quick: d = 1000, alpha = 2, rho = 1,
#   three gammas, families const and sqrt (seconds; a smoke test of the pipeline, not a result)
#   and REPORT = OUT/scaling.md; --refit: no tunes, the fits, report and figure again from
#   OUT/scaling.tsv (e.g. after editing scripts/scaling_prose.md).
# environment: DPDYN (default build/dpdyn), PYTHON (default /usr/bin/python3), JOBS (parallel
#   tunes, default 2), EXTRA_KEYS (default empty), D (override d), ALPHAS, RHOS, FAMILIES
#   (space-separated lists overriding the defaults), ROWS (see above).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dpdyn=${DPDYN:-$src/build/dpdyn}
python=${PYTHON:-/usr/bin/python3}
jobs=${JOBS:-2}
extra=${EXTRA_KEYS:-}
quick=0
refit=0
out=$src/docs/figures
out_given=0
report=
for a in "$@"; do
  case $a in
  --quick) quick=1 ;;
  --refit) refit=1 ;;
  --out=*)
    out=${a#--out=}
    out_given=1
    ;;
  --report=*) report=${a#--report=} ;;
  *)
    echo "scaling.sh: unknown argument '$a' (allowed: --quick, --refit, --out=DIR, --report=FILE)" >&2
    exit 1
    ;;
  esac
done
# absolute, so that gnuplot never reads it as a pipe (a leading "<"; docs/output.md)
out=$(realpath -m -- "$out")
[ -x "$dpdyn" ] || { echo "scaling.sh: build dpdyn first ($dpdyn)" >&2; exit 1; }
zeta=0.5
# Tuner accuracy: rtol 1e-7 and 2 bands per decade with 4 Gauss nodes per band move R_out by
# < 1e-5 relative against the defaults (measured at alpha = 1.5, d = 1e6), far below what a
# slope fit resolves, at a third of the cost; xtol 1e-5 with one restart moves it by < 1e-9 with
# 20-45 % fewer evaluations (docs/tune.md).
acc="--rtol=1e-7 --compress_bands=2 --compress_nodes=4 --xtol=1e-5 --restarts=1"
if [ -n "${D+set}" ]; then
  case $D in
  '' | 0 | *[!0-9]*)
    echo "scaling.sh: D must be a positive integer (the dimension), got '$D'" >&2
    exit 1
    ;;
  esac
fi
if [ $quick = 1 ]; then
  acc="--rtol=1e-6 --compress_bands=1 --compress_nodes=4"
  d=${D:-1000}
  alphas=${ALPHAS:-2}
  rhos=${RHOS:-1}
  families=${FAMILIES:-const sqrt}
  ks="4 5 6"
  d2=
  [ -n "$report" ] || report=$out/scaling.md
else
  d=${D:-1000000}
  alphas=${ALPHAS:-0.5 1 1.5 2}
  rhos=${RHOS:-0.1 1 10}
  families=${FAMILIES:-const sqrt optimal}
  ks="2 3 4 5 6 7 8 9"
  d2=$((2 * d))
  [ -n "$report" ] || report=$src/docs/scaling.md
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
figure() {
  if command -v gnuplot >/dev/null; then
    gnuplot -c "$src/plots/scaling.gp" "$out/scaling.tsv" "$out/scaling_fit.tsv" \
      "$out/scaling.png" "$d" "$zeta" "$alphas" "$rhos" "$families"
  else
    echo "scaling: gnuplot not found, no figure" >&2
  fi
}
if [ $refit = 1 ]; then
  elapsed=$(sed -n 's/.*wall seconds[^:]*: \([0-9]*\).*/\1/p' "$out/scaling.tsv")
  $python "$src/scripts/scaling_fit.py" "$out" "$report" "${elapsed:-?}"
  figure
  exit 0
fi

# The job list: one line "alpha rho family d n" per tune.
for alpha in $alphas; do
  for rho in $rhos; do
    for f in $families; do
      for k in $ks; do
        echo "$alpha $rho $f $d $($python -c "print(max(1, round($d / 10 ** (-$k / 2))))")"
      done
    done
  done
done >"$work/jobs"
if [ -n "$d2" ]; then
  for alpha in 1.5 2; do
    for f in $families; do
      for k in 7 8 9; do
        echo "$alpha 1 $f $d2 $($python -c "print(round($d2 / 10 ** (-$k / 2)))")"
      done
    done
  done >>"$work/jobs"
fi
# The rows of finished tunes, one file per tune, and the settings they were computed with.
if [ $out_given = 1 ]; then rows=${ROWS:-$out/rows}; else rows=${ROWS:-$src/build/scaling_rows}; fi
mkdir -p "$rows"
# the last commit that changed the sources (a tuned point depends on the code, not on the docs)
srcrev=$(git -C "$src" log -1 --format=%h -- src include 2>/dev/null || true)
settings="dpdyn $("$dpdyn" --version 2>/dev/null | head -1 | awk '{print $NF}') (src ${srcrev:-unknown}); zeta = $zeta; $acc${extra:+ $extra}"
if [ -s "$rows/settings" ] && [ "$(cat "$rows/settings")" != "$settings" ]; then
  echo "scaling.sh: $rows holds tunes made with other settings ('$(cat "$rows/settings")', now '$settings'); rm -rf it or set ROWS" >&2
  exit 1
fi
echo "$settings" >"$rows/settings"
total=$(wc -l <"$work/jobs")
while read -r alpha rho f dd n; do
  [ -s "$rows/$alpha-$rho-$f-$dd-$n.tsv" ] || echo "$alpha $rho $f $dd $n"
done <"$work/jobs" >"$work/todo"
echo "scaling: $total tunes, $((total - $(wc -l <"$work/todo"))) already in $rows; $(wc -l <"$work/todo") to run on $jobs jobs" >&2

# One tune; writes its row (tab-separated, the columns of scaling.tsv, then the tune's wall
# seconds) to ROWS/<alpha>-<rho>-<family>-<d>-<n>.tsv, published by a rename once complete.
one() {
  local alpha=$1 rho=$2 f=$3 d=$4 n=$5
  local dir t0
  dir=$(mktemp -d "$work/t.XXXXXX")
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if ! nice "$dpdyn" tune --d="$d" --n="$n" --spectrum=powerlaw:"$alpha" --theta_star=flat \
    --zeta=$zeta --rho="$rho" --schedule="$f" --heatmap=0 --confirm_seeds=0 --plot=0 \
    --threads=1 $acc $extra --out="$dir/o" >/dev/null 2>"$dir/err"; then
    echo "scaling: tune failed at alpha=$alpha rho=$rho $f d=$d n=$n: $(head -1 "$dir/err")" >&2
    return 1
  fi
  $python - "$dir/o/summary.json" "$alpha" "$rho" "$f" "$d" "$n" "$(($(date +%s) - t0))" \
    >"$dir/row" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); o = s["optimum"]
alpha, rho, fam, d, n, secs = sys.argv[2:8]
num = lambda v: "%.10g" % float(v)
print("\t".join([alpha, rho, fam, d, n, num(int(d) / int(n)), num(s["final_excess_risk"]),
                 num(s["excess_risk_before_release"]), num(s["release_jump"]), num(o["c"]),
                 num(o["eta_at_0"]), num(o.get("c1", "nan")), num(o.get("offset_scale", "nan")),
                 str(len(s["at_bound"])), str(s["evaluations"]), secs]))
PY
  mv "$dir/row" "$rows/$alpha-$rho-$f-$d-$n.tsv"
  rm -rf "$dir"
  echo "scaling: alpha=$alpha rho=$rho $f d=$d gamma=$(echo "$d $n" | awk '{printf "%.3g", $1 / $2}') done" >&2
}
export -f one
export dpdyn python work zeta acc extra rows
xargs -r -P "$jobs" -L 1 bash -c 'one "$@"' _ <"$work/todo"

# scaling.tsv: the rows of this study's jobs (a ROWS shared with a larger study keeps its others)
while read -r alpha rho f dd n; do
  cat "$rows/$alpha-$rho-$f-$dd-$n.tsv"
done <"$work/jobs" >"$work/all"
# the sum of the tunes' wall seconds (each tune on one thread)
elapsed=$(awk -F'\t' '{ s += $16 } END { printf "%d", s }' "$work/all")
{
  echo "# dpdyn $("$dpdyn" --version 2>/dev/null | head -1 | awk '{print $NF}')"
  echo "# command: scripts/scaling.sh$([ $quick = 1 ] && echo " --quick")"
  echo "# figure: scaling"
  echo "# zeta = $zeta; theta_star = flat; spectrum = powerlaw:alpha; tuned R_out of the ODE (dpdyn tune $acc${extra:+ $extra}); at_bound = number of tuned parameters at a box edge; seconds = the tune's wall time on one thread; sum of the tunes' wall seconds: $elapsed"
  printf 'alpha\trho\tfamily\td\tn\tgamma\tR_out\tbefore_release\trelease_jump\tc\teta_at_0\tc1\toffset_scale\tat_bound\tevaluations\tseconds\n'
  sort -t$'\t' -k1,1g -k2,2g -k3,3 -k4,4g -k6,6gr "$work/all"
} >"$out/scaling.tsv"
echo "scaling: the tunes took $elapsed s in all (one thread each)" >&2

$python "$src/scripts/scaling_fit.py" "$out" "$report" "$elapsed"
figure
echo "scaling: wrote $out/scaling{.tsv,_slopes.tsv,_fit.tsv,.png} and $report" >&2
