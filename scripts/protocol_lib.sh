# Shared by scripts/protocol_semipriv.sh and scripts/protocol_nc.sh (docs/protocols.md); sourced,
# never run. The caller sets prog (its name, for messages), src (the source tree), build (where
# dpdyn is), and, before protocol_setup, dataset, outdir, data (may be empty) and quick.
# SPDX-License-Identifier: MIT
# shellcheck shell=bash

# usage, die, quoted, numpy_python (script_lib.sh)
. "$src/scripts/script_lib.sh"
step() { echo "== $*" >&2; }

# positive_numbers NAME:VALUE ...: every VALUE a positive decimal number, else exit 1 naming --NAME
positive_numbers() {
  local v
  for v in "$@"; do
    [[ ${v#*:} =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "--${v%%:*} $(quoted "${v#*:}") (allowed: a positive number)"
  done
}

# protocol_setup: checks dpdyn, gnuplot and a Python with numpy (sets py); makes outdir and data
# (default outdir/data) absolute directories; sets f = data/dataset and makes the feature files with
# scripts/features.sh when they are missing (--max-rows 600 with quick = 1).
protocol_setup() {
  [ -x "$build/dpdyn" ] || die "$build/dpdyn not built (cmake --build build)"
  command -v gnuplot >/dev/null || die "gnuplot not installed"
  numpy_python

  mkdir -p -- "$outdir" || die "cannot create OUTDIR $(quoted "$outdir")"
  # absolute, so that gnuplot and dpdyn never read a name of ours as a pipe or an option
  outdir=$(realpath -m -- "$outdir")
  data=${data:-$outdir/data}
  mkdir -p -- "$data"
  data=$(realpath -m -- "$data")
  case $data in *'|'*) die "--data $(quoted "$data"): a path with '|' cannot be a value of dpdyn sweep" ;; esac
  f=$data/$dataset
  if [ ! -f "${f}_train_x.npy" ] || [ ! -f "${f}_test_y.npy" ]; then
    step "making the $dataset features in $data"
    if [ $quick -eq 1 ]; then
      "$src/scripts/features.sh" --only "$dataset" --max-rows 600 -- "$data" 2>/dev/null
    else
      "$src/scripts/features.sh" --only "$dataset" -- "$data" 2>/dev/null
    fi
  fi
}
