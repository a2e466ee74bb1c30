#!/usr/bin/env bash
# Build the Docker images and run them as a user would, on this machine (docs/docker.md).
#   bash scripts/docker_check.sh
# Starts dockerd when none answers (Debian's docker.io, installed if missing), builds a local
# Debian base when the Dockerfile's default one cannot be pulled, builds the MLflow server and the
# trainer on the CPU wheel, then checks that
#   0. both images hold the versions uv.lock pins (pandas, numpy, scikit-learn, MLflow, and the
#      trainer's dp-accounting and TensorFlow: its tensorflow-cpu build at the lock's version);
#   1. a short training logged to the server ends FINISHED there, with its artifacts, and leaves
#      its outputs on the /work volume;
#   2. a second run (default tracking URI: sqlite on /work) stopped by `docker stop` (SIGTERM)
#      ends KILLED with a checkpoint at the step it reached;
# and removes the containers, volume, network and images it made (and dockerd, if it started it).
# Exit 0 only if all of that holds; otherwise one line on stderr naming what failed.
# Needs root (apt-get, dockerd, debootstrap) unless a docker engine already answers.
#
# Environment:
#   WGANGP_REAL_SAMPLE   the real-rows sample (default: ../shared/data/creditcard_real_sample.csv.gz
#                        beside the repository)
#   WGANGP_DOCKER_LOGS   where build and run logs go (default: ${TMPDIR:-/tmp}/wgangp-docker-check)
#   WGANGP_DOCKER_KEEP   1: keep the images and the volume for a look afterwards
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

PREFIX=wgangp-check
LOGS=${WGANGP_DOCKER_LOGS:-${TMPDIR:-/tmp}/wgangp-docker-check}
SAMPLE=${WGANGP_REAL_SAMPLE:-$REPO/../shared/data/creditcard_real_sample.csv.gz}
KEEP=${WGANGP_DOCKER_KEEP:-0}
APT_ETC=${APT_ETC:-/etc/apt}  # tests point it elsewhere
BASE_IMAGE=$PREFIX-base:local
SERVER_IMAGE=$PREFIX-mlflow:local
TRAINER_IMAGE=$PREFIX-trainer:local
NETWORK=$PREFIX-net
VOLUME=$PREFIX-work
SERVER=$PREFIX-mlflow
RUN_FINISHED=$PREFIX-finished
RUN_STOPPED=$PREFIX-stopped
# Small enough to train in well under a minute on 2 cores; the real rows, never simulated ones.
SMALL=(
    trainer.batch_size=128 model.latent_dim=16 "model.generator.hidden=[32]"
    "model.critic.hidden=[32]" evaluate.enabled=false select.every=0
    data.path=/data/creditcard_real_sample.csv.gz data.schema=creditcard
)

DOCKER=""
STARTED_DOCKERD=""
T0=$(date +%s)

fail() {
    echo "docker_check: FAILED: $*" >&2
    exit 1
}

say() {
    echo "docker_check: $*"
}

# Runs a phase with its output in $LOGS/<name>.log; prints its duration, fails naming it.
phase() {
    local name=$1 what=$2
    shift 2
    local start
    start=$(date +%s)
    if ! "$@" >"$LOGS/$name.log" 2>&1; then
        fail "$what (log: $LOGS/$name.log)"
    fi
    say "$what: $(($(date +%s) - start)) s"
}

need_root() {
    [ "$(id -u)" -eq 0 ] || fail "$1 needs root"
}

apt_install() {
    need_root "installing $*"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q && apt-get install -y -q --no-install-recommends "$@" </dev/null
}

# A docker CLI that builds with BuildKit: one with the buildx plugin, or one older than 23
# (BuildKit built in; Debian's docker.io 20.10). A newer CLI without buildx cannot.
pick_docker() {
    local cli major
    for cli in $(type -ap docker) /usr/bin/docker; do
        [ -x "$cli" ] || continue
        if "$cli" buildx version >/dev/null 2>&1; then
            echo "$cli"
            return 0
        fi
        major=$("$cli" version --format '{{.Client.Version}}' 2>/dev/null | cut -d. -f1 || true)
        if [[ $major =~ ^[0-9]+$ ]] && [ "$major" -lt 23 ]; then
            echo "$cli"
            return 0
        fi
    done
    return 1
}

docker_ready() {
    "$DOCKER" info >/dev/null 2>&1
}

