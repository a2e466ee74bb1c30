"""The main command as a user runs it, timed: each phase's wall and CPU seconds over N runs.

Each run is ``python -m wgangp.train`` on the embedded default (no data file: simulated rows) in a
fresh process, with a fresh output folder and a fresh MLflow store; run i uses ``seed=i`` (run 0
is the bare command), so the quality figures also show their seed spread. Printed per run and as
median and spread (min..max) over the runs: each phase's wall and CPU seconds (the run's
``phases.json``), the whole command's wall and CPU seconds (the process and its children,
``wait4``), the selected step's validation score (``selection/score``) and the held-out detection
AUC (``eval/c2st_auc_gbm``). The machine comes with the figures: ``lscpu``'s model name and the
1-minute load before and after each run. Before each run the script waits (``--settle``, at most
that many seconds) for the load to fall to ``IDLE_LOAD``, since the previous run's own load
lingers in the average for minutes; the figures are called idle only when every run started
below it (the load after a run counts the run itself). Otherwise the printout says they were
measured on a loaded machine.

    python -m scripts.main_timing --runs 3
    python -m scripts.main_timing --runs 3 --repo /tmp/main-checkout   # another source tree
    python -m scripts.main_timing --runs 1 --override trainer.steps=200 --override select.every=50
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Above this 1-minute load (on any core count) a measurement is not an idle machine's.
IDLE_LOAD = 1.5
#: The quality figures read from the run's MLflow store.
QUALITY = {"selection/score": "selected val/score", "eval/c2st_auc_gbm": "held-out C2ST AUC"}


def cpu_model() -> str:
    """``lscpu``'s model name (``/proc/cpuinfo``'s when lscpu is missing)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        cpuinfo = Path("/proc/cpuinfo")
        out = cpuinfo.read_text() if cpuinfo.exists() else ""
    lines = out.splitlines()
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip().lower() in ("model name",):
            return value.strip()
    return "unknown"


def source_commit(repo: Path) -> str:
    """The source tree's commit, ``+changes`` when it has uncommitted edits; "?" outside git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+changes" if dirty else "")  # fmt: skip


def load_1m() -> float:
    """``uptime``'s 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def settle(limit_s: float) -> float:
    """Wait until the 1-minute load is at most :data:`IDLE_LOAD`, for ``limit_s`` at most;
    the load then."""
    waited = 0.0
    while load_1m() > IDLE_LOAD and waited < limit_s:
        time.sleep(10.0)
        waited += 10.0
    return load_1m()


def run_metrics(store: Path) -> dict[str, float]:
    """The latest value of each :data:`QUALITY` metric of the store's one run."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{store}")
    runs = [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    if len(runs) != 1:
        raise SystemExit(f"expected one run in {store}, found {len(runs)}")
    found = runs[0].data.metrics
    return {key: float(found[key]) for key in QUALITY if key in found}


def run_once(
    repo: Path, run_dir: Path, seed: int, overrides: list[str], settle_s: float = 0.0
) -> dict[str, object]:
    """One main command in a fresh process, folder and store: its phases, totals, quality;
    started once the load settled (``settle_s`` at most)."""
    run_dir.mkdir(parents=True, exist_ok=False)
    store = run_dir / "mlflow.db"
    args = [
        sys.executable, "-m", "wgangp.train", *([f"seed={seed}"] if seed else []),
        f"hydra.run.dir={run_dir / 'output'}", f"tracking.uri=sqlite:///{store}", *overrides,
    ]  # fmt: skip
    # A user's environment: the repo's package first, no store or data inherited from ours.
    env = {**os.environ, "PYTHONPATH": str(repo), "TF_CPP_MIN_LOG_LEVEL": "2"}
    env.pop("MLFLOW_TRACKING_URI", None)
    load_before = settle(settle_s)
    started = time.perf_counter()
    with open(run_dir / "run.log", "w") as out:
        process = subprocess.Popen(args, cwd=run_dir, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = "\n".join((run_dir / "run.log").read_text().splitlines()[-8:])
        raise SystemExit(f"the run in {run_dir} failed (exit {code}):\n{tail}")
    return {
        "seed": seed,
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024.0, 1),
        "load_1m": [load_before, load_1m()],
        "phases": json.loads((run_dir / "output" / "phases.json").read_text()),
        "quality": run_metrics(store),
        "dir": str(run_dir),
    }


def summary(values: list[float], digits: int = 1) -> str:
    """``median (min..max)``; one value alone."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}..{max(values):.{digits}f})"
    )


def spread(values: list[float]) -> str:
    """The sample standard deviation (the seed spread), blank for one value."""
    return f"{statistics.stdev(values):.4f}" if len(values) > 1 else "-"


