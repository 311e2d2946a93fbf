#!/usr/bin/env bash
# dpdyn sweep (docs/sweep.md):
#   - a grid is the individual runs: every point's summary.json (and data files) equal a direct
#     run with the point's keys, byte for byte but for the lines naming `out` and the wall time;
#   - list, lin: and log: values, the [sweep] section (a text key with '|'), the grid order (first
#     varied key slowest), sweep.tsv's format (# lines, one row of names, one row per point);
#   - mpirun -np 2 gives sweep.tsv byte-identical to the serial run (when mpirun is installed);
#   - kill -TERM in the middle, rerun: the complete points are skipped (the count is said) and
#     sweep.tsv equals an uninterrupted run's; no staging directory is left;
#   - a changed configuration in the same --out is refused (exit 1, naming the key), malformed
#     lists and ranges are exit 1 naming the key with nothing written, an invalid point is caught
#     before any point runs;
#   - a point that fails numerically (exit 2) is recorded (status 2) and the others run.
# usage: test_sweep.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

# rows of sweep.tsv (no # lines, no column names)
rows() { grep -v '^#' "$1" | tail -n +2; }
# column NAME of sweep.tsv, one value a line
column() { awk -F'\t' -v name="$2" '/^#/ {next} !h {for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next} {print $c}' "$1"; }
# a file less its lines naming out and the wall time
strip() { grep -v -e '"out":' -e '^# out = ' -e '"wall_seconds":' "$1"; }

# ---- 1. help
if "$dpdyn" --help | grep -q '^  sweep ' && "$dpdyn" sweep --help | grep -q 'lin:A:B:N'; then
  ok "help: dpdyn --help lists sweep; dpdyn sweep --help explains the values"
else
  bad "help: sweep missing from dpdyn --help or dpdyn sweep --help"
fi

# ---- 2. the grid = the individual runs (simulate, 2 x 2; ode with a log range)
L=(--d=20 --n=200 --seeds=3 --grid=11 --threads=1 --rho=2)
"$dpdyn" sweep simulate "${L[@]}" --c=0.5,2 --eta0=lin:0.5:1.5:2 --out="$work/g" >"$work/g.out" 2>"$work/g.err"
rc=$?
if [ "$rc" -ne 0 ]; then
  bad "grid: exit $rc: $(cat "$work/g.err")"
