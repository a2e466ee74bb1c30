"""Memory checks for large draws, and memory given back after them.

**What a draw needs.** A sample is drawn whole: the generator's noise, its rows in the networks'
space (a float per one-hot level), their calibrated and drawn copies, then the frame in the
table's units. :func:`draw_bytes_per_row` is that peak per row from the model's own shape (latent
size, the networks' width, the table's columns), measured (``python -m scripts.sample_memory``,
docs/reliability.md); a draw the machine cannot hold is refused in one line
(:func:`available_memory`), before anything is allocated (:func:`draw_memory`).
``python -m wgangp.sample`` never holds more than a chunk (:func:`chunks`).

**Memory given back.** The scoring server encodes the rows ``predict`` returns as JSON after
``predict`` has returned (a few hundred MB for the largest request), and glibc keeps freed heap
pages mapped, so the process's memory would stay at its peak. After a large request a daemon
thread collects garbage and calls ``malloc_trim(0)`` every few seconds for a while, until the
answer is long gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from wgangp.errors import WgangpError

#: Peak bytes of a drawn row (docs/reliability.md measures them): the noise is drawn in float64
#: and cast to float32 (12 bytes a latent dimension, the first peak); the rest of the draw keeps
#: the float32 noise beside the networks' rows and their float64 copies (26 bytes a unit of the
#: networks' width: calibration, one-hots drawn from probabilities) and the frame (28 bytes a
#: column). The second peak is the larger unless the networks' space is narrow.
NOISE_BYTES_PER_LATENT = 12
KEPT_BYTES_PER_LATENT = 4
BYTES_PER_WIDTH = 26
BYTES_PER_COLUMN = 28
#: Allocator slack over the measured peaks (the estimate reads 1.25x to 1.8x what was measured).
MARGIN = 1.25


class DrawTooLargeError(WgangpError):
    """A draw larger than the memory this machine has left."""

    reason = "config"


def draw_bytes_per_row(latent_dim: int, width: int, columns: int) -> int:
    """Peak bytes per row of a draw from a model of this shape (module doc)."""
    noise = NOISE_BYTES_PER_LATENT * latent_dim
    rows = KEPT_BYTES_PER_LATENT * latent_dim + BYTES_PER_WIDTH * width + BYTES_PER_COLUMN * columns
    return int(MARGIN * max(noise, rows))


def checked_rows(n: object) -> int:
    """A number of rows to draw: a whole number >= 0 (a whole float such as ``500.0`` too)."""
    whole = None
    if isinstance(n, int | np.integer | float) and not isinstance(n, bool):  # True is no count
        whole = None if isinstance(n, float) and not n.is_integer() else int(n)
    if whole is None or whole < 0:
        raise WgangpError(
            f"n must be a whole number of rows >= 0, got {n!r}; e.g. synthesizer.sample(500)"
        )
    return whole


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


@contextlib.contextmanager
def draw_memory(
    n: int, latent_dim: int, width: int, columns: int, rows_each: int = 1
) -> Iterator[None]:
    """A draw of ``n`` rows from a model of this shape (or of ``n`` histories of up to
    ``rows_each`` rows: a history model pads each to its window, and each row costs what a
    row model's does, its latent the noise per row): refused before it starts when the machine
    cannot hold it (:func:`draw_bytes_per_row`), and a ``MemoryError`` inside (the estimate's
    margin not enough) told in the same line."""
    per_item = draw_bytes_per_row(latent_dim, width, columns) * rows_each
    shape = f"this model: latent {latent_dim}, width {width}, {columns} columns"
    available = available_memory()
    if available is not None and n * per_item > available:
        raise DrawTooLargeError(_too_large(n, per_item, shape, available, rows_each))
    try:
        yield
    except MemoryError:
        left = available_memory() or 0
        raise DrawTooLargeError(_too_large(n, per_item, shape, left, rows_each)) from None


def _round_down(count: int, step: int) -> int:
    """``count`` to a round number for a message, never to 0."""
    return count if count < step else count // step * step


def _too_large(n: int, per_item: int, shape: str, available: int, rows_each: int) -> str:
    most = max(1, available // per_item)
    need = f"about {n * per_item / 1e9:.1f} GB of memory"
    if rows_each > 1:
        return (
            f"{n:,} histories need {need} ({per_item:,} bytes a history of up to {rows_each} "
            f"rows for {shape}) and {available / 1e9:.1f} GB are available; ask for at most "
            f"about {_round_down(most, 100):,} histories a call and draw several (seed=...)"
        )
    return (
        f"{n:,} rows need {need} ({per_item:,} bytes a row for {shape}) and "
        f"{available / 1e9:.1f} GB are available; ask for at most about "
        f"{_round_down(most, 1000):,} rows a call, or stream them into a file: python -m "
        f"wgangp.sample n={n} output=rows.parquet"
    )


def chunks(rows: int, seed: int, chunk_rows: int) -> Iterator[tuple[int, int]]:
    """A draw of ``rows`` as chunks of at most ``chunk_rows``: each chunk's size and seed
    (:func:`chunk_seed`); one empty chunk for 0 rows (the frame's columns and types)."""
    for chunk, start in enumerate(range(0, max(rows, 1), chunk_rows)):
        yield min(chunk_rows, rows - start), chunk_seed(seed, chunk)


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of a large draw's ``chunk``-th chunk: the draw's own for the first (a draw of one
    chunk is the plain sample), then seeds of their own, apart from any seed a chunk's
    conditional rounds derive (``SeedSequence([seed, round])``)."""
    if chunk == 0:
        return seed
    return int(np.random.SeedSequence(seed, spawn_key=(chunk,)).generate_state(1)[0])


#: How long after a large request memory is trimmed, and how often.
TRIM_FOR_S = 180.0
TRIM_EVERY_S = 5.0

_lock = threading.Lock()
_until = 0.0
_thread: threading.Thread | None = None


def _trim() -> None:
    gc.collect()
    name = ctypes.util.find_library("c")
    if name:
        with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
            ctypes.CDLL(name).malloc_trim(0)


def _loop() -> None:
    global _thread
    while True:
        time.sleep(TRIM_EVERY_S)
        _trim()
        with _lock:
            if time.monotonic() >= _until:
                _thread = None
                return


def release_after_large_answer() -> None:
    """Trim the heap every few seconds for the next :data:`TRIM_FOR_S` seconds."""
    global _until, _thread
    with _lock:
        _until = time.monotonic() + TRIM_FOR_S
        if _thread is None:
            _thread = threading.Thread(target=_loop, name="wgangp-trim", daemon=True)
            _thread.start()
