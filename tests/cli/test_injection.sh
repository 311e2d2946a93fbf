#!/usr/bin/env bash
# No command from data (docs/output.md, Figures): a path, a key's value or a received output
# directory never makes gnuplot run a command. Every case below plants a payload that would run
# `touch PWNED_<case>` if it reached a shell, a gnuplot system()/backtick/eval, a `<cmd` pipe or
# an `@macro`, and checks that no file PWNED_* appears anywhere under the work directory (the
# payload's directory, the output directory or gnuplot's), and that the run ends as it should:
#   - output directories named with ' " ` $(...) < | @ $ and a line break, for every command that
#     draws a figure (ode, simulate, compare, sde, compare --sde=1, tune --plot=1, rf simulate /
#     compare / ou, the nc and semipriv compares, sweep line and heat figures) and `dpdyn plot`
#     on each of them: exit 0 with the figure;
#   - a text value of a sweep axis (a file: name) with a backtick: exit 0 with the heat map;
#   - received directories with edited files: a run's figure script, a sweep figure's settings
#     (a command, a backtick string, an expression, trailing code), a header line, a point's
#     summary.json: the installed script renders (exit 0) or the file is refused (exit 1);
#   - defects of the same campaign: a release.tsv linked to /dev/zero or a FIFO for a data file
#     (refused at once, exit 1, no hang); all-nan data (exit 1 with one line before gnuplot);
#     seeds = 1 for every model's compare and simulate, tune's confirm_seeds = 1 and sweeps over
#     them (exit 0 with the figure; every *_se and *_in_se null with a not_available reason).
# usage: test_injection.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
case $dpdyn in /*) ;; *) dpdyn=$PWD/$dpdyn ;; esac # the cases run in a work directory
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
if ! command -v gnuplot >/dev/null; then
  echo "note: no gnuplot: the figure cases are skipped"
  finish test_injection
  exit
fi
py=$(command -v python3 || true)
run="$work/run"
mkdir -p "$run"
cd "$run" || exit 1

# inj NAME WANT FILE -- ARGS...: runs `$dpdyn ARGS` in $run (60 s at most); passes when no
# PWNED_* file appears under $work, the exit status matches WANT (an extended regex: 0, 1, 0|1)
# and FILE exists (- for none). A marker that appeared is removed, so later cases start clean.
inj() {
  local name=$1 want=$2 file=$3 rc found
  shift 4
  timeout 60 "$dpdyn" "$@" >/dev/null 2>"$work/stderr"
  rc=$?
  found=$(find "$work" -name 'PWNED_*' -print 2>/dev/null | head -n 1)
  if [ -n "$found" ]; then
    bad "$name: a command ran (${found#"$work"/})"
    find "$work" -name 'PWNED_*' -exec rm -f {} + 2>/dev/null
  elif ! [[ $rc =~ ^($want)$ ]]; then
    bad "$name: exit $rc (want $want): $(head -n 1 "$work/stderr")"
  elif [ "$file" != - ] && [ ! -s "$file" ]; then
    bad "$name: no $file"
  else
    ok "$name (exit $rc)"
  fi
}

L=(--d=20 --n=60 --grid=5)
RF=(--model=rf --d=10 --n=40 --p=30 --steps=20)
NC=(--model=nc --K=4 --p=20 --n=40 --n_test=50 --sigma=2)
SP=(--model=semipriv --n=200)

# ---- output directories whose names are payloads
payloads=(
  "sq|q';touch PWNED_sq;'"
  "dq|q\";touch PWNED_dq;\""
  "bt|b\`touch PWNED_bt\`"
  "cs|d\$(touch PWNED_cs)"
  "lt|<touch PWNED_lt;echo x"
  "pi||touch PWNED_pi;echo x"
  "at|@x;touch PWNED_at"
  "ds|\$x;touch PWNED_ds"
  "nl|n
system(\"touch PWNED_nl\")"
)
# sweep_want ID FIGURE: the exit status and figure a sweep into OUT should give (dpdyn sweep refuses
# an output directory with a line break: exit 1, and then there is nothing to plot)
sweep_want() { case $1 in nl) echo "1 -" ;; *) echo "0 $2" ;; esac; }
for entry in "${payloads[@]}"; do
  id=${entry%%|*}
  out=${entry#*|}
  inj "ode-out-$id" 0 "$out/ode.png" -- ode "${L[@]}" --plot=1 --out="$out"
  rm -f "$out/ode.png"
  inj "plot-out-$id" 0 "$out/ode.png" -- plot "$out"
  inj "plot-svg-out-$id" 0 "$out/ode.svg" -- plot "$out" --format=svg
  read -r want file < <(sweep_want "$id" "$out-sweep/sweep_line.png")
  inj "sweep-line-out-$id" "$want" "$file" -- sweep ode "${L[@]}" --c=0.5,1 --out="$out-sweep"
  rm -f "$out-sweep/sweep_line.png"
  inj "plot-sweep-out-$id" "$want" "$file" -- plot "$out-sweep"
done
# every other command that draws a figure, with a few of the payloads
for id in sq bt lt nl; do
  for entry in "${payloads[@]}"; do
    [ "${entry%%|*}" = "$id" ] && out=${entry#*|}
  done
  inj "simulate-out-$id" 0 "$out-sim/simulate.png" -- simulate "${L[@]}" --seeds=2 --plot=1 \
    --out="$out-sim"
  inj "compare-out-$id" 0 "$out-cmp/compare.png" -- compare "${L[@]}" --seeds=2 --out="$out-cmp"
  inj "sde-out-$id" 0 "$out-sde/sde.png" -- sde "${L[@]}" --seeds=2 --plot=1 --out="$out-sde"
  inj "compare3-out-$id" 0 "$out-cmp3/compare3.png" -- compare "${L[@]}" --seeds=2 --sde=1 \
    --out="$out-cmp3"
  inj "tune-out-$id" 0 "$out-tune/tune.png" -- tune "${L[@]}" --confirm_seeds=2 --plot=1 \
    --out="$out-tune"
  rm -f "$out-tune/tune.png"
  inj "plot-tune-out-$id" 0 "$out-tune/tune.png" -- plot "$out-tune"
  inj "rf-compare-out-$id" 0 "$out-rfc/rf_compare.png" -- compare "${RF[@]}" --seeds=2 \
    --out="$out-rfc"
  inj "rf-simulate-out-$id" 0 "$out-rfs/rf_simulate.png" -- simulate "${RF[@]}" --seeds=2 \
    --plot=1 --out="$out-rfs"
  inj "rf-ou-out-$id" 0 "$out-rfo/rf_ou.png" -- ou "${RF[@]}" --plot=1 --out="$out-rfo"
  inj "nc-compare-out-$id" 0 "$out-nc/summary.json" -- compare "${NC[@]}" --seeds=2 --plot=1 \
    --out="$out-nc"
  inj "semipriv-compare-out-$id" 0 "$out-sp/summary.json" -- compare "${SP[@]}" --seeds=2 \
    --plot=1 --out="$out-sp"
  read -r want file < <(sweep_want "$id" "$out-heat/sweep_heat.png")
  inj "sweep-heat-out-$id" "$want" "$file" -- sweep ode "${L[@]}" --c=0.5,1 \
    --spectrum='iso|powerlaw:1' --out="$out-heat"
  rm -f "$out-heat/sweep_heat.png"
  inj "plot-sweep-heat-out-$id" "$want" "$file" -- plot "$out-heat"
done

# ---- values: a text value of a sweep axis (a file name) with a backtick, $(...) and a quote
for v in 'sp`touch PWNED_axbt`.txt' 'sp$(touch PWNED_axcs).txt' "sp'\";touch PWNED_axq.txt"; do
  printf '1.0 20\n' >"$v"
done
inj axis-file-backtick 0 heat-bt/sweep_heat.png -- sweep ode "${L[@]}" --c=0.5,1 \
  --spectrum='iso|file:sp`touch PWNED_axbt`.txt' --out=heat-bt
inj axis-file-subst 0 heat-cs/sweep_heat.png -- sweep ode "${L[@]}" --c=0.5,1 \
  --spectrum='iso|file:sp$(touch PWNED_axcs).txt' --out=heat-cs
inj axis-file-quotes 0 line-q/sweep_line.png -- sweep ode "${L[@]}" \
  --spectrum="iso|file:sp'\";touch PWNED_axq.txt" --out=line-q
inj title-file-backtick 0 title-bt/sweep_line.png -- sweep ode "${L[@]}" --c=0.5,1 \
  --spectrum='file:sp`touch PWNED_axbt`.txt' --out=title-bt
inj plot-axis-file-backtick 0 heat-bt/sweep_heat.png -- plot heat-bt

# ---- received directories with edited files
# a run's figure script replaced by a command: dpdyn plot renders with the installed script
"$dpdyn" compare "${L[@]}" --seeds=2 --out=recv >/dev/null 2>&1
printf 'system("touch PWNED_gp1")\n' >recv/compare.gp
inj received-run-script 0 recv/compare.png -- plot recv
if grep -q PWNED recv/compare.gp; then bad "received-run-script: compare.gp not rewritten"; fi
# a header line that names no figure, or a figure with code after it
cp -r recv recv2
sed -i 's/^# figure: .*/# figure: compare"; system("touch PWNED_fig")/' recv2/trajectory.tsv
inj received-figure-line 1 - -- plot recv2
# header values with payloads (titles and captions are arguments, never code)
cp -r recv recv3
sed -i 's/^# d = .*/# d = 20`touch PWNED_h1`'"'"'";system("touch PWNED_h2")/' recv3/trajectory.tsv
inj received-header-values 0 recv3/compare.png -- plot recv3
"$dpdyn" tune "${L[@]}" --confirm_seeds=2 --plot=1 --out=recv-tune >/dev/null 2>&1
sed -i 's/^# schedule = .*/# schedule = x'"'"'`touch PWNED_h3`$(touch PWNED_h4)/' \
  recv-tune/trajectory.tsv
