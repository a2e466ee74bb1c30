"""Per-step metrics kept on the host: windows for MLflow points, a CSV and a loss plot.

For crash-safe runs the rows are also appended to a journal CSV beside the checkpoints at every
checkpoint (:meth:`MetricHistory.persist`); a resumed run reloads the rows up to its checkpoint's
step (:meth:`MetricHistory.restore`), so its curves have every step exactly once.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from wgangp.files import write_with
from wgangp.step.train_step import METRICS
from wgangp.tracking.names import TRAIN, in_section

log = logging.getLogger("wgangp.resume")


class MetricHistory:
    """Collects the [steps, M] blocks returned by the trainer and forms logging windows."""

    def __init__(self, log_every: int, skip_through: int = -1) -> None:
        """``skip_through``: points at or before this step are already logged (a resumed run)."""
        self.log_every = log_every
        self.skip_through = skip_through
        self.rows: list[np.ndarray] = []
        self.steps: list[int] = []
        self._window: list[np.ndarray] = []
        self._window_start = time.perf_counter()
        self._persisted = 0

    def restore(self, journal: Path, upto_step: int) -> int:
        """Reload the rows of steps ``<= upto_step`` from ``journal``; returns how many."""
        if upto_step <= 0 or not Path(journal).is_file():
            return 0
        try:
            frame = pd.read_csv(journal, on_bad_lines="skip")
            frame = frame.dropna(subset=["step", *METRICS[-1:]])  # a torn last row: dropped
        except (ValueError, KeyError, OSError) as err:  # an empty or foreign file
            log.warning("ignoring the unreadable metrics journal %s (%s)", journal, err)
            frame = pd.DataFrame(columns=["step", *METRICS])
        frame = frame[frame["step"] <= upto_step].drop_duplicates("step", keep="last")
        frame = frame.sort_values("step")
        if len(frame) != upto_step:
            log.warning(
                "the metrics journal %s holds %d of the %d steps before the checkpoint (damaged); "
                "metrics.csv will miss the others (the MLflow curves keep them)",
                journal, len(frame), upto_step,
            )  # fmt: skip
        self.steps = [int(s) for s in frame["step"]]
        self.rows = list(frame.loc[:, list(METRICS)].to_numpy(np.float32))
        self._persisted = len(self.rows)
        # The journal now holds exactly these rows (a crash may have left later ones).
        self.save_csv(journal)
        return len(self.rows)

    def persist(self, journal: Path) -> None:
        """Rewrite ``journal`` with every row so far (call before saving a checkpoint); it is
        replaced whole, so an interrupted write leaves the previous journal, never a torn one."""
        if len(self.rows) == self._persisted and Path(journal).is_file():
            return
        self.save_csv(journal)
        self._persisted = len(self.rows)

    def add(self, start_step: int, block: np.ndarray) -> list[tuple[int, dict[str, float]]]:
        """Add steps ``start_step..``; return the (step, metrics) points due for logging.

        A point is due every ``log_every`` completed steps; it averages the window, except
        ``grad_norm_min`` (the window's minimum) and ``zero_grad_rows`` (the window's total).
        Its metrics carry their MLflow names (``train/critic_loss``); the CSV keeps bare names.
        """
        due = []
        for offset, row in enumerate(block):
            step = start_step + offset + 1  # steps completed
            self.rows.append(row)
            self.steps.append(step)
            self._window.append(row)
            if step % self.log_every == 0:
                point = (step, self._close_window())
                if step > self.skip_through:
                    due.append(point)
        return due

    def flush(self) -> tuple[int, dict[str, float]] | None:
        """The partial window at the end of training, if any."""
        if not self._window:
            return None
        point = (self.steps[-1], self._close_window())
        return point if point[0] > self.skip_through else None

    def _close_window(self) -> dict[str, float]:
        window = np.stack(self._window)
        now = time.perf_counter()
        elapsed = max(now - self._window_start, 1e-9)
        with np.errstate(invalid="ignore"):
            values = dict(zip(METRICS, window.mean(axis=0).tolist(), strict=True))
        values["grad_norm_min"] = float(window[:, METRICS.index("grad_norm_min")].min())
        values["zero_grad_rows"] = float(window[:, METRICS.index("zero_grad_rows")].sum())
        values["steps_per_sec"] = len(window) / elapsed
        self._window = []
        self._window_start = now
        return in_section(TRAIN, values)

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(np.asarray(self.rows).reshape(-1, len(METRICS)), columns=list(METRICS))
        frame.insert(0, "step", self.steps)
        return frame

    def save_csv(self, path: Path) -> Path:
        frame = self.frame()
        return write_with(Path(path), lambda tmp: frame.to_csv(tmp, index=False))

    def plot(self, path: Path) -> Path:
        """The loss curves as a PNG, on an explicit Agg canvas: pyplot's state and the user's
        backend (a notebook's inline one) are left alone."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        frame = self.frame()
        fig = Figure(figsize=(15, 4))
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 3)
        for name in ("critic_loss", "generator_loss"):
            axes[0].plot(frame["step"], frame[name], label=name, linewidth=0.8)
        axes[0].set_title("losses")
        axes[1].plot(frame["step"], frame["wasserstein_estimate"], color="C2", linewidth=0.8)
        axes[1].set_title("Wasserstein estimate")
        axes[2].plot(frame["step"], frame["gradient_penalty"], color="C3", linewidth=0.8)
        axes[2].set_title("gradient penalty")
        for ax in axes:
            ax.set_xlabel("generator step")
            ax.grid(alpha=0.3)
        axes[0].legend()
        fig.tight_layout()
        write_with(Path(path), lambda tmp: fig.savefig(tmp, dpi=100))
        return path
