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
