"""SIGTERM and SIGINT during a run: stop between compiled calls, keep a checkpoint, end KILLED.

``docker stop``, Kubernetes and preemption send SIGTERM; Ctrl-C sends SIGINT. Python's default
SIGTERM action kills the process at once (no ``finally``, the MLflow run left RUNNING), so a run
installs its own handlers. A Python handler only runs when the main thread is back in Python,
and a compiled call cannot be cancelled, so:

- inside the host loop the handler only records the signal; the loop finishes the call in
  flight, writes a checkpoint at the step it reached and raises :class:`Interrupted`;
- outside the loop (loading, exporting, evaluating) the handler raises :class:`Interrupted`
  at once;
- if the main thread is still inside a call ``grace_s`` seconds after the signal (a long
  compiled call, a stuck library), a watchdog thread, woken through ``signal.set_wakeup_fd``
  (written by the C-level handler even while the main thread is busy), abandons the call: it
  calls ``on_abandon`` (which closes the MLflow run as KILLED and records the run as
  resumable from its last checkpoint) and exits the process with the same code.

A second signal while the first is being handled abandons at once.

In Python (:func:`wgangp.fit`, a notebook's kernel) a run never exits the process: there is no
watchdog, and a second signal raises :class:`Interrupted` at once instead of abandoning, so an
impatient double interrupt ends the run KILLED and keeps the kernel and its state.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from wgangp.errors import WgangpError

#: Seconds the call in flight may take to finish after a signal before it is abandoned: under
#: the 10 s ``docker stop`` waits before SIGKILL, with time left for the checkpoint.
GRACE_S = 5.0
SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(WgangpError):
    """A signal asked the run to stop; it ends KILLED, resumable with ``trainer.resume=true``."""

    reason = "interrupted"
    label = ""  # "wgangp: interrupted at step ..."

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum
        self.exit_code = 128 + signum  # what a shell reports for a process the signal ended


class Interruption:
    """The signal handlers of one run; ``with Interruption(...) as stop:`` around the run."""

    def __init__(
        self, on_abandon: Callable[[int], None], grace_s: float | None = None, exits: bool = True
    ) -> None:
        self.on_abandon = on_abandon
        #: Whether abandoning exits the process (a command) or a run only raises (in Python).
        self.exits = exits
        if grace_s is None:  # tests shorten it
            grace_s = float(os.environ.get("WGANGP_SIGNAL_GRACE_S", GRACE_S))
        self.grace_s = grace_s
        self.signum: int | None = None
        self._deferred = False
        self._handled = threading.Event()
        self._installed: dict[int, Any] = {}  # what signal.signal returned: handlers, ints
        self._wakeup: tuple[socket.socket, socket.socket] | None = None
        self._previous_fd = -1

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> Interruption:
        if threading.current_thread() is not threading.main_thread():
            return self  # signal handlers can only be installed from the main thread
        reader, writer = socket.socketpair()
        reader.setblocking(True)
        writer.setblocking(False)
        self._wakeup = (reader, writer)
        self._previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        for signum in SIGNALS:
            self._installed[signum] = signal.signal(signum, self._handle)
        if self.exits:
            threading.Thread(target=self._watch, name="wgangp-signals", daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._handled.set()  # the run is over: nothing left to abandon
        for signum, previous in self._installed.items():
            signal.signal(signum, previous)
        self._installed.clear()
        if self._wakeup is not None:
            signal.set_wakeup_fd(self._previous_fd)
            reader, writer = self._wakeup
            writer.close()  # wakes the watcher, which then sees the run is over
            with contextlib.suppress(OSError):
                reader.close()
            self._wakeup = None

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Inside: a signal is only recorded; the caller stops at its next check."""
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False

    def acknowledge(self) -> None:
        """The main thread is handling the signal: the watchdog stands down."""
        self._handled.set()

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is not None and self.exits:
            self._abandon(signum)  # a second signal: stop now
        second = self.signum is not None
        self.signum = signum
        if second or not self._deferred:
            self.acknowledge()
            raise Interrupted(f"interrupted by {signal.Signals(signum).name}", signum)

    def _watch(self) -> None:
        """Wait for the first signal byte; then give the main thread ``grace_s`` seconds."""
        reader = self._wakeup[0] if self._wakeup else None
        if reader is None:
            return
        signum = 0
        while signum not in SIGNALS:  # the wakeup fd carries every signal Python handles
            try:
                data = reader.recv(1)
            except OSError:
                return
            if not data:
                return  # closed: the run is over
            signum = data[0]
        if not self._handled.wait(self.grace_s):
            self._abandon(signum)

    def _abandon(self, signum: int) -> None:
        try:
            self.on_abandon(signum)
        finally:
            os._exit(128 + signum)
