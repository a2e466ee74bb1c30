#
# Two images from one file (docs/docker.md), built with BuildKit (DOCKER_BUILDKIT=1 or buildx):
#   docker build -t wgangp .                                  -> the trainer (last stage, default)
#   docker build --target mlflow-server -t wgangp-mlflow .    -> the server compose.yaml runs
#   docker build --build-arg TENSORFLOW=tensorflow-cpu -t wgangp-cpu .   -> no CUDA wheels
# Behind a TLS-intercepting proxy, hand pip the proxy's CA as a secret (nothing stays in the image):
#   docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt ...
#
# Every Python package comes from uv.lock, the lock `bash scripts/bootstrap.sh` installs: its
# pinned versions, exported by `uv export --frozen` and installed by pip with their hashes
# (docs/installs.md). The TensorFlow build is the one choice left to the image: the lock's
# tensorflow plus its CUDA and cuDNN wheels (the `cuda` extra) by default, or tensorflow-cpu at the
# same version (the lock's docker-cpu group).
#
# Why not tensorflow/tensorflow:*-gpu: those images carry CUDA 12.3 / cuDNN 8, which TF 2.18+ does
# not use. `tensorflow[and-cuda]` pulls the matching nvidia-*-cu12 wheels (CUDA 12.5+, cuDNN 9)
# instead, so a slim Python base plus the NVIDIA driver on the host (Container Toolkit) is enough.
#
# Any Debian-like base with python3 >= 3.11, its venv module and useradd works: the dependencies go
# into virtual environments under /opt, never into the system Python (Debian's refuses, PEP 668).
# PATH is spelled out in full because an imported root file system carries no ENV at all.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# --- The lock, exported as pinned requirements with hashes, one file per image -------------------
# uv itself is installed from the lock too (its hashes, read from uv.lock), in a stage of its own.
FROM ${PYTHON_IMAGE} AS requirements
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/uv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /lock
COPY pyproject.toml uv.lock ./
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && python3 -c "import tomllib; (p,) = [p for p in tomllib.load(open('uv.lock', 'rb'))['package'] if p['name'] == 'uv']; print('uv==' + p['version'], *(' --hash=' + f['hash'] for f in p['wheels'] + [p['sdist']]))" > uv.txt \
    && python3 -m venv /opt/uv \
    && pip install --no-cache-dir --require-hashes -r uv.txt \
    && mkdir /requirements \
    && uv export --frozen --no-emit-project --only-group docker-server -o /requirements/server.txt \
    && uv export --frozen --no-emit-project --no-dev --extra cuda --group docker-build \
        -o "/requirements/tensorflow[and-cuda].txt" \
    && uv export --frozen --no-emit-project --no-dev --group docker-cpu --group docker-build \
        --no-emit-package tensorflow -o /requirements/tensorflow-cpu.txt

# --- The virtual environment both images start from: MLflow (the server's and the trainer's
# client, one version) and the PostgreSQL driver compose.yaml's store needs ----------------------
FROM ${PYTHON_IMAGE} AS mlflow-venv
ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY --from=requirements /requirements/server.txt /tmp/requirements/
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && python3 -m venv /opt/venv \
    && pip install --no-cache-dir --require-hashes -r /tmp/requirements/server.txt \
    && rm -r /tmp/requirements

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
# The TensorFlow build: tensorflow[and-cuda] (default) or tensorflow-cpu; the version is the lock's.
ARG TENSORFLOW="tensorflow[and-cuda]"
ENV PYTHONDONTWRITEBYTECODE=1

WORKDIR /app

# Dependencies first, from the lock alone, so editing the code does not re-download the multi-GB
# TensorFlow + CUDA layer: the project's dependencies and its build requirements (the editable
# install below then needs no network).
COPY --from=requirements /requirements/ /tmp/requirements/
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
    && if [ ! -f "/tmp/requirements/${TENSORFLOW}.txt" ]; then \
        echo "TENSORFLOW=${TENSORFLOW}: expected tensorflow[and-cuda] or tensorflow-cpu" >&2; \
        exit 2; fi \
    && pip install --no-cache-dir --require-hashes -r "/tmp/requirements/${TENSORFLOW}.txt" \
    && rm -r /tmp/requirements

# Editable install on purpose: Hydra loads its configs from the top-level conf/ next to the
# package (wgangp.config.CONF_DIR), which a built wheel would not contain. No build isolation:
# setuptools is already in the environment, and an isolated build would fetch it from PyPI.
COPY pyproject.toml README.md ./
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
