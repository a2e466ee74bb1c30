"""What a core fit (``wgangp.fit(..., track=False)``) says when it ends without a model: its
folder is gone, so its lines name no file and no checkpoint (the run itself: tests/test_api.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from support.docs import documented

from wgangp.api import _nothing_kept, _shipped
from wgangp.errors import WgangpError
from wgangp.training.interrupts import Interrupted
from wgangp.training.session import TrainResult


def test_a_core_fit_stopped_on_nan_names_no_file_it_deleted(tmp_path: Path) -> None:
    stopped = TrainResult(
        None, tmp_path / "run", 52, "FAILED", nan_step=52, nan_source="critic/gradient_penalty"
    )
    with pytest.raises(WgangpError) as err:
        _shipped(stopped, kept=False)
    line = str(err.value)
    assert line == (
        "training stopped at step 52 (critic/gradient_penalty, trainer.on_nan=stop): "
        "fit(track=False) keeps no files: fit with track=True to keep nan_forensics.json"
    )
    assert str(tmp_path) not in line
    documented(line)


@pytest.mark.parametrize(
    ("said", "step"),
    [
        (
            "interrupted at step 500; checkpoint kept in /tmp/x; rerun with trainer.resume=true "
            "to continue",
            "interrupted at step 500",
        ),
        (
            "interrupted before the first checkpoint; nothing to keep: rerun the same command",
            "interrupted before the first checkpoint",
        ),
    ],
)
def test_an_interrupted_core_fit_names_no_checkpoint(said: str, step: str) -> None:
    with pytest.raises(Interrupted) as err, _nothing_kept():
        raise Interrupted(said, signal.SIGINT)
    assert str(err.value) == (
        f"{step}; fit(track=False) keeps no checkpoint: fit again, or with track=True to keep "
        "one to resume"
    )
    assert err.value.exit_code == 128 + signal.SIGINT
    if "500" in step:
        documented(str(err.value).replace("at step 500", "at step <step>"))
