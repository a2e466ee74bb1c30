"""``python -m wgangp.evaluate``: score a trained synthesizer on real rows it has never seen.

Given a training run, the run's own logged config rebuilds the exact same stratified split (same
data, same seed), so the test rows are the ones neither the GAN nor the fitted transform saw. The
metrics go back into that run in the ``eval`` section (``eval/ks_mean``), with the report as
artifacts.

    python -m wgangp.evaluate run=<run id | runs:/<id>> [data=PATH] [seed=N]
                              [n_synthetic=N] [seeds=N] [tracking_uri=URI] [out=DIR]

The run keeps the digest of the table it split (tag ``data.digest``): a table edited or replaced
since would split differently, and rows the run trained on would be scored as held out, so the
evaluation is refused unless ``new_split=true`` says to go on (it then says so, loudly).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from omegaconf import DictConfig, OmegaConf

from wgangp.cli import flags_of, quiet_tensorflow
from wgangp.config import Config, to_config
from wgangp.errors import ConfigError, DataError, WgangpError, report_error
from wgangp.tracking.names import EVAL, metric
from wgangp.tracking.quiet import quiet_mlflow

if TYPE_CHECKING:
    from wgangp.data.prepare import PreparedData

log = logging.getLogger("wgangp.evaluate")

#: The metrics printed on the console; all of them are in the report and in MLflow.
HEADLINE = tuple(
    metric(EVAL, name)
    for name in (
        "ks_mean",
        "corr_diff",
        "c2st_auc_logreg",
        "c2st_auc_gbm",
        "c2st_auc_gbm_control",
        "c2st_auc_gbm_copula",
        "pr_auc_real",
        "pr_auc_augmented",
        "pr_auc_smote",
        "pr_auc_copula",
        "pr_auc_ros",
        "lift_vs_real",
        "lift_vs_smote",
        "lift_vs_copula",
        "dcr_ratio",
        "dcr_share_below_p5",
        "exact_copies",
        "near_copies",
    )
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m wgangp.evaluate",
        description=__doc__.split("\n")[0],
        epilog="Every option is also key=value (run=ID, n_synthetic=500, new_split=true), as "
        "every wgangp command takes its arguments.",
    )
    parser.add_argument(
        "--run", required=True, help="MLflow run id or runs:/<id> of a training run"
    )
    parser.add_argument("--data", help="data file (default: the one the run trained on)")
    parser.add_argument("--seed", type=int, help="evaluation seed (default: the run's seed)")
    parser.add_argument("--n-synthetic", type=int, help="synthetic rare-class rows to draw")
    parser.add_argument("--seeds", type=int, help="repeats of the utility experiment")
    parser.add_argument("--max-normal-rows", type=int, help="real normals the detectors see")
    parser.add_argument(
        "--tracking-uri", help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI)"
    )
    parser.add_argument("--out", type=Path, help="where to write the report (default: a temp dir)")
    parser.add_argument("--no-log", action="store_true", help="do not log back into the run")
    parser.add_argument(
        "--new-split",
        action="store_true",
        help="evaluate even if the table is not the one the run split (the test rows are then "
        "not held out from training)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _run_id(value: str) -> str:
    """The run ``--run`` names (a run id or ``runs:/<id>``), by the one parser of run URIs."""
    from wgangp.serving.bundle import run_id_of

    run_id = run_id_of(value)
    if run_id is None:
        raise ConfigError(f"run={value} names no run; pass a run id or runs:/<run id>")
    return run_id


def load_run_config(client: Any, run_id: str) -> tuple[Config, dict[str, str]]:
    """The typed config a run trained with (from its ``config/config_resolved.yaml``)."""
    try:
        run = client.get_run(run_id)
        with tempfile.TemporaryDirectory() as tmp:
            path = client.download_artifacts(run_id, "config/config_resolved.yaml", tmp)
            raw = yaml.safe_load(Path(path).read_text())
    except Exception as err:
        raise WgangpError(
            f"cannot read the config of run {run_id} ({type(err).__name__}); check the run id and "
            "tracking_uri= / MLFLOW_TRACKING_URI"
        ) from None
    return config_from_dict(raw), dict(run.data.tags)


def evaluate_run(args: argparse.Namespace) -> dict[str, float]:
    from mlflow.tracking import MlflowClient

    from wgangp.data.prepare import prepare_data
    from wgangp.data.private_table import PrivateReading
    from wgangp.data.schema.table_schema import RARE
    from wgangp.serving.bundle import run_uri
    from wgangp.serving.opening import open_synthesizer
    from wgangp.synthesis.held_out import held_out_evaluation
    from wgangp.tracking.store import resolve_tracking_uri
    from wgangp.training.team_report import team_report_of

    launch_dir = Path.cwd()
    uri = resolve_tracking_uri(args.tracking_uri, launch_dir)
    client = MlflowClient(uri)
    run_id = _run_id(args.run)
    cfg, tags = load_run_config(client, run_id)
    if cfg.data.time is not None:
        raise DataError(
            f"run {run_id} trained a history model (data.time): its evaluation on the test "
            "customers is the run's own (eval/history_*, eval/behavior_*); python -m "
            "wgangp.evaluate scores row models"
        )
    # A private run's counts and evaluations are its team report's (wgangp.training.team_report).
    records = team_report_of(client, run_id) if cfg.privacy.enabled else None
    if records is not None:
        tags = {**tags, **client.get_run(records).data.tags}
    logged_to = records or run_id
    if args.data:
        cfg.data.name, cfg.data.path = "creditcard", args.data
    elif tags.get("data.source") == "dataframe":
        raise DataError(
            f"run {run_id} trained on a DataFrame given in Python: write its rows to a file and "
            "pass it with data=FILE"
        )
    elif tags.get("data.source") == "file" and _still_there(tags.get("data.origin", "")):
        cfg.data.path = tags["data.origin"]  # absolute: independent of where we run from
    if args.data or tags.get("data.source") == "file":
        cfg.data.fallback = "error"  # never score a real-data run on simulated rows
    settings = cfg.evaluate
    for name in ("n_synthetic", "seeds", "max_normal_rows"):
        if getattr(args, name) is not None:
            setattr(settings, name, getattr(args, name))
    settings.check()
    seed = cfg.seed if args.seed is None else args.seed

    synthesizer = open_synthesizer(run_uri(run_id), uri, launch_dir)
    # A private run's rows are read by the schema it released, as its training read them.
    reading = (
        PrivateReading(cfg.privacy, cfg.ship.min_atom_rows, released=synthesizer.schema)
        if cfg.privacy.enabled
        else None
    )
    data = prepare_data(cfg.data, seed=cfg.seed, launch_dir=launch_dir, reading=reading)
    new_split = check_same_table(run_id, tags.get("data.digest"), data, args.new_split)
    if cfg.trainer.refit:  # the generator trained on the validation rows too: so do baselines
        data = data.with_validation_rows()
    if synthesizer.privacy is not None and not data.inferred:  # a declared schema
        data = data.with_released_schema(synthesizer.schema)
    result = held_out_evaluation(
        data, lambda n, s: synthesizer.sample_class(n, RARE, seed=s), settings, seed=seed
    )
    out = args.out or Path(tempfile.mkdtemp(prefix=f"wgangp-eval-{run_id[:8]}-"))
    result.write(out)
    if not args.no_log:
        import time

        if new_split:
            client.set_tag(logged_to, "evaluation.split", new_split)

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(k, float(v), now, 0) for k, v in result.metrics.items()]
        for i in range(0, len(metrics), 500):
            client.log_batch(logged_to, metrics=metrics[i : i + 500])
        client.log_artifacts(logged_to, str(out), "evaluation")
    rows = len(data.score_rows.test)  # the test split, or its subset (data.rest_subset, ...)
    into = f" (logged to its team report {records})" if records and not args.no_log else ""
    print(f"evaluation of run {run_id} on {rows} held-out real rows -> {out}/report.md{into}")
    for key in HEADLINE:
        if key in result.metrics:
            print(f"  {key:24s} {result.metrics[key]:.4f}")
    return result.metrics


def _still_there(origin: str) -> bool:
    """Whether the table a run read is still where it was: a file or folder, or a pattern or
    URL (whose files the reading checks)."""
    from wgangp.data.read.big_tables import names_files

    return bool(origin) and (Path(origin).exists() or names_files(origin))


def check_same_table(
    run_id: str, digest: str | None, data: PreparedData, new_split: bool
) -> str | None:
    """Refuse a table whose digest is not the run's (one line); with ``new_split``, go on and
    return what to record about it (None: the run's own split)."""
    if not digest:
        log.warning(
            "run %s records no table digest (trained before digests were kept): cannot check "
            "that %s is the table it split", run_id, data.origin,
        )  # fmt: skip
        return None
    if digest == data.digest:
        return None
    what = (
        f"run {run_id} split a table with digest {digest}, but {data.origin} now has digest "
        f"{data.digest} (edited, replaced or another file)"
    )
    if not new_split:
        raise DataError(
            f"{what}: its 'test' rows would include rows the run trained on; evaluate on the "
            "table the run split, or pass new_split=true to score a new split anyway"
        )
    log.warning(
        "NEW SPLIT: %s; the test rows are NOT held out from training (new_split=true)", what
    )
    return f"new: table digest {data.digest}, not the run's {digest}"


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(flags_of(sys.argv[1:] if argv is None else argv, parser))
    except ConfigError as err:
        report_error(err)
        return err.exit_code
    quiet_tensorflow()
    quiet_mlflow()
    logging.basicConfig(level=logging.INFO, format="[%(name)s] %(message)s")
    try:
        evaluate_run(args)
    except WgangpError as err:
        report_error(err, debug=args.debug)
        return err.exit_code
    return 0


def config_from_dict(raw: dict[str, Any] | None) -> Config:
    """The typed config of a logged ``config_resolved.yaml``, keeping only keys this version knows.

    A run logged by an older version still evaluates: keys it had that the schema has since
    dropped are ignored with a warning; keys it lacked take today's defaults.
    """
    schema = OmegaConf.structured(Config)
    keys = OmegaConf.to_container(schema)
    assert isinstance(keys, dict)  # a structured config is a mapping
    merged = OmegaConf.merge(schema, _known_keys(raw or {}, keys, ""))
    assert isinstance(merged, DictConfig)
    return to_config(merged)


def _known_keys(raw: dict, schema: dict, prefix: str) -> dict:
    known = {}
    for key, value in raw.items():
        if key not in schema:
            log.warning(
                "ignoring config key %s%s of the run (unknown to this version)", prefix, key
            )
        elif isinstance(value, dict) and isinstance(schema[key], dict):
            known[key] = _known_keys(value, schema[key], f"{prefix}{key}.")
        else:
            known[key] = value
    return known


if __name__ == "__main__":
    sys.exit(main())