inj received-tune-header 0 recv-tune/tune.png -- plot recv-tune
# sweep figure settings edited: a command, a backtick string, an expression, trailing code, a
# tick label; each is refused or read as a plain string
"$dpdyn" sweep ode "${L[@]}" --c=0.5,1 --out=recv-sw >/dev/null 2>&1
"$dpdyn" sweep ode "${L[@]}" --c=0.5,1 --spectrum='iso|powerlaw:1' --out=recv-heat >/dev/null 2>&1
edit_sweep() { # edit_sweep NAME DIR SED-SCRIPT: a copy of DIR with its figure script edited
  rm -rf "$1"
  cp -r "$2" "$1"
  sed -i "$3" "$1"/sweep_*.gp
}
edit_sweep sw-cmd recv-sw '1a system("touch PWNED_sw1")'
inj received-sweep-command 1 - -- plot sw-cmd
edit_sweep sw-bt recv-sw 's/^title_text = .*/title_text = "x`touch PWNED_sw2`"/'
inj received-sweep-backtick 0 sw-bt/sweep_line.png -- plot sw-bt
edit_sweep sw-expr recv-sw 's/^xkey = .*/xkey = system("touch PWNED_sw3")/'
inj received-sweep-expression 1 - -- plot sw-expr
edit_sweep sw-tail recv-sw 's/^yname = \(.*\)/yname = \1 . system("touch PWNED_sw4")/'
inj received-sweep-trailing 1 - -- plot sw-tail
edit_sweep sw-macro recv-sw 's/^title_text = .*/title_text = "@x"\nx = "`touch PWNED_sw5`"/'
inj received-sweep-macro 1 - -- plot sw-macro
edit_sweep sw-script recv-sw '$a system("touch PWNED_sw6")'
inj received-sweep-script-tail 0 sw-script/sweep_line.png -- plot sw-script
edit_sweep sw-tics recv-heat 's/^array xtic_label\[2\] = .*/array xtic_label[2] = ["a`touch PWNED_sw7`", "b"]/'
inj received-sweep-tick-label 0 sw-tics/sweep_heat.png -- plot sw-tics
edit_sweep sw-eval recv-heat 's/^\(array xtic_label\[2\]\|xtics\) = .*/xtics = "\\"a\\" 0) rotate; system(\\"touch PWNED_sw8\\"); set xtics (\\"b\\" 1"/'
inj received-sweep-old-eval 1 - -- plot sw-eval
# a point's summary.json edited: a number under a key with a backtick, drawn by a resumed sweep
cp -r recv-sw recv-sum
if [ -n "$py" ]; then
  "$py" - recv-sum/points/0000/summary.json <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
