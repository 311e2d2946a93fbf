#!/usr/bin/env bash
# Installs every Debian package dpdyn needs (when missing), builds it in build/, and makes
# `import dpdyn` work for /usr/bin/python3 (a dpdyn.pth in its user site-packages naming python/;
# DPD_NO_PTH=1 skips that: then use PYTHONPATH=python). docs/python.md describes the package.
# Usage: scripts/setup.sh            (idempotent; safe to re-run)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config
          libgsl-dev libsundials-dev libfftw3-dev libopenblas-dev liblapacke-dev
          librandom123-dev libsleef-dev libinih-dev libcjson-dev libcmocka-dev
          gnuplot-nox fonts-dejavu-core python3 python3-numpy python3-sklearn time help2man
          python3-cffi python3-pytest python3-scipy
          libopenmpi-dev openmpi-bin
          dataset-fashion-mnist)  # Fashion-MNIST for scripts/datasets.sh (docs/datasets.md), 30 MB

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Warnings are errors here and in scripts/test.sh alike (one set of flags, so the tests reuse this
# build); DPD_CMAKE_ARGS=-DDPD_WERROR=OFF for a compiler newer than Debian 12's gcc.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDPD_WERROR=ON ${DPD_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"

# The Python package: pure Python over build/libdpdyn.so (python/dpdyn finds it in the build tree).
if [ "${DPD_NO_PTH:-0}" != 1 ] && [ -x /usr/bin/python3 ]; then
  site=$(/usr/bin/python3 -m site --user-site)
  mkdir -p "$site"
  echo "$PWD/python" > "$site/dpdyn.pth"
fi
