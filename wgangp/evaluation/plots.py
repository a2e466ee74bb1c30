"""Figures of the evaluation report, drawn with matplotlib's Agg canvas (no display, no pyplot).

Figures are built as ``matplotlib.figure.Figure`` objects on an explicit Agg canvas, so plotting
never touches pyplot's global state or the user's backend.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from wgangp.data.schema import FEATURES
from wgangp.evaluation.fidelity import correlation_matrix, standardizer
from wgangp.files import write_with

REAL_COLOR = "#1f77b4"
SYNTHETIC_COLOR = "#d62728"


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    return write_with(Path(path), lambda tmp: figure.savefig(tmp, dpi=90, bbox_inches="tight"))


def plot_marginals(real: pd.DataFrame, synthetic: pd.DataFrame, path: Path) -> Path:
    """One grid (5 x 6) of density histograms, real test frauds vs synthetic, all 30 features."""
    figure = Figure(figsize=(18, 14), layout="constrained")
    axes = figure.subplots(5, 6)
    for ax, name in zip(axes.ravel(), FEATURES, strict=True):
        r = real[name].to_numpy(dtype=np.float64)
        s = synthetic[name].to_numpy(dtype=np.float64)
        both = np.concatenate([r, s])
        low, high = np.percentile(both, [0.5, 99.5])
        if not high > low:
            low, high = low - 0.5, high + 0.5
        bins = np.linspace(low, high, 31)
        ax.hist(np.clip(r, low, high), bins=bins, density=True, alpha=0.55, color=REAL_COLOR)
        ax.hist(np.clip(s, low, high), bins=bins, density=True, alpha=0.55, color=SYNTHETIC_COLOR)
        ax.set_title(name, fontsize=10)
        ax.tick_params(labelsize=7)
        ax.set_yticks([])
    axes[0, 0].legend(["real test frauds", "synthetic frauds"], fontsize=8, loc="upper left")
    figure.suptitle(
        "Marginals, real test frauds (blue) vs synthetic frauds (red); density, tails clipped "
        "at the 0.5/99.5 percentiles"
    )
    return _save(figure, path)


def plot_correlations(real: pd.DataFrame, synthetic: pd.DataFrame, path: Path) -> Path:
    """Pearson correlation heatmaps side by side: real, synthetic, absolute difference."""
    real_corr = correlation_matrix(real).to_numpy()
    synthetic_corr = correlation_matrix(synthetic).to_numpy()
    panels = [
        ("real test frauds", real_corr, "coolwarm", -1.0),
        ("synthetic frauds", synthetic_corr, "coolwarm", -1.0),
        ("|difference|", np.abs(real_corr - synthetic_corr), "viridis", 0.0),
    ]
    figure = Figure(figsize=(21, 6.5))
    axes = figure.subplots(1, 3)
    ticks = np.arange(len(FEATURES))
    for ax, (title, matrix, cmap, vmin) in zip(axes, panels, strict=True):
        image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=1.0)
        ax.set_title(title)
        ax.set_xticks(ticks, FEATURES, rotation=90, fontsize=6)
        ax.set_yticks(ticks, FEATURES, fontsize=6)
        figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return _save(figure, path)


def plot_projection(
    real_train_fraud: pd.DataFrame,
    real_test_fraud: pd.DataFrame,
    synthetic: pd.DataFrame,
    path: Path,
) -> Path:
    """First two principal components, fitted on the standardized real training frauds."""
    mean, scale = standardizer(real_train_fraud)
    features = list(FEATURES)

    def standardized(frame: pd.DataFrame) -> np.ndarray:
        return (frame.loc[:, features].to_numpy(dtype=np.float64) - mean) / scale

    fitted = standardized(real_train_fraud)
    center = fitted.mean(axis=0)
    _, singular, components = np.linalg.svd(fitted - center, full_matrices=False)
    explained = singular**2 / max(float(np.sum(singular**2)), 1e-12)
    basis = components[:2].T

    figure = Figure(figsize=(8, 7))
    ax = figure.subplots()
    layers = [
        ("synthetic frauds", synthetic, SYNTHETIC_COLOR, 6, 0.35),
        ("real training frauds", real_train_fraud, "#7f7f7f", 10, 0.6),
        ("real test frauds", real_test_fraud, REAL_COLOR, 14, 0.9),
    ]
    for label, frame, color, size, alpha in layers:
        points = (standardized(frame) - center) @ basis
        ax.scatter(points[:, 0], points[:, 1], s=size, alpha=alpha, color=color, label=label)
    ax.set_xlabel(f"PC1 ({explained[0]:.0%} of the real training frauds' variance)")
    ax.set_ylabel(f"PC2 ({explained[1]:.0%})")
    ax.set_title("PCA projection (fitted on the real training frauds)")
    ax.legend(loc="best", fontsize=9)
    return _save(figure, path)
