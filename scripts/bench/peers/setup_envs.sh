#!/usr/bin/env bash
# Create the peers' virtual environments under <repo>/.bench-envs/ (gitignored). Idempotent:
# an env whose marker file exists is left alone; delete the env folder to rebuild it.
#
#   bash scripts/bench/peers/setup_envs.sh            # the speed benchmark's peers: ydata ctgan
#   bash scripts/bench/peers/setup_envs.sh ydata      # one of: ydata ctgan smartnoise synthcity
#
# smartnoise and synthcity are the differentially private peers (scripts/dp_peers.py), built
# only when named.
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
# smartnoise-synth 1.0.8 pins opacus 0.14 (and mbi<2), synthcity 0.2.12 pins torch<2.3, numpy<2
# and opacus>=1.3: each gets its own env. synthcity's torch is explained at setup_synthcity.
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

setup_smartnoise() {
    local env="$ENVS/smartnoise"
    if [ -f "$env/.ready" ]; then echo "smartnoise: ready ($env)"; return; fi
    echo "smartnoise: creating $env (torch $TORCH_VERSION CPU first, then smartnoise-synth 1.0.8)"
    make_venv smartnoise
    "$env/bin/python" -m pip install --quiet "torch==$TORCH_VERSION"
    "$env/bin/python" -m pip install --quiet "smartnoise-synth==1.0.8" "torch==$TORCH_VERSION"
    "$env/bin/python" - <<'PY'
import torch, snsynth, opacus  # noqa: F401
from importlib.metadata import version
assert not torch.version.cuda, f"a CUDA torch was installed ({torch.version.cuda}); rebuild the env"
print("smartnoise env: smartnoise-synth", version("smartnoise-synth"), "opacus", opacus.__version__,
      "torch", torch.__version__)
PY
    touch "$env/.ready"
}

# synthcity 0.2.12 needs torch<2.3, and PyPI's Linux wheels of those releases are CUDA builds
# whose import loads the nvidia-*-cu12 libraries (a torch installed with --no-deps fails to
# import); no CPU build of them is on PyPI or on this machine. So the env installs PyPI's
# torch 2.2.2 with its CUDA libraries (2.8 GB installed; the env is 7 GB) and the peer runs it
# on the CPU (scripts/bench/peers/dp_table.py). SYNTHCITY_TORCH=/path/to/torch-2.2.2+cpu.whl
# (a CPU wheel of a torch<2.3) avoids the CUDA libraries where such a wheel is at hand.
SYNTHCITY_TORCH="${SYNTHCITY_TORCH:-torch==2.2.2}"

setup_synthcity() {
    local env="$ENVS/synthcity"
    if [ -f "$env/.ready" ]; then echo "synthcity: ready ($env)"; return; fi
    echo "synthcity: creating $env ($SYNTHCITY_TORCH first, then synthcity 0.2.12)"
    make_venv synthcity
    "$env/bin/python" -m pip install --quiet "$SYNTHCITY_TORCH" "numpy>=1.26,<2"
    local torch_now
    torch_now="$("$env/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])')"
    # opacus 1.5.4 and later register torch.nn.RMSNorm (torch >= 2.4) at import: 1.5.3 is the
    # last release that imports on torch 2.2 (synthcity asks only opacus>=1.3).
    "$env/bin/python" -m pip install --quiet "synthcity==0.2.12" "torch==$torch_now" \
        "numpy>=1.26,<2" "opacus==1.5.3"
    "$env/bin/python" - <<'PY'
import torch
from importlib.metadata import version
from synthcity.plugins import Plugins
assert "dpgan" in Plugins().list(), "synthcity's dpgan plugin did not load"
print("synthcity env: synthcity", version("synthcity"), "opacus", version("opacus"),
      "torch", torch.__version__)
PY
    touch "$env/.ready"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(ydata ctgan)
for name in "${targets[@]}"; do
    case "$name" in
        ydata) setup_ydata ;;
        ctgan) setup_ctgan ;;
        smartnoise) setup_smartnoise ;;
        synthcity) setup_synthcity ;;
        *)
            echo "setup_envs: unknown peer '$name' (choose ydata, ctgan, smartnoise or synthcity)" >&2
            exit 2
            ;;
    esac
done
