"""Disclosure as SDMetrics measures it: membership inference (DCR) and attribute inference (CAP).

The near and exact copies (:mod:`wgangp.evaluation.disclosure`) are this project's own distances;
these two are the field's library's, so a reader can compare them with other generators' reports.

- ``dcr_overfitting_protection``: SDMetrics' ``DCROverfittingProtection``. Each synthetic rare row
  is called closer to the training rare rows or to held-out real ones (the test split's) by its
  distance to the closest record in each; the score is ``min(1, 2 * share closer to holdout)``:
  1 when a synthetic row is no likelier to sit by a training rare row than by an unseen one (an
  attacker holding a real row learns nothing about its membership from nearby synthetic rows),
  0 when every synthetic row sits by a training rare row. The two reference sets must be the same
  size or the larger one wins by count alone, and a customer with many rows would weigh as many
  customers, so each repeat draws ENTITIES (:mod:`wgangp.data.entities`): one random row of each
  drawn entity, as many training rare entities as held-out ones (the fewer of the two counts,
  seeded; the library's own subsampling is not). With each row its own entity this is the draw
  of rows it replaced, on the same seed. The mean over ``evaluate.dcr_repeats`` draws, and its
  spread (``_std``) over them.
- ``disclosure_protection``: SDMetrics' ``DisclosureProtection`` with the CAP attack. An attacker
  who knows some columns of a training rare row (quasi-identifiers, as a card's time and amount
  are to a merchant) looks up synthetic rows with the same values and guesses a sensitive column
  from theirs; numbers in 10 bins of the training rare rows' range. 1 when the guess is no better
  than chance, lower as it improves. The attack columns come from the schema and the training
  rare-class rows: the sensitive column is the categorical column with the most levels (CAP
  guesses categories; the first such column on a tie), or, in a table without categories, the
  number with the most distinct values; the attacker knows the two numeric columns with the most
  distinct values among the rest. A gap is a value of its own. A table with one feature has no
  attack.

Both are computed for the GAN's rows and for each baseline's (``_smote``, ``_copula``).
"""

from __future__ import annotations

import warnings
from typing import TypeAlias

import numpy as np
import pandas as pd

from wgangp.data.entities import identical_row_groups
from wgangp.data.schema.table_schema import TableSchema
from wgangp.evaluation.encoding import NUMBER_KINDS, seconds
from wgangp.evaluation.pieces import Piece

#: Bins per column of the disclosure attack (SDMetrics' default).
BINS = 10
#: Repeats of the DCR comparison, each with a fresh equal-sized draw of entities.
DCR_REPEATS = 5

Rows: TypeAlias = np.ndarray | pd.DataFrame


