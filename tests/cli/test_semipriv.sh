#!/usr/bin/env bash
# model=semipriv end to end: every bad input of issue 12 exits 1 naming its key and writes
# nothing; simulate / compare / account on the data law (the summary's keys, the sigma formula,
# the same bits for 1 and 2 threads); file features (.npy and CSV written by numpy) with
# one-vs-rest labels and a NaN file.
# usage: test_semipriv.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
py=$(numpy_python)
jq_py=
for cand in python3 /usr/bin/python3; do
  if "$cand" -c 'import json' 2>/dev/null; then
    jq_py=$cand
    break
  fi
done

# check NAME DIR PYTHON-EXPR: the expression holds for j = summary.json
check() {
  local name=$1 dir=$2 expr=$3
  if "$jq_py" -c "import json,math,sys; j=json.load(open('$dir/summary.json')); sys.exit(0 if ($expr) else 1)"; then
    ok "$name"
  else
    bad "$name: $expr"
  fi
}

S=(--model=semipriv --d=30 --k=3 --n=60 --n_public=200 --n_test=200 --seeds=4)
# 1. Bad input (the issue's list and more): exit 1, the key named, nothing written.
err k_above_d "'k': '31' \(allowed: an integer 1 .. d = 30" simulate "${S[@]}" --k=31
err k_zero "'k': '0'" simulate "${S[@]}" --k=0
err k_text "'k': 'five'" compare "${S[@]}" --k=five
err n_public_below_k "'n_public': 3 \(allowed: >= k \+ 1 = 4" simulate "${S[@]}" --n_public=3
err epsilon_zero "'epsilon': 0" simulate "${S[@]}" --epsilon=0
err epsilon_negative "'epsilon': -0.5" account --model=semipriv --epsilon=-0.5
err a_one "'a': 1 \(allowed: 0 < a < 1\)" simulate "${S[@]}" --a=1
err a_above "'a': 1.5" compare "${S[@]}" --a=1.5
err lambda_count "'lambda': '0.6,0.5' has 2 entries \(allowed: k_true - 1 = 4" simulate "${S[@]}" --lambda=0.6,0.5
err lambda_bad "'lambda': .*entry 2 is 'x'" simulate "${S[@]}" --lambda=0.6,x,0.4,0.3
err lambda_negative "'lambda': .*entry 1 is '-0.6'" simulate "${S[@]}" --lambda=-0.6,0.5,0.4,0.3
err tau_margin "'tau': 5 \(allowed: tau < a c" simulate "${S[@]}" --tau=5
err d_small "'d': 5 \(allowed: k_true \+ 1 = 6" simulate "${S[@]}" --d=5 --k=2
err delta_one "'delta': 1" simulate "${S[@]}" --delta=1
err steps_over "'steps': 3601 \(allowed: 1 .. n\^2 = 3600" simulate "${S[@]}" --steps=3601
err zeta_zero "'zeta': 0" simulate "${S[@]}" --zeta=0
err n_big "'n': '100000'" simulate "${S[@]}" --n=100000
err memory "'d'.*max_memory" simulate "${S[@]}" --d=40000 --max_memory=64M
err file_key_law "'public_features': given with features = law" simulate "${S[@]}" --public_features=file:x.npy
err features_spec "'features': 'digits' \(allowed: law, file:PATH\)" simulate "${S[@]}" --features=digits
err model_ode "'model': 'semipriv'" ode --model=semipriv

