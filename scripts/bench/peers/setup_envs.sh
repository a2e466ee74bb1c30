#!/usr/bin/env bash
# Create the peers' virtual environments under <repo>/.bench-envs/ (gitignored). Idempotent:
# an env whose marker file exists is left alone; delete the env folder to rebuild it.
#
#   bash scripts/bench/peers/setup_envs.sh            # both peers
#   bash scripts/bench/peers/setup_envs.sh ydata      # one of: ydata ctgan
#
# The harness then runs each peer from the repo root as a module of this checkout, e.g.
#   .bench-envs/ctgan/bin/python -m scripts.bench.peers.ctgan_bench --json --size small
# so the envs need only the peer's own packages (the peers import scripts.bench.peers.record and
# .rows, which need numpy and pandas, both installed with the peer).
#
# Why each env is separate: ydata-synthetic 1.4.0 needs TensorFlow 2.15 and numpy<2 (the project
# uses TF 2.21); CTGAN needs torch. torch is installed FIRST with plain pip so that pip finds the
# CPU wheel available locally (find-links); ctgan is then installed with pip so the installed
# torch satisfies it. Never use uv for the ctgan env: it would pull a multi-GB CUDA torch.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
ENVS="${WGANGP_BENCH_ENVS:-$REPO/.bench-envs}"
PYTHON311="${PYTHON311:-python3.11}"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"

if ! command -v "$PYTHON311" >/dev/null 2>&1; then
    echo "setup_envs: $PYTHON311 not found; set PYTHON311=/path/to/python3.11" >&2
    exit 2
fi
mkdir -p "$ENVS"

make_venv() { # name
    local env="$ENVS/$1"
    if [ ! -x "$env/bin/python" ]; then
        "$PYTHON311" -m venv "$env"
        "$env/bin/python" -m pip install --quiet --upgrade "pip>=24" wheel
    fi
}

setup_ydata() {
    local env="$ENVS/ydata"
    if [ -f "$env/.ready" ]; then echo "ydata: ready ($env)"; return; fi
    echo "ydata: creating $env (ydata-synthetic 1.4.0, tensorflow 2.15, numpy<2)"
    make_venv ydata
    # Pins: ydata-synthetic 1.4.0 declares tensorflow==2.15.* and numpy<2; tensorflow-probability
    # 0.23 is the release built against TF 2.15 (newer ones import a newer TF / Keras).
    "$env/bin/python" -m pip install --quiet \
        "ydata-synthetic==1.4.0" "tensorflow==2.15.1" "tensorflow-probability==0.23.0" \
        "tf-keras==2.15.1" "numpy>=1.26,<2" "pandas>=2.1,<2.3"
    "$env/bin/python" -c "import ydata_synthetic, tensorflow as tf; print('ydata env: tf', tf.__version__)"
    touch "$env/.ready"
}

setup_ctgan() {
    local env="$ENVS/ctgan"
    if [ -f "$env/.ready" ]; then echo "ctgan: ready ($env)"; return; fi
    echo "ctgan: creating $env (torch $TORCH_VERSION CPU first, then ctgan 0.12.1)"
    make_venv ctgan
    "$env/bin/python" -m pip install --quiet "torch==$TORCH_VERSION"
    "$env/bin/python" -m pip install --quiet "ctgan==0.12.1" "torch==$TORCH_VERSION"
    "$env/bin/python" - <<'PY'
import torch, ctgan  # noqa: F401
assert not torch.version.cuda, f"a CUDA torch was installed ({torch.version.cuda}); rebuild the env"
print("ctgan env: torch", torch.__version__)
PY
    touch "$env/.ready"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(ydata ctgan)
for name in "${targets[@]}"; do
    case "$name" in
        ydata) setup_ydata ;;
        ctgan) setup_ctgan ;;
        *) echo "setup_envs: unknown peer '$name' (choose ydata or ctgan)" >&2; exit 2 ;;
    esac
done
