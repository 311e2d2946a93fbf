#!/usr/bin/env bash
# The pytest suite of the Python package against one build: run_pytest.sh LIBDPDYN DPDYN_EXE.
# Exit 77 (ctest: skipped) when python3-cffi, python3-numpy or python3-pytest is missing.
# DPDYN_PYTHON picks the interpreter (default /usr/bin/python3, the one Debian's packages serve).
set -euo pipefail
py=${DPDYN_PYTHON:-/usr/bin/python3}
if ! "$py" -c "import cffi, numpy, pytest" 2>/dev/null; then
  echo "skipped: $py lacks cffi, numpy or pytest (apt-get install python3-cffi python3-numpy" \
       "python3-pytest, or run scripts/setup.sh)"
  exit 77
fi
export DPDYN_LIBRARY="$1" DPDYN_CLI="$2" PYTHONDONTWRITEBYTECODE=1
exec "$py" -m pytest -q -p no:cacheprovider "$(dirname "$0")"