# 2. A small run of each command on the data law.
if "$dpdyn" simulate "${S[@]}" --threads=1 --out="$work/s1" >/dev/null 2>"$work/stderr" &&
  "$dpdyn" simulate "${S[@]}" --threads=2 --out="$work/s2" >/dev/null 2>>"$work/stderr"; then
  ok "simulate runs"
  if cmp -s <(grep -v '^#' "$work/s1/replicates.tsv") <(grep -v '^#' "$work/s2/replicates.tsv"); then
    ok "simulate: replicates.tsv identical for threads 1 and 2"
  else
    bad "simulate: replicates.tsv differs between threads 1 and 2"
  fi
  for key in test_accuracy test_accuracy_se test_hinge xi_k eigengap margin_min sigma; do
    check "simulate: summary has $key" "$work/s1" "isinstance(j.get('$key'), float) or isinstance(j.get('$key'), int)"
  done
  check "simulate: privacy is (epsilon, delta)" "$work/s1" "j['privacy']['guarantee'] == '(epsilon, delta)-DP' and j['privacy']['epsilon'] == 1"
  # sigma^2 = 32 L^2 n^2 log(n/delta) log(1/delta) / eps^2 (n = 60, delta = 1e-5, eps = 1)
  check "simulate: sigma is the formula" "$work/s1" \
    "abs(j['sigma'] - math.sqrt(32 * j['L']**2 * 60**2 * math.log(60/1e-5) * math.log(1e5))) <= 1e-12 * j['sigma']"
  check "simulate: a wrong sigma (x1.2) is told apart" "$work/s1" \
    "abs(1.2 * j['sigma'] - math.sqrt(32 * j['L']**2 * 60**2 * math.log(60/1e-5) * math.log(1e5))) > 1e-3 * j['sigma']"
  check "simulate: steps default n^2" "$work/s1" "j['steps'] == 3600 and j['params']['steps'] == 3600"
  check "simulate: margin_min >= guaranteed margin" "$work/s1" "j['margin_min'] >= j['margin_guaranteed'] > 0"
  rows=$(tsv_rows "$work/s1/replicates.tsv" | grep -c .)
  [ "$rows" -eq 4 ] && ok "simulate: 4 replicate rows" || bad "simulate: $rows replicate rows"
else
  bad "simulate: $(head -1 "$work/stderr")"
fi
if "$dpdyn" compare "${S[@]}" --epsilon=0.1 --out="$work/c" >/dev/null 2>"$work/stderr"; then
  check "compare: theory beside the run" "$work/c" \
    "j['theory']['alpha_private'] > 0 and j['theory']['zb_bound'] > 0 and 'subspace_error' in j['theory'] and j['theory']['n_labelled_no_pca'] > j['theory']['n_labelled']"
  [ -s "$work/c/theory.tsv" ] && ok "compare: theory.tsv" || bad "compare: no theory.tsv"
else
  bad "compare: $(head -1 "$work/stderr")"
fi
if "$dpdyn" account --model=semipriv --n=60 --epsilon=inf --out="$work/a" >/dev/null 2>"$work/stderr"; then
  check "account: epsilon = inf is sigma = 0, no guarantee" "$work/a" "j['sigma'] == 0 and j['privacy']['epsilon'] is None and j['nonfinite']['privacy.epsilon'] == 'inf'"
  [ ! -e "$work/a/replicates.tsv" ] && ok "account: no replicates" || bad "account wrote replicates"
else
  bad "account: $(head -1 "$work/stderr")"
fi

