"""Load checks: a big CSV trains with flat memory; many parallel sweep jobs share one sqlite store.

    python -m scripts.load_test rows --rows 1000000 --steps 300 [--workdir DIR]
    python -m scripts.load_test multirun --jobs 20 --n-jobs 4 [--workdir DIR]

(from the repository root, with the project's environment).

``rows`` writes a simulated table of ``--rows`` rows as a CSV, trains from it through the CLI and
samples the resident memory (RSS) of the training process every 0.2 s. It prints (and returns as
JSON) the peak RSS and the RSS at each checkpoint: "flat" means the RSS at the last checkpoint is
within ``--flat-mib`` of the first one, i.e. memory does not grow with the number of steps.

``multirun`` launches one Hydra multirun of ``--jobs`` tiny jobs (one per seed) with the joblib
launcher (``--n-jobs`` at a time) against one fresh sqlite store, and checks that every job's
MLflow run is there, FINISHED, with its metrics.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.configs import TINY_NETWORKS
from wgangp.tracking.names import CRITIC_LOSS

REPO = Path(__file__).resolve().parents[1]
#: The test suite's tiny networks, without the work at the end of a run that is not measured.
TINY_MODEL = [
    *TINY_NETWORKS,
    "trainer.progress=false",
    "trainer.sample_rows=20",
    "evaluate.enabled=false",
]


def _env() -> dict[str, str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONUNBUFFERED": "1"}
    env.pop("MLFLOW_TRACKING_URI", None)
    return env


def write_table(rows: int, path: Path, seed: int = 0) -> Path:
    """A simulated credit-card table of ``rows`` rows as CSV (written in chunks)."""
    from wgangp.data.builtin.simulated import simulate_creditcard

    chunk = 250_000
    with path.open("w") as handle:
        for i, start in enumerate(range(0, rows, chunk)):
            frame = simulate_creditcard(n_rows=min(chunk, rows - start), seed=seed + i)
            frame.to_csv(handle, index=False, header=i == 0)
    return path


def _tree_rss(process) -> int:
    import psutil

    total = 0
    for proc in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total


def measure_rows(
    rows: int,
    steps: int,
    workdir: Path,
    batch_size: int = 512,
    checkpoint_every: int | None = None,
    flat_mib: float = 200.0,
) -> dict:
    """Train from a ``rows``-row CSV; peak RSS and RSS at each checkpoint (MiB)."""
    import psutil

    workdir.mkdir(parents=True, exist_ok=True)
    csv = workdir / f"creditcard_{rows}.csv"
    started = time.perf_counter()
    if not csv.exists():
        write_table(rows, csv)
    write_s = time.perf_counter() - started
    checkpoint_every = checkpoint_every or max(1, steps // 6)
    command = [
        sys.executable, "-m", "wgangp.train", f"data.path={csv}", "data.schema=creditcard",
        f"trainer.steps={steps}", f"trainer.batch_size={batch_size}",
        f"trainer.checkpoint_every={checkpoint_every}", "trainer.keep_checkpoints=100",
        "trainer.progress=false", "trainer.sample_rows=100", "evaluate.enabled=false",
        f"tracking.uri=sqlite:///{workdir}/mlflow.db", "tracking.log_model=false",
        f"hydra.run.dir={workdir}/run-{rows}-{int(time.time())}",
    ]  # fmt: skip
    log_path = workdir / f"train-{rows}.log"
    with log_path.open("w") as log:
        child = subprocess.Popen(command, cwd=workdir, env=_env(), stdout=log, stderr=log)
        process = psutil.Process(child.pid)
        launched = time.perf_counter()
        peak, at_checkpoint, timeline = 0, {}, []
        checkpoints = workdir / "checkpoints"
        while child.poll() is None:
            rss = _tree_rss(process)
            peak = max(peak, rss)
            timeline.append((round(time.perf_counter() - launched, 1), rss // 2**20))
            for index in checkpoints.glob("*/ckpt-*.index"):
                step = int(index.name.split("-")[1].split(".")[0])
                at_checkpoint.setdefault(step, rss // 2**20)
            time.sleep(0.2)
    if child.returncode != 0:
        raise SystemExit(f"training failed ({child.returncode}); see {log_path}")
    steps_seen = sorted(at_checkpoint)
    first, last = at_checkpoint[steps_seen[0]], at_checkpoint[steps_seen[-1]]
    result = {
        "rows": rows,
        "csv_mib": csv.stat().st_size // 2**20,
        "write_csv_s": round(write_s, 1),
        "steps": steps,
        "batch_size": batch_size,
        "wall_s": round(time.perf_counter() - launched, 1),
        "peak_rss_mib": peak // 2**20,
        "rss_mib_at_checkpoint": {str(k): at_checkpoint[k] for k in steps_seen},
        "growth_first_to_last_checkpoint_mib": last - first,
        "flat": abs(last - first) <= flat_mib,
        "timeline_every_5s": timeline[::25],
    }
    return result


def measure_multirun(jobs: int, n_jobs: int, workdir: Path, steps: int = 2) -> dict:
    """One Hydra multirun of ``jobs`` tiny jobs (joblib, ``n_jobs`` at a time), one store."""
    from mlflow.tracking import MlflowClient

    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / "mlflow.db"
    seeds = ",".join(str(s) for s in range(jobs))
    command = [
        sys.executable, "-m", "wgangp.train", "--multirun", "hydra/launcher=joblib",
        f"hydra.launcher.n_jobs={n_jobs}", f"hydra.sweep.dir={workdir}/multirun",
        "data=simulated", "data.simulated_rows=4000", "trainer.batch_size=16",
        f"trainer.steps={steps}", "trainer.steps_per_call=1", "trainer.checkpoint_every=1",
        "tracking.log_every=1", "tracking.log_model=false", f"tracking.uri=sqlite:///{db}",
        f"seed={seeds}", *TINY_MODEL,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, env=_env(), capture_output=True, text=True)
    wall = time.perf_counter() - started
    (workdir / "multirun.log").write_text(done.stdout + done.stderr)
    client = MlflowClient(f"sqlite:///{db}")
    experiment = client.get_experiment_by_name("wgangp")
    runs = client.search_runs([experiment.experiment_id]) if experiment else []
    statuses = sorted(run.info.status for run in runs)
    complete = [
        run
        for run in runs
        if run.info.status == "FINISHED"
        and len(client.get_metric_history(run.info.run_id, CRITIC_LOSS)) == steps
    ]
    problems = ("wgangp: error", "Traceback", "database is locked", "Exception", "FAILED")
    errors = [line for line in done.stderr.splitlines() if any(p in line for p in problems)]
    return {
        "jobs": jobs,
        "n_jobs": n_jobs,
        "exit_code": done.returncode,
        "wall_s": round(wall, 1),
        "runs": len(runs),
        "statuses": {s: statuses.count(s) for s in set(statuses)},
        "runs_complete": len(complete),
        "seeds_logged": sorted(int(run.data.params["seed"]) for run in runs),
        "error_lines": errors[:10],
        "ok": done.returncode == 0 and len(complete) == jobs and not errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    rows = sub.add_parser("rows")
    rows.add_argument("--rows", type=int, default=1_000_000)
    rows.add_argument("--steps", type=int, default=300)
    rows.add_argument("--batch-size", type=int, default=512)
    multi = sub.add_parser("multirun")
    multi.add_argument("--jobs", type=int, default=20)
    multi.add_argument("--n-jobs", type=int, default=4)
    for p in (rows, multi):
        p.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix=f"wgangp-load-{args.mode}-"))
    if args.mode == "rows":
        result = measure_rows(args.rows, args.steps, workdir, batch_size=args.batch_size)
    else:
        result = measure_multirun(args.jobs, args.n_jobs, workdir)
    result["workdir"] = str(workdir)
    print(json.dumps(result, indent=2))
    ok = result["flat"] if args.mode == "rows" else result["ok"]
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
