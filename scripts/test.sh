#!/usr/bin/env bash
# Builds dpdyn with scripts/setup.sh (the same build flags: nothing is rebuilt after setup) and
# runs the ctest suite: by default every test but those labelled `slow` (about 3 minutes on
# 2 cores; README "Tests" has the times).
# Usage: scripts/test.sh [--slow | --all] [extra ctest arguments, e.g. -L unit]
#   --slow                     only the slow statistical tests (label slow; CI runs them)
#   --all                      every test, slow ones included
#   DPD_SANITIZE=1 scripts/test.sh   the suite under ASan+UBSan in build-asan/ (Debug)
#   DPD_ISA=scalar scripts/test.sh -L unit   the tests on a forced kernel path (docs/input.md)
set -euo pipefail
cd "$(dirname "$0")/.."
select=(-LE slow)
case "${1:-}" in
--slow)
  select=(-L slow)
  shift
  ;;
--all)
  select=()
  shift
  ;;
esac
scripts/setup.sh
build=build
if [ "${DPD_SANITIZE:-0}" = 1 ]; then
  build=build-asan
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDPD_SANITIZE=ON -DDPD_WERROR=ON >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
cd "$build"
ctest --output-on-failure -j"$(nproc)" "${select[@]}" "$@"