def attack_columns(schema: TableSchema, train: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(known, sensitive) columns of the disclosure attack (module doc); ([], []) for none."""
    features = schema.features
    distinct = {c.name: train[c.name].nunique(dropna=True) for c in features}
    categoricals = [c for c in features if c.kind == "categorical"]
    numbers = sorted(
        (c.name for c in features if c.kind in NUMBER_KINDS), key=lambda n: -distinct[n]
    )
    if categoricals:
        sensitive = max(categoricals, key=lambda c: len(c.levels or ())).name
    elif numbers:
        sensitive = numbers[0]
    else:
        return [], []
    known = [name for name in numbers if name != sensitive][:2]
    if not known:  # only categories: the attacker knows the other categorical columns
        known = [c.name for c in categoricals if c.name != sensitive][:2]
    return (known, [sensitive]) if known else ([], [])


def _metadata(schema: TableSchema) -> dict:
    return {
        "columns": {
            c.name: {"sdtype": "categorical" if c.kind == "categorical" else "numerical"}
            for c in schema.features
        }
    }


def one_row_per_entity(owners: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Row indices: ``size`` distinct entities of ``owners`` (one code per row) drawn without
    replacement, one random row of each.

    Entities are numbered by first appearance and a second draw is made only when some entity
    has more than one row, so with one row each this is ``rng.choice(rows, size)``: the
    row-based draw, same seed, same rows.
    """
    groups, _ = pd.factorize(np.asarray(owners))
    counts = np.bincount(groups)
    starts = np.cumsum(counts) - counts
    order = np.argsort(groups, kind="stable")
    picked = rng.choice(len(counts), size, replace=False)
    offsets = rng.integers(0, counts[picked]) if counts.max() > 1 else 0
    return order[starts[picked] + offsets]


def dcr_overfitting_protection(
    synthetic: Rows,
    train: Rows,
    holdout: Rows,
    seed: int,
    schema: TableSchema,
    *,
    repeats: int = DCR_REPEATS,
    train_owners: np.ndarray | None = None,
    holdout_owners: np.ndarray | None = None,
) -> tuple[float, float]:
    """(score, share of synthetic rows closer to the training rows), means over ``repeats``
    draws; frames of the table's features, or arrays of them in the schema's order.
    ``*_owners``: each row's entity (None: rows identical in every feature are one)."""
    scores, closer = dcr_repeat_scores(
        synthetic, train, holdout, seed, schema, repeats=repeats,
        train_owners=train_owners, holdout_owners=holdout_owners,
    )  # fmt: skip
    return float(np.mean(scores)), float(np.mean(closer))


def dcr_repeat_scores(
    synthetic: Rows,
    train: Rows,
    holdout: Rows,
    seed: int,
    schema: TableSchema,
    *,
    repeats: int = DCR_REPEATS,
    train_owners: np.ndarray | None = None,
    holdout_owners: np.ndarray | None = None,
) -> tuple[list[float], list[float]]:
    """Each draw's score and share closer to the training rows, in draw order
    (:func:`dcr_overfitting_protection`)."""
    from sdmetrics.single_table import DCROverfittingProtection

    rng = np.random.default_rng(seed)
    train, holdout = _frame(train, schema), _frame(holdout, schema)
    train_owners = _owners(train, train_owners)
    holdout_owners = _owners(holdout, holdout_owners)
    size = min(len(np.unique(train_owners)), len(np.unique(holdout_owners)))
    frame = _frame(synthetic, schema)
    metadata = _metadata(schema)
    scores, closer = [], []
    for _ in range(repeats):
        train_rows = _rows(train, one_row_per_entity(train_owners, size, rng))
        holdout_rows = _rows(holdout, one_row_per_entity(holdout_owners, size, rng))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = DCROverfittingProtection.compute_breakdown(
                train_rows, frame, holdout_rows, metadata
            )
        scores.append(float(result["score"]))
        closer.append(float(result["synthetic_data_percentages"]["closer_to_training"]))
    return scores, closer


def disclosure_protection(synthetic: Rows, train: Rows, schema: TableSchema) -> float:
    """SDMetrics' CAP disclosure protection of the training rare rows (module doc); NaN when
    the table has no attack columns."""
    from sdmetrics.single_table import DisclosureProtection

    train = _frame(train, schema)
    known, sensitive = attack_columns(schema, train)
    if not known:
        return float("nan")
    columns = [*known, *sensitive]
    continuous = [c.name for c in schema.features if c.name in columns and c.kind != "categorical"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            DisclosureProtection.compute(
                train[columns],
                _frame(synthetic, schema)[columns],
                known_column_names=known,
                sensitive_column_names=sensitive,
                continuous_column_names=continuous,
                num_discrete_bins=BINS,
            )
        )


def generator_disclosure(
    synthetic: Rows,
    train: Rows,
    holdout: Rows,
    schema: TableSchema,
    *,
    seed: int,
    repeats: int = DCR_REPEATS,
    train_owners: np.ndarray | None = None,
    holdout_owners: np.ndarray | None = None,
) -> tuple[list[float], list[float], float]:
    """(each draw's DCR overfitting protection and share closer to training, the disclosure
    protection) of one generator's rows: one piece of :func:`library_disclosure`."""
    scores, closer = dcr_repeat_scores(
        synthetic,
        train,
        holdout,
        seed,
        schema,
        repeats=repeats,
        train_owners=train_owners,
        holdout_owners=holdout_owners,
    )
    return scores, closer, disclosure_protection(synthetic, train, schema)


def library_disclosure_pieces(
    generated: dict[str, Rows],
    train: Rows,
    holdout: Rows,
    schema: TableSchema,
    *,
    seed: int,
    repeats: int = DCR_REPEATS,
    train_owners: np.ndarray | None = None,
    holdout_owners: np.ndarray | None = None,
) -> list[Piece]:
    """One piece per generator of ``generated``, then the held-out rows' disclosure protection
    (the reference), in the order :func:`library_disclosure_results` reads them."""
    owners = {"train_owners": train_owners, "holdout_owners": holdout_owners}
    pieces = [
        Piece(
            "disclosure_sdmetrics",
            generator_disclosure,
            (synthetic, train, holdout, schema),
            {"seed": seed, "repeats": repeats, **owners},
            cost=float(repeats * len(synthetic) * len(holdout)),
        )
        for synthetic in generated.values()
    ]
    reference = Piece(
        "disclosure_sdmetrics", disclosure_protection, (holdout, train, schema), cost=len(holdout)
    )
    return [*pieces, reference]


def library_disclosure_results(
    names: list[str], found: list
) -> tuple[dict[str, float], pd.DataFrame]:
    """The metrics and table from the results of :func:`library_disclosure_pieces`, in order."""
    metrics: dict[str, float] = {}
    rows = []
    for name, (scores, shares, disclosure) in zip(names, found[:-1], strict=True):
        suffix = f"_{name}" if name else ""
        score, closer = float(np.mean(scores)), float(np.mean(shares))
        metrics[f"dcr_overfitting_protection{suffix}"] = score
        metrics[f"dcr_overfitting_protection{suffix}_std"] = float(np.std(scores))
        if np.isfinite(disclosure):
            metrics[f"disclosure_protection{suffix}"] = disclosure
        rows.append(
            {
                "rows": name or "gan",
                "dcr_overfitting_protection": score,
                "dcr_overfitting_protection_std": float(np.std(scores)),
                "dcr_draws": len(scores),
                "closer_to_training": closer,
                "disclosure_protection": disclosure,
            }
        )
    rows.append(
        {
            "rows": "real_test_rare (reference)",
            "dcr_overfitting_protection": float("nan"),
            "dcr_overfitting_protection_std": float("nan"),
            "dcr_draws": 0,
            "closer_to_training": float("nan"),
            "disclosure_protection": found[-1],
        }
    )
    return metrics, pd.DataFrame(rows)


def library_disclosure(
    generated: dict[str, Rows],
    train: Rows,
    holdout: Rows,
    schema: TableSchema,
    *,
    seed: int,
    repeats: int = DCR_REPEATS,
    train_owners: np.ndarray | None = None,
    holdout_owners: np.ndarray | None = None,
) -> tuple[dict[str, float], pd.DataFrame]:
    """Both metrics for each generator in ``generated`` (name -> rows; "" is the GAN's), named
    ``dcr_overfitting_protection{_name}`` and ``disclosure_protection{_name}``, and a table with
    the held-out real rare rows' disclosure protection as the reference a fresh real sample
    gets. ``*_owners``: each training and held-out row's entity (None: identical rows are one).
    ``repeats``: the DCR comparison's draws. Here, one piece after another; the suite runs the
    pieces on its workers."""
    pieces = library_disclosure_pieces(
        generated, train, holdout, schema, seed=seed, repeats=repeats,
        train_owners=train_owners, holdout_owners=holdout_owners,
    )  # fmt: skip
    found = [p.call(*p.args, **p.kwargs) for p in pieces]
    return library_disclosure_results(list(generated), found)


def _frame(rows: Rows, schema: TableSchema) -> pd.DataFrame:
    """The features as SDMetrics reads them: datetimes as seconds, arrays as the schema's
    features in order."""
    if not isinstance(rows, pd.DataFrame):
        names = [c.name for c in schema.features]
        return pd.DataFrame(np.asarray(rows, np.float64), columns=names)
    out = rows.loc[:, [c.name for c in schema.features]].reset_index(drop=True)
    for column in schema.features:
        if column.kind == "datetime":
            out[column.name] = seconds(out[column.name])
    return out


def _rows(frame: pd.DataFrame, picks: np.ndarray) -> pd.DataFrame:
    return frame.iloc[picks].reset_index(drop=True)


def _owners(frame: pd.DataFrame, owners: np.ndarray | None) -> np.ndarray:
    """The given entities, checked against the rows; else rows identical in every feature."""
    if owners is None:
        return identical_row_groups(frame)
    owners = np.asarray(owners)
    if len(owners) != len(frame):
        raise ValueError(f"{len(owners)} entity codes for {len(frame)} rows")
    return owners
