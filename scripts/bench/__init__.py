"""The training-throughput benchmark: ``python -m scripts.bench`` from the repo root.

``harness`` times the systems (``naive_loop``, ``wgangp_systems``, ``matmul_probe``; the
``peers`` in their own environments), ``extras`` adds the batch sweep and peak memory, ``report``
writes the JSON and the table. See ``docs/benchmark.md``.
"""
