#!/usr/bin/env bash
# dpdyn sweep --plot_y (docs/sweep.md, "The figure's number"):
#   - a plot_y that no run of the command can produce is exit 1 before any point runs: one line
#     naming the key, the value and the allowed values (close names first), no output directory;
#   - a name the command can produce but these points did not is still refused after the points
#     ran, with the message naming the columns of sweep.tsv;
#   - a varied key is refused before any point (sweep.tsv holds it as a grid column);
#   - `dpdyn sweep COMMAND --model=M --help` lists the names (dpd_model_command.numbers);
#   - coverage: for every model and command, sweeps over the text keys that change the summary
#     (noise laws, spectra, schedules, privacy keys, methods, files, ...) at tiny sizes; every
#     column of their sweep.tsv after `status` must be in the command's declared list (a name
#     missing there would make the sweep refuse a valid plot_y).
# usage: test_sweep_plot_y.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

# the names `dpdyn sweep COMMAND --model=M --help` lists (one a line)
declared() {
  "$dpdyn" sweep "$2" --model="$1" --help |
    awk '/^values of plot_y for model=/ { on = 1; next } on && /^  / { for (i = 1; i <= NF; i++) print $i; next } on { exit }'
}
# the columns of a sweep.tsv after `status` (one a line)
produced() {
  awk -F'\t' '/^#/ { next } { s = 0; for (i = 1; i <= NF; i++) { if (s) print $i; if ($i == "status") s = 1 } exit }' "$1"
}

# ---- 1. a name no run can produce: exit 1 before any point, one line, nothing written
B=(--d=400 --n=4000 --c=1 --rho=2 --seeds=64 --grid=11 --threads=1 --eta0=0.5,1 --plot=0)
t0=$(date +%s)
"$dpdyn" sweep simulate "${B[@]}" --plot_y=bogus --out="$work/bogus" >"$work/bogus.out" 2>"$work/bogus.err"
rc=$?
t1=$(date +%s)
if [ "$rc" = 1 ] && [ ! -e "$work/bogus" ] && [ "$(wc -l <"$work/bogus.err")" = 1 ] &&
  grep -q "invalid value for 'plot_y': 'bogus' (allowed: none, or a number of the summary of model=linreg simulate" "$work/bogus.err" &&
  ! grep -q '^point' "$work/bogus.out" && [ $((t1 - t0)) -le 5 ]; then
  ok "plot_y=bogus: exit 1 before any point, nothing written ($((t1 - t0)) s): $(cat "$work/bogus.err")"
else
  bad "plot_y=bogus: exit $rc after $((t1 - t0)) s, out dir $([ -e "$work/bogus" ] && echo written || echo absent): $(cat "$work/bogus.err")"
fi
# the same from the INI file, and under another model
printf 'd = 20\nn = 200\nc = 1\nrho = 2\n[sweep]\neta0 = 0.5, 1\nplot_y = bogus\n' >"$work/bogus.ini"
err ini_bogus "invalid value for 'plot_y': 'bogus'" sweep simulate "$work/bogus.ini" --seeds=2
err rf_bogus "invalid value for 'plot_y': 'final_excess_risk' \(allowed: none, or a number of the summary of model=rf simulate, e\.g\. [a-z_]*final_[a-z_]*risk" \
  sweep simulate --model=rf --p=20 --d=4 --n=20 --steps=10 --seeds=2,3 --plot_y=final_excess_risk
# close names first
err typo "'final_exces_risk' \(allowed: none, or a number of the summary of model=linreg simulate, e\.g\. final_excess_risk[,;]" \
  sweep simulate --d=20 --n=200 --c=1 --rho=2 --eta0=0.5,1 --plot_y=final_exces_risk
err varied "invalid value for 'plot_y': 'seeds' is a varied key" \
  sweep simulate --d=20 --n=200 --c=1 --rho=2 --seeds=2,3 --plot_y=seeds
# the model as a varied key: the union of the models' lists
"$dpdyn" sweep account --model='rf|nc' --epsilon=2 --delta=1e-3 --plot_y=test_error \
  --out="$work/union" >/dev/null 2>"$work/union.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "model=rf|nc account" "$work/union.err"; then
  ok "model=rf|nc: plot_y checked against both lists: $(cat "$work/union.err")"
else
  bad "model=rf|nc: exit $rc: $(cat "$work/union.err")"
fi