ensure_docker() {
    if ! DOCKER=$(pick_docker) || ! command -v dockerd >/dev/null 2>&1; then
        phase apt "install docker.io" apt_install docker.io
        DOCKER=$(pick_docker) || fail "no docker CLI that can build with BuildKit"
    fi
    if docker_ready; then
        say "using the running docker engine ($DOCKER)"
        return 0
    fi
    need_root "starting dockerd"
    # setsid and no inherited stdout: a CI job must not wait on the daemon's output.
    setsid dockerd >"$LOGS/dockerd.log" 2>&1 </dev/null &
    STARTED_DOCKERD=$!
    local waited=0
    until docker_ready; do
        kill -0 "$STARTED_DOCKERD" 2>/dev/null || fail "dockerd exited (log: $LOGS/dockerd.log)"
        [ "$waited" -lt 60 ] || fail "dockerd did not answer in 60 s (log: $LOGS/dockerd.log)"
        sleep 1
        waited=$((waited + 1))
    done
    say "started dockerd (pid $STARTED_DOCKERD) in $waited s"
}

# Removes what a run of this script makes; also what an interrupted earlier run left behind.
remove_made() {
    local keep_images=${1:-0}
    # -v: also the anonymous volume of the server image's VOLUME /mlflow.
    "$DOCKER" rm -f -v "$SERVER" "$RUN_FINISHED" "$RUN_STOPPED" >/dev/null 2>&1 || true
    "$DOCKER" network rm "$NETWORK" >/dev/null 2>&1 || true
    if [ "$keep_images" != 1 ]; then
        "$DOCKER" volume rm "$VOLUME" >/dev/null 2>&1 || true
        "$DOCKER" image rm -f "$TRAINER_IMAGE" "$SERVER_IMAGE" "$BASE_IMAGE" >/dev/null 2>&1 ||
            true
    fi
}

cleanup() {
    local code=$?
    if [ -n "$DOCKER" ] && docker_ready; then
        remove_made "$KEEP"
    fi
    if [ -n "$STARTED_DOCKERD" ]; then
        kill "$STARTED_DOCKERD" 2>/dev/null || true
        wait "$STARTED_DOCKERD" 2>/dev/null || true
    fi
    rm -rf "$LOGS/rootfs"
    exit "$code"
}

dockerfile_arg() {
    sed -n "s/^ARG $1=\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" Dockerfile | head -n 1
}

# The mirror apt uses for the suite's main archive (deb822 or one-line sources), never a guessed
# host: the first source that lists the suite itself (not -updates or -security).
apt_mirror() {
    local suite=$1 file
    for file in "$APT_ETC"/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" 'BEGIN { RS = "" } {
            uri = ""; listed = 0
            n = split($0, lines, "\n")
            for (i = 1; i <= n; i++) {
                split(lines[i], f, /[ \t]+/)
                if (f[1] == "URIs:") uri = f[2]
                if (f[1] == "Suites:") for (j = 2; j in f; j++) if (f[j] == suite) listed = 1
            }
            if (uri != "" && listed) print uri
        }' "$file"
    done
    for file in "$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '$1 == "deb" {
            i = 2
            if ($i ~ /^\[/) while ($i !~ /\]$/) i++
            if ($i ~ /^\[/ || $i ~ /\]$/) i++
            if ($(i + 1) == suite) print $i
        }' "$file"
    done
}

build_base() {
    local suite=$1 mirror
    mirror=$(apt_mirror "$suite" | head -n 1)
    [ -n "$mirror" ] || { echo "no $suite mirror in /etc/apt/sources.list*"; return 1; }
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    rm -rf "$LOGS/rootfs"
    # No python3-pip: the image's virtual environment brings its own pip.
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        "$suite" "$LOGS/rootfs" "$mirror"
    tar -C "$LOGS/rootfs" -c . | "$DOCKER" import - "$BASE_IMAGE"
    rm -rf "$LOGS/rootfs"
}

