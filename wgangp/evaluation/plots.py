"""Figures of the evaluation report, drawn with matplotlib's Agg canvas (no display, no pyplot).

Figures are built as ``matplotlib.figure.Figure`` objects on an explicit Agg canvas, so plotting
never touches pyplot's global state or the user's backend. Every figure follows the table's
schema: numbers (datetimes as seconds) as histograms of their present values, categorical columns
as bar charts of their level shares (gaps left out; the fidelity table has their shares), the
correlations of the numeric columns, and the projection of the encoded rows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from wgangp.data.schema.table_schema import ColumnSchema, TableSchema
from wgangp.evaluation.encoding import TableEncoding, level_codes, seconds
from wgangp.evaluation.fidelity import correlation_matrix, numeric_names
from wgangp.files import write_with

REAL_COLOR = "#1f77b4"
SYNTHETIC_COLOR = "#d62728"


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    return write_with(Path(path), lambda tmp: figure.savefig(tmp, dpi=90, bbox_inches="tight"))


def plot_marginals(
    real: pd.DataFrame, synthetic: pd.DataFrame, path: Path, schema: TableSchema
) -> Path:
    """One grid of panels, real test rare-class rows vs synthetic, one per feature (5 x 6 for
    Kaggle's 30): density histograms for numbers, bar charts of level shares for categories."""
    features = schema.features
    n_cols = 6 if len(features) > 16 else min(4, len(features))
    n_rows = math.ceil(len(features) / n_cols)
    figure = Figure(figsize=(3 * n_cols, 2.8 * n_rows), layout="constrained")
    axes = np.atleast_1d(figure.subplots(n_rows, n_cols)).ravel()
    for ax, column in zip(axes, features, strict=False):
        if column.kind == "categorical":
            _bars(ax, real[column.name], synthetic[column.name], column)
        else:
            _histogram(ax, seconds(real[column.name]), seconds(synthetic[column.name]))
        ax.set_title(column.name, fontsize=10)
        ax.tick_params(labelsize=7)
        ax.set_yticks([])
    for ax in axes[len(features) :]:
        ax.set_visible(False)
    axes[0].legend(["real test rare-class rows", "synthetic rows"], fontsize=8, loc="upper left")
    figure.suptitle(
        "Marginals, real test rare-class rows (blue) vs synthetic rows (red); density, tails "
        "clipped at the 0.5/99.5 percentiles"
    )
    return _save(figure, path)


def _histogram(ax: Any, r: np.ndarray, s: np.ndarray) -> None:
    r, s = r[~np.isnan(r)], s[~np.isnan(s)]
    both = np.concatenate([r, s])
    if not len(both):
        return
    low, high = np.percentile(both, [0.5, 99.5])
    if not high > low:
        low, high = low - 0.5, high + 0.5
    bins = np.linspace(low, high, 31)
    ax.hist(np.clip(r, low, high), bins=bins, density=True, alpha=0.55, color=REAL_COLOR)
    ax.hist(np.clip(s, low, high), bins=bins, density=True, alpha=0.55, color=SYNTHETIC_COLOR)


def _bars(ax: Any, real: pd.Series, synthetic: pd.Series, column: ColumnSchema) -> None:
    levels = [str(level) for level in column.levels or ()]
    at = np.arange(len(levels))
    for offset, values, color in ((-0.2, real, REAL_COLOR), (0.2, synthetic, SYNTHETIC_COLOR)):
        codes = level_codes(values, column)
        codes = codes[codes >= 0]
        shares = np.bincount(codes, minlength=len(levels)) / max(len(codes), 1)
        ax.bar(at + offset, shares, width=0.4, alpha=0.8, color=color)
    ax.set_xticks(at, levels, rotation=45, fontsize=7)


def plot_correlations(
    real: pd.DataFrame, synthetic: pd.DataFrame, path: Path, schema: TableSchema
) -> Path:
    """Pearson correlation heatmaps of the numeric columns side by side: real, synthetic,
    absolute difference."""
    real_corr = correlation_matrix(real, schema).to_numpy()
    synthetic_corr = correlation_matrix(synthetic, schema).to_numpy()
    names = numeric_names(schema)
    panels = [
        ("real test rare-class rows", real_corr, "coolwarm", -1.0),
        ("synthetic rows", synthetic_corr, "coolwarm", -1.0),
        ("|difference|", np.abs(real_corr - synthetic_corr), "viridis", 0.0),
    ]
    figure = Figure(figsize=(21, 6.5))
    axes = figure.subplots(1, 3)
    ticks = np.arange(len(names))
    for ax, (title, matrix, cmap, vmin) in zip(axes, panels, strict=True):
        image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=1.0)
        ax.set_title(title)
        ax.set_xticks(ticks, names, rotation=90, fontsize=6)
        ax.set_yticks(ticks, names, fontsize=6)
        figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return _save(figure, path)


def plot_projection(
    real_train_rare: pd.DataFrame,
    real_test_fraud: pd.DataFrame,
    synthetic: pd.DataFrame,
    path: Path,
    schema: TableSchema,
) -> Path:
    """First two principal components, fitted on the real training rare-class rows in the
    evaluation's mixed-type distance space (standardized numbers, scaled one-hot columns)."""
    standardized = TableEncoding(schema, real_train_rare).distance_matrix

    fitted = standardized(real_train_rare)
    center = fitted.mean(axis=0)
    _, singular, components = np.linalg.svd(fitted - center, full_matrices=False)
    explained = singular**2 / max(float(np.sum(singular**2)), 1e-12)
    basis = np.zeros((fitted.shape[1], 2))
    basis[:, : min(2, len(components))] = components[:2].T
    explained = np.pad(explained, (0, 2))

    figure = Figure(figsize=(8, 7))
    ax = figure.subplots()
    layers = [
        ("synthetic rows", synthetic, SYNTHETIC_COLOR, 6, 0.35),
        ("real training rare-class rows", real_train_rare, "#7f7f7f", 10, 0.6),
        ("real test rare-class rows", real_test_fraud, REAL_COLOR, 14, 0.9),
    ]
    for label, frame, color, size, alpha in layers:
        points = (standardized(frame) - center) @ basis
        ax.scatter(points[:, 0], points[:, 1], s=size, alpha=alpha, color=color, label=label)
    ax.set_xlabel(f"PC1 ({explained[0]:.0%} of the real training rare-class rows' variance)")
    ax.set_ylabel(f"PC2 ({explained[1]:.0%})")
    ax.set_title("PCA projection (fitted on the real training rare-class rows)")
    ax.legend(loc="best", fontsize=9)
    return _save(figure, path)
