"""``python -m wgangp.sample``: draw synthetic rows from a trained model into a CSV or Parquet file.

    python -m wgangp.sample model_uri=runs:/<run_id> n=10000 label=1 output=fraud.parquet seed=0
    python -m wgangp.sample model_uri=models:/<name>@champion n=1000 label=1 > fraud.csv
    python -m wgangp.sample model_uri=runs:/<run_id> n=500 label=yes output=rows.csv  # own table
    python -m wgangp.sample model_uri=runs:/<id> n=200 'where={merchant:[online],amount:[500,null]}'

Arguments are Hydra-style ``key=value`` pairs. ``model_uri`` is a run (``runs:/<id>``, the run's
``synthesizer`` bundle), a logged model (``models:/<model_id>``, ``models:/<name>/<version>``,
``models:/<name>@<alias>`` of ``tracking.register_as``), or a local directory (a synthesizer
bundle or a downloaded pyfunc model). Rows come back in the original units and column names
(Time, V1..V28, Amount, Class); without ``label=`` they are of the class the model synthesizes
(1, or a table's positive value, as the served model's default); without ``output=`` (or with
``output=-``) they go to stdout as CSV, and the log stays on stderr. The store is
``tracking_uri=``, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<cwd>/mlflow.db``, as for
training. ``where=`` keeps rows that meet conditions (:mod:`wgangp.serving.conditions`), written
in Hydra's grammar as above or as JSON.

Every argument is checked before TensorFlow is imported, so a typo fails in a second.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wgangp.cli import command_args, key_values, quiet_tensorflow
from wgangp.config import MAX_SEED
from wgangp.data.schema.table_schema import TableSchema
from wgangp.errors import WgangpError, report_error
from wgangp.files import write_with, written_path
from wgangp.privacy.randomness import REPLAYABLE, REPLAYABLE_ENV
from wgangp.serving.conditions import parse_where
from wgangp.serving.labels import label_class
from wgangp.serving.opening import open_synthesizer
from wgangp.tracking.quiet import quiet_mlflow

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("wgangp.sample")

#: File suffixes understood for ``output=`` and how each is written.
FORMATS = {".csv": "csv", ".gz": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Upper bound on one request; what the machine can hold is checked too (:func:`check_memory`).
MAX_ROWS = 10_000_000
#: Peak memory per sampled row: noise, generator output, calibration, the frame and its writer
#: (docs/reliability.md measures it).
BYTES_PER_ROW = 1_300
USAGE = (
    "usage: python -m wgangp.sample model_uri=<runs:/ID | models:/ID | models:/NAME@ALIAS | dir> "
    "[output=<file.csv|.parquet|->] [n=1000] [label=<value; default: the class the model "
    "synthesizes>] [where={column:[levels] | [low,high], ...}] [seed=0] [tracking_uri=URI]"
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

    @property
    def file_format(self) -> str:
        return output_format(self.output) if self.output is not None else "csv"


_KEYS = ("model_uri", "output", "n", "label", "seed", "tracking_uri", "where")


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


def available_memory() -> int | None:
    """Bytes this process can still allocate: the system's available memory, or the container's
    limit minus its use when that is lower (None when neither can be read)."""
    limits = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        cap = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if cap != "max":
            limits.append(int(cap) - int(used))
    except (OSError, ValueError):
        pass
    return min(limits) if limits else None


def check_memory(n: int) -> None:
    """Refuse, before the model loads, a draw the machine cannot hold (one line)."""
    available = available_memory()
    need = n * BYTES_PER_ROW
    if available is not None and need > available:
        most = max(1, available // BYTES_PER_ROW) // 1000 * 1000
        raise SampleArgumentError(
            f"n={n} rows need about {need / 1e9:.1f} GB of memory and {available / 1e9:.1f} GB "
            f"are available; draw at most about {most} rows per call (several calls with "
            "different seed= values) or use a larger machine"
        )


def write_rows(frame: pd.DataFrame, path: Path, file_format: str) -> Path:
    """Write the rows complete or not at all: a failure (a full disk) keeps the previous file;
    ``output=`` a symbolic link writes its target and keeps the link."""
    if file_format == "parquet":
        return write_with(path, lambda tmp: frame.to_parquet(tmp, index=False), f"output={path}")
    return write_with(path, lambda tmp: frame.to_csv(tmp, index=False), f"output={path}")


def write_stdout(frame: pd.DataFrame) -> None:
    """CSV on stdout; a reader that stops early (``| head``) is no error."""
    try:
        frame.to_csv(sys.stdout, index=False)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def sample(request: SampleRequest, launch_dir: Path | None = None) -> Path | None:
    """Load the model, draw ``n`` rows of class ``label`` and write them to ``output`` (the
    file's path) or to stdout (None)."""
    launch_dir = Path(launch_dir or Path.cwd())
    if request.output is not None and not request.output.is_absolute():
        request = SampleRequest(**{**request.__dict__, "output": launch_dir / request.output})
    if request.output is not None:
        check_writable(request.output)
    check_memory(request.n)
    started = time.perf_counter()

    def check(schema: TableSchema) -> None:  # a wrong label, column or level fails before Keras
        if request.label is not None:
            label_class(schema, request.label)
        if request.where:
            parse_where(request.where, schema)

    # A wrong id or store fails in a second.
    synthesizer = open_synthesizer(request.model_uri, request.tracking_uri, launch_dir, check=check)
    shown = request.label or str(synthesizer.schema.positive)
    frame = synthesizer.sample(request.n, request.label, request.seed, where=request.where)
    if request.output is None:
        write_stdout(frame)
    else:
        write_rows(frame, request.output, request.file_format)
    log.info(
        "wrote %d rows (label %s, seed %d) to %s in %.1f s",
        len(frame), shown, request.seed, request.output or "stdout",
        time.perf_counter() - started,
    )  # fmt: skip
    log.info("%s", guarantee(synthesizer.privacy, synthesizer.guarantee))
    return request.output


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


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry; returns the exit code (0, or the error's code after one line on stderr)."""
    argv = command_args(argv, USAGE)
    if argv is None:
        return 0
    quiet_tensorflow()
    quiet_mlflow()
    try:
        request = parse_args(argv)
        path = sample(request)
    except WgangpError as err:
        report_error(err)
        return err.exit_code
    if path is not None:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
