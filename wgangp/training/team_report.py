"""A private run's team report: a second MLflow run for what the shared run may not hold.

Under ``privacy.epsilon`` the run that logs the model (the run ``runs:/ID``, a registered model
and the bundle point to, the one other teams read) records only what the guarantee covers: the
config, the released schema, the figures of the DP releases, the generator's loss, what ships.
Everything else a run records reads rows outside the budget: the table's digest, its row,
class and duplicate counts, the MLflow dataset's profile, the held-out evaluation (its test
rows are the table's too), the phases' figures. Those go to the team report, an MLflow run of
the same experiment named ``<shared run name>-team-report``, tagged ``wgangp.report_of`` with the
shared run's id and ``wgangp.shared=false``: it names the shared run; the shared run never names
it. Keep it where only the team reads it (docs/privacy.md says which run is which).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wgangp.tracking.tracker import Tracker

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

#: The tag naming the shared run a team report belongs to.
REPORT_OF = "wgangp.report_of"
#: The tag saying whether other teams may read a run (false: the team report).
SHARED = "wgangp.shared"
#: What a team report's name adds to its shared run's.
SUFFIX = "-team-report"


@dataclass
class TeamReport:
    """The team report's run; :attr:`tracker` takes what the shared run may not hold."""

    tracker: Tracker

    @classmethod
    def open(cls, shared: Tracker, run_name: str, tags: dict[str, str]) -> TeamReport:
        """Open the report beside ``shared`` (started), in the same store and experiment."""
        tracker = Tracker(shared.uri, shared.experiment, enabled=shared.enabled)
        tracker.start(
            f"{run_name}{SUFFIX}",
            {**tags, REPORT_OF: shared.run_id or "", SHARED: "false"},
        )
        return cls(tracker)

    def close(self, status: str) -> None:
        """End the report as its shared run ends."""
        self.tracker.end(status)


def team_report_of(client: MlflowClient, run_id: str) -> str | None:
    """The id of the team report of shared run ``run_id`` (``client``: an MlflowClient of its
    store), None when it has none (a run without privacy)."""
    experiment = client.get_run(run_id).info.experiment_id
    found = client.search_runs(
        [experiment], filter_string=f"tags.`{REPORT_OF}` = '{run_id}'", max_results=1
    )
    return found[0].info.run_id if found else None
