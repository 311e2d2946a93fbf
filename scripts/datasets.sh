#!/usr/bin/env bash
# Exports real data sets as .npy files for dpdyn's features=file: / input=file: keys, each with a
# provenance file NAME.provenance.json (source and version, licence, citation, split,
# preprocessing, and the shape, dtype and sha256 of every file). docs/datasets.md lists them.
#
#   fmnist         Fashion-MNIST from the Debian package dataset-fashion-mnist (scripts/setup.sh
#                  installs it): fmnist_{train,test}_x.npy (float32 pixels 0..255, 784 per row),
#                  fmnist_{train,test}_y.npy (class 0..9), fmnist_{train,test}_yreg.npy (+-1)
#   digits         scikit-learn load_digits:        digits_x.npy (1797 x 64), digits_y.npy
#   diabetes       scikit-learn load_diabetes:      diabetes_x.npy (442 x 10), diabetes_y.npy
#   breast_cancer  scikit-learn load_breast_cancer: breast_cancer_x.npy (569 x 30), _y.npy (0/1)
#
# Nothing is downloaded: every source is a file of an installed Debian package. No
# preprocessing beyond the conversion to float (dpdyn centres and scales at run time).
# Re-running rewrites byte-identical files.
#
# Usage: scripts/datasets.sh [--only NAME,...] [--max-rows N] [--] OUTDIR
#   OUTDIR      created if missing; an existing non-directory is refused (exit 1). An OUTDIR
#               starting with '-' needs -- before it (or ./ in front).
#   --only      a comma-separated subset of: fmnist digits diabetes breast_cancer (default: all)
#   --max-rows  keep the first N rows of every exported array (tests; the provenance says so)
# Python: $DPD_PYTHON, else /usr/bin/python3, else python3: the first that imports numpy.
set -euo pipefail

names="fmnist digits diabetes breast_cancer"
prog=datasets
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# usage, die, quoted, numpy_python, check_only, outdir_make
. "$here/script_lib.sh"

only="" have_only=0 max_rows="" outdir="" have_outdir=0
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --only | --max-rows)
      [ $# -ge 2 ] || die "$1 needs a value"
      if [ "$1" = --only ]; then only=$2 have_only=1; else max_rows=$2; fi
      shift 2
      ;;
    --only=*) only=${1#--only=} have_only=1; shift ;;
    --max-rows=*) max_rows=${1#--max-rows=}; shift ;;
    --)
      shift
      [ $# -eq 1 ] || die "expected exactly one OUTDIR after --, got $#"
      outdir=$1 have_outdir=1
      shift
      ;;
    -*) die "unknown option $(quoted "$1") (an OUTDIR that starts with '-' goes after --: scripts/datasets.sh [options] -- $(quoted "$1"))" ;;
    *)
      [ "$have_outdir" -eq 0 ] || die "one OUTDIR only: $(quoted "$outdir") and $(quoted "$1")"
      outdir=$1 have_outdir=1
      shift
      ;;
  esac
done
[ "$have_outdir" -eq 1 ] || die "missing OUTDIR (usage: scripts/datasets.sh [--only NAME,...] [--max-rows N] [--] OUTDIR)"
[ -n "$outdir" ] || die "OUTDIR is empty"
if [ -n "$max_rows" ]; then
  [[ $max_rows =~ ^[1-9][0-9]{0,9}$ ]] || die "--max-rows $(quoted "$max_rows") (allowed: a positive integer)"
fi
[ "$have_only" -eq 0 ] || check_only "$only" "$names" "data set"

outdir_make "$outdir"

numpy_python

# Paths travel as arguments, never inside the program text.
exec "$py" "$here/datasets.py" "$outdir" "$only" "$max_rows"
