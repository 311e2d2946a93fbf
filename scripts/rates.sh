#!/usr/bin/env bash
# Rates study of the schedule families of arXiv:2505.16329 (docs/math.md §1.8) on the deterministic equivalent, with `dpdyn tune`.
# SPDX-License-Identifier: MIT
#
# 1. Rates: for the three schedule families of arXiv:2505.16329 -- output perturbation (const),
#    constant noise (sqrt) and the optimal decaying schedule -- the released excess risk R_out
#    is minimised over the clipping scale c and the schedule parameters at every gamma of a
#    log-spaced grid (0.3 ... 0.003, the range asked for, continued down to 1e-6 to expose the
#    asymptotics), at fixed rho and zeta = 0.5 on the isotropic spectrum. For the isotropic
#    spectrum the grouped ODE has a single group and depends on d only through gamma = d/n (and
#    on theta* only through |theta*| = 1), so d = 1000 is used only to make n = d/gamma an
#    integer with a negligible rounding of gamma. Log-log slopes are fitted over the small-gamma
#    end; the optimal family is compared with K (gamma + gamma^2/rho^2), K fitted there.
# 2. Clipping: R_out against c at fixed gamma, (a) re-tuning the schedule at every c (the
#    profile min over schedule parameters) and (b) keeping the schedule fixed at the joint
#    optimum, with a c^2 reference.
# Writes docs/figures/rates*.tsv, docs/figures/rates*.png and docs/rates.md.
# usage: scripts/rates.sh [RHO ...]        (default: 1 0.1; the first one drives the c sweep)
# environment: DPDYN (default build/dpdyn), PYTHON (default /usr/bin/python3)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dpdyn=${DPDYN:-$src/build/dpdyn}
python=${PYTHON:-/usr/bin/python3}
figs=$src/docs/figures
rhos=("$@")
[ ${#rhos[@]} -gt 0 ] || rhos=(1 0.1)
zeta=0.5
d=1000
c_gamma=0.01 # gamma of the clipping sweep
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$figs"
[ -x "$dpdyn" ] || { echo "rates.sh: build dpdyn first ($dpdyn)" >&2; exit 1; }

# gamma_k = 0.3 * 10^(-k/4), k = 0..22: 0.3 ... 9.5e-7 (k <= 8 is the range 0.3 ... 0.003).
gammas=$($python -c 'print(" ".join("%.6g" % (0.3 * 10 ** (-k / 4)) for k in range(23)))')
families=(const sqrt optimal)

# One tune run; prints the summary path.
tune() {
  local out=$1
  shift
  "$dpdyn" tune --d=$d --zeta=$zeta --heatmap=0 --confirm_seeds=0 --plot=0 --out="$out" "$@" \
    >/dev/null
  echo "$out/summary.json"
}

# Tables: one block per family (const, sqrt, optimal: gnuplot index 0, 1, 2), two blank lines
# between blocks, each block opening with the row of column names (gnuplot 5.4 reads the names
# from the first row of the selected block; rates_fit.py skips it).
for rho in "${rhos[@]}"; do
  table=$figs/rates_rho$rho.tsv
  for g in $gammas; do
    for f in "${families[@]}"; do
      s=$(tune "$work/r-$rho-$g-$f" --gamma="$g" --rho="$rho" --schedule=$f)
      $python - "$s" "$g" "$f" >>"$work/block-$rho-$f" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); o = s["optimum"]
print(sys.argv[2], sys.argv[3], "%.10g %.10g %.10g %.6g %.6g %s %s %s %d" % (
    s["final_excess_risk"], s["excess_risk_before_release"], s["release_jump"], o["c"],
    o["eta_at_0"], o.get("c1", "nan"), o.get("offset_scale", "nan"),
    ",".join(s["at_bound"]) or "-", s["evaluations"]))
PY
    done
    echo "rates: rho = $rho gamma = $g done" >&2
  done
  {
    echo "# rates: tuned R_out of the ODE (dpdyn tune), iso spectrum, zeta = $zeta, rho = $rho"
    echo "# blocks: const, sqrt, optimal (gnuplot index 0, 1, 2)"
    h="gamma family R_out before_release release_jump c eta_at_0 c1 offset_scale at_bound evaluations"
    echo "# columns: $h"
    echo "$h"
    cat "$work/block-$rho-const"
    printf '\n\n%s\n' "$h"
    cat "$work/block-$rho-sqrt"
    printf '\n\n%s\n' "$h"
    cat "$work/block-$rho-optimal"
  } >"$table"
done

# Clipping sweep at gamma = c_gamma, rho = first rho: profile (re-tuned schedule) and fixed.
rho=${rhos[0]}
ctable=$figs/rates_c.tsv
echo "# R_out against c at gamma = $c_gamma, rho = $rho, zeta = $zeta (iso); retuned: the schedule re-optimised at each c; fixed: the schedule of the joint optimum" >"$ctable"
echo "# blocks: const, sqrt, optimal (gnuplot index 0, 1, 2)" >>"$ctable"
echo "# columns: c family R_out_retuned R_out_fixed eta_at_0_retuned" >>"$ctable"
cs=$($python -c 'print(" ".join("%.6g" % (10 ** (-2 + k / 6)) for k in range(25)))')
for f in "${families[@]}"; do
  [ $f = const ] || printf '\n\n' >>"$ctable"
  echo "c family R_out_retuned R_out_fixed eta_at_0_retuned" >>"$ctable"
  joint=$(tune "$work/joint-$f" --gamma=$c_gamma --rho="$rho" --schedule=$f)
  if [ $f = optimal ]; then
    read -r c1 c2 c3 < <($python -c "import json; o = json.load(open('$joint'))['optimum']; print(repr(o['c1']), repr(o['c2']), repr(o['c3']))")
    fixed=(--c1="$c1" --c2="$c2" --c3="$c3")
    list=c1,c2,c3
  else
    eta0=$($python -c "import json; print(repr(json.load(open('$joint'))['optimum']['eta0']))")
    fixed=(--eta0="$eta0")
    list=eta0
  fi
  for c in $cs; do
    s=$(tune "$work/c-$f-$c" --gamma=$c_gamma --rho="$rho" --schedule=$f --tune=$list --c="$c")
    "$dpdyn" ode --d=$d --zeta=$zeta --gamma=$c_gamma --rho="$rho" --schedule=$f --c="$c" \
      "${fixed[@]}" --grid=2 --out="$work/f-$f-$c" >/dev/null
    $python - "$s" "$work/f-$f-$c/summary.json" "$c" "$f" >>"$ctable" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
print(sys.argv[3], sys.argv[4], "%.10g %.10g %.6g" % (
    t["final_excess_risk"], f["final_excess_risk"], t["optimum"]["eta_at_0"]))
PY
  done
  echo "rates: clipping sweep $f done" >&2
done

# Fits, the markdown report and the figures.
$python "$src/scripts/rates_fit.py" "$figs" "$src/docs/rates.md" "$zeta" "$c_gamma" "${rhos[@]}"
for rho in "${rhos[@]}"; do
  read -r k_opt k_const k_sqrt k_a k_b < "$figs/rates_rho$rho.fit"
  gnuplot -c "$src/plots/rates.gp" "$figs/rates_rho$rho.tsv" "$figs/rates_rho$rho.png" "$rho" \
    "$zeta" "$k_opt" "$k_const" "$k_sqrt" "$k_a" "$k_b"
done
read -r k_c2 < "$figs/rates_c.fit"
gnuplot -c "$src/plots/rates_c.gp" "$ctable" "$figs/rates_c.png" "$c_gamma" "${rhos[0]}" "$zeta" \
  "$k_c2"
echo "rates: wrote $figs/rates_rho*.{tsv,png}, $figs/rates_c.{tsv,png}, docs/rates.md" >&2
