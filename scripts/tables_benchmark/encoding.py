"""The numbers a detector or a distance sees for mixed-type rows: the one place to swap for the
project's mixed-type evaluation (``wgangp.evaluation``) once it has one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from scripts.tables_benchmark.codes import TableCodes


def detection_matrix(codes: TableCodes, rows: pd.DataFrame) -> np.ndarray:
    """Numbers as they are (gaps: the training median and a 0/1 gap column), each categorical
    one-hot over its levels and a gap; what the C2ST and the copy distances read."""
    coded = codes.encode(rows)
    parts, at = [], 0
    for column in codes.columns:
        if column.discrete:
            width = len(column.levels) + 1  # the last: a gap (or a value outside the levels)
            parts.append(np.eye(width)[coded[:, at].astype(int)])
            at += 1
            continue
        parts.append(coded[:, at : at + 1])
        at += 1
        if column.has_gap:
            parts.append(coded[:, at : at + 1])
            at += 1
    return np.hstack(parts) if parts else coded
