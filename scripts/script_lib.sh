# What dpdyn's shell scripts share (datasets.sh, features.sh, protocol_lib.sh); sourced, never run.
# The caller sets prog, its name for messages. Paths reach Python as arguments, never as program
# text. SPDX-License-Identifier: MIT
# shellcheck shell=bash

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() {
  printf '%s: %s\n' "$prog" "$*" >&2
  exit 1
}
# quoted VALUE: a value for a message, in single quotes, or as the shell's $'...' when it holds a
# control character (one message stays one line)
quoted() {
  case $1 in
    *[![:print:]]*) printf '%q' "$1" ;;
    *) printf "'%s'" "$1" ;;
  esac
}

# numpy_python: sets py to $DPD_PYTHON, else /usr/bin/python3, else python3: the first that imports
# numpy; exit 1 when none does.
numpy_python() {
  local cand
  py=""
  for cand in "${DPD_PYTHON:-}" /usr/bin/python3 python3; do
    [ -n "$cand" ] || continue
    if "$cand" -c 'import numpy' >/dev/null 2>&1; then
      py=$cand
      return 0
    fi
  done
  die "no python3 that imports numpy (install python3-numpy: scripts/setup.sh)"
}

# check_only ONLY NAMES WHAT: ONLY (non-empty) is a comma-separated subset of the words NAMES, else
# exit 1 naming the first unknown WHAT ("data set", "feature set").
check_only() {
  local rest w n found
  [ -n "$1" ] || die "--only is empty (allowed: a comma-separated subset of $2)"
  rest=$1,
  while [ -n "$rest" ]; do
    w=${rest%%,*} rest=${rest#*,} found=0
    for n in $2; do [ "$w" != "$n" ] || found=1; done
    [ "$found" -eq 1 ] || die "--only $(quoted "$1"): unknown $3 $(quoted "$w") (allowed: $2)"
  done
}

# outdir_make DIR: DIR exists as a directory afterwards; an existing non-directory is exit 1.
outdir_make() {
  if [ -e "$1" ] || [ -L "$1" ]; then
    [ -d "$1" ] || die "OUTDIR $(quoted "$1") exists and is not a directory"
  else
    mkdir -p -- "$1" || die "cannot create OUTDIR $(quoted "$1")"
  fi
}
