#!/usr/bin/env bash
# Regenerates every figure and table of the documentation into docs/figures/ (and docs/*.md
# where a study writes its own page). Deterministic: fixed seeds throughout.
# usage: scripts/reproduce.sh            (BUILD=dir for another build directory)
# SPDX-License-Identifier: MIT
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build}
dpdyn=$build/dpdyn
figs=$src/docs/figures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$figs"
[ -x "$dpdyn" ] || { echo "reproduce: $dpdyn not built (scripts/setup.sh)" >&2; exit 1; }

step() { echo "== $*" >&2; }

# Issue 2: the quickstart and one comparison per schedule family of arXiv:2505.16329.
step "quickstart (DP-SGD vs ODE)"
"$dpdyn" compare "$src/models/linreg/quickstart.ini" --out="$work/quickstart" >/dev/null
cp "$work/quickstart/compare.png" "$figs/quickstart.png"
for m in output_perturbation constant_noise optimal; do
  step "compare $m"
  "$dpdyn" compare "$src/models/linreg/$m.ini" --out="$work/$m" >/dev/null
  cp "$work/$m/compare.png" "$figs/compare_$m.png"
done

# Issue 3: three-way comparison (DP-SGD, SDE, ODE) on an isotropic and a power-law spectrum.
step "three-way comparison"
"$dpdyn" compare "$src/models/linreg/quickstart.ini" --sde=1 --out="$work/c3" >/dev/null
cp "$work/c3/compare3.png" "$figs/compare3_levels.png"
"$dpdyn" compare --d=1000 --n=4000 --spectrum=powerlaw:1.2 --c=0.5 --rho=1 --schedule=sqrt \
  --eta0=2 --seeds=64 --sde=1 --out="$work/c3p" >/dev/null
cp "$work/c3p/compare3.png" "$figs/compare3_powerlaw.png"

# Heavy-tailed label noise: Student-t with 3 degrees of freedom.
step "Student-t label noise"
"$dpdyn" compare --d=1000 --n=4000 --noise=student:3 --c=0.5 --rho=1 --schedule=sqrt --eta0=2 \
  --seeds=64 --out="$work/student" >/dev/null
cp "$work/student/compare.png" "$figs/compare_student3.png"

# Tuning: the (c, eta~(0)) risk surface with the optimum, confirmed by simulation.
step "tune (heat map + confirmation)"
"$dpdyn" tune --d=500 --gamma=0.05 --rho=1 --schedule=optimal --out="$work/tune" >/dev/null
cp "$work/tune/tune.png" "$figs/tune_optimal.png"

# SDE: the simulation-to-ODE gap against n.
step "SDE gap table"
BUILD=$build "$src/scripts/sde_gap_table.sh" 1024 101 0 500 2000 8000 >"$figs/sde_gap_table.txt"

# Rates of the three schedule families and the clipping sweep (writes docs/rates.md too).
step "rates"
DPDYN=$dpdyn "$src/scripts/rates.sh"

# Scaling laws on power-law spectra (writes docs/scaling.md; about an hour on 2 shared cores).
step "scaling"
DPDYN=$dpdyn "$src/scripts/scaling.sh"

echo "reproduce: figures in $figs" >&2
