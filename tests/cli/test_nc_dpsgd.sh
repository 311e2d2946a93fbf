#!/usr/bin/env bash
# model=nc with trainer=dpsgd and the seed-000 §5.2 protocol keys (docs/nc.md, "DP-SGD trainer
# and the real-feature protocol"): simulate / compare / account / diagnose on the ETF law and on a
# small feature file (resize=subset|copies, test_shift=gaussian), the refusals (exit 1 naming
# the key, nothing written), the same bits for threads 1 and 2 and for DPD_ISA=scalar against the
# default path, noisygd's outputs untouched by the new keys, and a sanity check that can fail:
# on perfectly collapsed features (the default law, K = 10) non-private DP-SGD classifies every
# test point, and at (1, 1e-4) with n = 50 the error is far above it.
# usage: test_nc_dpsgd.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

# num DIR KEY: a top-level number of DIR/summary.json (empty when absent)
num() { sed -n "s/^\t\"$2\":\t\([-0-9.eE+]*\),*$/\1/p" "$1/summary.json" | head -1; }
# run NAME ARGS...: dpdyn ARGS --out=$work/NAME must exit 0
run() {
  local name=$1
  shift
  if "$dpdyn" "$@" --out="$work/$name" >"$work/$name.log" 2>&1; then
    return 0
  fi
  bad "$name: exit $?: $(tail -1 "$work/$name.log")"
  return 1
}
# data rows of a table without the `#` lines (those record the output path)
rows() { grep -v '^#' "$1"; }

LAW=(--model=nc --trainer=dpsgd --K=4 --p=20 --n=200 --n_test=60 --seeds=4 --q=0.1 --plot=0)

# ---- 1. the four commands on the ETF law ----
if run law_sim simulate "${LAW[@]}" --epsilon=1 --delta=1e-4 --threads=2; then
  d=$work/law_sim
  z=$(num "$d" noise_multiplier) e=$(num "$d" epsilon)
  if grep -q '"trainer":	"dpsgd"' "$d/summary.json" &&
    awk -v z="$z" -v e="$e" 'BEGIN { exit !(z > 0 && e > 0.9 && e <= 1) }'; then
    ok "simulate: trainer dpsgd, noise_multiplier $z, accountant's epsilon $e <= 1"
  else
    bad "simulate: noise_multiplier '$z', epsilon '$e'"
  fi
  if [ "$(tsv_header "$d/replicates.tsv" | tr '\t' ' ')" = \
    "replicate test_error w_norm clipped_fraction mean_batch train_loss" ]; then
    ok "replicates.tsv: $(tsv_header "$d/replicates.tsv" | tr '\t' ' ')"
  else
    bad "replicates.tsv header: $(tsv_header "$d/replicates.tsv")"
  fi
  mb=$(num "$d" mean_batch) steps=$(num "$d" steps)
  if awk -v m="$mb" -v s="$steps" 'BEGIN { exit !(m > 15 && m < 25 && s == 100) }'; then
    ok "mean batch $mb (q n = 20), T = $steps = epochs / q"
  else
    bad "mean batch $mb, steps $steps (expected about 20 and 100)"
  fi
fi
if run law_cmp compare "${LAW[@]}" --epsilon=1 --delta=1e-4; then
  if grep -q '"theory_test_error":	"trainer = dpsgd' "$work/law_cmp/summary.json" &&
    rows "$work/law_cmp/replicates.tsv" >/dev/null; then
    ok "compare: the exact one-step error n/a with the reason"
  else
    bad "compare: no n/a reason for trainer = dpsgd"
  fi
fi
if run law_acc account "${LAW[@]}" --noise_multiplier=1.5 --delta=1e-5; then
  e=$(num "$work/law_acc" epsilon)
  if awk -v e="$e" 'BEGIN { exit !(e > 0 && e < 100) }' &&
    grep -q '"budget":	"noise_multiplier"' "$work/law_acc/summary.json"; then
    ok "account: noise_multiplier 1.5 given, the accountant's epsilon $e"
  else
    bad "account: epsilon '$e'"
  fi
