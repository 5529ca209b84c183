#!/usr/bin/env bash
# Runs the Python (PyTorch) tests in python/tests with the runtime of this
# checkout's build. Without pytest or torch it says so and succeeds, so CPU
# machines stay green; GPU tests skip themselves (with the reason) where there
# is no sm_90 GPU, no libmoss_runtime.so or no kernels dir.
# Usage: scripts/test-python.sh [pytest args...]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"

missing=()
for module in pytest torch; do
  "$PYTHON" -c "import $module" 2>/dev/null || missing+=("$module")
done
if ((${#missing[@]})); then
  echo "skipped: python tests (python/tests): ${missing[*]} not installed for $PYTHON"
  exit 0
fi

lib="${MOSS_BUILD_DIR:-$ROOT/build}/runtime/libmoss_runtime.so"
if [[ -z "${MOSS_RUNTIME_LIB:-}" && -f "$lib" ]]; then
  export MOSS_RUNTIME_LIB="$lib"
fi
exec "$PYTHON" -m pytest -rs "$ROOT/python/tests" "$@"
