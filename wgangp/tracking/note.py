"""The run page's description: what a run trained on, and its headline figures once known.

MLflow shows the tag ``mlflow.note.content`` (markdown) as the description at the top of a run's
page, so a reader learns the data and the outcome there instead of hunting through 170 metrics.
The note is set when the data is known and set again when the run ends (finished, stopped or
failed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from wgangp.tracking.names import EVAL, PRIVACY_DELTA, PRIVACY_EPSILON, VAL_SCORE, metric

#: The tag MLflow renders as the run's description.
NOTE_TAG = "mlflow.note.content"
#: What the second line says before the run ends.
PENDING = "Headline figures: pending until the run ends."
#: The test-evaluation figures of the second line: (label, metric name without its section).
HEADLINE_EVAL = (
    ("detection AUC", "c2st_auc_gbm"),
    ("real-vs-real control", "c2st_auc_gbm_control"),
    ("near copies", "near_copies"),
)


@dataclass(frozen=True)
class TrainedOn:
    """The rows a fit trained on; None under ``privacy.epsilon``, where the shared run holds no
    count of them (the team report does: :mod:`wgangp.training.team_report`)."""

    rows: int | None
    rare_rows: int | None
    steps: int

    def text(self) -> str:
        if self.rows is None or self.rare_rows is None:
            return f"training rows withheld (privacy.epsilon), {self.steps:,} steps"
        return f"{self.rows:,} training rows ({self.rare_rows:,} rare-class), {self.steps:,} steps"


@dataclass(frozen=True)
class RunNote:
    """Two markdown lines: the data and the fit(s); the headline figures (or why there are none)."""

    data: str  # e.g. "creditcard, file /data/creditcard.csv"
    fit: TrainedOn
    refit: TrainedOn | None = None
    outcome: str = field(default=PENDING)

    def text(self) -> str:
        trained = f"**Trained on** {self.data}: {self.fit.text()}"
        if self.refit is not None:
            trained += f"; refit on training + validation rows: {self.refit.text()}"
        return f"{trained}.\n\n{self.outcome}"

    def tags(self) -> dict[str, str]:
        return {NOTE_TAG: self.text()}

    def with_outcome(self, outcome: str) -> RunNote:
        return replace(self, outcome=outcome)


def data_label(name: str, source: str, origin: str) -> str:
    """``creditcard, file /data/creditcard.csv``; simulated rows say how they were made."""
    if source == "simulated":  # origin: "simulated(seed=0, rows=4000)"
        return f"simulated rows ({origin.removeprefix('simulated(').removesuffix(')')})"
    return f"{name}, {source} {origin}"


def headline(selected_step: int | None, score: float | None, metrics: Mapping[str, float]) -> str:
    """The selection (step and score) and, when the test evaluation ran, its detection AUC with
    the real-vs-real control and the near-copy share."""
    if selected_step is None or score is None:
        selected = "**No step selected** (no validation probes): the last step ships"
    else:
        selected = f"**Selected** step {selected_step:,} ({VAL_SCORE} {score:.3f})"
    figures = [
        f"{label} {metrics[metric(EVAL, name)]:.3f}"
        for label, name in HEADLINE_EVAL
        if metric(EVAL, name) in metrics
    ]
    tested = f"**test**: {', '.join(figures)}" if figures else "no test evaluation"
    guarantee = ""
    if PRIVACY_EPSILON in metrics:
        guarantee = (
            f" **Differential privacy** per entity: epsilon {metrics[PRIVACY_EPSILON]:.3g}, "
            f"delta {metrics[PRIVACY_DELTA]:.0e}."
        )
    return f"{selected}; {tested}.{guarantee}"
