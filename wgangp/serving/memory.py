"""Give a large answer's memory back to the system once the server has sent it.

The scoring server encodes the rows ``predict`` returns as JSON after ``predict`` has returned (a
few hundred MB for the largest request), and glibc keeps freed heap pages mapped, so the
process's memory would stay at its peak. After a large request a daemon thread collects garbage
and calls ``malloc_trim(0)`` every few seconds for a while, until the answer is long gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import threading
import time

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