# ---- 2. a name the command can produce but these points did not: the late message
if declared linreg compare | grep -qx sde_sup_gap; then
  "$dpdyn" sweep compare --d=8 --n=40 --c=1 --rho=2 --seeds=2 --grid=5 --plot=0 --sde=0 \
    --eta0=0.5,1 --plot_y=sde_sup_gap --out="$work/late" >"$work/late.out" 2>"$work/late.err"
  rc=$?
  if [ "$rc" = 1 ] && grep -q "invalid value for 'plot_y': 'sde_sup_gap' (allowed: none, or a number of the points' summaries: a column of sweep.tsv after 'status'" "$work/late.err" &&
    [ -s "$work/late/points/0001/summary.json" ]; then
    ok "plot_y=sde_sup_gap without sde: refused after the points ran: $(tail -1 "$work/late.err")"
  else
    bad "plot_y=sde_sup_gap without sde: exit $rc: $(cat "$work/late.err")"
  fi
else
  bad "sde_sup_gap missing from linreg compare's list"
fi

# ---- 3. the list in the help; a valid name is accepted
if "$dpdyn" sweep simulate --model=rf --help | grep -q '^values of plot_y for model=rf simulate' &&
  declared rf simulate | grep -qx final_test_risk && declared linreg tune | grep -qx heatmap_best_c; then
  ok "help: dpdyn sweep COMMAND --model=M --help lists the values of plot_y"
else
  bad "help: no list of plot_y values"
fi
"$dpdyn" sweep account --d=5 --n=100 --c=1 --rho=2 --eta0=0.5,1 --plot=0 --plot_y=privacy.epsilon \
  --out="$work/valid" >/dev/null 2>"$work/valid.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '"plot_y":	"privacy.epsilon"' "$work/valid/summary.json"; then
  ok "plot_y=privacy.epsilon (a nested number): accepted and used"
else
  bad "plot_y=privacy.epsilon: exit $rc: $(cat "$work/valid.err")"
fi

# ---- 4. coverage: every produced name is declared
printf '0 1\n0.5 0.8\n1 0.5\n' >"$work/sched.txt"
printf '1\n2\n3\n4\n5\n6\n7\n8\n' >"$work/spec.txt"
printf '0.3\n0.3\n0.3\n0.3\n0.3\n0.3\n0.3\n0.3\n' >"$work/theta.txt"
awk 'BEGIN { for (k = 0; k < 40; k++) print 0.025, 2 }' >"$work/seq.txt"
# nc: K = 3 classes in p = 12, `label x_1 ... x_12`; semipriv: +-1 labels in d = 6
awk -v rows=30 'BEGIN { srand(1); for (i = 0; i < rows; i++) { l = i % 3; s = l;
  for (j = 0; j < 12; j++) s = s " " ((j == l) + 0.1 * (rand() - 0.5)); print s } }' >"$work/nc_train.txt"
awk -v rows=40 'BEGIN { srand(2); for (i = 0; i < rows; i++) { l = i % 3; s = l;
  for (j = 0; j < 12; j++) s = s " " ((j == l) + 0.1 * (rand() - 0.5)); print s } }' >"$work/nc_test.txt"
sp_rows() { # ROWS SEED LABELS
  awk -v rows="$1" -v seed="$2" -v lab="$3" 'BEGIN { srand(seed); for (i = 0; i < rows; i++) {
    y = (i % 2) ? 1 : -1; s = lab ? y " " : ""; s = s (y * (1 + 0.3 * rand()));
    for (j = 1; j < 6; j++) s = s " " (0.3 * (rand() - 0.5)); print s } }'
}
sp_rows 40 3 1 >"$work/sp_train.txt"
sp_rows 50 4 1 >"$work/sp_test.txt"
sp_rows 100 5 0 >"$work/sp_pub.txt"
F="file:$work"

ncover=0
common=(--plot=0 --threads=1) # every sweep's (account --sequence takes neither)
# cover MODEL COMMAND ARGS...: one sweep; its columns join the names produced by MODEL COMMAND
cover() {
  local m=$1 c=$2 o
  shift 2
  ncover=$((ncover + 1))
  o="$work/cover$ncover"
  timeout 300 "$dpdyn" sweep "$c" --model="$m" "${common[@]}" "$@" --out="$o" >/dev/null 2>"$o.err"
  if [ -s "$o/sweep.tsv" ]; then
    produced "$o/sweep.tsv" >>"$work/got-$m-$c"
  else
    bad "coverage sweep $m $c $*: no sweep.tsv: $(tail -2 "$o.err")"
  fi
  rm -rf "$o"
}

