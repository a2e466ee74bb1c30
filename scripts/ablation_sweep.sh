#!/usr/bin/env bash
# The NaN ablation in one command: every penalty norm x seeds on the tf_norm_nan setup (tanh
# critic, default data), then the float16-eps pair, then the report (markdown + CSV).
#
#   scripts/ablation_sweep.sh                 # 500 steps per job (the experiment's own budget)
#   STEPS=200 SEEDS=0,1 scripts/ablation_sweep.sh
#
# Environment: STEPS (override trainer.steps for the norm grid), SEEDS (default 0,1,2), NORMS,
# TRACKING_URI (default sqlite:///$PWD/mlflow.db), EXPERIMENT (MLflow experiment, default
# nan_ablation), OUT (report directory, default outputs/ablation), FP16=0 to skip the fp16 pair.
# Extra arguments go to every Hydra job (e.g. trainer.jit_compile=true).
#
# Every job runs with trainer.on_nan=stop: a NaN is recorded (run FAILED, nan.* tags, forensics)
# and the job ends cleanly, whatever the Hydra launcher. The store and the MLflow experiment are
# created before the sweep: parallel jobs on a fresh sqlite file race on schema and experiment
# creation (mlflow #4123), e.g. with hydra/launcher=joblib.
set -euo pipefail

# Runs from the current directory (outputs/, multirun/, checkpoints/ and the store land here).
REPO="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$([ -x "$REPO/.venv/bin/python" ] && echo "$REPO/.venv/bin/python" || echo python)}"
SEEDS="${SEEDS:-0,1,2}"
NORMS="${NORMS:-tf_norm,safe_sqrt,custom_gradient,double_where}"
TRACKING_URI="${TRACKING_URI:-sqlite:///$PWD/mlflow.db}"
EXPERIMENT="${EXPERIMENT:-nan_ablation}"
OUT="${OUT:-outputs/ablation}"
STEPS_OVERRIDE=()
if [ -n "${STEPS:-}" ]; then STEPS_OVERRIDE=("trainer.steps=${STEPS}"); fi

"$PYTHON" - "$TRACKING_URI" "$EXPERIMENT" <<'PY'
import sys

from mlflow.tracking import MlflowClient

from wgangp.tracking.store import default_artifact_location

uri, name = sys.argv[1], sys.argv[2]
client = MlflowClient(tracking_uri=uri)  # creates the schema of a fresh sqlite store
if client.get_experiment_by_name(name) is None:
    client.create_experiment(name, artifact_location=default_artifact_location(uri))
print(f"MLflow store {uri}, experiment {name}: ready", file=sys.stderr)
PY

COMMON=(
  "tracking.uri=${TRACKING_URI}"
  "tracking.experiment=${EXPERIMENT}"
  "trainer.on_nan=stop"
  "trainer.progress=false"
)

"$PYTHON" -m wgangp.train -m +experiment=tf_norm_nan "gp.norm=${NORMS}" "seed=${SEEDS}" \
  "${STEPS_OVERRIDE[@]}" "${COMMON[@]}" "$@"

if [ "${FP16:-1}" != "0" ]; then
  "$PYTHON" -m wgangp.train -m +experiment=fp16_eps_nan "gp.dtype=compute,float32" \
    "seed=${SEEDS}" "${COMMON[@]}" "$@"
fi

"$PYTHON" -m wgangp.report "tracking_uri=$TRACKING_URI" "experiment=$EXPERIMENT" \
  "output_dir=$OUT" "title=NaN ablation (${EXPERIMENT})"
