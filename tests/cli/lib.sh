# Shared preamble of the CLI test scripts (sourced): a work directory removed at exit, the pass
# and fail counters, their reporters and the closing line that ctest's log shows.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
passes=0
ok() {
  echo "ok   $*"
  passes=$((passes + 1))
}
bad() {
  echo "FAIL $*"
  fails=$((fails + 1))
}
# finish NAME: prints "NAME: P passed, F failed"; the status is that of the whole script.
finish() {
  echo "$1: $passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
# err NAME PATTERN ARGS...: `$dpdyn ARGS --out=...` must exit 1 with PATTERN (grep -E) on stderr
# and write no output directory (the caller sets $dpdyn before calling).
err() {
  local name=$1 pattern=$2
  shift 2
  if "$dpdyn" "$@" --out="$work/err-$name" >/dev/null 2>"$work/stderr"; then
    bad "$name: exit 0"
  elif [ $? -eq 1 ] && grep -Eq "$pattern" "$work/stderr" && [ ! -e "$work/err-$name" ]; then
    ok "$name: $(head -1 "$work/stderr")"
  else
    bad "$name: $(head -1 "$work/stderr")"
  fi
}
# numpy_python: prints the first of python3, /usr/bin/python3 that imports numpy (nothing if
# none: `python3` may be a pyenv interpreter without Debian's python3-numpy).
numpy_python() {
  local cand
  for cand in python3 /usr/bin/python3; do
    if "$cand" -c 'import numpy' 2>/dev/null; then
      echo "$cand"
      return
    fi
  done
}
# Data files (docs/output.md): `#` metadata lines, one header row of column names, then rows,
# fields separated by tabs.
# tsv_header FILE: the header row. tsv_rows FILE: the data rows (blank lines kept), tabs as
# spaces; a file without a header row (a test's own) passes whole, less its `#` lines.
tsv_header() { awk '/^#/ { next } { print; exit }' "$1"; }
tsv_rows() {
  awk '/^#/ { next } !h { h = 1; split($0, f, "\t"); if (f[1] ~ /^[A-Za-z_]/ && f[1] !~ /^-?(inf|nan)$/) next }
       { gsub("\t", " "); print }' "$1"
}
