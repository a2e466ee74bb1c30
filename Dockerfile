#
# Two images from one file (docs/docker.md), built with BuildKit (DOCKER_BUILDKIT=1 or buildx):
#   docker build -t wgangp .                                  -> the trainer (last stage, default)
#   docker build --target mlflow-server -t wgangp-mlflow .    -> the server compose.yaml runs
#   docker build --build-arg TENSORFLOW=tensorflow-cpu==2.21.* -t wgangp-cpu .   -> no CUDA wheels
# Behind a TLS-intercepting proxy, hand pip the proxy's CA as a secret (nothing stays in the image):
#   docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt ...
#
# Why not tensorflow/tensorflow:*-gpu: those images carry CUDA 12.3 / cuDNN 8, which TF 2.18+ does
# not use. `tensorflow[and-cuda]` pulls the matching nvidia-*-cu12 wheels (CUDA 12.5+, cuDNN 9)
# instead, so a slim Python base plus the NVIDIA driver on the host (Container Toolkit) is enough.
#
# Any Debian-like base with python3 >= 3.11, its venv module and useradd works: the dependencies go
# into the virtual environment /opt/venv, never into the system Python (Debian's refuses, PEP 668).
# PATH is spelled out in full because an imported root file system carries no ENV at all.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# --- The virtual environment both images start from: MLflow (the server's and the trainer's
# client, one version) and the PostgreSQL driver compose.yaml's store needs ----------------------
FROM ${PYTHON_IMAGE} AS mlflow-venv
ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && python3 -m venv /opt/venv \
    && pip install --no-cache-dir "mlflow==3.17.2" "psycopg2-binary==2.9.10"

# --- MLflow tracking server (used by compose.yaml) ------------------------------------------------
FROM mlflow-venv AS mlflow-server
# /mlflow holds the default sqlite store and the served artifacts; compose.yaml keeps the
# artifacts there too and puts the metadata in PostgreSQL.
RUN useradd --create-home --uid 1000 mlflow \
    && mkdir /mlflow && chown mlflow:mlflow /mlflow
USER 1000:1000
WORKDIR /mlflow
VOLUME ["/mlflow"]
EXPOSE 5000
CMD ["mlflow", "server", "--backend-store-uri", "sqlite:////mlflow/mlflow.db", \
     "--artifacts-destination", "/mlflow/artifacts", "--host", "0.0.0.0", "--port", "5000"]

# --- Trainer: python -m wgangp.train on a GPU host ------------------------------------------------
FROM mlflow-venv AS trainer
# The TensorFlow distribution: the CUDA one by default; tensorflow-cpu for a CPU-only image.
ARG TENSORFLOW="tensorflow[and-cuda]==2.21.*"
ENV PYTHONDONTWRITEBYTECODE=1

WORKDIR /app

# Dependencies first, from pyproject.toml alone, so editing the code does not re-download the
# multi-GB TensorFlow + CUDA layer: the project's dependencies and its build requirements (the
# editable install below then needs no network). pyproject's own tensorflow line is left out:
# $TENSORFLOW replaces it (else pip would add the full tensorflow next to tensorflow-cpu).
COPY pyproject.toml README.md ./
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb')); deps = p['project']['dependencies'] + p['build-system']['requires']; print('\n'.join(d for d in deps if not d.startswith('tensorflow')))" > /tmp/requirements.txt \
    && pip install --no-cache-dir "${TENSORFLOW}" -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# Editable install on purpose: Hydra loads its configs from the top-level conf/ next to the
# package (wgangp.config.CONF_DIR), which a built wheel would not contain. No build isolation:
# setuptools is already in the environment, and an isolated build would fetch it from PyPI.
COPY conf ./conf
COPY wgangp ./wgangp
RUN pip install --no-cache-dir --no-deps --no-build-isolation -e .

# Non-root; everything a run writes lands under /work: Hydra's outputs/ and multirun/, the
# checkpoints/, and the default sqlite tracking store /work/mlflow/mlflow.db with its artifacts
# beside it in /work/mlflow/mlartifacts. Mount one volume at /work to keep it all; set
# MLFLOW_TRACKING_URI (or tracking.uri=...) to log to a server instead.
RUN useradd --create-home --uid 1000 trainer \
    && mkdir /work && chown trainer:trainer /work
USER 1000:1000
WORKDIR /work
VOLUME ["/work"]
# The image holds no git checkout and no git: MLflow's GitPython would warn at every run.
ENV MLFLOW_TRACKING_URI=sqlite:////work/mlflow/mlflow.db \
    GIT_PYTHON_REFRESH=quiet

# Exec form: python is PID 1 and receives docker stop's SIGTERM itself (it installs handlers).
ENTRYPOINT ["python", "-m", "wgangp.train"]
CMD ["+experiment=stable_gp"]
