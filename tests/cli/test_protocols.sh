#!/usr/bin/env bash
# The protocols' scripts end to end on scikit-learn's digits (docs/protocols.md), --quick:
#   1. scripts/features.sh --only digits: the four files and the provenance, labels 0..9, the
#      training columns standardised on the reference rows (mean about 0);
#   2. scripts/protocol_semipriv.sh --quick: the k and low-data tables (accuracies in [0, 1],
#      every (k, epsilon) point present) and both figures, into a directory with a space;
#   3. scripts/protocol_nc.sh --quick: the dimension table (three p, two privacy levels, clean
#      and perturbed), the diagnostics row and the figure;
#   4. bad input: an unknown data set and a missing OUTDIR are exit 1 with one line.
# Skipped (with a message) without /usr/bin/python3 + numpy + sklearn or gnuplot.
# usage: test_protocols.sh DPDYN_BINARY SOURCE_DIR
set -u
src=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
BUILD=$(cd -- "$(dirname -- "$1")" && pwd)
export BUILD
export DPD_PYTHON=/usr/bin/python3
if ! /usr/bin/python3 -c 'import numpy, sklearn.datasets' 2>/dev/null || ! command -v gnuplot >/dev/null; then
  echo "test_protocols: needs /usr/bin/python3 with numpy and sklearn, and gnuplot: skipped"
  finish test_protocols
  exit
fi
# Each protocol needs its model's DP-SGD trainer (`trainer` among the keys of its --help).
has_trainer() { "$1" simulate --model="$2" --help 2>/dev/null | grep -q '^  trainer '; }
have_sp=0 have_nc=0
has_trainer "$1" semipriv && have_sp=1
has_trainer "$1" nc && have_nc=1
data="$work/feature files"
# rows FILE: the data rows of a whitespace table with one header line
rows() { awk 'NR > 1' "$1"; }

# ---- 1. features ------------------------------------------------------------------------------
if "$src/scripts/features.sh" --only digits -- "$data" >/dev/null 2>"$work/err"; then
  if /usr/bin/python3 - "$data" <<'PY'
import json, os, sys
import numpy as np
d = sys.argv[1]
x = np.load(os.path.join(d, "digits_train_x.npy")); y = np.load(os.path.join(d, "digits_train_y.npy"))
xt = np.load(os.path.join(d, "digits_test_x.npy")); yt = np.load(os.path.join(d, "digits_test_y.npy"))
assert x.shape[1] == 64 and xt.shape[1] == 64 and x.shape[0] + xt.shape[0] == 1797, (x.shape, xt.shape)
assert y.dtype == np.int64 and set(np.unique(y)) == set(range(10)) and set(np.unique(yt)) == set(range(10))
assert abs(float(x.mean())) < 0.2, x.mean()
prov = json.load(open(os.path.join(d, "digits.provenance.json")))
assert len(prov["files"]) == 4 and "privacy" in prov["standardisation"]
assert prov["standardisation"]["rows"].startswith("a seeded 0.1")
PY
  then ok "features: digits files, labels 0..9, standardised, provenance"; else bad "features: digits content"; fi
else
  bad "features.sh --only digits: $(head -2 "$work/err")"
fi

# ---- 2. the semi-private protocol ---------------------------------------------------------------
out="$work/semi private"
if [ "$have_sp" -eq 0 ]; then
  echo "skip semipriv protocol: this dpdyn has no trainer key for model=semipriv"
elif "$src/scripts/protocol_semipriv.sh" --quick --data "$data" digits "$out" >/dev/null 2>"$work/err"; then
  k=$out/digits_semipriv_k.tsv l=$out/digits_semipriv_lowdata.tsv
  if [ "$(rows "$k" | awk '$4 >= 0 && $4 <= 1 && $5 >= 0' | wc -l)" -eq 4 ] &&
     [ "$(rows "$k" | awk '{ print $1, $2 }' | sort | tr '\n' ' ')" = "10 0.7 10 inf 64 0.7 64 inf " ]; then
    ok "semipriv: k table, 4 points (k = 10, 64; epsilon = 0.7, inf) with accuracies in [0, 1]"
  else
    bad "semipriv: k table: $(tr '\n' ';' <"$k")"
  fi
  if [ "$(rows "$l" | awk '$5 >= 0 && $5 <= 1' | wc -l)" -eq 4 ]; then
    ok "semipriv: low-data table, 4 points"
  else
    bad "semipriv: low-data table: $(tr '\n' ';' <"$l")"
  fi
  if [ -s "$out/digits_semipriv_k.png" ] && [ -s "$out/digits_semipriv_lowdata.png" ]; then
    ok "semipriv: both figures"
  else
    bad "semipriv: figures missing"
  fi
else
  bad "protocol_semipriv.sh --quick: $(tail -2 "$work/err")"
fi

# ---- 3. the neural-collapse protocol ------------------------------------------------------------
out="$work/neural collapse"
if [ "$have_nc" -eq 0 ]; then
  echo "skip nc protocol: this dpdyn has no trainer key for model=nc"
elif "$src/scripts/protocol_nc.sh" --quick --data "$data" digits "$out" >/dev/null 2>"$work/err"; then
  t=$out/digits_nc.tsv
  if [ "$(rows "$t" | awk '$6 >= 0 && $6 <= 1' | wc -l)" -eq 12 ] &&
     [ "$(rows "$t" | awk '{ print $1 }' | sort -n -u | tr '\n' ' ')" = "32 64 128 " ]; then
    ok "nc: 12 points (p = 32, 64, 128; epsilon = 1, inf; clean and perturbed)"
  else
    bad "nc: table: $(tr '\n' ';' <"$t")"
  fi
  if [ "$(rows "$out/digits_nc_diagnose.tsv" | awk '$2 == 10 && $3 == 64' | wc -l)" -eq 1 ] &&
     [ -s "$out/digits_nc.png" ]; then
    ok "nc: diagnostics row (K = 10, p = 64) and the figure"
  else
    bad "nc: diagnostics: $(tr '\n' ';' <"$out/digits_nc_diagnose.tsv")"
  fi
else
  bad "protocol_nc.sh --quick: $(tail -2 "$work/err")"
fi

# ---- 4. bad input -------------------------------------------------------------------------------
for s in protocol_semipriv protocol_nc; do
  if "$src/scripts/$s.sh" --quick cifar10 "$work/x" >/dev/null 2>"$work/err"; then
    bad "$s: unknown data set accepted"
  elif [ $? -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "DATASET 'cifar10'" "$work/err"; then
    ok "$s: $(cat "$work/err")"
  else
    bad "$s: unknown data set: $(cat "$work/err")"
  fi
  if "$src/scripts/$s.sh" digits >/dev/null 2>"$work/err"; then
    bad "$s: a missing OUTDIR accepted"
  elif [ $? -eq 1 ] && grep -q "expected DATASET OUTDIR" "$work/err"; then
    ok "$s: a missing OUTDIR refused"
  else
    bad "$s: missing OUTDIR: $(cat "$work/err")"
  fi
done
finish test_protocols
