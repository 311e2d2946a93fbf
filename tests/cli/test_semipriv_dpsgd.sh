#!/usr/bin/env bash
# model=semipriv with trainer=dpsgd (docs/semipriv.md, "DP-SGD trainer (trainer=dpsgd)") end to
# end on small 3-class .npy files made here: simulate / compare / account; the public and private
# splits; the refusals of issue 29 (exit 1 before any work, naming the key); the same bits for
# threads 1 and 2 and for DPD_ISA=scalar; trainer=bst's table unchanged; and a check that can
# fail: non-private DP-SGD on the separable 3-class file classifies the test rows (> 0.9) while
# epsilon = 0.1 on 54 rows is far below it (by more than 4 of its SE and 0.2).
# usage: test_semipriv_dpsgd.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive
py=$(numpy_python)
if [ -z "$py" ]; then
  echo "skipped: no python3 with numpy to write the fixtures"
  exit 77
fi

# 3 classes around random centres in d = 20 (separable), labels in column 0; the same rows as
# features + labels files; a file of another width; labels that are not classes
"$py" - "$work" <<'PY'
import sys
import numpy as np
w = sys.argv[1]
rng = np.random.default_rng(0)
C = rng.normal(size=(3, 20))
def make(n):
    y = rng.integers(0, 3, n)
    return y, C[y] + 0.3 * rng.normal(size=(n, 20))
y, X = make(2000)
np.save(w + "/train.npy", np.column_stack([y, X]))
np.save(w + "/X.npy", X)
np.save(w + "/y.npy", y.astype(float))
yt, Xt = make(500)
np.save(w + "/test.npy", np.column_stack([yt, Xt]))
np.save(w + "/narrow.npy", X[:100, :10])
for name, bad in (("frac", 1.5), ("neg", -1.0)):
    z = y.astype(float).copy(); z[3] = bad; np.save(w + "/y_%s.npy" % name, z)
np.save(w + "/y_one.npy", np.zeros(len(y)))
PY

jq() { "$py" -c "import json,sys; j=json.load(open('$1/summary.json')); print($2)"; }
check() {
  local name=$1 dir=$2 expr=$3
  if "$py" -c "import json,math,sys; j=json.load(open('$dir/summary.json')); sys.exit(0 if ($expr) else 1)"; then
    ok "$name"
  else
    bad "$name: $expr"
  fi
}

F=(--model=semipriv --features=file:"$work"/train.npy --test_features=file:"$work"/test.npy
   --trainer=dpsgd --k=5 --public_fraction=0.1 --plot=0)

# ---- simulate: the summary and the table
"$dpdyn" simulate "${F[@]}" --seeds=4 --epsilon=1 --private_fraction=0.5 --threads=1 \
  --out="$work/s1" >/dev/null 2>"$work/s1.err" || bad "simulate: $(cat "$work/s1.err")"
check "simulate: trainer, 3 classes, n_private = 900 of 1800, n_public = 200" "$work/s1" \
  "j['trainer'] == 'dpsgd' and j['classes'] == 3 and j['n_private'] == 900 and j['n_public'] == 200"
check "simulate: z calibrated once, accountant's epsilon <= 1 (within 1e-3), T = 1000" "$work/s1" \
  "j['privacy']['noise_multiplier'] > 0 and 0.999 <= j['privacy']['epsilon_pld'] <= 1 and j['privacy']['steps'] == 1000 and j['privacy']['n'] == 900 and j['privacy']['q'] == 0.01 and 'add/remove' in j['privacy']['neighbours']"
if head="$(tsv_header "$work/s1/replicates.tsv")" &&
  [[ "$head" == *$'\tclipped_fraction\tmean_batch\ttrain_loss\ttest_loss' ]]; then
  ok "replicates.tsv: clipped_fraction, mean_batch, train_loss, test_loss columns"
else
  bad "replicates.tsv header: $head"
fi
grep -q "redraws the public split" "$work/s1.err" && ok "note: what a replicate redraws" ||
  bad "note: $(cat "$work/s1.err")"

# ---- the same bits for threads 1 and 2, and for the scalar kernels
"$dpdyn" simulate "${F[@]}" --seeds=4 --epsilon=1 --private_fraction=0.5 --threads=2 \
  --out="$work/s2" >/dev/null 2>&1
