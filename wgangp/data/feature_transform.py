"""The feature transform a run fits: Kaggle's credit-card transform for its file, the schema's
table transform for a user's table. Both map a frame of the internal form
(:mod:`wgangp.data.user_table`) to the networks' space (``transform``) and back
(``inverse_transform``), and save as ``preprocessing.json``."""

from __future__ import annotations

from wgangp.config import PreprocessConfig
from wgangp.data.prepare import PreparedData
from wgangp.data.schema import FEATURES
from wgangp.data.table_transform import TableTransform
from wgangp.data.table_transform_check import FORMAT as TABLE_FORMAT
from wgangp.data.transform import TabularTransformer
from wgangp.data.user_table import internal_schema
from wgangp.files import document_format

FeatureTransform = TabularTransformer | TableTransform


def fit_feature_transform(
    preprocess: PreprocessConfig, data: PreparedData, min_rows: int
) -> FeatureTransform:
    """Fit on ``data.train``: each stored quantile knot the mean of >= ``min_rows`` rows."""
    if not data.user_table:
        return TabularTransformer.from_config(preprocess).fit(data.train, min_rows=min_rows)
    numbers = {c.name for c in data.table.features if c.kind != "categorical"}
    return TableTransform.fit(
        data.train,
        internal_schema(data.table),
        scaling=preprocess.scaling,
        per_class=preprocess.per_class,
        # Kaggle's default (Amount, Time) applies to a table that has such number columns.
        quantile_columns=[c for c in preprocess.quantile_columns if c in numbers],
        source=f"{data.origin} (training rows)",
        min_rows=min_rows,
    )


def network_width(transformer: FeatureTransform) -> int:
    """Columns of the networks' space: the table's layout, or Kaggle's 30 features."""
    if isinstance(transformer, TableTransform):
        return transformer.width
    return len(FEATURES)


def load_feature_transform(text: str, source: str) -> FeatureTransform:
    """A saved ``preprocessing.json`` of either transform, by its format."""
    if document_format(text) == TABLE_FORMAT:
        return TableTransform.from_json(text, source)
    return TabularTransformer.from_json(text, source)