fi
if run law_dia diagnose "${LAW[@]}" --resize=copies --resize_p=50 &&
  grep -q '"p":	50,' "$work/law_dia/summary.json"; then
  ok "diagnose on the resized law (copies to 50): p = 50"
else
  bad "diagnose with resize: $(grep '"p"' "$work/law_dia/summary.json" 2>/dev/null | head -1)"
fi
if run law_inf simulate "${LAW[@]}" --epsilon=inf --sampling=fixed --batch=25 &&
  [ "$(num "$work/law_inf" noise_multiplier)" = 0 ] &&
  grep -q '"neighbours":	"replace_one"' "$work/law_inf/summary.json" &&
  [ "$(num "$work/law_inf" batch)" = 25 ]; then
  ok "epsilon = inf: z = 0; fixed batches of 25, replace-one neighbours"
else
  bad "epsilon = inf / fixed: $(grep -E 'noise_multiplier|neighbours|batch"' "$work/law_inf/summary.json" 2>/dev/null | tr -d '\n\t')"
fi

# ---- 2. a small feature file (K = 3, p = 12), resized, with a Gaussian test perturbation ----
awk 'BEGIN { srand(3); for (i = 0; i < 90; i++) { l = i % 3; s = l;
  for (j = 0; j < 12; j++) s = s " " ((j == l) + 0.1 * (rand() - 0.5)); print s } }' >"$work/train.txt"
awk 'BEGIN { srand(4); for (i = 0; i < 60; i++) { l = i % 3; s = l;
  for (j = 0; j < 12; j++) s = s " " ((j == l) + 0.1 * (rand() - 0.5)); print s } }' >"$work/test.txt"
FILE=(--model=nc --trainer=dpsgd --features=file:"$work/train.txt"
  --test_features=file:"$work/test.txt" --seeds=3 --q=0.2 --plot=0 --test_shift=gaussian
  --beta_test=0.316)
for spec in "none 12" "subset 5" "copies 30"; do
  set -- $spec
  extra=()
  [ "$1" != none ] && extra=(--resize="$1" --resize_p="$2")
  if run "file_$1" simulate "${FILE[@]}" "${extra[@]}" --epsilon=2 --delta=1e-3; then
    d=$work/file_$1
    if grep -q "\"p\":	$2," "$d/summary.json" && grep -q '"nc1":' "$d/summary.json" &&
      [ -n "$(num "$d" test_error)" ]; then
      ok "file, resize $1: features.p = $2, test error $(num "$d" test_error), collapse.nc1 reported"
    else
      bad "file, resize $1: $(grep -E '"p"|nc1' "$d/summary.json" | tr -d '\n\t')"
    fi
  fi
done
for c in compare account diagnose; do
  if run "file_$c" "$c" "${FILE[@]}" --resize=copies --resize_p=24 --epsilon=2 --delta=1e-3; then
    ok "file, $c with trainer = dpsgd and resize"
  fi
done

# ---- 3. refusals: exit 1 before any work, the key named, nothing written ----
B=(simulate --model=nc --K=4 --p=20 --n=100 --n_test=40 --seeds=2)
for k in "q=0.1" "batch=5" "sampling=fixed" "epochs=3" "lr_schedule=cosine" "clip=2" \
  "noise_multiplier=1"; do
  err "noisygd_${k%%=*}" "'${k%%=*}': .*trainer = dpsgd only" "${B[@]}" --"$k"