DPD_ISA=scalar "$dpdyn" simulate "${F[@]}" --seeds=4 --epsilon=1 --private_fraction=0.5 \
  --threads=2 --out="$work/s3" >/dev/null 2>&1
if [ -n "$(tsv_rows "$work/s1/replicates.tsv")" ] &&
  [ "$(tsv_rows "$work/s1/replicates.tsv")" = "$(tsv_rows "$work/s2/replicates.tsv")" ] &&
  [ "$(tsv_rows "$work/s1/replicates.tsv")" = "$(tsv_rows "$work/s3/replicates.tsv")" ]; then
  ok "same bits: threads 1 = threads 2 = DPD_ISA=scalar"
else
  bad "replicates differ across threads or ISA"
fi

# ---- fixed batches, a schedule, hinge one-vs-rest, separate labels file, public_features
"$dpdyn" simulate --model=semipriv --features=file:"$work"/X.npy --labels=file:"$work"/y.npy \
  --public_features=file:"$work"/X.npy --test_features=file:"$work"/test.npy --trainer=dpsgd \
  --k=4 --positive_class=2 --loss=hinge --sampling=fixed --batch=50 --lr_schedule=cosine \
  --eta=0.5 --clip=2 --epochs=2 --epsilon=2 --seeds=2 --plot=0 --out="$work/fx" >/dev/null 2>&1
check "fixed batches: batch 50, T = 80, replace-one, hinge on 2 classes" "$work/fx" \
  "j['privacy']['batch'] == 50 and j['privacy']['steps'] == 80 and 'replace' in j['privacy']['neighbours'] and j['classes'] == 2 and j['loss'] == 'hinge' and j['lr_schedule'] == 'cosine' and j['privacy']['clip'] == 2"

# ---- compare (its figure draws the accuracies) and account
"$dpdyn" compare "${F[@]}" --seeds=3 --epsilon=1 --plot=1 --out="$work/cmp" >/dev/null \
  2>"$work/cmp.err"
rc=$?
if [ $rc = 0 ] && { [ -s "$work/cmp/semipriv_simulate.png" ] || ! command -v gnuplot >/dev/null; }; then
  ok "compare: exit 0, figure of the accuracies"
else
  bad "compare: exit $rc: $(head -3 "$work/cmp.err")"
fi
check "compare: theory says Theorem 1 is Noisy-SGD's" "$work/cmp" \
  "'Noisy-SGD' in j['theory']['kind'] and 'zb_bound' in j['theory']"
"$dpdyn" account "${F[@]}" --epsilon=0.5 --delta=1e-6 --out="$work/acc" >/dev/null 2>&1
check "account: z, T and epsilons (lower <= estimate <= upper <= 0.5) at n = 1800" "$work/acc" \
  "j['privacy']['noise_multiplier'] > 0 and j['steps'] == 1000 and j['privacy']['epsilon_pld_lower'] <= j['privacy']['epsilon_pld_estimate'] <= j['privacy']['epsilon_pld'] <= 0.5 and j['privacy']['n'] == 1800"
"$dpdyn" account "${F[@]}" --noise_multiplier=1 --out="$work/acc2" >/dev/null 2>&1
check "account: noise_multiplier given: the accountant's epsilon at z = 1 (1 < eps < 3)" \
  "$work/acc2" "j['privacy']['noise_multiplier'] == 1 and 1 < j['privacy']['epsilon'] == j['privacy']['epsilon_pld'] < 3"

# ---- the check that can fail: accuracy with and without privacy
"$dpdyn" simulate "${F[@]}" --seeds=8 --epsilon=inf --out="$work/inf" >/dev/null 2>&1
"$dpdyn" simulate "${F[@]}" --seeds=8 --epsilon=0.1 --private_fraction=0.03 --out="$work/tight" \
  >/dev/null 2>&1
a_inf=$(jq "$work/inf" "j['test_accuracy']")
a_tight=$(jq "$work/tight" "j['test_accuracy']")
se_tight=$(jq "$work/tight" "j['test_accuracy_se']")
n_tight=$(jq "$work/tight" "j['n_private']")
if "$py" -c "import sys; sys.exit(0 if $a_inf > 0.9 and $a_tight < $a_inf - max(0.2, 4 * $se_tight) else 1)"; then
  ok "epsilon = inf: test accuracy $a_inf > 0.9; epsilon = 0.1 on n = $n_tight: $a_tight +- $se_tight, clearly lower"