def machine_line(records: list[dict[str, object]], model: str) -> str:
    """Date, CPU, cores and the highest load a run started at, with the verdict on "idle"."""
    peak = max(r["load_1m"][0] for r in records)
    verdict = (
        f"idle (every run started at a 1-minute load of at most {IDLE_LOAD})"
        if peak <= IDLE_LOAD
        else f"LOADED: a run started at a 1-minute load of {peak:.1f} (> {IDLE_LOAD}); these "
        "are not idle figures"
    )
    day = dt.date.today().isoformat()
    return f"{day}, {model}, {os.cpu_count()} cores; {verdict}"


def render(records: list[dict[str, object]], model: str) -> str:
    """Per run and median (min..max) over runs: phases (wall, CPU), totals, quality."""
    phases = list(dict.fromkeys(name for r in records for name in r["phases"]))
    lines = [f"machine: {machine_line(records, model)}", ""]
    head = ["", *[f"run {i} (seed {r['seed']})" for i, r in enumerate(records)], "median (range)"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def row(name: str, values: list[float], cell) -> None:
        lines.append("| " + " | ".join([name, *map(cell, values), summary(values)]) + " |")

    for name in phases:
        walls = [r["phases"].get(name, {}).get("wall_s", 0.0) for r in records]
        cpus = [r["phases"].get(name, {}).get("cpu_s", 0.0) for r in records]
        row(f"{name} wall s", walls, lambda v: f"{v:.1f}")
        row(f"{name} CPU s", cpus, lambda v: f"{v:.1f}")
    others = [r["wall_s"] - sum(p["wall_s"] for p in r["phases"].values()) for r in records]
    row("outside the phases wall s (start-up, closing)", others, lambda v: f"{v:.1f}")
    row("whole command wall s", [r["wall_s"] for r in records], lambda v: f"{v:.1f}")
    row("whole command CPU s", [r["cpu_s"] for r in records], lambda v: f"{v:.1f}")
    row("peak RSS MiB", [r["peak_rss_mb"] for r in records], lambda v: f"{v:.0f}")
    for key, label in QUALITY.items():
        # A run may lack one (selection is off when the validation split is too small).
        found = [r["quality"].get(key) for r in records]
        values = [v for v in found if v is not None]
        cells = ["-" if v is None else f"{v:.4f}" for v in found]
        middle = summary(values, 4) if values else "-"
        lines.append(
            "| "
            + " | ".join([f"{label} ({key})", *cells, middle])
            + f" | seed spread (sd) {spread(values)}"
        )
    loads = [" / ".join(f"{x:.1f}" for x in r["load_1m"]) for r in records]
    lines.append("| 1-minute load before / after | " + " | ".join(loads) + " | |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.main_timing", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--runs", type=int, default=3, help="runs, seeds 0..runs-1")
    parser.add_argument(
        "--seeds", default=None, help="comma-separated seeds instead (e.g. 0,0,0: one seed)"
    )
    parser.add_argument("--repo", default=str(REPO), help="the source tree whose wgangp runs")
    parser.add_argument("--out", default=None, help="a new folder for the runs (default: temp)")
    parser.add_argument(
        "--override", action="append", default=[], help="another key=value for every run"
    )
    parser.add_argument("--json", default=None, help="also write the records to this file")
    parser.add_argument(
        "--settle",
        type=float,
        default=600.0,
        help=f"seconds to wait at most, before each run, for the load to fall to {IDLE_LOAD}",
    )
    args = parser.parse_args(argv)
    try:
        args.seed_list = (
            [int(s) for s in args.seeds.split(",") if s] if args.seeds else list(range(args.runs))
        )
    except ValueError:
        parser.error(f"--seeds takes whole numbers, got {args.seeds!r}")
    if not args.seed_list:
        parser.error("no run to make")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="wgangp-main-timing-"))
    out.mkdir(parents=True, exist_ok=True)
    model = cpu_model()
    records = []
    for i, seed in enumerate(args.seed_list):
        print(f"run {i} (seed {seed}), 1-minute load {load_1m()} ...", file=sys.stderr, flush=True)
        record = run_once(Path(args.repo), out / f"run-{i}", seed, args.override, args.settle)
        print(
            f"run {i}: {record['wall_s']:.1f} s wall, {record['cpu_s']:.1f} s CPU, "
            f"{record['quality']}",
            file=sys.stderr,
            flush=True,
        )
        records.append(record)
    table = render(records, model)
    given = argv if argv is not None else sys.argv[1:]
    command = "python -m scripts.main_timing " + " ".join(given)
    text = f"{command}\nsource: {args.repo} at {source_commit(Path(args.repo))}\n{table}\n"
    (out / "main_timing.md").write_text(text)
    document = {"cpu_model": model, "cores": os.cpu_count(), "records": records}
    (out / "main_timing.json").write_text(json.dumps(document, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(document, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
