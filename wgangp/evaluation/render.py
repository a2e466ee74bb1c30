"""Short human report of an evaluation: ``report.md`` and a self-contained-looking ``report.html``.

One explanation line per metric family says what the numbers mean and which direction is good;
the tables are the ones written as CSV beside the report.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from wgangp.tracking.names import EVAL, metric

#: (title, explanation, metric names without the ``eval/`` section, tables shown)
SECTIONS: list[tuple[str, str, list[str], list[str]]] = [
    (
        "Utility: rare-class detector trained with the synthetic rows vs SMOTE and a copula",
        "Detectors (gradient boosting = main, logistic regression = `_logreg`) trained on real "
        "rows plus added rare-class rows, scored on the held-out real test rows; PR-AUC is the "
        "headline (higher is better; lift = augmented minus baseline, > 0 means the synthetic "
        "rows help). `augmented` = the headline ratio, fixed in advance; SMOTE (SMOTE-NC on a "
        "table with categories or gaps), a Gaussian copula of the training rare-class rows, "
        "independently resampled columns (`independent`) and random oversampling add the same "
        "number of rows. Mean ± std over repeats.",
        [
            "pr_auc_real",
            "pr_auc_augmented",
            "pr_auc_smote",
            "pr_auc_copula",
            "pr_auc_independent",
            "pr_auc_ros",
            "pr_auc_tstr",
            "lift_vs_real",
            "lift_vs_smote",
            "lift_vs_copula",
            "lift_vs_independent",
            "lift_vs_ros",
            "roc_auc_real",
            "roc_auc_augmented",
            "roc_auc_smote",
        ],
        ["utility"],
    ),
    (
        "Fidelity: marginals and correlations vs real test rare-class rows",
        "KS statistic per numeric feature on its present values (0 = same distribution, 1 = "
        "disjoint), Wasserstein-1 on features standardized by the real training rare-class rows "
        "(in rare-class standard deviations), total variation distance of each categorical "
        "column's level shares (`tv_`), absolute difference of the share of gaps per nullable "
        "column in percentage points (`gap_share_diff_`), mean absolute gap of off-diagonal "
        "Pearson correlations of the numeric columns; lower is better. SDMetrics' quality "
        "scores are in [0, 1], higher is better.",
        [
            "ks_mean",
            "ks_complement",
            "wasserstein_mean",
            "corr_diff",
            "tv_mean",
            "tv_max",
            "gap_share_diff_mean",
            "gap_share_diff_max",
            "sdm_quality_score",
            "sdm_column_shapes",
            "sdm_column_pair_trends",
        ],
        ["fidelity_per_feature"],
    ),
    (
        "Detection: can a classifier tell synthetic from real rare-class rows (C2ST)?",
        "ROC-AUC of classifiers separating the real test rare-class rows from generated ones, "
        "fitted on a random half of both sets and scored on the other half, mean ± std over "
        "repeats: 0.5 = indistinguishable (best), 1.0 = every generated row is recognisable. "
        "`_control` is the same protocol on the test rare-class rows against the training ones: "
        "the floor with this little data. `_smote`, `_copula` and `_independent` judge the "
        "baselines' rows the same way. `c2st_auc_` uses every generated row against the test "
        "rare-class rows (the protocol of earlier runs); `c2st_balanced_auc_` is the standard "
        "C2ST on equal numbers of real and generated rows (a fresh draw of the larger set per "
        "repeat; `detection_balanced.csv` gives the rows each score rests on).",
        [
            "c2st_auc_gbm",
            "c2st_auc_gbm_control",
            "c2st_auc_gbm_smote",
            "c2st_auc_gbm_copula",
            "c2st_auc_gbm_independent",
            "c2st_auc_logreg",
            "c2st_auc_logreg_control",
            "c2st_balanced_auc_gbm",
            "c2st_balanced_auc_gbm_control",
            "c2st_balanced_auc_gbm_smote",
            "c2st_balanced_auc_gbm_copula",
            "c2st_balanced_auc_gbm_independent",
        ],
        [],
    ),
    (
        "Disclosure: distance to the closest real training row (DCR)",
        "Synthetic rows should be about as far from the training rows as genuinely new real "
        "rare-class rows (the test ones, `real_test_rare`) are: dcr_ratio near 1 is good, well "
        "below 1 suggests memorisation; dcr_share_below_p5 should be near 0.05; exact_copies "
        "should be 0. near_copies: the share of generated rows nearer a training rare-class row "
        "than 95% of the test rare-class entities are (customers of data.entity; without it, "
        "identical rows count once; about 0.05 for rows as new as new real ones), for the "
        "baselines too.",
        [
            "dcr_synthetic_median",
            "dcr_baseline_median",
            "dcr_ratio",
            "dcr_share_below_p5",
            "exact_copies",
            "near_copies",
            "near_copies_smote",
            "near_copies_copula",
            "near_copies_independent",
        ],
        ["disclosure"],
    ),
    (
        "Disclosure: SDMetrics' membership and attribute inference",
        "dcr_overfitting_protection (DCROverfittingProtection): min(1, 2 x the share of "
        "synthetic rows closer to held-out test rare-class rows than to as many training ones); "
        "1 = no closer to the training rows than to unseen ones. disclosure_protection "
        "(DisclosureProtection, CAP): an attacker knowing two columns of a training rare-class "
        "row guesses a third from the synthetic rows, 10 bins each (the columns chosen by one "
        "rule for every table, docs/evaluation.md); 1 = no better than chance. The table gives "
        "the held-out real rare-class rows' disclosure protection as the reference. Higher is "
        "better; `_smote` and `_copula` judge the baselines' rows the same way.",
        [
            "dcr_overfitting_protection",
            "dcr_overfitting_protection_smote",
            "dcr_overfitting_protection_copula",
            "dcr_overfitting_protection_independent",
            "disclosure_protection",
            "disclosure_protection_smote",
            "disclosure_protection_copula",
            "disclosure_protection_independent",
        ],
        ["disclosure_sdmetrics"],
    ),
]

TITLE = "Evaluation of the synthetic rare-class rows"
INTRO = (
    "All comparisons use real rows that neither the GAN nor any fitted transform has seen "
    "(the test split)."
)
_STYLE = (
    "<style>body{font-family:sans-serif;max-width:1200px;margin:2em auto}"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;"
    "border-bottom:1px solid #ddd;text-align:right}img{max-width:100%}</style>"
)

FIGURES = [
    ("marginals.png", "Marginal distributions, real test rare-class rows vs synthetic"),
    ("correlations.png", "Correlation matrices"),
    ("projection.png", "PCA projection"),
]


def format_value(value: object) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}"
    return str(value)


def metric_cell(metrics: dict[str, float], name: str) -> str:
    value = format_value(metrics[metric(EVAL, name)])
    std = metrics.get(metric(EVAL, f"{name}_std"))
    return f"{value} ± {format_value(std)}" if std is not None else value


def markdown_table(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(format_value(v) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])


def metrics_frame(metrics: dict[str, float], names: list[str]) -> pd.DataFrame:
    present = [n for n in names if metric(EVAL, n) in metrics]
    return pd.DataFrame(
        {
            "metric": [metric(EVAL, n) for n in present],
            "value": [metric_cell(metrics, n) for n in present],
        }
    )


def sections(
    metrics: dict[str, float], tables: dict[str, pd.DataFrame]
) -> list[tuple[str, str, pd.DataFrame, list[tuple[str, pd.DataFrame]]]]:
    """Each report section: title, explanation, its metrics, and the tables it shows."""
    return [
        (
            title,
            explanation,
            metrics_frame(metrics, names),
            [(name, tables[name]) for name in table_names if name in tables],
        )
        for title, explanation, names, table_names in SECTIONS
    ]


def render_markdown(
    metrics: dict[str, float], tables: dict[str, pd.DataFrame], figures: list[str]
) -> str:
    lines = [
        f"# {TITLE}",
        "",
        f"{INTRO} Every number is also in `metrics.csv`; tables are CSV files beside this report.",
    ]
    for title, explanation, frame, shown in sections(metrics, tables):
        lines += ["", f"## {title}", "", explanation, "", markdown_table(frame)]
        for name, table in shown:
            lines += ["", f"`{name}.csv`:", "", markdown_table(table)]
    lines += ["", "## Figures", ""]
    lines += [f"![{caption}]({name})" for name, caption in FIGURES if name in figures]
    return "\n".join(lines) + "\n"


def html_table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, border=0, float_format=lambda v: f"{v:.4g}")


def render_html(
    metrics: dict[str, float], tables: dict[str, pd.DataFrame], figures: list[str]
) -> str:
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{TITLE}</title>{_STYLE}",
        f"</head><body><h1>{TITLE}</h1><p>{html.escape(INTRO)}</p>",
    ]
    for title, explanation, frame, shown in sections(metrics, tables):
        parts += [f"<h2>{html.escape(title)}</h2>", f"<p>{html.escape(explanation)}</p>"]
        parts.append(html_table(frame))
        for name, table in shown:
            parts += [f"<h3>{name}.csv</h3>", html_table(table)]
    parts.append("<h2>Figures</h2>")
    parts += [
        f"<figure><img src='{name}' alt='{html.escape(caption)}'>"
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        for name, caption in FIGURES
        if name in figures
    ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
