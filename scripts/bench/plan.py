"""What a benchmark run measures and for how long; ``--quick`` only keeps the harness exercised."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The chosen systems, sizes and data, and the budgets the harness and the peers run with."""

    systems: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ("default", "small")
    data: str | None = None
    extras: bool = False
    quick: bool = False
    steps: int = 40  # generator steps per timed repeat
    repeats: int = 5
    warmup: int = 5
    peer_timeout: int = 1800  # seconds for one peer's process
    k: int = 100  # generator steps per call of the ``_k`` variants

    @classmethod
    def chosen(
        cls, *, quick: bool = False, steps: int | None = None, repeats: int | None = None, **rest
    ) -> Plan:
        """The budgets of a full run, or of a quick one (few steps, K=2); ``steps`` and
        ``repeats`` given on the command line win. ``rest``: systems, sizes, data, extras."""
        from scripts.bench.wgangp_systems import K_STEPS

        if quick:
            budgets = {"steps": 3, "repeats": 2, "warmup": 1, "peer_timeout": 100, "k": 2}
        else:
            budgets = {"steps": 40, "repeats": 5, "warmup": 5, "peer_timeout": 1800, "k": K_STEPS}
        budgets["steps"] = steps or budgets["steps"]
        budgets["repeats"] = repeats or budgets["repeats"]
        return cls(quick=quick, **budgets, **rest)
