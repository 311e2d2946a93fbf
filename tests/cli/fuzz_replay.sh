#!/usr/bin/env bash
# Replays fuzz inputs: runs HARNESS on every file of each DIR (a missing DIR is empty) and fails
# if any run crashes or hangs. The harnesses exit 0 on every input, valid or not, so any other
# status is a finding: a signal (status >= 128), a sanitizer report (exit 1 under DPD_SANITIZE),
# or the time limit (124). What a run prints (the CLI's own notes on stderr) is shown only for a
# failed run.
# Usage: tests/cli/fuzz_replay.sh HARNESS DIR...   (FUZZ_REPLAY_TIMEOUT seconds per input, 60)
set -uo pipefail
harness=$1
shift
limit=${FUZZ_REPLAY_TIMEOUT:-60}
runs=0
failed=0
for dir in "$@"; do
  [ -d "$dir" ] || continue
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    case $f in *.md) continue ;; esac
    runs=$((runs + 1))
    out=$(timeout -k 5 "$limit" "$harness" "$f" 2>&1)
    status=$?
    if [ "$status" -ne 0 ]; then
      failed=$((failed + 1))
      if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "FAIL: $f: hang (over ${limit} s)"
      elif [ "$status" -ge 128 ]; then
        echo "FAIL: $f: signal $((status - 128))"
      else
        echo "FAIL: $f: exit status $status"
      fi
      printf '%s\n' "$out" | tail -n 40
    fi
  done
done
echo "$(basename "$harness"): $runs inputs replayed, $failed failed"
[ "$runs" -gt 0 ] && [ "$failed" -eq 0 ]