LR=(--d=8 --n=40 --seeds=2 --grid=5 --c=1 --rho=2)
TUNE=(--heatmap=3 --restarts=0 --xtol=1e-3 --confirm_seeds=0,2)
for c in simulate sde ode compare account tune; do
  X=()
  [ "$c" = tune ] && X=("${TUNE[@]}")
  S="const|sqrt|hyperbolic|optimal|step|cosine"
  [ "$c" = tune ] || S="$S|$F/sched.txt"
  cover linreg "$c" "${LR[@]}" "${X[@]}" --schedule="$S"
  # tune with a label noise other than gaussian runs for minutes even at these sizes: its
  # summary holds the same names as with gaussian noise but noise_nu (student), declared
  N="gaussian|laplace|rademacher|student:5"
  [ "$c" = tune ] && N=gaussian
  cover linreg "$c" "${LR[@]}" "${X[@]}" --noise="$N" --theta_star="random|flat|$F/theta.txt"
  cover linreg "$c" "${LR[@]}" "${X[@]}" --rho=inf --c="1|inf" --zeta=0,0.5
  cover linreg "$c" --d=8 --n=40 --seeds=2 --grid=5 --c=1 "${X[@]}" --epsilon=2 --delta=1e-5,1e-3
  cover linreg "$c" --d=8 --n=40 --seeds=2 --grid=5 "${X[@]}" --zcdp=1,2 --c=1 --gamma=0.2
  cover linreg "$c" --d=8 --n=40 --seeds=2 --grid=5 "${X[@]}" --zcdp=inf --c="1|inf"
  case $c in
  simulate | account)
    cover linreg "$c" "${LR[@]}" "${X[@]}" --spectrum="iso|levels:1*4,3*4|powerlaw:1|$F/spec.txt" ;;
  *)
    cover linreg "$c" "${LR[@]}" "${X[@]}" --spectrum="iso|levels:1*4,3*4|powerlaw:1|$F/spec.txt" --finite_size="off|on|auto" ;;
  esac
  case $c in
  ode | compare | tune)
    cover linreg "$c" "${LR[@]}" "${X[@]}" --method="bdf|adams" --compress="on|off|auto" --spectrum="iso|powerlaw:1"
    [ "$c" = tune ] || cover linreg "$c" --d=8 --n=40 --seeds=2 --grid=5 --c=inf --rho=inf --method="volterra|bdf" ;;
  esac
  case $c in
  simulate | sde | compare) cover linreg "$c" "${LR[@]}" --save_replicates=0,1,2 ;;
  account)
    common=()
    cover linreg "$c" --sequence="$work/seq.txt" --delta=1e-5,1e-3
    common=(--plot=0 --threads=1) ;;
  esac
done
cover linreg compare "${LR[@]}" --sde=0,1
cover linreg compare --d=8 --n=40 --seeds=2 --grid=5 --c=inf --rho=inf --sde=0,1
cover linreg tune "${LR[@]}" --heatmap=3 --restarts=0 --xtol=1e-3 --confirm_seeds=2 --tune="c|c,eta0" --heatmap_eta="log|linear"

RF=(--d=4 --n=20 --n_test=10 --p=20 --steps=10 --seeds=2 --grid=5)
for c in simulate ou compare account; do
  cover rf "$c" "${RF[@]}" --clip="1|inf"
  cover rf "$c" "${RF[@]}" --clip=1 --epsilon=1,2 --calibration="exact|moments"
  cover rf "$c" "${RF[@]}" --clip=1 --sigma=0,1
  cover rf "$c" "${RF[@]}" --clip=1 --mu="1|inf"
  cover rf "$c" "${RF[@]}" --clip=1 --zcdp="1|inf"
  case $c in
  account) ;;
  *)
    cover rf "$c" "${RF[@]}" --theta_star="on|off" --activation="tanh|relu_centered" --eta=0.01
    cover rf "$c" "${RF[@]}" --target="linear|sign|hermite2" --input="gaussian|sphere" --zeta=0,0.5 ;;
  esac
  case $c in
  simulate | compare) cover rf "$c" "${RF[@]}" --resample="noise|data|all" --save_replicates=0,1,2 ;;
  esac
done

