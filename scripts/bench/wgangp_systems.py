"""Registry of the project's own trainers as benchmark systems (filled in by the trainer's author).

The harness asks ``build(name, size, rows)`` for an object with:
- ``run(steps: int) -> object``: complete ``steps`` generator steps (each = ``size.n_critic``
  critic updates + 1 generator update) and return only when the work is done (read a value back);
- ``steps_per_call: int``: ``run`` is only asked for multiples of it (K for the ``_k`` variants);
- ``flops_per_gen_step() -> float | None`` (e.g. from ``bench.flops.count_flops`` with
  ``loop_trip_count=K``);
- ``notes: list[str]`` and ``settings: dict`` copied into the record.
Until then every name raises NotImplementedError and the harness records it as skipped.
"""

from __future__ import annotations

from typing import Any, Protocol

from bench.common import Rows, Size

#: name -> what it is (shown in the docs and in the harness's --help).
SYSTEMS: dict[str, str] = {
    "wgangp": "the project's trainer, one generator step per tf.function call",
    "wgangp_xla": "the project's trainer compiled with XLA (jit_compile=True)",
    "wgangp_k": "the project's trainer, K generator steps per call in one tf.range loop",
    "wgangp_k_xla": "K steps per call, XLA-compiled",
}


class BenchSystem(Protocol):
    steps_per_call: int
    notes: list[str]
    settings: dict[str, Any]

    def run(self, steps: int) -> object: ...

    def flops_per_gen_step(self) -> float | None: ...


def build(name: str, size: Size, rows: Rows) -> BenchSystem:
    """The system ``name`` at ``size`` on ``rows``."""
    if name not in SYSTEMS:
        raise KeyError(f"unknown wgangp system {name!r}; choose from {', '.join(SYSTEMS)}")
    raise NotImplementedError("wgangp systems are added by the trainer")