done
D=("${B[@]}" --trainer=dpsgd)
err square "'loss': square" "${D[@]}" --loss=square
err q_zero "'q': 0 \(allowed: 0 < q <= 1\)" "${D[@]}" --q=0
err q_big "'q': 1.5" "${D[@]}" --q=1.5
err batch_big "'batch': 101 .*n = 100" "${D[@]}" --sampling=fixed --batch=101
err batch_poisson "'batch': .*sampling = fixed only" "${D[@]}" --batch=10
err epochs "'epochs': 0" "${D[@]}" --epochs=0
err sigma "'sigma': .*noisygd only" "${D[@]}" --sigma=1
err mu "'mu': .*noisygd only" "${D[@]}" --mu=1
err zcdp "'zcdp': .*noisygd only" "${D[@]}" --zcdp=1
err both "'noise_multiplier': given together with epsilon" "${D[@]}" --epsilon=1 --noise_multiplier=1
err center "'normalize': center" "${D[@]}" --normalize=center
err radius "'radius': 3" "${D[@]}" --radius=3
err subset_big "'resize_p': 21 .*p = 20" "${B[@]}" --resize=subset --resize_p=21
err copies_small "'resize_p': 19" "${B[@]}" --resize=copies --resize_p=19
err resize_p_alone "'resize_p': 30 .*resize = subset or copies" "${B[@]}" --resize_p=30
err resize_p_missing "'resize_p'" "${B[@]}" --resize=subset
err resize_pca "'resize': copies" "${B[@]}" --resize=copies --resize_p=40 --pca_k=3
err file_subset "'resize_p': 13 .*p = 12" simulate "${FILE[@]}" --resize=subset --resize_p=13
awk 'BEGIN { for (i = 0; i < 4; i++) { s = (i == 3 ? 7 : i % 3);
  for (j = 0; j < 12; j++) s = s " " (j == i % 3); print s } }' >"$work/bad_label.txt"
err labels "'test_features': .*label 7" simulate "${FILE[@]}" --test_features=file:"$work/bad_label.txt"
printf '0 1 2 3\n1 2 3 4\n2 3 4 5\n' >"$work/narrow.txt"
err widths "'test_features'" simulate "${FILE[@]}" --test_features=file:"$work/narrow.txt"

# ---- 4. the same bits: threads 1 and 2, DPD_ISA=scalar and the default path ----
BITS=(simulate "${LAW[@]}" --epsilon=1 --delta=1e-4 --resize=subset --resize_p=15
  --test_shift=gaussian --beta_test=0.2)
if run t1 "${BITS[@]}" --threads=1 && run t2 "${BITS[@]}" --threads=2 &&
  DPD_ISA=scalar run scalar "${BITS[@]}" --threads=2; then
  for f in replicates.tsv classes.tsv; do
    if cmp -s <(rows "$work/t1/$f") <(rows "$work/t2/$f") &&
      cmp -s <(rows "$work/t1/$f") <(rows "$work/scalar/$f"); then
      ok "$f: the same bits for threads 1 and 2 and DPD_ISA=scalar"
    else
      bad "$f differs across threads or kernel paths"
    fi
  done
fi

# ---- 5. noisygd as before: no trainer members, the same tables ----
if run ng simulate --model=nc --K=4 --p=20 --n=100 --n_test=40 --seeds=3 --sigma=2 --plot=0 &&
  run ng2 simulate --model=nc --K=4 --p=20 --n=100 --n_test=40 --seeds=3 --sigma=2 --plot=0 \
    --trainer=noisygd; then
  if ! grep -q '"trainer"' "$work/ng/summary.json" &&
    [ "$(tsv_header "$work/ng/replicates.tsv" | tr '\t' ' ')" = "replicate test_error w_norm" ] &&
    cmp -s <(rows "$work/ng/replicates.tsv") <(rows "$work/ng2/replicates.tsv"); then
    ok "noisygd: no trainer members; --trainer=noisygd gives the default's bits"
  else
    bad "noisygd's outputs changed"
  fi
fi

# ---- 6. sanity: perfect collapse, K = 10, n = 50 (batches of q n = 10, T = 50 steps) ----
S=(simulate --model=nc --trainer=dpsgd --K=10 --p=100 --n=50 --n_test=100 --seeds=16 --q=0.2
  --plot=0)
if run clean "${S[@]}" --epsilon=inf && run private "${S[@]}" --epsilon=1 --delta=1e-4; then
  e0=$(num "$work/clean" test_error) e1=$(num "$work/private" test_error)
  se1=$(num "$work/private" test_error_se)
  if awk -v a="$e0" -v b="$e1" -v s="$se1" 'BEGIN { exit !(a <= 0.01 && b > 0.2 && b - a > 5 * s) }'; then
    ok "sanity: non-private error $e0, at (1, 1e-4) $e1 +- $se1"
  else
    bad "sanity: non-private error $e0, private $e1 +- $se1 (expected <= 0.01 and > 0.2)"
  fi
fi

finish test_nc_dpsgd
