"""The NaN ablation table, read back from MLflow: what ``python -m wgangp.report`` writes.

One row per run: variant (the norm, and the penalty dtype / precision when they differ from the
defaults) x seed -> status, first NaN step and source, generator steps completed, and the final
Wasserstein estimate. A summary table counts, per variant, how many seeds hit a NaN. The data
is read back from the tracking store, so the table shows what the runs recorded, nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from wgangp.errors import TrackingError
from wgangp.files import FileWriteError, write_text, write_with
from wgangp.tracking.names import WALL_TIME, WASSERSTEIN

if TYPE_CHECKING:
    from mlflow.entities import Run
    from mlflow.tracking import MlflowClient

#: The metric logged once at the end of training; its step is the number of steps completed.
_SUMMARY_METRIC = WALL_TIME


@dataclass
class RunRow:
    experiment: str
    variant: str
    seed: int | None
    status: str
    first_nan_step: int | None
    nan_source: str | None
    steps_completed: int | None
    final_wasserstein: float | None
    run_id: str


def variant_of(params: dict[str, str]) -> str:
    """``tf_norm``, ``safe_sqrt (penalty float16-compute, mixed_float16)``, ..."""
    name = params.get("gp.norm", "?")
    extra = []
    if params.get("gp.dtype", "float32") != "float32":
        extra.append(f"penalty {params['gp.dtype']}")
    if params.get("trainer.precision", "float32") != "float32":
        extra.append(params["trainer.precision"])
    return f"{name} ({', '.join(extra)})" if extra else name


def _int(value: str | None) -> int | None:
    try:
        return int(float(value)) if value is not None else None
    except ValueError:
        return None


def _steps_completed(client: MlflowClient, run: Run) -> int | None:
    """The step of the end-of-training summary metric, else of the last metric point."""
    for key in (_SUMMARY_METRIC, WASSERSTEIN):
        history = client.get_metric_history(run.info.run_id, key)
        if history:
            return max(m.step for m in history)
    return None


def collect(
    tracking_uri: str, experiment: str, filter_string: str = "", max_runs: int = 10_000
) -> list[RunRow]:
    """Read every run of ``experiment`` (optionally filtered) into rows."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        found = client.get_experiment_by_name(experiment)
    except Exception as err:
        raise TrackingError(
            f"cannot read MLflow at {tracking_uri} ({type(err).__name__}); check tracking_uri="
        ) from err
    if found is None:
        raise TrackingError(
            f"no MLflow experiment named {experiment!r} at {tracking_uri}; "
            "pass experiment=NAME (tracking.experiment of the runs) or tracking_uri=URI"
        )
    rows: list[RunRow] = []
    token = None
    while True:
        try:
            page = client.search_runs(
                [found.experiment_id], filter_string, max_results=1000, page_token=token
            )
        except Exception as err:
            first = (str(err).splitlines() or [type(err).__name__])[0][:200]
            raise TrackingError(
                f"MLflow refused the search filter {filter_string!r} ({first}); write it as "
                "MLflow expects, e.g. \"tags.experiment = 'tf_norm_nan'\""
            ) from None
        for run in page:
            params, tags, metrics = run.data.params, run.data.tags, run.data.metrics
            west = metrics.get(WASSERSTEIN)
            rows.append(
                RunRow(
                    experiment=tags.get("experiment", params.get("name", "?")),
                    variant=variant_of(params),
                    seed=_int(params.get("seed")),
                    status=run.info.status,
                    first_nan_step=_int(tags.get("nan.step")),
                    nan_source=tags.get("nan.source"),
                    steps_completed=_steps_completed(client, run),
                    final_wasserstein=west,
                    run_id=run.info.run_id,
                )
            )
        token = page.token
        if not token or len(rows) >= max_runs:
            break
    rows.sort(key=lambda r: (r.experiment, r.variant, r.seed if r.seed is not None else -1))
    return rows


def table(rows: Sequence[RunRow]) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(r) for r in rows], columns=list(RunRow.__dataclass_fields__))
    for column in ("seed", "first_nan_step", "steps_completed"):  # integers with gaps
        frame[column] = frame[column].astype("Int64")
    return frame


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per experiment and variant: runs, runs with a NaN, their first NaN steps."""
    groups = frame.groupby(["experiment", "variant"], sort=True)
    return pd.DataFrame(
        {
            "runs": groups.size(),
            "nan_runs": groups["first_nan_step"].apply(lambda s: int(s.notna().sum())),
            "nan_steps": groups["first_nan_step"].apply(
                lambda s: ", ".join(str(int(v)) for v in s.dropna()) or "-"
            ),
            "max_steps_completed": groups["steps_completed"].max(),
        }
    ).reset_index()


def _cell(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def to_markdown(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(_cell(v) for v in row) + " |"
        for row in frame.astype(object).where(frame.notna(), None).itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])


def render(frame: pd.DataFrame, title: str) -> str:
    shown = frame.drop(columns=["run_id"]).copy()
    shown["run_id"] = frame["run_id"].str[:8]
    return "\n".join(
        [
            f"# {title}",
            "",
            "## Runs",
            "",
            to_markdown(shown),
            "",
            "## Per variant",
            "",
            to_markdown(summary(frame)),
            "",
        ]
    )


def write_report(rows: Sequence[RunRow], out_dir: Path, title: str) -> tuple[Path, Path, str]:
    """Write ``<out_dir>/ablation_report.{md,csv}``; returns both paths and the markdown."""
    frame = table(rows)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FileWriteError(
            f"cannot create {out_dir} ({err.strerror or err}); choose a writable output_dir="
        ) from None
    markdown = render(frame, title)
    md_path, csv_path = out_dir / "ablation_report.md", out_dir / "ablation_report.csv"
    write_text(md_path, markdown)
    write_with(csv_path, lambda tmp: frame.to_csv(tmp, index=False))
    return md_path, csv_path, markdown