else
  same=1
  i=0
  for c in 0.5 2; do
    for eta0 in 0.5 1.5; do
      p=$(printf '%04d' $i)
      "$dpdyn" simulate "${L[@]}" --c=$c --eta0=$eta0 --out="$work/direct$i" >/dev/null 2>&1 || same=0
      for f in summary.json trajectory.tsv release.tsv; do
        if ! diff <(strip "$work/direct$i/$f") <(strip "$work/g/points/$p/$f") >/dev/null; then
          same=0
          echo "  point $p c=$c eta0=$eta0: $f differs from the direct run"
        fi
      done
      i=$((i + 1))
    done
  done
  [ "$same" = 1 ] && ok "grid: 4 points of simulate = 4 direct runs (summary.json, trajectory.tsv, release.tsv)" ||
    bad "grid: a point differs from its direct run"
  # sweep.tsv: # lines, one row of names, 4 rows; c slowest
  names=$(grep -v '^#' "$work/g/sweep.tsv" | head -1)
  if [ "$(rows "$work/g/sweep.tsv" | wc -l)" = 4 ] && [ "$(grep -vc '^#' "$work/g/sweep.tsv")" = 5 ] &&
    [ "$(printf '%s' "$names" | cut -f1-4)" = "$(printf 'c\teta0\tstatus\tseed')" ] &&
    [ "$(column "$work/g/sweep.tsv" c | tr '\n' ' ')" = "0.5 0.5 2 2 " ] &&
    [ "$(column "$work/g/sweep.tsv" eta0 | tr '\n' ' ')" = "0.5 1.5 0.5 1.5 " ] &&
    ! printf '%s' "$names" | grep -q wall_seconds; then
    ok "sweep.tsv: # lines, one row of names (c eta0 status ...), 4 rows, first key slowest, no wall time"
  else
    bad "sweep.tsv format: $(cat "$work/g/sweep.tsv")"
  fi
  # every summary number of a point is its row's value
  want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(repr(float(d["final_excess_risk"])), repr(float(d["clipped_fraction"])))' "$work/g/points/0003/summary.json" 2>/dev/null)
  got=$(python3 -c '
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
h = rows[0]; r = rows[4]
print(repr(float(r[h.index("final_excess_risk")])), repr(float(r[h.index("clipped_fraction")])))' "$work/g/sweep.tsv" 2>/dev/null)
  if [ -n "$want" ] && [ "$want" = "$got" ]; then
    ok "sweep.tsv: row 3 holds point 3's summary numbers exactly ($got)"
  else
    bad "sweep.tsv row 3: '$got', summary.json '$want'"
  fi
  if [ -s "$work/g/sweep_heat.png" ] && [ -s "$work/g/sweep_heat.gp" ] &&
    grep -q '"points_complete":	4' "$work/g/summary.json"; then
    ok "two varied keys: sweep_heat.png; summary.json: 4 points complete"
  else
    bad "no heat map or summary.json wrong: $(ls "$work/g")"
  fi
fi

# ---- 3. list, lin: and log: values; the [sweep] section; a text key with '|'
"$dpdyn" sweep account --d=5 --c=1 --rho=2 --n=lin:100:1000:4 --eta0=log:0.1:10:5 \
  --delta=1e-5,1e-6 --out="$work/v" >/dev/null 2>"$work/v.err"
rc=$?
n=$(column "$work/v/sweep.tsv" n | sort -un | tr '\n' ' ')
eta=$(column "$work/v/sweep.tsv" eta0 | awk '!s[$0]++' | tr '\n' ' ')
delta=$(column "$work/v/sweep.tsv" delta | awk '!s[$0]++' | tr '\n' ' ')
if [ "$rc" = 0 ] && [ "$n" = "100 400 700 1000 " ] &&
  [ "$eta" = "0.1 0.316227766016838 1 3.16227766016838 10 " ] &&
  [ "$delta" = "1e-05 1e-06 " ] &&
  [ "$(rows "$work/v/sweep.tsv" | wc -l)" = 40 ]; then
  ok "values: lin:100:1000:4 = $n; log:0.1:10:5 = $eta; list = $delta; 40 points"
else
  bad "values: exit $rc, n = '$n', eta0 = '$eta', delta = '$delta' $(cat "$work/v.err")"
fi
cat >"$work/grid.ini" <<'EOF'
d = 20
n = 200
seeds = 2
threads = 1
rho = 2
[sweep]
schedule = const | sqrt
EOF
"$dpdyn" sweep simulate "$work/grid.ini" --c=0.5,1 --out="$work/ini" >/dev/null 2>"$work/ini.err"
rc=$?
sched=$(column "$work/ini/sweep.tsv" schedule | tr '\n' ' ')
cs=$(column "$work/ini/sweep.tsv" c | tr '\n' ' ')
"$dpdyn" simulate "$work/grid.ini" --c=1 --schedule=sqrt --out="$work/ini-direct" >/dev/null 2>&1
if [ "$rc" = 0 ] && [ "$sched" = "const const sqrt sqrt " ] && [ "$cs" = "0.5 1 0.5 1 " ] &&
  diff <(strip "$work/ini-direct/summary.json") <(strip "$work/ini/points/0003/summary.json") >/dev/null &&
  [ -s "$work/ini/sweep_heat.png" ]; then
  ok "[sweep] section: schedule = const | sqrt (slowest), then --c=0.5,1; point 3 = direct run"
else
  bad "[sweep] section: exit $rc, schedule '$sched', c '$cs' $(cat "$work/ini.err")"
fi
# a plain run reads the same file without its [sweep] section
if "$dpdyn" simulate "$work/grid.ini" --c=1 --out="$work/plain" >/dev/null 2>&1 &&
  grep -q '"schedule":	"const"' "$work/plain/summary.json"; then
  ok "a plain run ignores the [sweep] section (schedule const by default)"
else
  bad "a plain run with a [sweep] section"
fi

# ---- log axes from a decade on: rho 0.25 ... 4 (16x) and a risk that falls about 20x
"$dpdyn" sweep simulate --d=50 --n=200 --c=1 --seeds=8 --grid=5 --rho=0.25,1,4 --out="$work/decade" >/dev/null 2>&1
if grep -q '^logx = 1' "$work/decade/sweep_line.gp" && grep -q '^logy = 1' "$work/decade/sweep_line.gp"; then
  ok "values spanning a decade or more get log axes (x and y)"
else
  bad "decade axes: $(grep -E '^log[xy]' "$work/decade/sweep_line.gp" | tr '\n' ' ')"
fi

# ---- 4. one varied key: line plot with error bars
"$dpdyn" sweep simulate "${L[@]}" --c=log:0.25:4:3 --out="$work/line" >/dev/null 2>&1
if [ -s "$work/line/sweep_line.png" ] && grep -q '^sekey = "final_excess_risk_se"$' "$work/line/sweep_line.gp" &&
  grep -q '^ykey = "final_excess_risk"$' "$work/line/sweep_line.gp" &&
  grep -q '^logx = 1' "$work/line/sweep_line.gp"; then
  ok "one varied key: sweep_line.png, error bars from final_excess_risk_se (by name), log x for log:"
else
  bad "line plot: $(ls "$work/line"; grep -E '^(ykey|sekey|logx)' "$work/line/sweep_line.gp")"
fi
# what the figure shows (its SVG): error bars in the key, the axes in words (not key names)
"$dpdyn" plot "$work/line" --format=svg >/dev/null 2>&1
svg=$work/line/sweep_line.svg
# (the same figure without its standard errors has fewer paths: no bars)
mkdir -p "$work/nose" && cp "$work/line/sweep.tsv" "$work/nose/" &&
  sed 's/^sekey = .*/sekey = ""/' "$work/line/sweep_line.gp" >"$work/nose/sweep_line.gp" &&
  "$dpdyn" plot "$work/nose" --format=svg >/dev/null 2>&1
if [ -s "$svg" ] && grep -q '>final excess risk (mean ± 2 SE)<' "$svg" &&
  grep -q '>clipping scale c (C = c √d)<' "$svg" && ! grep -q '>final_excess_risk<' "$svg" &&
  [ "$(grep -c '<path' "$svg")" -gt "$(grep -c '<path' "$work/nose/sweep_line.svg")" ]; then
  ok "sweep_line.svg: error bars, y label 'final excess risk (mean ± 2 SE)', x label 'clipping scale c'"
else
  bad "sweep_line.svg words: $(grep -o '<text>[^<]*' "$svg" | tr '\n' ' ' | cut -c1-300)"
fi
# the title names the privacy as given (epsilon and delta), not the derived rho
"$dpdyn" sweep simulate --d=20 --n=60 --grid=3 --seeds=2 --threads=1 --epsilon=1 --delta=1e-5 \
  --c=0.5,2 --out="$work/eps" >/dev/null 2>&1
"$dpdyn" plot "$work/eps" --format=svg >/dev/null 2>&1
if grep -q '^title_text = "dpdyn sweep simulate: model = linreg, d = 20, n = 60, ε = 1, δ = 1e-05, seeds = 2"$' \
  "$work/eps/sweep_line.gp" && grep -q 'ε = 1, δ = 1e-05' "$work/eps/sweep_line.svg" &&
  ! grep -q 'rho' "$work/eps/sweep_line.svg"; then
  ok "sweep figure title: ε = 1, δ = 1e-05 as given (no derived rho)"
else
  bad "sweep title with epsilon: $(grep '^title_text' "$work/eps/sweep_line.gp")"
fi
# plot_log chooses the axes: none and x against the automatic (both log) of the decade case
for pl in none x; do
  "$dpdyn" sweep simulate --d=50 --n=200 --c=1 --seeds=8 --grid=5 --rho=0.25,1,4 --plot_log=$pl \
    --out="$work/log-$pl" >/dev/null 2>&1
done
if grep -q '^logx = 0' "$work/log-none/sweep_line.gp" && grep -q '^logy = 0' "$work/log-none/sweep_line.gp" &&
  grep -q '^logx = 1' "$work/log-x/sweep_line.gp" && grep -q '^logy = 0' "$work/log-x/sweep_line.gp"; then
  ok "plot_log=none: linear axes; plot_log=x: log x, linear y (auto: both log)"
else
  bad "plot_log: $(grep -hE '^log[xy]' "$work/log-none/sweep_line.gp" "$work/log-x/sweep_line.gp" | tr '\n' ' ')"
fi
# the settings of a sweep of an earlier version (columns by number) still render
sed -e 's/^xkey = .*/xcol = 1/' -e 's/^ykey = .*/ycol = 4/' -e 's/^sekey = .*/secol = 0/' \
  "$work/line/sweep_line.gp" >"$work/line/sweep_line.gp.v1" && mv "$work/line/sweep_line.gp.v1" "$work/line/sweep_line.gp"
rm -f "$work/line/sweep_line.png"
if "$dpdyn" plot "$work/line" 2>"$work/v1.err" && [ -s "$work/line/sweep_line.png" ]; then
  ok "dpdyn plot re-renders a sweep figure whose settings give column numbers (earlier versions)"
else
  bad "earlier sweep settings: $(cat "$work/v1.err")"
fi

# ---- 5. bad input: exit 1, one line naming the key, nothing written
expect_error() {
  local name=$1 pattern=$2
  shift 2
  local out="$work/bad-$name"
  "$dpdyn" sweep "$@" --out="$out" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  if [ "$rc" -ne 1 ]; then
    bad "$name: exit $rc (want 1): $(cat "$work/stderr")"
  elif [ "$(wc -l <"$work/stderr")" -ne 1 ] || ! grep -qE -- "$pattern" "$work/stderr"; then
    bad "$name: message does not match /$pattern/ in one line: $(cat "$work/stderr")"
  elif [ -e "$out" ]; then
    bad "$name: the output directory was created"
  else
    ok "$name: $(cut -c1-110 "$work/stderr")"
  fi
}
O=(--d=20 --gamma=0.5)
expect_error empty_item "'c': '0.25,,1' \(an empty value" ode "${O[@]}" --c=0.25,,1
expect_error log_nonpositive "'eta0': 'log:0:1:5' \(a log range needs A > 0" ode "${O[@]}" --eta0=log:0:1:5
expect_error range_short "'eta0': 'lin:1:2' \(a range has the form" ode "${O[@]}" --eta0=lin:1:2
expect_error range_n1 "'eta0': 'lin:1:2:1' \(N must be" ode "${O[@]}" --eta0=lin:1:2:1
expect_error plot_log "invalid value for 'plot_log': 'log' \(allowed: auto, x, y, xy, none\)" ode "${O[@]}" --c=1,2 --plot_log=log
expect_error range_nan "'eta0': 'lin:x:2:3' \(A is not a number" ode "${O[@]}" --eta0=lin:x:2:3
expect_error int_fraction "'seeds': '1.5,2' \('1.5' is not a whole number" simulate "${O[@]}" --seeds=1.5,2
expect_error int_repeat "'d': 'log:1:4:10' \(the value 1 comes twice after rounding" ode --gamma=0.5 --d=log:1:4:10
expect_error unknown_key "unknown key 'colour'" ode "${O[@]}" --colour=1,2
expect_error unknown_command "unknown command 'plot'" plot "${O[@]}"
expect_error invalid_point "point 1 \(schedule=cosmic\): invalid value for 'schedule': 'cosmic'" ode "${O[@]}" --schedule='const|cosmic'
expect_error unstable_point "point 2 \(eta0=10\): invalid value for 'eta0': 10" ode "${O[@]}" --eta0=1,2,10
printf 'd = 20\ngamma = 0.5\nc = 1\n[sweep]\nc = 0.5,1\n' >"$work/twice.ini"
expect_error ini_twice "key 'c' is set on line 3 .* and swept in its \[sweep\] section on line 5" ode "$work/twice.ini"

# ---- 6. a changed configuration is refused; the same one resumes (all skipped)
before=$(cat "$work/g/sweep.tsv")
"$dpdyn" sweep simulate "${L[@]}" --d=21 --c=0.5,2 --eta0=lin:0.5:1.5:2 --out="$work/g" >/dev/null 2>"$work/chg.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "another configuration (key 'd': 'd = 20' there, 'd = 21' now" "$work/chg.err" &&
  [ "$before" = "$(cat "$work/g/sweep.tsv")" ]; then
  ok "changed configuration refused: $(cut -c1-120 "$work/chg.err")"
else
  bad "changed configuration: exit $rc: $(cat "$work/chg.err")"
fi
"$dpdyn" sweep simulate "${L[@]}" --c=0.5,1 --eta0=lin:0.5:1.5:2 --out="$work/g" >/dev/null 2>"$work/chg2.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "key 'c': 'vary: c = 0.5,2' there, 'vary: c = 0.5,1' now" "$work/chg2.err"; then
  ok "changed varied values refused"
else
  bad "changed varied values: exit $rc: $(cat "$work/chg2.err")"
fi
"$dpdyn" sweep simulate "${L[@]}" --c=0.5,2 --eta0=lin:0.5:1.5:2 --threads=2 --out="$work/g" >/dev/null 2>"$work/same.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "skipped 4 of 4 points" "$work/same.err" && [ "$before" = "$(cat "$work/g/sweep.tsv")" ]; then
  ok "the same configuration (another threads) resumes: all 4 skipped, sweep.tsv unchanged"
else
  bad "resume of a complete sweep: exit $rc: $(cat "$work/same.err")"
fi

# ---- 7. a numerical failure is recorded, the other points run
"$dpdyn" sweep ode "${O[@]}" --rtol=1e-8,1e-300 --atol=1e-300 --out="$work/f" >/dev/null 2>"$work/f.err"
rc=$?
if [ "$rc" = 2 ] && [ "$(column "$work/f/sweep.tsv" status | tr '\n' ' ')" = "0 2 " ] &&
  [ -s "$work/f/points/0001/failed.json" ] && [ -s "$work/f/points/0000/summary.json" ] &&
  grep -q "1 of 2 points failed numerically" "$work/f.err"; then
  ok "numerical failure of point 1: exit 2, status 0 2, failed.json, point 0 complete"
else
  bad "numerical failure: exit $rc: $(cat "$work/f.err")"
fi

# ---- 8. kill -TERM in the middle, then resume = an uninterrupted run
K=(--d=100 --n=20000 --seeds=4 --threads=1 --rho=2 --c=lin:0.5:2:3 --eta0=0.5,1,1.5,2)
"$dpdyn" sweep simulate "${K[@]}" --out="$work/ref" >/dev/null 2>&1
killed=0
for attempt in 1 2 3; do
  rm -rf "$work/k"
  "$dpdyn" sweep simulate "${K[@]}" --out="$work/k" >/dev/null 2>"$work/k.err" &
  pid=$!
  # wait for the second point, then stop the sweep
  for _ in $(seq 1 2000); do
    [ -d "$work/k/points/0001" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  [ "$rc" = 143 ] && { killed=1; break; }
done
if [ "$killed" = 1 ]; then
  done_before=$(find "$work/k/points" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)
  stage=$(find "$work/k" -name '.*dpdyn-*' | wc -l)
  incomplete=0
  for d in "$work/k/points"/*; do
    [ -s "$d/summary.json" ] && [ -s "$d/trajectory.tsv" ] && [ -s "$d/release.tsv" ] || incomplete=1
  done
  "$dpdyn" sweep simulate "${K[@]}" --out="$work/k" >/dev/null 2>"$work/k2.err"
  rc=$?
  if [ "$rc" = 0 ] && [ "$stage" = 0 ] && [ "$incomplete" = 0 ] && [ "$done_before" -lt 12 ] &&
    grep -q "skipped $done_before of 12 points" "$work/k2.err" && cmp -s "$work/ref/sweep.tsv" "$work/k/sweep.tsv"; then
    ok "kill -TERM after $done_before of 12 points: only complete points left; rerun skipped $done_before; sweep.tsv = uninterrupted"
  else
    bad "kill and resume: exit $rc, $done_before complete, $stage staging left, incomplete $incomplete: $(cat "$work/k2.err")"
  fi
else
  bad "kill and resume: the sweep could not be stopped in the middle (exit $rc)"
fi

# ---- 9. mpirun -np 2 = serial, byte for byte
if ! command -v mpirun >/dev/null; then
  echo "skip mpirun: not installed (scripts/setup.sh installs openmpi-bin)"
else
  # Open MPI allocates for the life of the process: no leak report from it under ASan
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
    mpirun --allow-run-as-root --oversubscribe -np 2 "$dpdyn" sweep simulate "${K[@]}" \
    --out="$work/mpi" >"$work/mpi.out" 2>"$work/mpi.err"
  rc=$?
  if grep -q "built without MPI" "$work/mpi.err"; then
    echo "skip mpirun: this dpdyn was built without MPI (DPD_MPI=OFF)"
  elif [ "$rc" = 0 ] && cmp -s "$work/ref/sweep.tsv" "$work/mpi/sweep.tsv" &&
    grep -q "2 ranks" "$work/mpi.out" && [ "$(grep -c '^point ' "$work/mpi.out")" = 12 ]; then
    ok "mpirun -np 2: 12 points over 2 ranks; sweep.tsv = serial, byte for byte"
  else
    bad "mpirun -np 2: exit $rc, $(cat "$work/mpi.err" | head -5)"
  fi
fi

# the heat map: its axes in words, and mean ± 2 SE in the cells when the summary has the SE
"$dpdyn" plot "$work/g" --format=svg >/dev/null 2>&1
if grep -q '(in the cells: mean ± 2 SE)' "$work/g/sweep_heat.svg" && grep -q '>± [0-9]' "$work/g/sweep_heat.svg" &&
  grep -q '>initial learning rate η̃(0)<' "$work/g/sweep_heat.svg" &&
  grep -q '>clipping scale c (C = c √d)<' "$work/g/sweep_heat.svg"; then
  ok "sweep_heat.svg: ± 2 SE in the cells, axes in words"
else
  bad "sweep_heat.svg: $(grep -o '<text>[^<]*' "$work/g/sweep_heat.svg" | tr '\n' ' ' | cut -c1-300)"
fi
# dpdyn plot re-renders a sweep directory's figure (same settings), in another format too.
rm -f "$work/g/sweep_heat.png"
if "$dpdyn" plot "$work/g" && [ -s "$work/g/sweep_heat.png" ] &&
  "$dpdyn" plot "$work/g" --format=svg && grep -q '<svg' "$work/g/sweep_heat.svg"; then
  ok "dpdyn plot re-renders a sweep directory (png, svg)"
else
  bad "dpdyn plot of a sweep directory"
fi
if "$dpdyn" plot "$work/g" --format=pdf && [ "$(head -c 4 "$work/g/sweep_heat.pdf")" = "%PDF" ]; then
  ok "dpdyn plot --format=pdf of a sweep directory writes a PDF"
else
  bad "dpdyn plot --format=pdf of a sweep directory"
fi
# the figure's title prints numbers in %g form (0.1, not the 0.10000000000000001 given)
"$dpdyn" sweep simulate --d=20 --n=60 --grid=3 --seeds=2 --threads=1 --zeta=0.10000000000000001 \
  --c=0.5,2 --out="$work/zt" >/dev/null 2>&1
if grep -q '^title_text = "dpdyn sweep simulate: model = linreg, d = 20, n = 60, zeta = 0.1, seeds = 2"$' \
  "$work/zt/sweep_line.gp"; then
  ok "sweep figure title: zeta = 0.1 (%g form)"
else
  bad "sweep figure title: $(grep '^title_text' "$work/zt/sweep_line.gp")"
fi

# The default OUT: ./dpdyn-out/sweep-<command>-<model>, beside the runs' ./dpdyn-out/<command>-<model>
# (./dpdyn-out/sweep-<command> when the model is an axis); never the old ./dpdyn-sweep.
mkdir -p "$work/cwd"
if (cd "$work/cwd" && "$dpdyn" sweep ou --model=rf --d=6 --n=20 --p=12 --steps=5 --grid=3 --clip=1 \
  --sigma=0,1 >/dev/null 2>&1 && "$dpdyn" sweep simulate --d=6 --n=20 --seeds=2 --grid=3 \
  --threads=1 --c=0.5,1 >/dev/null 2>&1) &&
  [ -s "$work/cwd/dpdyn-out/sweep-ou-rf/sweep.tsv" ] &&
  [ -s "$work/cwd/dpdyn-out/sweep-simulate-linreg/points/0001/summary.json" ] &&
  [ ! -e "$work/cwd/dpdyn-sweep" ]; then
  ok "default out: ./dpdyn-out/sweep-ou-rf, ./dpdyn-out/sweep-simulate-linreg"
else
  bad "default out: $(cd "$work/cwd" && find . -maxdepth 2 | tr '\n' ' ')"
fi

# ---- a damaged point: resume names it and the file, runs it again, exit 0 (it said "missing"
# and exited 3)
D=(--d=5 --n=20 --seeds=2 --grid=3 --threads=1)
"$dpdyn" sweep simulate "${D[@]}" --c=0.5,1 --out="$work/dmg" >/dev/null 2>&1
cp "$work/dmg/points/0001/summary.json" "$work/dmg.ref"
head -c 40 "$work/dmg.ref" >"$work/dmg/points/0001/summary.json"
"$dpdyn" sweep simulate "${D[@]}" --c=0.5,1 --out="$work/dmg" >/dev/null 2>"$work/dmg.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "point 1 (c=1): '.*points/0001/summary.json' is damaged" "$work/dmg.err" &&
  diff <(strip "$work/dmg.ref") <(strip "$work/dmg/points/0001/summary.json") >/dev/null &&
  [ "$(rows "$work/dmg/sweep.tsv" | wc -l)" -eq 2 ]; then
  ok "damaged summary.json: named, the point re-run on resume, exit 0"
else
  bad "damaged summary.json: exit $rc: $(cat "$work/dmg.err")"
fi

finish sweep
