"""``python -m wgangp.sample``: draw synthetic rows from a trained model into a CSV or Parquet file.

    python -m wgangp.sample model_uri=runs:/<run_id> n=10000 label=1 output=fraud.parquet seed=0
    python -m wgangp.sample model_uri=models:/<name>@champion n=1000 label=1 > fraud.csv
    python -m wgangp.sample model_uri=runs:/<run_id> n=500 label=yes output=rows.csv  # own table
    python -m wgangp.sample model_uri=runs:/<id> n=200 'where={merchant:[online],amount:[500,null]}'
    python -m wgangp.sample model_uri=runs:/<id> histories=100 label=1 output=customers.csv

Arguments are Hydra-style ``key=value`` pairs. ``model_uri`` is a run (``runs:/<id>``, the run's
``synthesizer`` bundle), a logged model (``models:/<model_id>``, ``models:/<name>/<version>``,
``models:/<name>@<alias>`` of ``tracking.register_as``), or a local directory (a synthesizer
bundle or a downloaded pyfunc model). Rows come back in the original units and column names
(Time, V1..V28, Amount, Class); without ``label=`` they are of the class the model synthesizes
(1, or a table's positive value, as the served model's default); without ``output=`` (or with
``output=-``) they go to stdout as CSV, and the log stays on stderr. The store is
``tracking_uri=``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db``, as for
training. ``where=`` keeps rows that meet conditions (:mod:`wgangp.serving.conditions`), written
in Hydra's grammar as above or as JSON. Rows are drawn and written in chunks (a CSV or Parquet
file appended to, stdout alike), so any ``n`` takes the memory of one chunk; the file appears
whole, once the last chunk is in.
A history model (trained with ``data.time``) draws ``histories=`` whole customers with their
rows instead, in one chunk (docs/histories.md).

Every argument is checked before TensorFlow is imported, so a typo fails in a second.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wgangp.cli import command_args, key_values, quiet_tensorflow
from wgangp.config import MAX_SEED
from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import WgangpError, report_error
from wgangp.files import written_path
from wgangp.privacy.randomness import REPLAYABLE, REPLAYABLE_ENV
from wgangp.serving.bundle import is_history_bundle
from wgangp.serving.conditions import parse_where
from wgangp.serving.labels import label_class
from wgangp.serving.memory import draw_bytes_per_row
from wgangp.serving.opening import open_model
from wgangp.serving.row_files import chunk_rows, write_rows, write_stdout
from wgangp.tracking.quiet import quiet_mlflow

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("wgangp.sample")

#: File suffixes understood for ``output=`` and how each is written.
FORMATS = {".csv": "csv", ".gz": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Upper bound on one request (rows are drawn in chunks: memory is no bound).
MAX_ROWS = 10_000_000
#: Upper bound on one request of a history model's customers.
MAX_HISTORIES = 200_000
USAGE = (
    "usage: python -m wgangp.sample model_uri=<runs:/ID | models:/ID | models:/NAME@ALIAS | dir> "
    "[output=<file.csv|.parquet|->] [n=1000 | histories=<customers of a history model>] "
    "[label=<value; default: the class the model synthesizes>] "
    "[where={column:[levels] | [low,high], ...}] [seed=0] [tracking_uri=URI]"
)


class SampleArgumentError(WgangpError):
    """A bad command-line argument for ``wgangp.sample``."""

    reason = "config"


@dataclass(frozen=True)
class SampleRequest:
    model_uri: str
    output: Path | None  # None: CSV on stdout
    n: int = 1000
    #: A value of the model's label column: 1 or 0 for Kaggle's file, e.g. ``yes`` for a table's;
    #: None: the class the model synthesizes (1, or the table's positive value).
    label: str | None = None
    seed: int = 0
    tracking_uri: str | None = None
    #: Conditions every row meets: a column's levels or ``[low, high]`` range; None: no condition.
    where: dict | None = None
    #: A history model's customers to draw (``data.time``); None: rows of a row model.
    histories: int | None = None

    @property
    def file_format(self) -> str:
        return output_format(self.output) if self.output is not None else "csv"


_KEYS = ("model_uri", "output", "n", "label", "seed", "tracking_uri", "where", "histories")


def output_format(path: Path) -> str:
    """``csv`` or ``parquet`` from the file name (``.csv``, ``.csv.gz``, ``.parquet``, ``.pq``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz" and (len(suffixes) < 2 or suffixes[-2] != ".csv"):
        suffixes = []
    fmt = FORMATS.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise SampleArgumentError(
            f"output={path} has no known extension; use .csv, .csv.gz or .parquet"
        )
    return fmt


def _integer(key: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise SampleArgumentError(f"{key} must be an integer, got {key}={text!r}") from None
    if not low <= value <= high:
        raise SampleArgumentError(f"{key} must be in [{low}, {high}], got {key}={value}")
    return value


def _label(text: str) -> str:
    if not text.strip():
        raise SampleArgumentError("label= is empty; give a value of the model's label column")
    return text.strip()


def where_value(text: str) -> dict:
    """``where=``'s conditions: JSON or Hydra grammar (``{merchant:[online],amount:[9,null]}``)."""
    import json

    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = OverridesParser.create().parse_override(f"where={text}").value()
        except HydraException:
            value = None
    if not isinstance(value, dict) or not value:
        raise SampleArgumentError(
            f"where={text} is not a map of conditions; write "
            "'where={merchant:[online],amount:[500,null]}' (quoted for the shell) or JSON"
        )
    return value


def parse_args(argv: Sequence[str]) -> SampleRequest:
    """``key=value`` arguments -> a checked :class:`SampleRequest` (one-line errors)."""
    values = key_values(argv, _KEYS, USAGE, SampleArgumentError)
    if not values.get("model_uri"):
        raise SampleArgumentError(f"missing model_uri=...; {USAGE}")
    output = values.get("output", "-")
    request = SampleRequest(
        model_uri=values["model_uri"],
        output=Path(output).expanduser() if output not in ("", "-") else None,
        n=_integer("n", values.get("n", "1000"), 1, MAX_ROWS),
        label=_label(values["label"]) if "label" in values else None,
        seed=_integer("seed", values.get("seed", "0"), 0, MAX_SEED),
        tracking_uri=values.get("tracking_uri") or None,
        where=where_value(values["where"]) if "where" in values else None,
        histories=(
            _integer("histories", values["histories"], 1, MAX_HISTORIES)
            if "histories" in values
            else None
        ),
    )
    if request.histories is not None and "n" in values:
        raise SampleArgumentError(
            "give n= (rows of a row model) or histories= (customers of a history model), not both"
        )
    request.file_format  # noqa: B018 - validates the extension early
    return request


def check_writable(path: Path) -> None:
    """Fail before the (slow) model load if ``path`` cannot be written (a link: its target,
    which the rows replace while the link stays)."""
    if path.is_dir():
        raise SampleArgumentError(f"output={path} is a directory; give a file name")
    target = written_path(path)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        probe = parent / f".{target.name}.write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise SampleArgumentError(
            f"cannot write output={path} ({err.strerror or err}); choose a writable location"
        ) from None


def sample(request: SampleRequest, launch_dir: Path | None = None) -> Path | None:
    """Load the model, draw ``n`` rows of class ``label`` and write them to ``output`` (the
    file's path) or to stdout (None)."""
    launch_dir = Path(launch_dir or Path.cwd())
    if request.output is not None and not request.output.is_absolute():
        request = SampleRequest(**{**request.__dict__, "output": launch_dir / request.output})
    if request.output is not None:
        check_writable(request.output)
    started = time.perf_counter()

    def check(schema: TableSchema) -> None:  # a wrong label, column or level fails before Keras
        if request.label is not None:
            label_class(schema, request.label)
        if request.where and request.histories is None:  # a history model's: its attributes
            parse_where(request.where, schema)

    # A wrong id or store fails in a second.
    synthesizer = open_model(
        request.model_uri,
        request.tracking_uri,
        launch_dir,
        check=check,
        check_bundle=lambda bundle: check_kind(bundle, request),
    )
    shown = request.label or str(synthesizer.schema.positive)
    from wgangp.serving.histories import HistorySynthesizer  # loaded by now

    frames: Iterable[pd.DataFrame]
    if isinstance(synthesizer, HistorySynthesizer):
        assert request.histories is not None  # check_kind saw to it
        frames = [  # customers whole, with their rows: one chunk
            synthesizer.sample_histories(
                request.histories, request.label, request.seed, where=request.where
            )
        ]
        schema = None  # its rows hold the customer and time columns besides the schema's
    else:
        per_row = draw_bytes_per_row(
            synthesizer.latent_dim, synthesizer.width, len(synthesizer.columns)
        )
        frames = synthesizer.sample_chunks(
            request.n,
            request.label,
            request.seed,
            where=request.where,
            chunk_rows=chunk_rows(per_row),
        )
        schema = synthesizer.schema
    if request.output is None:
        written = write_stdout(frames)
    else:
        written = write_rows(frames, request.output, request.file_format, schema)
    log.info(
        "wrote %d rows (label %s, seed %d) to %s in %.1f s",
        written, shown, request.seed, request.output or "stdout",
        time.perf_counter() - started,
    )  # fmt: skip
    log.info("%s", guarantee(synthesizer.privacy, synthesizer.guarantee))
    return request.output


def check_kind(bundle: Path, request: SampleRequest) -> None:
    """``histories=`` asks a history model (``data.time``), ``n=`` a row model: one line else."""
    history = is_history_bundle(bundle)
    if request.histories is not None and not history:
        raise SampleArgumentError(
            "histories= draws customers of a history model (trained with data.time); this model "
            "draws rows: give n= instead"
        )
    if request.histories is None and history:
        raise SampleArgumentError(
            "this model draws customers over time (trained with data.time): give histories=<n> "
            "instead of n="
        )


def guarantee(privacy: dict | None, held: dict | None) -> str:
    """What a bundle's rows are covered by: its differential-privacy guarantee (``held``:
    :attr:`Synthesizer.guarantee`), or none, and why (``privacy``: what it was trained under)."""
    if privacy is None:
        return (
            "privacy: no differential-privacy guarantee (trained without privacy.epsilon; "
            "stored tables are k-anonymous, near copies measured: docs/privacy.md)"
        )
    if held is None:
        source = (
            f"a test key ({REPLAYABLE_ENV})"
            if privacy.get("noise") == REPLAYABLE
            else "the run's public seed (trained before wgangp drew it from a secret key)"
        )
        return (
            f"privacy: NO differential-privacy guarantee: this model's DP noise came from "
            f"{source}, so anyone with the bundle can replay it; retrain it under "
            "privacy.epsilon without the test key"
        )
    return (
        f"privacy: ({privacy['epsilon']:.3g}, {privacy['delta']:.0e})-differential privacy per "
        f"{privacy.get('unit', 'entity')}, for every row sampled from this model"
    )


class Interrupted(BaseException):
    """SIGTERM (``docker stop``, a scheduler) while rows are drawn: unwinds as Ctrl-C does, so the
    file being written is removed (Python's default SIGTERM would leave it, gigabytes of a
    half-written stream under a hidden name)."""

    exit_code = 143


def _on_sigterm(signum: int, frame: object) -> None:
    raise Interrupted


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry; returns the exit code (0, or the error's code after one line on stderr)."""
    argv = command_args(argv, USAGE)
    if argv is None:
        return 0
    quiet_tensorflow()
    quiet_mlflow()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    try:
        request = parse_args(argv)
        path = sample(request)
    except WgangpError as err:
        report_error(err)
        return err.exit_code
    except (KeyboardInterrupt, Interrupted) as err:
        print(
            "wgangp: interrupted; output= is left as it was (rows already on stdout stay there)",
            file=sys.stderr,
        )
        return Interrupted.exit_code if isinstance(err, Interrupted) else 130
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    if path is not None:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
