"""The variant comparison's score: several independent 2,000-row draws, averaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.configs import TINY_NETWORKS

from scripts import quality
from wgangp.data.builtin.simulated import simulate_creditcard
from wgangp.serving.synthesizer import Synthesizer

#: A few steps of tiny networks, probed once by the quality loop.
TINY_RUN = [
    *TINY_NETWORKS,
    "trainer.batch_size=32",
    "trainer.steps=4",
    "trainer.steps_per_call=2",
    "trainer.checkpoint_every=2",
    "select.every=2",
    "select.repeats=2",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small table and one run trained on it by the script's own ``train``."""
    work = tmp_path_factory.mktemp("quality")
    table = work / "small.csv"
    simulate_creditcard(n_rows=3_000, fraud_rate=0.05, seed=0).to_csv(table, index=False)
    out, _ = quality.train(TINY_RUN, 0, table, work)
    return out, table


@pytest.mark.slow
def test_a_score_averages_independent_draws_and_its_first_is_the_one_draw_score(
    trained: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, table = trained
    one = quality.score(out, 0, table, repeats=2)
    seeds: list[int] = []
    sample_class = Synthesizer.sample_class

    def recording(self: Synthesizer, n: int, klass: int = 1, seed: int = 0, **kw) -> object:
        if n == 2000:
            seeds.append(seed)
        return sample_class(self, n, klass, seed, **kw)

    monkeypatch.setattr(Synthesizer, "sample_class", recording)
    three = quality.score(out, 0, table, repeats=2, draws=3)
    assert seeds == [20_000, 20_097, 20_194]  # three draws, none repeated
    draws = three["val/c2st_auc_gbm_2000_draws"]
    assert len(draws) == 3
    assert draws[0] == one["val/c2st_auc_gbm_2000"]
    assert three["val/c2st_auc_gbm_2000"] == pytest.approx(np.mean(draws))
    assert three["val/near_copies"] == one["val/near_copies"]


def test_fewer_than_one_draw_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        quality.main(["--data", str(tmp_path / "t.csv"), "--draws", "0"])
    assert exit_info.value.code == 2
    assert "--draws must be >= 1 (got 0)" in capsys.readouterr().err
