# syntax=docker/dockerfile:1
#
# Two images from one file (docs/docker.md):
#   docker build -t wgangp .                                  -> the trainer (last stage, default)
#   docker build --target mlflow-server -t wgangp-mlflow .    -> the tracking server compose.yaml runs
#
# Why not tensorflow/tensorflow:*-gpu: those images carry CUDA 12.3 / cuDNN 8, which TF 2.18+ does
# not use. `tensorflow[and-cuda]` pulls the matching nvidia-*-cu12 wheels (CUDA 12.5+, cuDNN 9)
# instead, so a slim Python base plus the NVIDIA driver on the host (Container Toolkit) is enough.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# --- MLflow tracking server with the PostgreSQL driver (used by compose.yaml) --------------------
FROM ${PYTHON_IMAGE} AS mlflow-server
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN pip install --no-cache-dir "mlflow==3.17.2" "psycopg2-binary==2.9.10" \
    && useradd --create-home --uid 1000 mlflow \
    && mkdir /mlartifacts && chown mlflow:mlflow /mlartifacts
USER 1000:1000
EXPOSE 5000
CMD ["mlflow", "server", "--host", "0.0.0.0", "--port", "5000"]

# --- Trainer: python -m wgangp.train on a GPU host ------------------------------------------------
FROM ${PYTHON_IMAGE} AS trainer
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, from pyproject.toml alone, so editing the code does not re-download the
# multi-GB TensorFlow + CUDA layer. The CUDA flavour is pinned inside pyproject's tensorflow range.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; print('\n'.join(deps))" > /tmp/requirements.txt \
    && pip install --no-cache-dir "tensorflow[and-cuda]==2.21.*" -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# Editable install on purpose: Hydra loads its configs from the top-level conf/ next to the
# package (wgangp.config.CONF_DIR), which a built wheel would not contain.
COPY conf ./conf
COPY wgangp ./wgangp
RUN pip install --no-cache-dir --no-deps -e .

# Non-root; everything a run writes lands under /work: Hydra's outputs/ and multirun/, and the
# default sqlite tracking store /work/mlflow/mlflow.db with its artifacts beside it in
# /work/mlflow/mlartifacts. Mount one volume at /work to keep it all; set MLFLOW_TRACKING_URI
# (or tracking.uri=...) to log to a server instead.
RUN useradd --create-home --uid 1000 trainer \
    && mkdir /work && chown trainer:trainer /work
USER 1000:1000
WORKDIR /work
VOLUME ["/work"]
ENV MLFLOW_TRACKING_URI=sqlite:////work/mlflow/mlflow.db

ENTRYPOINT ["python", "-m", "wgangp.train"]
CMD ["+experiment=stable_gp"]
