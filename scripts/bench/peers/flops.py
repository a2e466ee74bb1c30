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


def _matmul_shape(op: tf.Operation) -> tuple[int, int, int, int, bool, bool] | None:
    """(batch, m, k, n, transpose_a, transpose_b) of a matmul op, or None if not static."""
    a, b = (t.shape for t in op.inputs[:2])
    if a.rank is None or b.rank is None or not a.is_fully_defined() or not b.is_fully_defined():
        return None
    if op.type == "MatMul":
        ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
        batch = 1
    else:
        ta, tb = op.get_attr("adj_x"), op.get_attr("adj_y")
        batch_shape = tf.broadcast_static_shape(a[:-2], b[:-2])
        batch = int(batch_shape.num_elements())
    m, k = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    n = b[-2] if tb else b[-1]
    return batch, int(m), int(k), int(n), bool(ta), bool(tb)


def _called_functions(op: tf.Operation) -> list[tuple[str, bool, bool]]:
    """(function name, is a loop body, is one of alternative branches) for each call in ``op``."""
    calls = []
    for attr in op.node_def.attr.values():
        names = []
        if attr.HasField("func"):
            names.append(attr.func.name)
        if attr.HasField("list"):
            names.extend(f.name for f in attr.list.func)
        for name in names:
            calls.append(name)
    if op.type in LOOP_OPS:
        body = op.node_def.attr["body"].func.name
        cond = op.node_def.attr["cond"].func.name
        return [(body, True, False), (cond, True, False)]
    if op.type in BRANCH_OPS:
        return [(name, False, True) for name in calls]
    return [(name, False, False) for name in calls]


class _Counter:
    def __init__(self, graph_def: tf.compat.v1.GraphDef, loop_trip_count: int) -> None:
        self.fdefs = {f.signature.name: f for f in graph_def.library.function}
        self.loop_trip_count = loop_trip_count
        self.cache: dict[str, FlopCount] = {}

    def function(self, name: str) -> FlopCount:
        if name not in self.cache:
            fdef = self.fdefs.get(name)
            self.cache[name] = FlopCount()  # guards against recursion
            if fdef is not None:
                self.cache[name] = self.graph(function_def_to_graph(fdef))
        return self.cache[name]

    def graph(self, graph: tf.Graph) -> FlopCount:
        total = FlopCount()
        for op in graph.get_operations():
            if op.type in MATMUL_OPS:
                shape = _matmul_shape(op)
                total.matmuls += 1
                if shape is None:
                    total.unknown_shape_matmuls += 1
                    continue
                batch, m, k, n, ta, tb = shape
                total.flops += 2 * batch * m * k * n
                total.shapes[(m, k, n, ta, tb)] += batch
                continue
            calls = _called_functions(op)
            branches = [self.function(name) for name, _, is_branch in calls if is_branch]
            if branches:
                total.add(max(branches, key=lambda c: c.flops))
            for name, is_loop, is_branch in calls:
                if not is_branch:
                    total.add(self.function(name), self.loop_trip_count if is_loop else 1)
        return total


def count_flops(concrete_function, loop_trip_count: int = 1) -> FlopCount:
    """Matmul FLOPs of one call of ``concrete_function`` (from ``fn.get_concrete_function(...)``).

    ``loop_trip_count`` multiplies every while-loop body (nested loops multiply again).
    """
    graph = concrete_function.graph
    counter = _Counter(graph.as_graph_def(), loop_trip_count)
    return counter.graph(graph)
