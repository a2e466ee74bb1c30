"""The evaluation's independent pieces, run on the cores the machine has.

Each detection classifier on each set of rows, each utility repeat, fidelity, disclosure and each
SDMetrics pass is one :class:`Piece`: a module-level function and its arguments, every seed
fixed before anything runs. So the figures do not depend on which worker ran a piece or when:
``evaluate.workers=1`` (this process, one piece after another) and more workers give the same
metrics.

Workers are processes (loky's: a fresh interpreter each, started by fork and exec, so the
TensorFlow threads of a training process are never forked), not threads: boosting's tree
building, SciPy's optimizer loop and SDMetrics' pandas code hold the GIL much of the time. Each
worker limits its BLAS and OpenMP pools to ``evaluate.threads`` (its environment when it starts,
and threadpoolctl around each piece): workers x threads is what runs, never a pool per library
per core on top. The pieces are handed out largest first, so a long utility repeat does not
start last. The pool starts before the rows are drawn, so the workers' imports overlap the
draws, and it is joined at the end: the phase clock counts the workers' CPU as a waited-for
child's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from threadpoolctl import threadpool_limits

#: The thread pools' variables a worker starts with (OpenMP, OpenBLAS, MKL, Accelerate, numexpr).
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@dataclass(frozen=True)
class Piece:
    """One independent computation: ``call(*args, **kwargs)``; ``family`` names the part of
    the evaluation it belongs to (for the timing line), ``cost`` orders the hand-out."""

    family: str
    call: Callable[..., Any]
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    cost: float = 1.0


@dataclass(frozen=True)
class Done:
    """A piece's result and the wall and CPU seconds it took where it ran."""

    value: Any
    wall_s: float
    cpu_s: float


def worker_count(requested: int) -> int:
    """``requested`` workers; 0: one per core this process may use (affinity and a container's
    CPU quota counted, as joblib counts them)."""
    if requested > 0:
        return requested
    from joblib import cpu_count

    return max(1, cpu_count())


def run_piece(piece: Piece, threads: int) -> Done:
    """``piece`` with at most ``threads`` BLAS/OpenMP threads, timed."""
    wall, cpu = time.perf_counter(), time.process_time()
    with threadpool_limits(limits=threads):
        value = piece.call(*piece.args, **piece.kwargs)
    return Done(value, time.perf_counter() - wall, time.process_time() - cpu)


def _warm_up() -> None:
    """What nearly every piece imports, imported while the parent still draws rows."""
    import pandas  # noqa: F401
    import sklearn.ensemble  # noqa: F401
    import sklearn.linear_model  # noqa: F401


class Workers:
    """The evaluation's worker processes (none for one worker), from ``with`` to its end."""

    def __init__(self, workers: int, threads: int) -> None:
        self.count = worker_count(workers)
        self.threads = threads
        self._pool: Any = None  # a loky ProcessPoolExecutor once started

    def __enter__(self) -> Workers:
        return self

    @property
    def separate(self) -> bool:
        """Whether the pieces run in other processes (their CPU is not this one's)."""
        return self.count > 1

    def start(self) -> None:
        """Start the processes (their imports run while this one goes on); called once the
        inputs are checked, so a refused input costs no process."""
        if self.count > 1 and self._pool is None:
            from joblib.externals.loky import ProcessPoolExecutor

            env = {name: str(self.threads) for name in THREAD_VARIABLES}
            self._pool = ProcessPoolExecutor(max_workers=self.count, env=env)
            for _ in range(self.count):
                self._pool.submit(_warm_up)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            # Joined on success (their CPU then counts as a waited-for child's); on an error or
            # an interruption the pieces still queued are not worth waiting for.
            self._pool.shutdown(wait=True, kill_workers=kind is not None)
            self._pool = None

    def run(self, pieces: Sequence[Piece]) -> list[Done]:
        """Every piece's result, in the order given."""
        self.start()
        if self._pool is None:
            return [run_piece(piece, self.threads) for piece in pieces]
        order = sorted(range(len(pieces)), key=lambda i: -pieces[i].cost)
        futures = {i: self._pool.submit(run_piece, pieces[i], self.threads) for i in order}
        return [futures[i].result() for i in range(len(pieces))]


def family_seconds(pieces: Sequence[Piece], done: Sequence[Done]) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds each family's pieces took, summed over its pieces."""
    totals: dict[str, tuple[float, float]] = {}
    for piece, result in zip(pieces, done, strict=True):
        wall, cpu = totals.get(piece.family, (0.0, 0.0))
        totals[piece.family] = (wall + result.wall_s, cpu + result.cpu_s)
    return totals
