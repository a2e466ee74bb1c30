#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install exactly uv.lock into it, from PyPI only (docs/installs.md).
#   bash scripts/bootstrap.sh         # the trainer: the lock's runtime packages, wgangp editable
#   bash scripts/bootstrap.sh --dev   # plus the lock's dev group (test and lint tools)
# Packages the lock does not list are removed from .venv. When pyproject.toml and uv.lock disagree
# it installs nothing and fails: run `uv lock` (and the suite) and commit both files.
set -euo pipefail
cd "$(dirname "$0")/.."
groups=(--no-dev)
[ "${1:-}" = "--dev" ] && groups=()
python=${PYTHON:-python3}
if ! command -v uv >/dev/null 2>&1; then
  "$python" -m pip install --quiet --disable-pip-version-check uv
fi
uv=$(command -v uv || echo "$python -m uv")
$uv venv --quiet --allow-existing --python "$python" .venv
# --locked: install the lock as it is, and fail (installing nothing) if it is stale.
# --compile-bytecode: write each module's .pyc now. Where PYTHONDONTWRITEBYTECODE is set (as in
# CI), Python never caches them itself and recompiles TensorFlow, Keras and MLflow at every start
# (docs/installs.md).
$uv sync --quiet --locked --compile-bytecode "${groups[@]}" --python .venv/bin/python
echo "wgangp installed in $(pwd)/.venv from uv.lock"