j["k`touch PWNED_js1`$(touch PWNED_js2)"] = 1.5
json.dump(j, open(sys.argv[1], "w"))
EOF
  # plot_y is checked against the command's declared summary numbers before anything runs
  # (docs/sweep.md), so the edited name is refused; the figure's default y still draws, and the
  # edited key still reaches sweep.tsv's header as text, never as code
  inj received-summary-key 1 - -- sweep ode "${L[@]}" --c=0.5,1 \
    --plot_y='k`touch PWNED_js1`$(touch PWNED_js2)' --out=recv-sum
  inj received-summary-key-default-y 0 recv-sum/sweep_line.png -- sweep ode "${L[@]}" \
    --c=0.5,1 --out=recv-sum
  if grep -q 'PWNED_js1' recv-sum/sweep.tsv; then
    ok "received-summary-key: the edited key is a column of sweep.tsv, as text"
  else
    bad "received-summary-key: the edited key is not in sweep.tsv's header"
  fi
fi

# ---- defects of the campaign: special files, all-nan data
cp -r recv zero
ln -sf /dev/zero zero/release.tsv
inj plot-release-dev-zero 1 - -- plot zero
cp -r recv fifo
rm fifo/trajectory.tsv
mkfifo fifo/trajectory.tsv
inj plot-trajectory-fifo 1 - -- plot fifo
cp -r recv-sw zero-sw
ln -sf /dev/zero zero-sw/sweep_line.gp
inj plot-sweep-script-dev-zero 1 - -- plot zero-sw
cp -r recv nan
for f in nan/trajectory.tsv nan/release.tsv; do
  awk -F'\t' -v OFS='\t' '/^#/ || !h { if (!/^#/) h = 1; print; next } { for (i = 1; i <= NF; i++) $i = "nan"; print }' \
    "$f" >"$f.new" && mv "$f.new" "$f"
