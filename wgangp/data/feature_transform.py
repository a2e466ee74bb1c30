"""The feature transform a run fits: Kaggle's credit-card transform for its file, the schema's
table transform for a user's table. Both map a frame of the internal form
(:mod:`wgangp.data.user_table`) to the networks' space (``transform``) and back
(``inverse_transform``), and save as ``preprocessing.json``."""

from __future__ import annotations

import difflib

from wgangp.config import KAGGLE_QUANTILE_COLUMNS, PreprocessConfig
from wgangp.data.prepare import PreparedData
from wgangp.data.schema import FEATURES
from wgangp.data.table_schema import TableSchema
from wgangp.data.table_transform import TableTransform
from wgangp.data.table_transform_check import FORMAT as TABLE_FORMAT
from wgangp.data.transform import TabularTransformer
from wgangp.data.user_table import internal_schema
from wgangp.errors import ConfigError
from wgangp.files import document_format

FeatureTransform = TabularTransformer | TableTransform


def fit_feature_transform(
    preprocess: PreprocessConfig, data: PreparedData, min_rows: int
) -> FeatureTransform:
    """Fit on ``data.train``: each stored quantile knot the mean of >= ``min_rows`` rows."""
    if not data.user_table:
        return TabularTransformer.from_config(preprocess).fit(data.train, min_rows=min_rows)
    return TableTransform.fit(
        data.train,
        internal_schema(data.table),
        scaling=preprocess.scaling,
        per_class=preprocess.per_class,
        quantile_columns=table_quantile_columns(preprocess.quantile_columns, data.table),
        source=f"{data.origin} (training rows)",
        min_rows=min_rows,
    )


def table_quantile_columns(names: list[str], table: TableSchema) -> list[str]:
    """``preprocess.quantile_columns`` on a user's table: each must be one of its number
    columns; Kaggle's default (Amount, Time) applies to whichever of them the table has."""
    numbers = [c.name for c in table.features if c.kind != "categorical"]
    if tuple(names) == KAGGLE_QUANTILE_COLUMNS:
        return [name for name in names if name in numbers]
    for name in names:
        if name not in numbers:
            close = difflib.get_close_matches(name, numbers, n=1)
            listed = f"its number columns: {', '.join(numbers)}"
            fix = f"did you mean {close[0]!r}?" if close else listed
            raise ConfigError(
                f"invalid config value preprocess.quantile_columns: {name!r} is not a number "
                f"column of the table; {fix}"
            )
    return list(names)


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
