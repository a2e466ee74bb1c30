#!/usr/bin/env bash
# The histories benchmark's own environments, beside the speed benchmark's (same folder,
# $WGANGP_BENCH_ENVS or <repo>/.bench-envs; same marker files: delete an env to rebuild it).
#
#   bash scripts/histories_benchmark/setup_envs.sh                 # all of them
#   bash scripts/histories_benchmark/setup_envs.sh par mostly      # some of: fixtures par mostly dgan
#
# fixtures: the external simulators that write the benchmark's tables (synccfd, the Fraud
#           Detection Handbook's simulator extended; synthfin-aml, an AML transfer graph).
# par:      SDV's PARSynthesizer (sdv 2.0, deepecho, torch CPU).
# mostly:   MOSTLY AI's engine (mostlyai-engine 2.7.3, torch 2.13 CPU).
# dgan:     gretel-synthetics' DGAN (DoppelGANger in PyTorch).
#
# As in scripts/bench/peers/setup_envs.sh, torch is installed FIRST with plain pip so that pip takes
# the CPU wheel this machine holds (find-links) and the peer is then installed against it; uv would
# pull a multi-GB CUDA torch.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
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

no_cuda_check() { # env
    "$1/bin/python" -c "import torch; assert not torch.version.cuda, 'a CUDA torch was installed'; print('torch', torch.__version__)"
}

setup_fixtures() {
    local env="$ENVS/histfixtures"
    if [ -f "$env/.ready" ]; then echo "fixtures: ready ($env)"; return; fi
    echo "fixtures: creating $env (synccfd 0.1.0, synthfin-aml 9.2.0)"
    make_venv histfixtures
    # synthfin-aml's package imports its PyTorch Geometric dataset class (torch, torch_geometric,
    # networkx, datasets: its [gnn] extra) though the generator uses none of them; the benchmark
    # never loads that dataset (a download). The CPU torch first.
    "$env/bin/python" -m pip install --quiet "torch==$TORCH_VERSION"
    "$env/bin/python" -m pip install --quiet "synccfd==0.1.0" "synthfin-aml[gnn]==9.2.0" "pyarrow" \
        "torch==$TORCH_VERSION"
    "$env/bin/python" -c "import synccfd, synthfin_aml_pkg; print('fixtures env: synccfd', synccfd.__version__)"
    touch "$env/.ready"
}

setup_par() {
    local env="$ENVS/par"
    if [ -f "$env/.ready" ]; then echo "par: ready ($env)"; return; fi
    echo "par: creating $env (torch $TORCH_VERSION CPU first, then sdv 2.0.0)"
    make_venv par
    "$env/bin/python" -m pip install --quiet "torch==$TORCH_VERSION"
    "$env/bin/python" -m pip install --quiet "sdv==2.0.0" "torch==$TORCH_VERSION" "pyarrow"
    no_cuda_check "$env"
    "$env/bin/python" -c "from sdv.sequential import PARSynthesizer; import sdv; print('par env: sdv', sdv.__version__)"
    touch "$env/.ready"
}

setup_mostly() {
    local env="$ENVS/mostly"
    if [ -f "$env/.ready" ]; then echo "mostly: ready ($env)"; return; fi
    echo "mostly: creating $env (torch $TORCH_VERSION CPU first, then mostlyai-engine 2.7.3)"
    make_venv mostly
    "$env/bin/python" -m pip install --quiet "torch==$TORCH_VERSION"
    "$env/bin/python" -m pip install --quiet "mostlyai-engine==2.7.3" "torch==$TORCH_VERSION"
    # mostlyai-engine declares torchvision 0.28 and torchaudio 2.11, whose PyPI wheels do not load
    # with the CPU torch ("operator torchvision::nms does not exist"), and transformers then fails
    # to import at all. The engine imports neither (tabular and sequential data need no vision or
    # audio): removed, transformers imports without them.
    "$env/bin/python" -m pip uninstall --yes --quiet torchvision torchaudio
    no_cuda_check "$env"
    "$env/bin/python" -c "import mostlyai.engine as e; from importlib.metadata import version; print('mostly env: mostlyai-engine', version('mostlyai-engine'))"
    touch "$env/.ready"
}

# gretel-synthetics 0.22.20 (its last release) declares numpy<1.24, pandas<2, sdv<0.18 and
# rdt<1.3 for its whole package; rdt 1.2 has no release for Python 3.11 (pip: "No matching
# distribution found for rdt<1.3,>=1.2"), and torch's CPU wheel here is for 3.11. DGAN itself
# (gretel_synthetics.timeseries_dgan) imports only torch, numpy, pandas and category_encoders:
# when the declared route fails, the package goes in without its declared requirements and DGAN's
# own imports beside it. The env records which route installed it (.route).
setup_dgan() {
    local env="$ENVS/dgan"
    if [ -f "$env/.ready" ]; then echo "dgan: ready ($env)"; return; fi
    echo "dgan: creating $env (torch $TORCH_VERSION CPU first, then gretel-synthetics[torch] 0.22.20)"
    make_venv dgan
    "$env/bin/python" -m pip install --quiet "torch==$TORCH_VERSION"
    if "$env/bin/python" -m pip install --quiet "gretel-synthetics[torch]==0.22.20" "torch==$TORCH_VERSION"; then
        echo "declared" > "$env/.route"
    else
        echo "dgan: the declared requirements did not install; DGAN's own imports only" >&2
        "$env/bin/python" -m pip install --quiet --no-deps "gretel-synthetics==0.22.20"
        "$env/bin/python" -m pip install --quiet "numpy<2" "pandas<2" "pyarrow<18" "tqdm" \
            "category-encoders==2.4.0" "torch==$TORCH_VERSION"
        echo "no-deps" > "$env/.route"
    fi
    no_cuda_check "$env"
    "$env/bin/python" -c "from gretel_synthetics.timeseries_dgan.dgan import DGAN; print('dgan env: ok')"
    touch "$env/.ready"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fixtures par mostly dgan)
for name in "${targets[@]}"; do
    case "$name" in
        fixtures) setup_fixtures ;;
        par) setup_par ;;
        mostly) setup_mostly ;;
        dgan) setup_dgan ;;
        *)
            echo "setup_envs: unknown env '$name' (choose fixtures, par, mostly or dgan)" >&2
            exit 2
            ;;
    esac
done
