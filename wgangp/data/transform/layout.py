"""Where each feature column of a table lives in the networks' space: its ordered blocks.

A number or datetime is one value wide, a categorical is its one-hot (one slot per level) and a
nullable column adds a one-wide missing indicator right after its values. The layout follows
from the schema alone, not from the rows, so a generator can be built before the transform is
fitted, and the generator's heads (:mod:`wgangp.model.heads`) and the transform agree on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wgangp.data.schema.table_schema import ColumnSchema

#: A block holding a nullable column's missing indicator (1: the cell is empty).
MISSING = "missing"
#: What the generator's head applies to a block of each kind.
ACTIVATIONS = {
    "continuous": "identity",
    "integer": "identity",
    "datetime": "identity",
    "categorical": "softmax",
    MISSING: "sigmoid",
}


@dataclass(frozen=True)
class Block:
    """Columns ``[start, start + width)`` of the networks' space hold ``column``'s ``kind``."""

    column: str
    kind: str
    start: int
    width: int

    @property
    def stop(self) -> int:
        return self.start + self.width

    @property
    def activation(self) -> str:
        return ACTIVATIONS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "kind": self.kind, "start": self.start, "width": self.width}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Block:
        block = cls(str(raw["column"]), str(raw["kind"]), int(raw["start"]), int(raw["width"]))
        if block.kind not in ACTIVATIONS or block.start < 0 or block.width < 1:
            raise ValueError(f"not a layout block: {dict(raw)!r}")
        return block


def table_layout(columns: Iterable[ColumnSchema]) -> tuple[Block, ...]:
    """The blocks of ``columns`` (the features, label excluded) in order."""
    blocks: list[Block] = []
    start = 0
    for column in columns:
        width = len(column.levels or ()) if column.kind == "categorical" else 1
        blocks.append(Block(column.name, column.kind, start, width))
        start += width
        if column.nullable:
            blocks.append(Block(column.name, MISSING, start, 1))
            start += 1
    return tuple(blocks)


def layout_width(layout: Sequence[Block]) -> int:
    """Columns of the networks' space the layout spans."""
    return max((block.stop for block in layout), default=0)


def slot_names(layout: Sequence[Block]) -> list[str]:
    """A name for each column of the networks' space: the column's own for a number, ``name[k]``
    for the k-th level of a one-hot, ``name.missing`` for a missing indicator."""
    names: list[str] = []
    for block in layout:
        if block.kind == MISSING:
            names.append(f"{block.column}.missing")
        elif block.width == 1 and block.kind != "categorical":
            names.append(block.column)
        else:
            names += [f"{block.column}[{k}]" for k in range(block.width)]
    return names


def check_layout(layout: Sequence[Block]) -> None:
    """ValueError unless the blocks tile ``[0, width)`` in order, without gaps or overlaps."""
    start = 0
    for block in layout:
        if block.start != start:
            raise ValueError(f"block {block} starts at {block.start}, expected {start}")
        if block.kind == MISSING and block.width != 1:
            raise ValueError(f"missing indicator of {block.column!r} is {block.width} wide, not 1")
        start = block.stop


def draw_discrete(x: np.ndarray, layout: Sequence[Block], rng: np.random.Generator) -> np.ndarray:
    """Probability rows (the heads in inference mode) -> rows with drawn one-hots and indicators.

    Argmax of a softmax always picks the most likely level, and a threshold on a sigmoid of 0.1
    never leaves a gap: drawing from them is what reproduces the shares of levels and of gaps.
    Continuous blocks pass through.
    """
    out = np.array(x, dtype=np.float32, copy=True)
    rows = len(out)
    for block in layout:
        part = out[:, block.start : block.stop]
        if block.kind == "categorical":
            p = level_probabilities(part)
            chosen = (p.cumsum(axis=1) < rng.random((rows, 1))).sum(axis=1)
            chosen = np.minimum(chosen, block.width - 1)
            part[:] = 0.0
            part[np.arange(rows), chosen] = 1.0
        elif block.kind == MISSING:
            part[:] = rng.random((rows, 1)) < np.clip(part, 0.0, 1.0)
    return out


def level_probabilities(part: np.ndarray) -> np.ndarray:
    """A categorical block's rows as probabilities (float64, rows summing to 1): the heads'
    output with negatives and NaN read as 0; a row of zeros as every level alike."""
    p = np.clip(np.nan_to_num(np.asarray(part, np.float64)), 0.0, None)
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / max(p.shape[1], 1))


def gap_share(x: np.ndarray, layout: Sequence[Block]) -> dict[str, float]:
    """The share of rows whose indicator marks a gap, per nullable column."""
    rows = np.asarray(x)
    return {
        block.column: float(np.mean(rows[:, block.start] > 0.5))
        for block in layout
        if block.kind == MISSING and len(rows)
    }