# 2b. Figures: --plot=1 draws simulate and compare (the summary names the figure and its data
# files), dpdyn plot DIR draws them again, account and save_replicates = 0 say there is nothing.
if command -v gnuplot >/dev/null 2>&1; then
  for c in simulate compare; do
    if "$dpdyn" $c "${S[@]}" --plot=1 --out="$work/p_$c" >/dev/null 2>"$work/stderr" &&
      [ -s "$work/p_$c/semipriv_$c.png" ] && [ -s "$work/p_$c/semipriv_$c.gp" ]; then
      ok "$c --plot=1 writes semipriv_$c.png and .gp"
    else
      bad "$c --plot=1: no figure: $(head -1 "$work/stderr")"
    fi
    check "$c: the summary names its figure" "$work/p_$c" "j['figure']['name'] == 'semipriv_$c' and 'replicates.tsv' in j['figure']['data']"
    rm -f "$work/p_$c/semipriv_$c.png"
    if "$dpdyn" plot "$work/p_$c" --format=svg >/dev/null 2>"$work/stderr" && [ -s "$work/p_$c/semipriv_$c.svg" ]; then
      ok "dpdyn plot re-renders a semipriv $c directory"
    else
      bad "dpdyn plot on semipriv $c: $(head -1 "$work/stderr")"
    fi
  done
  grep -q 'δ = 1e-05' "$work/p_simulate/semipriv_simulate.svg" && ok "the title names epsilon and delta" || bad "no delta in the title"
  "$dpdyn" account --model=semipriv --plot=1 --out="$work/p_a" >/dev/null 2>"$work/stderr"
  grep -q "account has nothing to draw" "$work/stderr" && ok "account --plot=1 says it has nothing to draw" || bad "account --plot=1 silent"
  if ! "$dpdyn" plot "$work/p_a" >/dev/null 2>"$work/stderr" && grep -q "has no figure: its summary.json names none" "$work/stderr"; then
    ok "dpdyn plot on an account directory: no figure, said so"
  else
    bad "dpdyn plot on an account directory: $(head -1 "$work/stderr")"
  fi
  "$dpdyn" simulate "${S[@]}" --save_replicates=0 --plot=1 --out="$work/p_0" >/dev/null 2>"$work/stderr"
  grep -q "nothing to draw" "$work/stderr" && ok "save_replicates = 0 --plot=1 says so" || bad "save_replicates = 0 --plot=1 silent"
else
  echo "skip figures: no gnuplot"
fi

# 3. File features (numpy writes them).
if [ -z "$py" ]; then
  echo "skip file parts: no python3 with numpy"
  finish semipriv
  exit $?
fi
d=$work/in
mkdir -p "$d"
"$py" - "$d" <<'PY' || bad "numpy: writing the files"
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(20261124)
p = 12
def law(m):
    c = rng.integers(0, 3, m)                 # classes 0, 1, 2; class 2 is the positive one
    X = 0.2 * rng.standard_normal((m, p))
    X[:, 0] += np.where(c == 2, 1.0, -1.0)
    X[:, 1] += 3.0 * rng.standard_normal(m)   # a large direction without signal
    return X * rng.uniform(0.5, 4.0, (m, 1)), c   # row norms vary: the adapter scales them
X, c = law(120)
np.save(f"{d}/x.npy", X)
np.save(f"{d}/c.npy", c.astype(np.int64))
np.save(f"{d}/pub.npy", law(400)[0])
Xt, ct = law(300)
np.savetxt(f"{d}/test.csv", np.column_stack([ct, Xt]), delimiter=",")
np.savetxt(f"{d}/pm.csv", np.column_stack([np.where(c == 2, 1, -1), X]), delimiter=",")
Xn = X.copy(); Xn[7, 3] = np.nan
np.save(f"{d}/nan.npy", Xn)
PY
F=(--model=semipriv --features=file:"$d/x.npy" --labels=file:"$d/c.npy" --positive_class=2
  --public_features=file:"$d/pub.npy" --test_features=file:"$d/test.csv" --zeta=0.1 --seeds=3)
if "$dpdyn" simulate "${F[@]}" --k=2 --epsilon=inf --out="$work/f1" >/dev/null 2>"$work/stderr"; then
  check "files: non-private k = 2 learns (accuracy > 0.9)" "$work/f1" "j['test_accuracy'] > 0.9"
  check "files: sizes from the files" "$work/f1" "j['params']['d'] == 12 and j['params']['n'] == 120 and j['params']['n_public'] == 400 and j['params']['n_test'] == 300"
  check "files: xi_k n/a, eigengap of the sample" "$work/f1" "not isinstance(j['xi_k'], float) and j['eigengap'] > 0"
  grep -q "redraw only the noise" "$work/stderr" && ok "files: the note on replicates" || bad "files: no note on replicates"
else
  bad "files simulate: $(head -1 "$work/stderr")"
