#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install wgangp into it, from PyPI only.
#   bash scripts/bootstrap.sh         # the trainer
#   bash scripts/bootstrap.sh --dev   # plus test and lint tools
set -euo pipefail
cd "$(dirname "$0")/.."
extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"
python=${PYTHON:-python3}
if ! command -v uv >/dev/null 2>&1; then
  "$python" -m pip install --quiet --disable-pip-version-check uv
fi
uv=$(command -v uv || echo "$python -m uv")
$uv venv --quiet --allow-existing --python "$python" .venv
$uv pip install --quiet --python .venv/bin/python -e ".${extras}"
echo "wgangp installed in $(pwd)/.venv"