done
rm -f nan/compare.png
inj plot-all-nan 1 - -- plot nan
if [ "$(wc -l <"$work/stderr")" -ne 1 ] || ! grep -q "nan" "$work/stderr" || [ -e nan/compare.png ]; then
  bad "plot-all-nan: want one line naming nan and no figure: $(tr '\n' '|' <"$work/stderr")"
else
  ok "plot-all-nan: $(cat "$work/stderr")"
fi

# ---- one replicate: exit 0 with the figure; standard errors null, each with its reason
# se_null NAME SUMMARY: every *_se (and *_in_se) number of SUMMARY is null and explained
se_null() {
  [ -n "$py" ] || return 0
  if "$py" - "$2" <<'EOF'; then ok "$1: SEs null with reasons"; else bad "$1: SEs"; fi
import json, sys
j = json.load(open(sys.argv[1]))
seen, wrong = [], []
def walk(o, path):
    na = o.get("not_available") or {}
    for k, v in o.items():
        if k in ("params", "not_available", "nonfinite"):
            continue
        if isinstance(v, dict):
            walk(v, path + k + ".")
        elif k.endswith("_se"):
            seen.append(path + k)
            if v is not None or k not in na:
                wrong.append(path + k)
walk(j, "")
if wrong or not seen:
    print("  wrong:", wrong, "seen:", seen)
    sys.exit(1)
EOF
}
inj seeds1-compare 0 s1-cmp/compare.png -- compare "${L[@]}" --seeds=1 --out=s1-cmp
se_null seeds1-compare s1-cmp/summary.json
inj seeds1-compare3 0 s1-cmp3/compare3.png -- compare "${L[@]}" --seeds=1 --sde=1 --out=s1-cmp3
se_null seeds1-compare3 s1-cmp3/summary.json
inj seeds1-simulate 0 s1-sim/simulate.png -- simulate "${L[@]}" --seeds=1 --plot=1 --out=s1-sim
se_null seeds1-simulate s1-sim/summary.json
inj seeds1-sde 0 s1-sde/sde.png -- sde "${L[@]}" --seeds=1 --plot=1 --out=s1-sde
inj seeds1-tune 0 s1-tune/tune.png -- tune "${L[@]}" --confirm_seeds=1 --plot=1 --out=s1-tune
se_null seeds1-tune s1-tune/summary.json
inj seeds1-rf-compare 0 s1-rfc/rf_compare.png -- compare "${RF[@]}" --seeds=1 --out=s1-rfc
se_null seeds1-rf-compare s1-rfc/summary.json
inj seeds1-rf-simulate 0 s1-rfs/rf_simulate.png -- simulate "${RF[@]}" --seeds=1 --plot=1 \
  --out=s1-rfs
