"""Benchmark harness pieces: the naive-loop baseline, FLOP counting, the matmul probe, the peers.

Run through ``scripts/benchmark.py``; see ``docs/benchmark.md``.
"""