NC=(--K=3 --p=12 --n=30 --seeds=2)
NCF=(--features="$F/nc_train.txt")
for c in simulate compare diagnose account; do
  T=(--n_test=40)
  TF=(--test_features="$F/nc_test.txt")
  [ "$c" = account ] && T=() && TF=()
  if [ "$c" = diagnose ]; then
    cover nc "$c" --K=3 --p=12 --n=30 --shift="none|cube|rademacher" --beta=0.1 --offset=0,0.1
    cover nc "$c" --K=3 --p=12 --n=30 --etf="sparse|dense" --imbalance_ratio=1,2 --imbalance_fraction=0.34
    cover nc "$c" "${NCF[@]}" --test_features="$F/nc_test.txt" --x_bound=2,3
    cover nc "$c" "${NCF[@]}" --x_bound=2,3
    continue
  fi
  cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp="2|inf" --steps=1,3
  cover nc "$c" "${NC[@]}" "${T[@]}" --epsilon="1|inf" --loss="ce|square"
  cover nc "$c" "${NC[@]}" "${T[@]}" --mu="1|inf" --radius="1|inf" --steps=3
  cover nc "$c" "${NC[@]}" "${T[@]}" --sigma=0,1
  # two classes: the papers' Theorem 3.4 / 4.1 numbers (compare; the PCA fix)
  cover nc "$c" --K=2 --p=12 --n=30 --seeds=2 "${T[@]}" --sigma=1 --pca_k=0,1 --n_public=50
  cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp=2 --shift="none|cube|rademacher" --beta=0.1 --offset=0,0.1
  cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp=2 --normalize="none|center|l2|center_l2" --etf="sparse|dense"
  cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp=2 --pca_k=0,2 --n_public=50 --pca_center="yes|no"
  cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp=2 --imbalance_ratio=1,2 --imbalance_fraction=0.34
  cover nc "$c" "${NCF[@]}" "${TF[@]}" --seeds=2 --zcdp=2 --x_bound=2 --normalize="none|l2|center|center_l2"
  case $c in
  simulate | compare)
    cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp=2 --test_shift="none|cube|rademacher|adversarial" --beta_test=0.1 --offset_at_test="no|yes" --offset=0.1
    cover nc "$c" "${NC[@]}" "${T[@]}" --zcdp=2 --save_replicates=0,1 ;;
  esac
done

SP=(--d=20 --k=3 --n=40 --n_public=100 --seeds=2)
SPF=(--features="$F/sp_train.txt" --zeta=0.5)
for c in simulate compare account; do
  T=(--n_test=50)
  TF=(--test_features="$F/sp_test.txt")
  [ "$c" = account ] && T=() && TF=()
  [ "$c" = account ] && SP=(--d=20 --k=3 --n=40) || SP=(--d=20 --k=3 --n=40 --n_public=100 --seeds=2)
  cover semipriv "$c" "${SP[@]}" "${T[@]}" --epsilon="1|inf" --k="3|20|none"
  cover semipriv "$c" "${SP[@]}" "${T[@]}" --k_true=1 --lambda=none --zeta="0.5|2"
  cover semipriv "$c" "${SP[@]}" "${T[@]}" --steps=100,400 --delta=1e-5,1e-3
  [ "$c" = account ] || cover semipriv "$c" "${SP[@]}" "${T[@]}" --center="yes|no" --save_replicates=0,1
  if [ "$c" = account ]; then
    cover semipriv "$c" "${SPF[@]}" --k="none|6" --positive_class=1,-1
  else
    cover semipriv "$c" "${SPF[@]}" "${TF[@]}" --seeds=2 --public_features="$F/sp_pub.txt" --k="3|6" --positive_class=1,-1
    cover semipriv "$c" "${SPF[@]}" "${TF[@]}" --seeds=2 --k="none|6"
  fi
done

# every produced name in the declared list
for mc in linreg:simulate linreg:sde linreg:ode linreg:compare linreg:account linreg:tune \
  rf:simulate rf:ou rf:compare rf:account nc:simulate nc:compare nc:diagnose nc:account \
  semipriv:simulate semipriv:compare semipriv:account; do
  m=${mc%%:*}
  c=${mc#*:}
  declared "$m" "$c" | sort -u >"$work/decl"
  sort -u "$work/got-$m-$c" 2>/dev/null >"$work/got"
  missing=$(comm -13 "$work/decl" "$work/got" | tr '\n' ' ')
  nd=$(wc -l <"$work/decl")
  ng=$(wc -l <"$work/got")
  if [ "$ng" -gt 0 ] && [ -z "$missing" ]; then
    ok "coverage $m $c: $nd names declared, the sweeps produced $ng, all declared"
  else
    bad "coverage $m $c: $nd names declared, the sweeps produced $ng; missing from the list: $missing"
  fi
done

finish sweep_plot_y
