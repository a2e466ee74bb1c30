"""FLOPs of a traced ``tf.function``, counted from its graph: 2*M*N*K for every matmul.

Only MatMul and BatchMatMul are counted (nearly all of an MLP GAN step's arithmetic); shapes
are the static input shapes of each op. Functions the graph calls (``PartitionedCall``, ``While``
bodies, ``If`` branches, ...) live in ``graph.as_graph_def().library.function``; each is rebuilt
as a graph to read its shapes, and a ``While`` body counts ``loop_trip_count`` times (the caller
knows the trip count; the graph does not).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import tensorflow as tf
from tensorflow.python.framework.function_def_to_graph import function_def_to_graph

MATMUL_OPS = {"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}
LOOP_OPS = {"While", "StatelessWhile"}
BRANCH_OPS = {"If", "StatelessIf", "Case", "StatelessCase"}


@dataclass
class FlopCount:
    """Matmul FLOPs, number of matmul ops executed, and matmuls whose shape was not static."""

    flops: int = 0
    matmuls: int = 0
    unknown_shape_matmuls: int = 0
    #: (m, k, n, transpose_a, transpose_b) -> how many times it runs; used by the matmul probe.
    shapes: Counter = field(default_factory=Counter)

    def add(self, other: FlopCount, times: int = 1) -> None:
        self.flops += other.flops * times
        self.matmuls += other.matmuls * times
        self.unknown_shape_matmuls += other.unknown_shape_matmuls * times
        for key, count in other.shapes.items():
            self.shapes[key] += count * times

    def add_matmul(self, op: tf.Operation) -> None:
        """One matmul op, counted from its static input shapes (if they are static)."""
        self.matmuls += 1
        a, b = (t.shape for t in op.inputs[:2])
        if not (a.is_fully_defined() and b.is_fully_defined()):
            self.unknown_shape_matmuls += 1
            return
        batch = 1
        if op.type == "MatMul":
            ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
        else:
            ta, tb = op.get_attr("adj_x"), op.get_attr("adj_y")
            batch = int(tf.broadcast_static_shape(a[:-2], b[:-2]).num_elements())
        m, k = (a[-1], a[-2]) if ta else (a[-2], a[-1])
        n = b[-2] if tb else b[-1]
        self.flops += 2 * batch * int(m) * int(k) * int(n)
        self.shapes[(int(m), int(k), int(n), bool(ta), bool(tb))] += batch


def _called(op: tf.Operation) -> list[str]:
    """The functions ``op`` calls (loop bodies and conditions, branches, partitioned calls)."""
    names = []
    for attr in op.node_def.attr.values():
        if attr.HasField("func"):
            names.append(attr.func.name)
        if attr.HasField("list"):
            names.extend(f.name for f in attr.list.func)
    return names


def count_flops(concrete_function, loop_trip_count: int = 1) -> FlopCount:
    """Matmul FLOPs of one call of ``concrete_function`` (from ``fn.get_concrete_function(...)``);
    ``loop_trip_count`` multiplies every while-loop body (nested loops multiply again)."""
    graph = concrete_function.graph
    fdefs = {f.signature.name: f for f in graph.as_graph_def().library.function}
    cache: dict[str, FlopCount] = {}

    def function(name: str) -> FlopCount:
        if name not in cache:
            cache[name] = FlopCount()  # guards against recursion
            if name in fdefs:
                cache[name] = count(function_def_to_graph(fdefs[name]))
        return cache[name]

    def count(g: tf.Graph) -> FlopCount:
        total = FlopCount()
        for op in g.get_operations():
            if op.type in MATMUL_OPS:
                total.add_matmul(op)
            elif op.type in BRANCH_OPS:
                branches = [function(name) for name in _called(op)]
                if branches:
                    total.add(max(branches, key=lambda c: c.flops))
            else:
                times = loop_trip_count if op.type in LOOP_OPS else 1
                for name in _called(op):
                    total.add(function(name), times)
        return total

    return count(graph)
