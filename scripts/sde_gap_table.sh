#!/usr/bin/env bash
# Gap table of docs/math.md §1.6-1.7: |mean - ODE| (sup over the grid and at the released final
# iterate) for the DP-SGD simulation and for the homogenized SDE, at n in {500, 2000, 8000} with
# gamma = 0.25 (d = n/4), isotropic spectrum, c = 0.5, rho = 1, sqrt schedule (eta0 = 1),
# zeta = 0.5, 64 replicates, grid 101, with standard errors and the gaps times sqrt(n).
# Three `dpdyn sweep` grids over d (gamma fixed, so n = d / gamma): `ode`, `simulate` (seed 1) and
# `sde` (seed 2: its Philox streams independent of the simulation's, as the sde of `compare
# --sde=1` is not; with the isotropic spectrum the direction of theta*, drawn from the seed too,
# does not change the law of either). The gaps come from the points' trajectory.tsv:
#   sup_gap   = max over the grid of |mean(t_j) - R_ode(t_j)| (t = 1: before release, vs R(1-)),
#   sup_se    = the standard error of the mean at the maximising t_j (sup_in_se = their ratio),
#   final_gap = |mean released risk - R_out| with its SE, and both gaps times sqrt(n);
#   seconds   = wall_seconds of the point's run (set-up included).
# The means carry Monte-Carlo noise: a gap of a few SE is noise, not bias (the sup over 101
# correlated grid points of pure noise is typically 2-3 SE).
# Usage: scripts/sde_gap_table.sh [seeds [grid [threads [n1 n2 ...]]]]
#        (BUILD=dir to use another build directory; the sweeps stay in SWEEPS, default
#        BUILD/sde_gap_table/seeds<seeds>-grid<grid>: a stopped run resumes; MPIRUN="mpirun -np 2"
#        shares each sweep's points among 2 ranks)
# Prints a gnuplot-ready table (whitespace columns, '#' header lines) on stdout.
# SPDX-License-Identifier: MIT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
if [ ! -x "$build/dpdyn" ]; then
  echo "sde_gap_table: $build/dpdyn not built (cmake --build $build)" >&2
  exit 1
fi
seeds=${1:-64}
grid=${2:-101}
threads=${3:-0}
if [ $# -gt 3 ]; then
  shift 3
  ns=("$@")
else
  ns=(500 2000 8000)
fi
gamma=0.25
ds=$(printf '%s\n' "${ns[@]}" | awk -v g=$gamma '{ printf "%s%d", (NR > 1 ? "," : ""), int(g * $1 + 0.5) }')
sweeps=${SWEEPS:-$build/sde_gap_table/seeds$seeds-grid$grid}
mkdir -p "$sweeps"
common=(--gamma=$gamma --d="$ds" --spectrum=iso --theta_star=random --theta_norm=1 --c=0.5 --rho=1
        --zeta=0.5 --noise=gaussian --schedule=sqrt --eta0=1 --grid="$grid" --threads="$threads"
        --plot_y=none)
for cmd in ode simulate sde; do
  case $cmd in
    ode) extra=() ;;
    simulate) extra=(--seeds="$seeds" --seed=1) ;;
    sde) extra=(--seeds="$seeds" --seed=2) ;;
  esac
  echo "== dpdyn sweep $cmd ${common[*]} ${extra[*]}" >&2
  ${MPIRUN:-} "$build/dpdyn" sweep $cmd "${common[@]}" "${extra[@]}" --out="$sweeps/$cmd" >/dev/null
done

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
python3 - "$sweeps" "$seeds" "$grid" "$threads" "$("$build/dpdyn" --version)" <<'PY'
import json, math, os, sys

sweeps, seeds, grid, threads, version = sys.argv[1:6]


def table(path):
    """sweep.tsv as a list of dicts (text values)."""
    rows = [l.rstrip("\n").split("\t") for l in open(path) if not l.startswith("#")]
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def trajectory(path):
    """columns of a trajectory.tsv by name (the header row after the '#' lines)."""
    rows = [l.rstrip("\n").split("\t") for l in open(path) if not l.startswith("#") and l.strip()]
    return {n: [float(r[k]) for r in rows[1:]] for k, n in enumerate(rows[0])}


def point(cmd, i):
    return os.path.join(sweeps, cmd, "points", "%04d" % i)


def gaps(cmd, i, ode_traj, ode_sum):
    tr = trajectory(os.path.join(point(cmd, i), "trajectory.tsv"))
    s = json.load(open(os.path.join(point(cmd, i), "summary.json")))
    sup, sup_se, sup_t = 0.0, 0.0, 0.0
    for t, m, se, r in zip(tr["t"], tr["excess_risk"], tr["excess_risk_se"], ode_traj["excess_risk"]):
        if abs(m - r) > sup:  # the first maximum, as the former driver
            sup, sup_se, sup_t = abs(m - r), se, t
    final = abs(s["final_excess_risk"] - ode_sum["final_excess_risk"])
    return sup, sup_se, sup_t, final, s["final_excess_risk_se"], s["wall_seconds"]


print("# scripts/sde_gap_table.sh (dpdyn %s sweep: %s/{ode,simulate,sde}): |mean - ODE| for the "
      "DP-SGD simulation and the SDE" % (version.split()[-1], sweeps))
print("# gamma=0.25 spectrum=iso theta_star=random theta_norm=1 c=0.5 rho=1 zeta=0.5 "
      "schedule=sqrt eta0=1 seeds=%s grid=%s seed=1 (sde: 2) dt=1/n threads=%s"
      % (seeds, grid, threads if threads != "0" else "%d" % os.cpu_count()))
print("# sup over the grid (t = 1: before release, vs R(1-)); final: released risk vs R_out")
print("# columns: what n d sup_gap sup_se sup_in_se sup_t final_gap final_se final_in_se "
      "sup_gap*sqrt(n) final_gap*sqrt(n) seconds")
ode = table(os.path.join(sweeps, "ode", "sweep.tsv"))
for i, row in enumerate(ode):
    ode_traj = trajectory(os.path.join(point("ode", i), "trajectory.tsv"))
    ode_sum = json.load(open(os.path.join(point("ode", i), "summary.json")))
    n, d = int(ode_sum["n"]), int(ode_sum["d"])
    for what, cmd in (("sim", "simulate"), ("sde", "sde")):
        sup, sup_se, sup_t, final, final_se, sec = gaps(cmd, i, ode_traj, ode_sum)
        sn = math.sqrt(n)
        print("%-4s %6d %5d %11.4e %10.3e %7.2f %5.2f %11.4e %10.3e %7.2f %10.4f %10.4f %8.2f"
              % (what, n, d, sup, sup_se, sup / sup_se if sup_se > 0 else 0.0, sup_t, final,
                 final_se, final / final_se if final_se > 0 else 0.0, sup * sn, final * sn, sec))
PY
