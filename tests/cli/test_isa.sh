#!/usr/bin/env bash
# The same bits on every kernel path (docs/input.md "Kernel paths"): every command of every model,
# run with DPD_ISA=scalar, avx2 and avx512 (each path this CPU has), writes byte-identical data
# files and summary.json (but "wall_seconds"). Each run goes to the same relative --out in its own
# working directory, so recorded paths agree too. Also: DPD_ISA with an unknown name, or naming a
# path this CPU lacks, is exit 1 with one line naming the variable, before any output; `dpdyn
# --version` names the path in use.
# usage: test_isa.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

# The paths this CPU has, from the CLI itself.
paths=(scalar)
for p in avx2 avx512; do
  if DPD_ISA=$p "$dpdyn" --version 2>/dev/null | grep -q "^kernel path: $p "; then
    paths+=("$p")
  fi
done
echo "kernel paths on this CPU: ${paths[*]}"
if [ ${#paths[@]} -lt 2 ]; then
  echo "note: one path only: the comparison below is run but compares nothing across paths"
fi

# Refusals.
for v in foo AVX2 " avx2" "avx2;x"; do
  if DPD_ISA=$v "$dpdyn" ode --d=10 --n=20 --c=1 --rho=1 --out="$work/bad" >/dev/null 2>"$work/err"; then
    bad "DPD_ISA='$v': exit 0"
  elif [ $? -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "DPD_ISA" "$work/err" &&
    [ ! -e "$work/bad" ]; then
    ok "DPD_ISA='$v' refused: $(cat "$work/err")"
  else
    bad "DPD_ISA='$v': $(cat "$work/err")"
  fi
done
for p in avx2 avx512; do
  case " ${paths[*]} " in
  *" $p "*) ;;
  *)
    if DPD_ISA=$p "$dpdyn" ode --d=10 --n=20 --c=1 --rho=1 --out="$work/bad" >/dev/null 2>"$work/err"; then
      bad "DPD_ISA=$p on a CPU without it: exit 0"
    elif grep -q "cannot run the $p path" "$work/err" && [ ! -e "$work/bad" ]; then
      ok "DPD_ISA=$p refused on this CPU: $(cat "$work/err")"
    else
      bad "DPD_ISA=$p on a CPU without it: $(cat "$work/err")"
    fi
    ;;
  esac
done
if DPD_ISA= "$dpdyn" --version | grep -q "^kernel path: ${paths[${#paths[@]} - 1]} "; then
  ok "empty DPD_ISA: the fastest path (${paths[${#paths[@]} - 1]})"
else
  bad "empty DPD_ISA: $("$dpdyn" --version | tail -1)"
fi

# Every command of every model, small sizes; threads = 2 where the command has threads, so the
# threaded reductions are covered too (test_replicates.sh compares thread counts).
LR=(--d=24 --n=96 --c=0.5 --rho=2 --grid=6 --seeds=6 --threads=2 --plot=0)
PL=(--spectrum=powerlaw:1.5 --finite_size=on)
RF=(--model=rf --d=8 --n=40 --n_test=30 --p=60 --steps=30 --grid=7 --seeds=5 --epsilon=2 --clip=1
  --threads=2 --plot=0)
NC=(--model=nc --K=4 --p=20 --n=40 --n_test=50 --sigma=2 --seeds=5 --threads=2 --plot=0)
SP=(--model=semipriv --d=30 --k=3 --n=60 --n_public=200 --n_test=200 --seeds=4 --threads=2 --plot=0)
specs=(
  "lr-simulate|simulate ${LR[*]} --save_replicates=2"
  "lr-simulate-sqrt|simulate ${LR[*]} --schedule=sqrt --eta0=1 --noise=laplace"
  "lr-sde|sde ${LR[*]} --save_replicates=1"
  "lr-ode|ode ${LR[*]}"
  "lr-ode-finite|ode ${LR[*]} ${PL[*]}"
  "lr-ode-volterra|ode --d=24 --n=96 --c=inf --rho=inf --grid=6 --method=volterra --plot=0"
  "lr-compare|compare ${LR[*]} --sde=1 ${PL[*]}"
  "lr-account|account --d=24 --n=96 --c=0.5 --epsilon=2 --delta=1e-5 --plot=0"
  "lr-tune|tune --d=24 --n=96 --rho=2 --grid=6 --heatmap=5 --confirm_seeds=4 --threads=2 --plot=0"
  "rf-simulate|simulate ${RF[*]} --save_replicates=1"
  "rf-compare|compare ${RF[*]}"
  "rf-ou|ou ${RF[*]}"
  "rf-account|account --model=rf --n=40 --steps=30 --epsilon=2 --delta=1e-5 --plot=0"
  "nc-simulate|simulate ${NC[*]}"
  "nc-compare|compare ${NC[*]}"
  "nc-account|account --model=nc --n=40 --epsilon=2 --delta=1e-5 --plot=0"
  "nc-diagnose|diagnose --model=nc --K=4 --p=20 --n=40 --plot=0"
  "sp-simulate|simulate ${SP[*]}"
  "sp-compare|compare ${SP[*]}"
  "sp-account|account --model=semipriv --n=60 --epsilon=2 --delta=1e-5 --plot=0"
  "sweep|sweep simulate --d=16 --n=64 --c=0.5 --seeds=4 --grid=5 --plot=0 --rho=1,4 --threads=2"
)

# comparable DIR: every regular file under DIR but figures and gnuplot scripts, with summary.json's
# "wall_seconds" lines dropped (and the staging marker, which names the writing process), concatenated with their names.
comparable() {
  (cd "$1" && find . -type f ! -name .dpdyn ! -name '*.png' ! -name '*.svg' ! -name '*.pdf' ! -name '*.gp' | LC_ALL=C sort |
    while read -r f; do
      echo "== $f"
      grep -v '"wall_seconds"' "$f"
    done)
}

for spec in "${specs[@]}"; do
  name=${spec%%|*}
  args=${spec#*|}
  ref=""
  for p in "${paths[@]}"; do
    mkdir -p "$work/$p"
    # shellcheck disable=SC2086 # the arguments are words
    if ! (cd "$work/$p" && DPD_ISA=$p "$dpdyn" $args --out="$name" >/dev/null 2>"$name.err"); then
      bad "$name on $p: $(head -1 "$work/$p/$name.err")"
      continue 2
    fi
    comparable "$work/$p/$name" >"$work/$p/$name.txt"
    if [ -z "$ref" ]; then
      ref=$p
    elif ! cmp -s "$work/$ref/$name.txt" "$work/$p/$name.txt"; then
      bad "$name: $p differs from $ref: $(diff "$work/$ref/$name.txt" "$work/$p/$name.txt" | head -3 | tr '\n' ' ')"
      continue 2
    fi
  done
  ok "$name: $(grep -c '^== ' "$work/$ref/$name.txt") files byte-identical on ${paths[*]}"
done
finish test_isa