else
  bad "accuracy: inf $a_inf, eps 0.1 on n = $n_tight: $a_tight +- $se_tight"
fi

# ---- trainer=bst: the table as before (no DP-SGD column), splits work with it too
"$dpdyn" simulate --model=semipriv --features=file:"$work"/train.npy \
  --test_features=file:"$work"/test.npy --positive_class=1 --zeta=0.1 --k=5 \
  --public_fraction=0.1 --seeds=2 --plot=0 --out="$work/bst" >/dev/null 2>&1
if [ "$(tsv_header "$work/bst/replicates.tsv")" = "$(printf 'replicate\ttest_accuracy\ttrain_accuracy\ttrain_hinge\ttest_hinge\txi_k_hat\tsubspace_error\teigengap_hat\tmargin_min\tw_norm\tactive_fraction')" ]; then
  ok "trainer=bst with a split: replicates.tsv has Noisy-SGD's columns alone"
else
  bad "bst header: $(tsv_header "$work/bst/replicates.tsv")"
fi
check "trainer=bst with a split: n_private 1800, no trainer member" "$work/bst" \
  "j['n_private'] == 1800 and 'trainer' not in j and j['privacy']['calibration'] == 'bst'"

# ---- refusals: exit 1 before any work, naming the key
L=(--model=semipriv --features=file:"$work"/X.npy --test_features=file:"$work"/test.npy
   --trainer=dpsgd --k=none --seeds=2 --plot=0)
err labels_frac "'labels': label 1.5 in row 4" simulate "${L[@]}" --labels=file:"$work"/y_frac.npy
err labels_neg "'labels': label -1 in row 4" simulate "${L[@]}" --labels=file:"$work"/y_neg.npy
err labels_one "'labels': every label .* is 0 \(allowed: at least two distinct classes" \
  simulate "${L[@]}" --labels=file:"$work"/y_one.npy
Y=(--labels=file:"$work"/y.npy)
err q0 "'q': 0 \(allowed" simulate "${L[@]}" "${Y[@]}" --q=0
err q_big "'q': 1.5 \(allowed" simulate "${L[@]}" "${Y[@]}" --q=1.5
err batch_big "'batch': 5000 \(allowed: 1 \.\. 2000" simulate "${L[@]}" "${Y[@]}" \
  --sampling=fixed --batch=5000
err batch_poisson "'batch': 50 with sampling = poisson" simulate "${L[@]}" "${Y[@]}" --batch=50
err epochs0 "'epochs': 0 \(allowed" simulate "${L[@]}" "${Y[@]}" --epochs=0
err public_small "'public_fraction': 0.002 gives 4 public rows of 2000 \(allowed: at least k \+ 1 = 6" \
  simulate "${L[@]}" "${Y[@]}" --k=5 --public_fraction=0.002
err public_both "'public_fraction': 0.1 given with public_features" simulate "${L[@]}" "${Y[@]}" \
  --k=5 --public_fraction=0.1 --public_features=file:"$work"/X.npy
err width "'public_features': .* has 10 features per row \(allowed: 20" simulate "${L[@]}" \
  "${Y[@]}" --k=5 --public_features=file:"$work"/narrow.npy
err hinge_k3 "'loss': hinge with 3 classes" simulate "${L[@]}" "${Y[@]}" --loss=hinge
err z_and_eps "'noise_multiplier': given with epsilon = 1 .*choose one" simulate "${L[@]}" \
  "${Y[@]}" --noise_multiplier=1 --epsilon=1
err zeta_dpsgd "'zeta': given with trainer = dpsgd" simulate "${L[@]}" "${Y[@]}" --zeta=0.1
err law_fraction "'private_fraction': given with features = law" simulate --model=semipriv \
  --d=20 --k=3 --n=50 --n_public=50 --n_test=50 --private_fraction=0.5
for key in loss=ce q=0.1 batch=10 sampling=fixed epochs=2 eta=0.5 lr_schedule=cosine clip=2 \
  noise_multiplier=1; do
  err "bst_${key%%=*}" "'${key%%=*}': given with trainer = bst .*need trainer=dpsgd" simulate \
    --model=semipriv --d=20 --k=3 --n=50 --n_public=50 --n_test=50 --seeds=2 "--$key"
done

finish semipriv_dpsgd
