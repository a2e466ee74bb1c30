"""The training-throughput benchmark: ``python -m scripts.bench`` from the repo root.

``harness`` times the systems (``naive_loop``, ``wgangp_systems``, ``matmul_probe`` in this
process; the ``peers`` in their own environments) as its ``Plan`` says, ``peak_rss`` measures
memory in a fresh process, ``report`` writes the JSON and the table. See ``docs/benchmark.md``.
"""
