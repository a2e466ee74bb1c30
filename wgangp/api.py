"""wgangp in Python, for notebooks: fit a table (a DataFrame or a path), load a trained model,
sample rows that meet conditions.

    import wgangp
    synthesizer = wgangp.fit(frame, label="is_fraud", overrides=["trainer.steps=2000"])
    frauds = synthesizer.sample(500, where={"merchant": ["online"], "amount": [500, None]})
    same = wgangp.load(synthesizer.model_uri)

:func:`fit` runs what ``python -m wgangp.train`` runs (schema, split, train, select, assemble,
evaluate, one MLflow run) in this process, with the command line's config, checks and progress
bar; a mistake is raised as :class:`~wgangp.errors.WgangpError`, whose message is the one line
the command line prints. ``fit(..., track=False)`` is the same flow with no Hydra, no MLflow run
and no folder left behind.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from wgangp.cli import quiet_tensorflow
from wgangp.config import CONF_DIR, Config, register_configs, to_config
from wgangp.errors import ConfigError, WgangpError
from wgangp.overrides import check_no_credentials, check_overrides, config_groups
from wgangp.redaction import redact
from wgangp.tracking.quiet import quiet_mlflow

if TYPE_CHECKING:
    import pandas as pd

    from wgangp.serving.histories import HistorySynthesizer
    from wgangp.serving.synthesizer import Synthesizer
    from wgangp.training.session import TrainResult

#: The file the run's log goes to in its output folder, as under the command line.
LOG_FILE = "train.log"


def fit(
    data: pd.DataFrame | str | Path,
    *,
    label: str,
    positive: object = None,
    entity: str | None = None,
    time: str | None = None,
    overrides: Sequence[str] | str = (),
    tracking_uri: str | None = None,
    output_dir: str | Path | None = None,
    track: bool = True,
) -> Synthesizer | HistorySynthesizer:
    """Train on ``data`` (a DataFrame, or a path as ``data.path`` takes it) to synthesize the
    rows whose ``label`` column holds ``positive`` (None: its least frequent value).

    ``entity`` (``data.entity``): the column whose rows belong to one customer; with ``time``
    (``data.time``) as well, the model draws whole customers over time
    (``sample_histories(n, label=...)``, docs/histories.md).

    ``overrides`` are the command line's ``key=value`` strings (``+experiment=stable_gp``,
    ``trainer.steps=500``; one alone may be a str); ``tracking_uri`` the MLflow store (default
    as for the command line: ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db`` here);
    ``output_dir`` the run's folder (default ``outputs/<date>/<time>``). Returns the shipped
    synthesizer, with its ``run_id`` and ``model_uri`` (``runs:/<run_id>``) and the run's final
    figures (``metrics``).

    ``track=False`` is the core fit, for a library that keeps its own records: no Hydra
    composition (the typed defaults of :class:`~wgangp.config.Config` with ``overrides`` as
    ``key=value``; a config group such as ``+experiment=...`` is refused), no MLflow run, and
    nothing left on disk: what the run writes (checkpoints, the bundle, the evaluation's files)
    goes to a temporary folder, deleted once the model is in memory. ``synthesizer.save(folder)``
    keeps it; ``run_id`` and ``model_uri`` are None.
    """
    from wgangp.serving.bundle import run_uri
    from wgangp.train import train
    from wgangp.training.run_dirs import RunDirs

    overrides = [overrides] if isinstance(overrides, str) else list(overrides)
    if not track and (tracking_uri is not None or output_dir is not None):
        raise ConfigError(
            "fit(track=False) keeps no MLflow run and no folder: drop tracking_uri= and "
            "output_dir=, or fit with track=True"
        )
    cfg = _config(overrides, tracking_uri) if track else _core_config(overrides)
    path, frame = _source(data)
    chosen = None if positive is None else str(positive)  # the label's values' one rule reads it
    with _in_python_words():
        data_cfg = replace(cfg.data, path=path, label=str(label), positive=chosen)
        if entity:
            data_cfg = replace(data_cfg, entity=entity)
        if time:
            data_cfg = replace(data_cfg, time=time)
    if not track:
        with tempfile.TemporaryDirectory(prefix="wgangp-fit-") as folder:
            cfg = _untracked(replace(cfg, data=data_cfg), Path(folder))
            with _in_python_words(), _run_log(None), _nothing_kept():
                result = train(cfg, output_dir=Path(folder) / "run", frame=frame, embedded=True)
                synthesizer = _shipped(result, kept=False)  # in memory: the folder goes now
        synthesizer.origin = "fitted in memory (track=False)"
        return synthesizer
    given = Path(output_dir) if output_dir is not None else None
    output = RunDirs.resolve(given, None).output  # the command's outputs/<date>/<time>
    with _in_python_words(), _run_log(output):
        result = train(replace(cfg, data=data_cfg), output_dir=output, frame=frame, embedded=True)
    synthesizer = _shipped(result)
    synthesizer.run_id = result.run_id
    synthesizer.model_uri = run_uri(result.run_id) if result.run_id else None
    return synthesizer


def _shipped(result: TrainResult, kept: bool = True) -> Synthesizer | HistorySynthesizer:
    """The model a finished run shipped, loaded in memory with the run's final figures; a run
    that stopped on non-finite values is one line naming where to look (``kept``: its folder
    stays; the core fit's goes)."""
    from wgangp.serving.histories import load_bundle

    if result.status != "FINISHED" or result.synthesizer_dir is None:
        where = f" at step {result.nan_step}" if result.nan_step is not None else ""
        if not kept:
            look = "fit(track=False) keeps no files: fit with track=True to keep nan_forensics.json"
        else:
            record = f"run {result.run_id} holds what happened; see " if result.run_id else "see "
            look = f"{record}{result.output_dir / 'nan_forensics.json'}"
        raise WgangpError(
            f"training stopped{where} ({result.nan_source or 'non-finite values'}, "
            f"trainer.on_nan=stop): {look}"
        )
    synthesizer = load_bundle(result.synthesizer_dir)
    synthesizer.metrics = dict(result.final_metrics)
    return synthesizer


def load(model_uri: str, tracking_uri: str | None = None) -> Synthesizer | HistorySynthesizer:
    """The synthesizer behind ``model_uri``: a run (``runs:/<id>``), a logged or registered
    model (``models:/<name>@champion``) or a local bundle folder, as ``wgangp.sample`` takes."""
    from wgangp.serving.opening import open_model

    quiet_tensorflow()
    quiet_mlflow()
    return open_model(str(model_uri), tracking_uri, Path.cwd())


def _config(overrides: list[str], tracking_uri: str | None) -> Config:
    """The command line's config with ``overrides``, checked by its rules (one line each)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    _check_fit_overrides(overrides)
    if tracking_uri is not None:
        overrides.append(f"tracking.uri='{tracking_uri}'")
    _check_command_rules(overrides)
    quiet_mlflow()
    register_configs()
    if GlobalHydra.instance().is_initialized():  # a notebook's earlier compose, or a test's
        GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            composed = compose(config_name="config", overrides=overrides)
    except (HydraException, OmegaConfBaseException) as err:
        raise ConfigError(redact(" ".join(str(err).split()))) from None
    return to_config(composed)


def _core_config(overrides: list[str]) -> Config:
    """:class:`Config`'s typed defaults (the files' own, one default per key) with ``overrides``
    read by the command line's grammar and checks, without Hydra composing anything: a key must
    be the schema's, a group selection (``+experiment=...``, ``data=simulated``) is refused."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    _check_fit_overrides(overrides)
    _check_command_rules(overrides)
    groups = set(config_groups())
    node = OmegaConf.structured(Config)
    try:
        for override in OverridesParser.create().parse_overrides(overrides):
            key = override.key_or_group
            if override.is_add() or override.is_delete() or key in groups or "/" in key:
                raise ConfigError(
                    f"fit(track=False) takes key=value overrides of the schema's keys, not "
                    f"{override.input_line!r} (a config group or +/~): fit with track=True"
                )
            OmegaConf.update(node, key, override.value(), merge=True)
    except (HydraException, OmegaConfBaseException) as err:
        raise ConfigError(redact(" ".join(str(err).split()))) from None
    return to_config(node)


def _untracked(cfg: Config, folder: Path) -> Config:
    """``cfg`` with no MLflow run and its checkpoints in ``folder`` (unless the user named a
    checkpoint folder: theirs to keep)."""
    tracking = replace(cfg.tracking, enabled=False)
    trainer = cfg.trainer
    if trainer.checkpoint_dir is None:
        trainer = replace(trainer, checkpoint_dir=str(folder / "checkpoints"))
    return replace(cfg, tracking=tracking, trainer=trainer)


def _check_command_rules(overrides: list[str]) -> None:
    """The command line's checks of ``overrides`` (no credentials, known keys and groups, their
    types), each one line; then TensorFlow's start-up noise is quieted."""
    check_no_credentials(overrides)
    check_overrides(overrides)
    quiet_tensorflow()


def _check_fit_overrides(overrides: list[str]) -> None:
    """Overrides are strings, and the table's own keys are fit's arguments."""
    bad = [o for o in overrides if not isinstance(o, str)]
    if bad:
        raise ConfigError(f"overrides must be key=value strings, got {bad[0]!r}")
    for key in ("data.path", "data.label", "data.positive"):
        if any(o.lstrip("+~").startswith(f"{key}=") for o in overrides):
            raise ConfigError(f"override {key}=... is fit()'s own argument: pass it to fit()")


def _source(data: object) -> tuple[str | None, pd.DataFrame | None]:
    """``data`` as ``data.path`` (a path) or as the frame itself."""
    if isinstance(data, str | Path):
        return str(data), None
    return None, data  # the reader checks it is a DataFrame


@contextlib.contextmanager
def _nothing_kept() -> Iterator[None]:
    """An interrupted core fit has no checkpoint to resume from (its folder goes): its line
    says so instead of naming one."""
    from wgangp.training.interrupts import Interrupted

    try:
        yield
    except Interrupted as err:
        step = str(err).split(";")[0]
        raise Interrupted(
            f"{step}; fit(track=False) keeps no checkpoint: fit again, or with track=True to "
            "keep one to resume",
            err.signum,
        ) from None


@contextlib.contextmanager
def _in_python_words() -> Iterator[None]:
    """An error's line names fit's own arguments (``label=``, ``positive=``) where the command's
    names its keys (``data.label=``, ``data.positive=``)."""
    try:
        yield
    except WgangpError as err:
        line = _FIT_ARGUMENTS.sub(r"\1=", str(err))
        err.args = (line, *err.args[1:])
        raise


_FIT_ARGUMENTS = re.compile(r"\bdata\.(label|positive)=")


@contextlib.contextmanager
def _run_log(output: Path | None) -> Iterator[None]:
    """The run's log on stderr (a notebook shows it under the cell) and in ``train.log`` of its
    folder (``output``; None: no file), as the command line writes them; the handlers go when
    the run ends."""
    logger = logging.getLogger("wgangp")
    fmt = logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(output / LOG_FILE, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(fmt)
        logger.addHandler(handler)
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False  # a notebook's own root handler would print every line twice
    try:
        yield
    finally:
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        logger.setLevel(level)
        logger.propagate = propagate