fi
if "$dpdyn" simulate "${F[@]}" --k=2 --epsilon=1 --threads=1 --out="$work/t1" >/dev/null 2>"$work/stderr" &&
  "$dpdyn" simulate "${F[@]}" --k=2 --epsilon=1 --threads=2 --out="$work/t2" >/dev/null 2>>"$work/stderr" &&
  cmp -s <(grep -v '^#' "$work/t1/replicates.tsv") <(grep -v '^#' "$work/t2/replicates.tsv"); then
  if "$jq_py" -c "import sys; r=[l.split() for l in open('$work/t1/replicates.tsv') if l.strip() and l[0] != '#'][1:]; sys.exit(0 if len(r) == 3 and len({x[9] for x in r}) == 3 else 1)"; then
    ok "files: the replicates' w_norm differ (the noise is redrawn)"
  else
    bad "files: the replicates' w_norm do not all differ"
  fi
  ok "files: replicates.tsv identical for threads 1 and 2"
else
  bad "files: threads 1 and 2: $(head -1 "$work/stderr")"
fi
if "$dpdyn" compare "${F[@]}" --k=none --epsilon=1 --out="$work/f2" >/dev/null 2>"$work/stderr"; then
  check "files: compare k = none" "$work/f2" "j['k'] == 12 and j['theory']['alpha_private'] > 0"
else
  bad "files compare: $(head -1 "$work/stderr")"
fi
# +-1 labels in column 0 of a CSV give the same replicates as the one-vs-rest .npy pair
if "$dpdyn" simulate --model=semipriv --features=file:"$d/pm.csv" --public_features=file:"$d/pub.npy" \
  --test_features=file:"$d/test.csv" --positive_class=2 --zeta=0.1 --seeds=3 --k=2 --epsilon=1 \
  --out="$work/f3" >/dev/null 2>"$work/stderr" &&
  "$dpdyn" simulate "${F[@]}" --k=2 --epsilon=1 --out="$work/f5" >/dev/null 2>>"$work/stderr"; then
  bad "files: +-1 labels with positive_class = 2 (no positive row) ran"
elif "$dpdyn" simulate "${F[@]}" --k=2 --epsilon=1 --out="$work/f5" >/dev/null 2>"$work/stderr" &&
  "$py" -c "import numpy as np; t=np.loadtxt('$d/test.csv',delimiter=','); t[:,0]=np.where(t[:,0]==2,1,-1); np.savetxt('$d/test_pm.csv',t)" &&
  "$dpdyn" simulate --model=semipriv --features=file:"$d/pm.csv" --public_features=file:"$d/pub.npy" \
    --test_features=file:"$d/test_pm.csv" --zeta=0.1 --seeds=3 --k=2 --epsilon=1 \
    --out="$work/f3" >/dev/null 2>"$work/stderr" &&
  cmp -s <(grep -v '^#' "$work/f3/replicates.tsv") <(grep -v '^#' "$work/f5/replicates.tsv"); then
  ok "files: +-1 labels in a CSV = positive_class on integer labels in .npy, bit for bit"
else
  bad "files: +-1 CSV against one-vs-rest .npy: $(head -1 "$work/stderr")"
fi
if "$dpdyn" account --model=semipriv --features=file:"$d/pm.csv" --zeta=0.1 --epsilon=1 --out="$work/f4" >/dev/null 2>"$work/stderr"; then
  check "files: account reads n from the file" "$work/f4" "j['n'] == 120 and j['sigma'] > 0"
else
  bad "files account: $(head -1 "$work/stderr")"
fi
err nan_file "'features': nan in row 8, feature column 4" simulate "${F[@]}" --features=file:"$d/nan.npy"
err labels_not_pm "'features': label [0-9] in row .* \(allowed: -1 or \+1" simulate --model=semipriv \
  --features=file:"$d/test.csv" --public_features=file:"$d/pub.npy" --test_features=file:"$d/test.csv" --zeta=0.1
err zeta_missing "missing value for 'zeta'" simulate --model=semipriv --features=file:"$d/x.npy" \
  --labels=file:"$d/c.npy" --positive_class=2 --test_features=file:"$d/test.csv"
err public_missing "missing value for 'public_features'" simulate --model=semipriv --features=file:"$d/x.npy" \
  --labels=file:"$d/c.npy" --positive_class=2 --test_features=file:"$d/test.csv" --zeta=0.1 --k=2
