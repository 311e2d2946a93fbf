#!/usr/bin/env bash
# Builds dpdyn (installing missing packages) and runs the whole ctest suite.
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L unit]
#   DPD_SANITIZE=1 scripts/test.sh   runs the suite under ASan+UBSan in build-asan/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=build
if [ "${DPD_SANITIZE:-0}" = 1 ]; then
  build=build-asan
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDPD_SANITIZE=ON -DDPD_WERROR=ON >/dev/null
else
  cmake -S . -B "$build" -DDPD_WERROR=ON >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