se_null seeds1-rf-simulate s1-rfs/summary.json
inj seeds1-nc-compare 0 s1-ncc/summary.json -- compare "${NC[@]}" --seeds=1 --out=s1-ncc
se_null seeds1-nc-compare s1-ncc/summary.json
inj seeds1-nc-simulate 0 s1-ncs/summary.json -- simulate "${NC[@]}" --seeds=1 --out=s1-ncs
se_null seeds1-nc-simulate s1-ncs/summary.json
inj seeds1-semipriv-compare 0 s1-spc/summary.json -- compare "${SP[@]}" --seeds=1 --out=s1-spc
se_null seeds1-semipriv-compare s1-spc/summary.json
inj seeds1-semipriv-simulate 0 s1-sps/summary.json -- simulate "${SP[@]}" --seeds=1 \
  --out=s1-sps
se_null seeds1-semipriv-simulate s1-sps/summary.json
inj seeds1-sweep-linreg 0 s1-sw/sweep_line.png -- sweep compare "${L[@]}" --seeds=1 --c=0.5,1 \
  --out=s1-sw
inj seeds1-sweep-heat 0 s1-heat/sweep_heat.png -- sweep compare "${L[@]}" --seeds=1 --c=0.5,1 \
  --spectrum='iso|powerlaw:1' --out=s1-heat
inj seeds1-sweep-rf 0 s1-swrf/sweep_line.png -- sweep compare "${RF[@]}" --seeds=1 --p=20,30 \
  --out=s1-swrf
inj seeds1-sweep-nc 0 s1-swnc/sweep_line.png -- sweep compare "${NC[@]}" --seeds=1 \
  --sigma=1,2 --out=s1-swnc
inj seeds1-sweep-semipriv 0 s1-swsp/sweep_line.png -- sweep compare "${SP[@]}" --seeds=1 \
  --n=200,300 --out=s1-swsp
# plot_y null at every point (an SE at one replicate): exit 0 without a figure, the reason in
# summary.json (was exit 3, gnuplot's "all points y value undefined"); dpdyn plot on it says so
inj seeds1-sweep-plot-y-null 0 s1-swnull/sweep.tsv -- sweep simulate "${L[@]}" --seeds=1 \
  --c=0.5,1 --plot_y=final_excess_risk_se --out=s1-swnull
if [ -e s1-swnull/sweep_line.png ] || ! grep -q '"figure":.*not a finite number' s1-swnull/summary.json; then
  bad "seeds1-sweep-plot-y-null: want no figure and its reason in summary.json"
else
  ok "seeds1-sweep-plot-y-null: no figure, reason recorded"
fi
inj plot-sweep-without-figure 1 - -- plot s1-swnull
if grep -q "sweep without a figure" "$work/stderr"; then
  ok "plot-sweep-without-figure: $(cat "$work/stderr")"
else
  bad "plot-sweep-without-figure: $(head -1 "$work/stderr")"
fi
# an older directory of one replicate (its SE columns 0, not nan) draws as well
cp -r recv old-s1
awk -F'\t' -v OFS='\t' '/^#/ || !h { if (!/^#/) h = 1; print; next } { $3 = 0; print }' \
  old-s1/trajectory.tsv >old-s1/t.new && mv old-s1/t.new old-s1/trajectory.tsv
rm -f old-s1/compare.png
inj seeds1-old-zero-se 0 old-s1/compare.png -- plot old-s1

finish test_injection