err test_missing "missing value for 'test_features'" simulate --model=semipriv --features=file:"$d/x.npy" \
  --labels=file:"$d/c.npy" --positive_class=2 --zeta=0.1
err k_above_file_d "'k': '13' \(allowed: an integer 1 .. d = 12" simulate "${F[@]}" --k=13
err gen_key_with_file "'nu': given with features = file" simulate "${F[@]}" --nu=0.1
err n_disagrees "'n': 50 \(allowed: 120" simulate "${F[@]}" --n=50
err positive_absent "'positive_class': every label of .* is -1" simulate "${F[@]}" --positive_class=7
err positive_frac "'positive_class': 1.5" simulate "${F[@]}" --positive_class=1.5
err public_width "'public_features': .*has 13 features per row \(allowed: 12" simulate "${F[@]}" \
  --public_features=file:"$d/test.csv"
# calibration = bst | pld (issue 28 §2; docs/privacy.md, "Semi-private Noisy-SGD accounted by
# PLD"): bst is the default and gives the bits it gave before the key existed; pld calibrates
# sigma by the PLD accountant of the run's n^2 with-replacement steps, never above the target.
C=(--model=semipriv --d=20 --k=3 --n=12 --n_public=100 --n_test=100 --seeds=2 --epsilon=2 --plot=0)
"$dpdyn" simulate "${C[@]}" --out="$work/cal_default" >/dev/null 2>&1 &&
  "$dpdyn" simulate "${C[@]}" --calibration=bst --out="$work/cal_bst" >/dev/null 2>&1 &&
  "$dpdyn" simulate "${C[@]}" --calibration=pld --out="$work/cal_pld" >/dev/null 2>&1 &&
  "$dpdyn" account --model=semipriv --n=12 --epsilon=2 --calibration=pld \
    --out="$work/cal_acc" >/dev/null 2>&1 || bad "calibration runs"
if cmp -s <(tsv_rows "$work/cal_default/replicates.tsv") <(tsv_rows "$work/cal_bst/replicates.tsv"); then
  ok "calibration: the default is bst (the same replicates)"
else
  bad "calibration: the default differs from bst"
fi
check "calibration bst: named, sigma = Bassily et al.'s" "$work/cal_bst" \
  "j['privacy']['calibration'] == 'bst' and abs(j['sigma'] - 12 * math.sqrt(32 * math.log(12 / 1e-5) * math.log(1e5)) / 2 / j['zeta']) < 1e-9 * j['sigma'] and abs(j['privacy']['noise_multiplier'] - j['sigma'] * j['zeta'] / 12) < 1e-12 * j['sigma']"
check "calibration pld: the accountant's epsilon <= the target, sigma below bst's" "$work/cal_pld" \
  "j['privacy']['calibration'] == 'pld' and j['privacy']['epsilon_pld_lower'] <= j['privacy']['epsilon_pld_estimate'] <= j['privacy']['epsilon_pld'] <= 2 and j['sigma'] < j['privacy']['sigma_bst'] and abs(j['privacy']['sigma_bst_over_sigma'] - j['privacy']['sigma_bst'] / j['sigma']) < 1e-12 * j['privacy']['sigma_bst_over_sigma']"
check "calibration pld: account gives the same sigma" "$work/cal_acc" \
  "j['privacy']['calibration'] == 'pld' and j['privacy']['epsilon_pld'] <= 2"
if "$jq_py" -c "import json,sys; a=json.load(open('$work/cal_pld/summary.json')); b=json.load(open('$work/cal_acc/summary.json')); sys.exit(0 if a['privacy']['noise_multiplier'] == b['privacy']['noise_multiplier'] else 1)"; then
  ok "calibration pld: simulate and account agree on the noise multiplier"
else
  bad "calibration pld: simulate and account disagree"
fi
err calibration_bad "invalid value for 'calibration': 'foo'" simulate "${C[@]}" --calibration=foo
finish semipriv
