"""A history model learns fraud's burst on the small simulator (tests/support/histories.py): its
fraud customers' fraud rows come in bursts (3 or more of the customer's rows within an hour), as
the real ones do and as rows dealt to customers at random (what a row model gives at best) almost
never do. One training run of a few minutes (slow tier); the figures over seeds are
``scripts/histories_burst.py``'s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.histories import burst_share, customer_transactions

pytestmark = pytest.mark.slow

#: Steps where the burst appears on this table: with a few hundred most fraud rows come alone.
STEPS = 1500
#: The burst share asked of the generated fraud rows: well above the row-independent draw's
#: (a few in a thousand), with room for another machine's arithmetic and draws.
LEARNED_BURST = 0.25


def test_a_history_model_learns_the_fraud_burst(tmp_path: Path) -> None:
    import wgangp

    table = customer_transactions(200, 14, seed=0)
    model = wgangp.fit(
        table, label="is_fraud", entity="card_id", time="ts",
        overrides=[f"trainer.steps={STEPS}", "trainer.steps_per_call=25", "history.max_length=32",
                   "trainer.progress=false", "evaluate.enabled=false", "select.every=0"],
        tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}", output_dir=tmp_path / "run",
    )  # fmt: skip
    frauds = model.sample_histories(200, label=1, seed=1)
    dealt = table.assign(card_id=np.random.default_rng(0).permutation(table["card_id"]))
    real, generated, row_model = burst_share(table), burst_share(frauds), burst_share(dealt)
    assert real == 1.0 and row_model < 0.05
    assert generated >= max(LEARNED_BURST, 10 * row_model), (generated, row_model)
    per_history = (frauds["is_fraud"] == 1).sum() / frauds["card_id"].nunique()
    assert 1.5 <= per_history <= 10.0  # an episode among normal rows, not every row