build() {
    local target=$1 tag=$2
    shift 2
    local secret=()
    local ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
    [ -f "$ca" ] && secret=(--secret "id=ca,src=$ca")
    DOCKER_BUILDKIT=1 "$DOCKER" build --progress=plain --network host "${secret[@]}" \
        --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" --target "$target" -t "$tag" "$@" .
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# GET a JSON endpoint of the server from the host; prints one field (dotted path).
api() {
    python3 - "$1" "$2" <<'EOF'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as response:
    value = json.load(response)
for key in sys.argv[2].split("."):
    value = value[int(key)] if isinstance(value, list) else value[key]
print(json.dumps(value) if isinstance(value, (dict, list)) else value)
EOF
}

# The image's own Python reads uv.lock (mounted) and compares its installed versions with it.
lock_versions() {
    local image=$1
    shift
    "$DOCKER" run --rm -i -v "$REPO/uv.lock:/tmp/uv.lock:ro" --entrypoint python "$image" \
        - /tmp/uv.lock "$@" <"$REPO/scripts/lock_versions.py"
}

check_lock_versions() {
    local name=$1
    shift
    phase "versions_$name" "compare the $name image's versions with uv.lock" lock_versions "$@"
    say "$name image = uv.lock: $(paste -sd ' ' "$LOGS/versions_$name.log" | sed 's/ == [^ ]*//g')"
}

wait_for_server() {
    local url=$1 waited=0
    until python3 -c "import urllib.request; urllib.request.urlopen('$url/health', timeout=5)" \
        2>/dev/null; do
        [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$SERVER")" = true ] ||
            fail "the MLflow server container exited (docker logs $SERVER)"
        [ "$waited" -lt 90 ] || fail "the MLflow server did not answer $url/health in 90 s"
        sleep 2
        waited=$((waited + 2))
    done
}

run_id_of() {
    "$DOCKER" logs "$1" 2>&1 | grep -o 'MLflow run [0-9a-f]\{32\}' | head -n 1 | cut -d' ' -f3
}

# Runs a shell line in a throwaway trainer container on the work volume (as its user, uid 1000).
on_volume() {
    "$DOCKER" run --rm -v "$VOLUME:/work" --entrypoint sh "$TRAINER_IMAGE" -c "$1"
}

check_finished_run() {
    local url=$1 run_id status artifacts name
    "$DOCKER" logs "$RUN_FINISHED" >"$LOGS/run_finished.log" 2>&1
    run_id=$(run_id_of "$RUN_FINISHED")
    [ -n "$run_id" ] ||
        fail "the finished run printed no MLflow run id (log: $LOGS/run_finished.log)"
    status=$(api "$url/api/2.0/mlflow/runs/get?run_id=$run_id" run.info.status) ||
        fail "run $run_id is not on the server at $url"
    [ "$status" = FINISHED ] || fail "run $run_id is $status on the server, not FINISHED"
    artifacts=$(api "$url/api/2.0/mlflow/artifacts/list?run_id=$run_id" files) ||
        fail "the server lists no artifacts for run $run_id"
    for name in config metrics.csv samples.csv; do
        grep -q "\"path\": \"$name\"" <<<"$artifacts" ||
            fail "run $run_id has no artifact $name on the server (it has: $artifacts)"
    done
    # Served artifacts: the rows come back through the server, not from a shared disk.
    python3 - "$url/get-artifact?path=samples.csv&run_uuid=$run_id" <<'EOF' ||
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as response:
    rows = response.read().decode().splitlines()
assert len(rows) > 100 and rows[0].startswith(("Time", '"Time"')), rows[:2]
EOF
        fail "samples.csv of run $run_id does not download from the server"
    on_volume 'for d in /work/outputs/*/*/; do [ -s "$d/samples.csv" ] && exit 0; done
        exit 1' ||
        fail "the finished run left no outputs/<date>/<time>/ on the /work volume"
    say "run $run_id FINISHED on the server with its artifacts; outputs on the /work volume"
}

check_stopped_run() {
    local run_id step status code
    "$DOCKER" logs "$RUN_STOPPED" >"$LOGS/run_stopped.log" 2>&1
    code=$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$RUN_STOPPED")
    [ "$code" = 143 ] ||
        fail "the stopped run exited $code, not 143 (SIGTERM; log: $LOGS/run_stopped.log)"
    run_id=$(run_id_of "$RUN_STOPPED")
    [ -n "$run_id" ] || fail "the stopped run printed no MLflow run id (log: $LOGS/run_stopped.log)"
    step=$(grep -o 'interrupted: checkpoint at step [0-9]*' "$LOGS/run_stopped.log" |
        grep -o '[0-9]*$' || true)
    [ -n "$step" ] || fail "the stopped run wrote no checkpoint (log: $LOGS/run_stopped.log)"
    on_volume "test -s /work/checkpoints/stopped/ckpt-$step.index" ||
        fail "no checkpoint ckpt-$step on the /work volume"
    status=$("$DOCKER" run --rm -v "$VOLUME:/work" --entrypoint python "$TRAINER_IMAGE" -c \
        "import mlflow; print(mlflow.MlflowClient().get_run('$run_id').info.status)" \
        2>>"$LOGS/run_stopped.log" | tail -n 1) ||
        fail "run $run_id is not in the default store /work/mlflow/mlflow.db"
    [ "$status" = KILLED ] || fail "the stopped run $run_id is $status, not KILLED"
    say "run $run_id stopped by SIGTERM: KILLED, checkpoint at step $step on the /work volume"
}

# Training is under way once the first periodic checkpoint is on the volume (the progress bar is
# no sign: docker's log driver holds a line without a newline back until it is 16 KB long).
wait_until_training() {
    local waited=0
    until "$DOCKER" exec "$RUN_STOPPED" sh -c 'ls /work/checkpoints/stopped/ckpt-*.index' \
        >/dev/null 2>&1; do
        [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$RUN_STOPPED")" = true ] ||
            fail "the run to stop ended before training (docker logs $RUN_STOPPED)"
        [ "$waited" -lt 300 ] || fail "the run to stop did not start training in 300 s"
        sleep 2
        waited=$((waited + 2))
    done
}

main() {
    mkdir -p "$LOGS"
    [ -f "$SAMPLE" ] || fail "no real-rows sample at $SAMPLE (set WGANGP_REAL_SAMPLE)"
    SAMPLE=$(cd "$(dirname "$SAMPLE")" && pwd)/$(basename "$SAMPLE")
    command -v python3 >/dev/null 2>&1 || fail "python3 is needed on the host for the checks"
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    ensure_docker
    remove_made  # what an interrupted earlier run left

    PYTHON_IMAGE=$(dockerfile_arg PYTHON_IMAGE)
    local tensorflow suite
    tensorflow=$(dockerfile_arg TENSORFLOW)
    [ -n "$PYTHON_IMAGE" ] && [ -n "$tensorflow" ] ||
        fail "the Dockerfile declares no ARG PYTHON_IMAGE or ARG TENSORFLOW default"
    if ! "$DOCKER" image inspect "$PYTHON_IMAGE" >/dev/null 2>&1 &&
        ! timeout 300 "$DOCKER" pull "$PYTHON_IMAGE" >"$LOGS/pull.log" 2>&1; then
        # python:3.11-slim-bookworm -> bookworm; else the host's own Debian release.
        suite=$(grep -o -E 'bookworm|trixie|bullseye' <<<"$PYTHON_IMAGE" || true)
        [ -n "$suite" ] || suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
        say "$PYTHON_IMAGE cannot be pulled: building a local Debian $suite base"
        phase debootstrap "debootstrap the base image" build_base "$suite"
        PYTHON_IMAGE=$BASE_IMAGE
    fi

    # The server first, started while the trainer builds (its start-up overlaps the build).
    phase build_server "build the MLflow server image" build mlflow-server "$SERVER_IMAGE"
    local port url start
    port=$(free_port)
    url=http://127.0.0.1:$port
    "$DOCKER" network create "$NETWORK" >/dev/null
    "$DOCKER" volume create "$VOLUME" >/dev/null
    # One worker: the check sends a handful of requests, and each worker imports MLflow anew.
    "$DOCKER" run -d --name "$SERVER" --network "$NETWORK" -p "127.0.0.1:$port:5000" \
        "$SERVER_IMAGE" mlflow server --backend-store-uri sqlite:////mlflow/mlflow.db \
        --artifacts-destination /mlflow/artifacts --serve-artifacts --host 0.0.0.0 --port 5000 \
        --workers 1 --allowed-hosts "$SERVER:5000,localhost:5000,127.0.0.1:$port" >/dev/null

    # The CPU image: the GPU one differs only in the TensorFlow wheel.
    phase build_trainer "build the trainer image (CPU wheel)" build trainer "$TRAINER_IMAGE" \
        --build-arg "TENSORFLOW=${tensorflow/tensorflow\[and-cuda\]/tensorflow-cpu}"

    check_lock_versions server "$SERVER_IMAGE" pandas numpy scikit-learn mlflow
    check_lock_versions trainer "$TRAINER_IMAGE" pandas numpy scikit-learn mlflow dp-accounting \
        tensorflow

    start=$(date +%s)
    wait_for_server "$url"
    say "MLflow server answers on $url (waited $(($(date +%s) - start)) s after the build)"

    # 1. As a user would: the sample read-only, the volume at /work, logging to the server.
    phase run_finished "train 20 steps logged to the server" \
        timeout 900 "$DOCKER" run --name "$RUN_FINISHED" --network "$NETWORK" \
        -v "$SAMPLE:/data/creditcard_real_sample.csv.gz:ro" -v "$VOLUME:/work" \
        -e "MLFLOW_TRACKING_URI=http://$SERVER:5000" "$TRAINER_IMAGE" \
        +experiment=stable_gp trainer.steps=20 "${SMALL[@]}"
    check_finished_run "$url"

    # 2. docker stop mid-training: SIGTERM to PID 1 (python), default tracking URI on /work.
    start=$(date +%s)
    "$DOCKER" run -d --name "$RUN_STOPPED" -v "$SAMPLE:/data/creditcard_real_sample.csv.gz:ro" \
        -v "$VOLUME:/work" "$TRAINER_IMAGE" +experiment=stable_gp trainer.steps=100000 \
        trainer.checkpoint_every=50 trainer.checkpoint_dir=/work/checkpoints/stopped \
        "${SMALL[@]}" >/dev/null
    wait_until_training
    "$DOCKER" stop "$RUN_STOPPED" >/dev/null
    check_stopped_run
    say "stop a run with docker stop: $(($(date +%s) - start)) s"

    say "all checks passed in $(($(date +%s) - T0)) s"
}

# Sourced (tests read its helpers): define only.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
