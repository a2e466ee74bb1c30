"""The privacy audits' harness: a table trained and sampled by the commands a user runs, then
every file the run wrote (the run folder, the MLflow store: the sqlite file, the artifacts, zip
members opened), what the commands printed, and the samples, returned as texts to search.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from support.configs import REPO, TINY_MODEL

#: A tiny run with every artifact a real one writes: the evaluation (SDMetrics included), the
#: samples, the bundle, the MLflow model.
RUN = [
    *(o for o in TINY_MODEL if not o.startswith("data")),
    "data.label=status",
    "trainer.steps=6",
    "trainer.steps_per_call=3",
    "trainer.progress=false",
    "trainer.sample_rows=200",
    "evaluate.enabled=true",
    "evaluate.n_synthetic=300",
    "evaluate.seeds=1",
    "evaluate.c2st_repeats=2",
    "evaluate.gbm_max_iter=20",
    "evaluate.sdmetrics=true",
]
SAMPLED = 3000


@dataclass(frozen=True)
class Audit:
    """What one run wrote: the texts searched, by where they were found, and the samples."""

    texts: dict[str, str]
    samples: pd.DataFrame
    #: What ``wgangp.train`` printed (the log goes to stdout, as Hydra's console handler does).
    log: str


def run_module(module: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(REPO)}
    env.pop("MLFLOW_TRACKING_URI", None)
    result = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def file_texts(root: Path) -> dict[str, str]:
    """Every file under ``root`` as text (bytes read as latin-1, so a sqlite file's strings
    show), a zip's members (the Keras file) each on their own."""
    found = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found[str(path)] = data.decode("latin-1")
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    found[f"{path}!{member}"] = archive.read(member).decode("latin-1")
    return found


def audit_run(folder: Path, table: Path, *extra: str, label: str = "fraud") -> Audit:
    """Train on ``table`` in ``folder`` (``extra``: more overrides), sample SAMPLED rows of the
    class ``label``, and gather everything written and printed."""
    work = folder / "work"
    work.mkdir(parents=True)
    uri = f"sqlite:///{work / 'mlflow.db'}"
    out = work / "out"
    trained = run_module(
        "wgangp.train",
        [*RUN, f"data.path={table}", f"tracking.uri={uri}", f"hydra.run.dir={out}", *extra],
        work,
    )
    rows = work / "fraud.csv"
    sampled = run_module(
        "wgangp.sample",
        [f"model_uri={out / 'synthesizer'}", f"n={SAMPLED}", f"label={label}", f"output={rows}"],
        work,
    )
    texts = file_texts(work)
    for name, result in (("train", trained), ("sample", sampled)):
        texts[f"{name} stdout"], texts[f"{name} stderr"] = result.stdout, result.stderr
    return Audit(texts, pd.read_csv(rows), trained.stdout)


def value_pattern(value: str) -> re.Pattern:
    """``value`` as a whole token: a number not inside a longer one (``473126400`` matches
    ``473126400.0``, not ``1473126400`` nor ``-473126400``), text not inside a longer word."""
    if re.fullmatch(r"-?\d+", value):
        return re.compile(rf"(?<![\w.-]){re.escape(value)}(?:\.0+)?(?![\w.])")
    return re.compile(rf"(?<![\w]){re.escape(value)}(?![\w])")


def found_values(text: str, values: Iterable[str]) -> set[str]:
    """The ``values`` that ``text`` holds as whole tokens (a substring test first: fast)."""
    return {v for v in values if v in text and value_pattern(v).search(text)}
