#!/usr/bin/env bash
# Writes the feature sets of the protocols (docs/protocols.md; scripts/protocol_semipriv.sh,
# scripts/protocol_nc.sh) as .npy files with integer labels 0..K-1 and a provenance file
# NAME.provenance.json each (source, licence, citation, split, every preprocessing constant and
# where it came from, and the shape, dtype and sha256 of every file):
#
#   digits         scikit-learn load_digits: 1797 x 64, a seeded stratified 70/30 train/test
#                  split, pixel counts / 16, standardised; K = 10; float64
#   fmnist_pixels  Fashion-MNIST (Debian dataset-fashion-mnist): 60000 + 10000 x 784, pixels
#                  / 255, standardised; K = 10; float32
#   fmnist_rf      random features ReLU(V z / sqrt(784)) of the standardised pixels z, V a
#                  seeded p x 784 Gaussian matrix, p = --p (default 2000), standardised again;
#                  a documented stand-in for embeddings of a pre-trained network; float32
#   fmnist_rf768   the same with p = 768 (the ViT width of the neural-collapse paper; the first
#                  768 coordinates of fmnist_rf before standardisation): the nc protocol's base
#
# Standardised: (x - m) / s per coordinate, m and s from a seeded 10 % of the TRAINING rows (the
# reference rows; s floored at 0.1 x its median). Files NAME_{train,test}_{x,y}.npy. Nothing is
# downloaded. Re-running rewrites byte-identical files. Use an OUTDIR of its own: digits'
# provenance file has the name scripts/datasets.sh gives its raw digits.
#
# Usage: scripts/features.sh [--only NAME,...] [--p P] [--max-rows N] [--seed S] [--] OUTDIR
#   --only      a comma-separated subset of: digits fmnist_pixels fmnist_rf fmnist_rf768
#               (default: all)
#   --p         the width of fmnist_rf, 1..100000 (default 2000: 1.7 GB of memory at peak,
#               measured; 10000: about 4 GB, estimated, and 2.8 GB of files)
#   --max-rows  keep the first N rows of each source split (tests; the provenance says so)
#   --seed      seed of V, the digits split and the reference rows (default 29)
# Python: $DPD_PYTHON, else /usr/bin/python3, else python3: the first that imports numpy.
set -euo pipefail

names="digits fmnist_pixels fmnist_rf fmnist_rf768"
prog=features
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# usage, die, quoted, numpy_python, check_only, outdir_make
. "$here/script_lib.sh"

only="" have_only=0 max_rows="" p=2000 seed=29 outdir="" have_outdir=0
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --only | --max-rows | --p | --seed)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --only) only=$2 have_only=1 ;;
        --max-rows) max_rows=$2 ;;
        --p) p=$2 ;;
        --seed) seed=$2 ;;
      esac
      shift 2
      ;;
    --only=*) only=${1#--only=} have_only=1; shift ;;
    --max-rows=*) max_rows=${1#--max-rows=}; shift ;;
    --p=*) p=${1#--p=}; shift ;;
    --seed=*) seed=${1#--seed=}; shift ;;
    --)
      shift
      [ $# -eq 1 ] || die "expected exactly one OUTDIR after --, got $#"
      outdir=$1 have_outdir=1
      shift
      ;;
    -*) die "unknown option $(quoted "$1") (an OUTDIR that starts with '-' goes after --)" ;;
    *)
      [ "$have_outdir" -eq 0 ] || die "one OUTDIR only: $(quoted "$outdir") and $(quoted "$1")"
      outdir=$1 have_outdir=1
      shift
      ;;
  esac
done
[ "$have_outdir" -eq 1 ] || die "missing OUTDIR (usage: scripts/features.sh [--only NAME,...] [--p P] [--max-rows N] [--seed S] [--] OUTDIR)"
[ -n "$outdir" ] || die "OUTDIR is empty"
if [ -n "$max_rows" ]; then
  [[ $max_rows =~ ^[1-9][0-9]{0,9}$ ]] || die "--max-rows $(quoted "$max_rows") (allowed: a positive integer)"
fi
if ! [[ $p =~ ^[1-9][0-9]{0,5}$ ]] || [ "$p" -gt 100000 ]; then
  die "--p $(quoted "$p") (allowed: an integer 1..100000)"
fi
[[ $seed =~ ^[0-9]{1,18}$ ]] || die "--seed $(quoted "$seed") (allowed: an integer 0..10^18-1)"
[ "$have_only" -eq 0 ] || check_only "$only" "$names" "feature set"

outdir_make "$outdir"

numpy_python

# Paths travel as arguments, never inside the program text.
exec "$py" "$here/features.py" "$outdir" "$only" "$p" "$max_rows" "$seed"
