"""Typed configuration schema, registered in Hydra's ConfigStore.

The YAML files under ``conf/`` fill these dataclasses. Hydra composes in struct mode, so an unknown
key fails at composition; values are checked in ``__post_init__``, which runs when
:func:`to_config` turns the composed DictConfig into these objects, before any work is done.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from wgangp.errors import ConfigError

log = logging.getLogger("wgangp.config")

#: The Hydra config tree (``conf/config.yaml`` and one folder per group). Absolute, so the console
#: script finds it too: Hydra resolves a relative path against a module as a Python package.
CONF_DIR = Path(__file__).resolve().parents[1] / "conf"

# Every choice a config key accepts, declared once; the code that acts on a key imports its list.
DATA_NAMES = ("creditcard", "simulated")
#: Schemas shipped in the package, named by ``data.schema`` (Kaggle's credit-card file's).
SHIPPED_SCHEMAS = ("creditcard",)
#: The ``creditcard`` preset's file: read through its shipped schema, and where ``data.fallback``
#: applies when absent. A path the user names is their own table.
CREDITCARD_PATH = "data/creditcard.csv"
FALLBACKS = ("simulated", "error")
SCALINGS = ("standard", "quantile", "gmm", "none")
CRITIC_OUTPUTS = ("linear", "tanh")
GP_NORMS = ("safe_sqrt", "tf_norm", "custom_gradient", "double_where")
GP_DTYPES = ("float32", "compute")
LABEL_SAMPLINGS = ("balanced", "empirical")
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16", "auto")
DEVICES = ("auto", "cpu", "gpu")
STRATEGIES = ("none", "mirrored")
NAN_POLICIES = ("raise", "stop", "skip")
SELECT_BY = ("c2st_auc_gbm", "ks_mean")  # val/* metrics the quality loop can select by
MAX_SEED = 2**32 - 1  # numpy's legacy seeding (Keras' set_random_seed) takes 32-bit seeds
MAX_EPSILON = 100  # beyond, DP-SGD's noise protects next to nothing


def _require(condition: bool, key: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"invalid config value {key}: {message}")


def _require_choice(value: str, key: str, choices: tuple[str, ...]) -> None:
    _require(value in choices, key, f"{value!r} is not one of {', '.join(choices)}")


@dataclass
class DataConfig:
    """Where the rows come from and how they are split."""

    name: str = "creditcard"  # creditcard: the Kaggle file; simulated: the embedded default
    path: str | None = CREDITCARD_PATH  # relative to the directory the job was launched from
    fallback: str = "simulated"  # when the file is absent and there are no Kaggle credentials
    cache_dir: str = "~/.cache/wgangp"  # where the Kaggle download goes
    simulated_rows: int = 284_807
    val_fraction: float = 0.1
    test_fraction: float = 0.2
    min_rows_per_class: int = 3
    # Your own table (docs/schema.md): its label, the class to synthesize, an edited schema.
    label: str = "Class"  # the label column
    positive: str | None = None  # the class to synthesize; null: the label's least frequent value
    # An edited schema YAML, or a shipped one by name (creditcard: Kaggle's); null: Kaggle's at the
    # default path, else inferred from the table.
    schema: str | None = None
    # Whose rows belong together (a customer, card or account column): every privacy rule counts
    # its distinct values, not rows (docs/privacy.md); never a feature, never shipped. null: each
    # row is its own entity, exact duplicate rows counting once.
    entity: str | None = None
    # A table of any size (docs/performance.md): every rare-class row is read and at most
    # max_rows of the rest (a uniform subset by seed beyond it); fits and scores use one subset
    # of rest_subset rows of the rest, scores one of rare_subset rare-class rows, both drawn over
    # the table before the split. Training draws its batches from every row read.
    max_rows: int = 1_000_000
    # Instead of max_rows: every entity with a rare-class row and each other one, whole, with
    # this probability (by a hash of its id and the seed): the cap privacy.epsilon takes.
    entity_share: float | None = None
    rest_subset: int = 300_000
    rare_subset: int = 2_000
    # Customers over time (docs/histories.md): the column that orders each entity's rows; with it
    # the table is one history per data.entity and the model draws whole customers. shared:
    # columns many customers share (a terminal, device, merchant id), which come back as new
    # pseudonymous ids (null: detected). A history table keeps every entity with a rare-class
    # row and at most max_entities of the others.
    time: str | None = None
    shared: list[str] | None = None
    max_entities: int = 20_000

    def __post_init__(self) -> None:
        _require_choice(self.name, "data.name", DATA_NAMES)
        _require(bool(self.label.strip()), "data.label", "must name the label column")
        _require(
            self.positive is None or bool(str(self.positive).strip()),
            "data.positive",
            "must be a value of the label column, or null for its least frequent value",
        )
        _require(
            self.entity is None or bool(str(self.entity).strip()),
            "data.entity",
            "must name the column whose rows belong together (a customer id), or be null",
        )
        _require(
            self.entity is None or self.entity != self.label,
            "data.entity",
            f"{self.entity!r} is the label (data.label); name the customer, card or account column",
        )
        _require(
            self.schema is None
            or self.schema in SHIPPED_SCHEMAS
            or Path(self.schema).suffix.lower() in (".yaml", ".yml"),
            "data.schema",
            f"{self.schema!r} is not a .yaml file or a shipped schema "
            f"({', '.join(SHIPPED_SCHEMAS)}); write one with python -m wgangp.schema",
        )
        _require_choice(self.fallback, "data.fallback", FALLBACKS)
        _require(self.simulated_rows >= 100, "data.simulated_rows", "must be >= 100")
        _require(0 <= self.val_fraction < 0.5, "data.val_fraction", "must be in [0, 0.5)")
        _require(0 < self.test_fraction < 0.5, "data.test_fraction", "must be in (0, 0.5)")
        _require(self.min_rows_per_class >= 3, "data.min_rows_per_class", "must be >= 3")
        share = self.entity_share
        _require(
            share is None or 0 < share <= 1,
            "data.entity_share",
            f"{share} must be in (0, 1] (the share of the other customers kept), or null",
        )
        for key, low in (("max_rows", 100), ("rest_subset", 100), ("rare_subset", 20)):
            value = getattr(self, key)
            _require(value >= low, f"data.{key}", f"{value} must be >= {low}")
        self._check_histories()

    def _check_histories(self) -> None:
        """``data.time`` orders each entity's rows: it needs ``data.entity``, and neither it nor a
        shared column may be the label or the entity."""
        _require(self.max_entities >= 10, "data.max_entities", f"{self.max_entities} must be >= 10")
        if self.time is None:
            _require(
                not self.shared,
                "data.shared",
                "names columns customers share over time: set data.time=<column> too",
            )
            return
        _require(bool(str(self.time).strip()), "data.time", "must name a column of dates or times")
        _require(
            self.entity is not None,
            "data.time",
            f"{self.time!r} orders each customer's rows: set data.entity=<the customer, card or "
            "account column> too",
        )
        for role, name in (("the label (data.label)", self.label), ("data.entity", self.entity)):
            _require(
                self.time != name, "data.time", f"{self.time!r} is {role}; name the time column"
            )
            _require(
                name not in (self.shared or ()),
                "data.shared",
                f"lists {name!r}, which is {role}; list the columns customers share",
            )
        _require(
            self.time not in (self.shared or ()),
            "data.shared",
            f"lists {self.time!r}, which is data.time; list the columns customers share",
        )


@dataclass
class PreprocessConfig:
    """Invertible feature transform (``wgangp.data.transform.table_transform``);
    ``scaling=none`` keeps raw units, the unscaled original setup."""

    scaling: str = "standard"  # standard | quantile | gmm (to a normal) | none
    per_class: bool = True  # one scale per class
    #: A number column with point masses (values many training rows share) goes through its
    #: quantiles, so they come back exactly; false: every column through ``scaling`` alone.
    point_masses: bool = True
    #: More number columns through their quantiles whatever ``scaling`` is (checked against the
    #: table once it is read).
    quantile_columns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        _require_choice(self.scaling, "preprocess.scaling", SCALINGS)
        counts = Counter(self.quantile_columns)
        repeated = sorted(name for name, count in counts.items() if count > 1)
        _require(not repeated, "preprocess.quantile_columns", f"lists {repeated} more than once")


@dataclass
class GeneratorConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    negative_slope: float = 0.2


@dataclass
class CriticConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    negative_slope: float = 0.2
    output: str = "linear"  # linear (WGAN) | tanh (the original failing code: saturates)
    pac: int = 1  # rows judged together as one (PacGAN); trainer.batch_size must be a multiple


@dataclass
class HistoryConfig:
    """The networks of a history model (``data.time``; docs/histories.md): a recurrent generator of
    records after the history's attributes, a critic over whole histories and one of attributes."""

    max_length: int = 64  # rows of one history; a longer customer trains as several windows
    records_per_cell: int = 1  # records each recurrent step emits (DoppelGANger's S)
    batch_size: int = 64  # histories per batch
    latent_dim: int = 16  # the attributes' noise, and each recurrent step's
    hidden: list[int] = field(default_factory=lambda: [64])  # the attribute generator
    rnn_units: int = 64
    critic_channels: list[int] = field(default_factory=lambda: [64, 64])  # 1-d convolutions
    critic_hidden: list[int] = field(default_factory=lambda: [64])
    attribute_critic_weight: float = 1.0  # DoppelGANger's alpha
    probe_histories: int = 200  # synthetic histories per selection probe

    def __post_init__(self) -> None:
        for key in ("max_length", "records_per_cell", "batch_size", "latent_dim", "rnn_units"):
            value = getattr(self, key)
            _require(value >= 1, f"history.{key}", f"{value} must be >= 1")
        _require(self.batch_size >= 2, "history.batch_size", f"{self.batch_size} must be >= 2")
        _require(
            self.max_length % self.records_per_cell == 0,
            "history.max_length",
            f"{self.max_length} must be a multiple of history.records_per_cell="
            f"{self.records_per_cell}",
        )
        for key in ("hidden", "critic_channels", "critic_hidden"):
            widths = getattr(self, key)
            _require(len(widths) >= 1 and all(w >= 1 for w in widths), f"history.{key}",
                     "needs at least one layer, each >= 1 wide")  # fmt: skip
        weight = self.attribute_critic_weight
        _require(weight >= 0 and math.isfinite(weight), "history.attribute_critic_weight",
                 f"{weight} must be >= 0")  # fmt: skip
        _require(self.probe_histories >= 20, "history.probe_histories",
                 f"{self.probe_histories} must be >= 20")  # fmt: skip


@dataclass
class ModelConfig:
    latent_dim: int = 128
    generator: GeneratorConfig = field(default_factory=GeneratorConfig)
    critic: CriticConfig = field(default_factory=CriticConfig)

    def __post_init__(self) -> None:
        _require(self.latent_dim >= 1, "model.latent_dim", "must be >= 1")
        for name, net in (("generator", self.generator), ("critic", self.critic)):
            _require(len(net.hidden) >= 1, f"model.{name}.hidden", "needs at least one layer")
            _require(all(w >= 1 for w in net.hidden), f"model.{name}.hidden", "widths must be >= 1")
            _require(net.negative_slope >= 0, f"model.{name}.negative_slope", "must be >= 0")
        _require_choice(self.critic.output, "model.critic.output", CRITIC_OUTPUTS)
        _require(self.critic.pac >= 1, "model.critic.pac", "must be >= 1 (1: no packing)")


@dataclass
class GPConfig:
    """Gradient penalty: lambda * E[(||grad D(x_hat)||_2 - 1)^2]."""

    weight: float = 10.0  # lambda
    eps: float = 1e-12  # inside the square root: keeps the norm's gradient finite at 0
    norm: str = "safe_sqrt"  # safe_sqrt | tf_norm | custom_gradient | double_where
    dtype: str = "float32"  # float32 (safe) | compute: the networks' dtype (float16 trap)

    def __post_init__(self) -> None:
        _require(self.weight >= 0 and math.isfinite(self.weight), "gp.weight", "must be >= 0")
        _require(self.eps > 0, "gp.eps", f"must be > 0 (got {self.eps})")
        _require_choice(self.norm, "gp.norm", GP_NORMS)
        _require_choice(self.dtype, "gp.dtype", GP_DTYPES)


@dataclass
class OptimizerConfig:
    """Adam with Gulrajani et al. 2017's betas; the learning rate the product chose."""

    lr: float = 2e-4
    beta1: float = 0.0
    beta2: float = 0.9

    def check(self, key: str) -> None:
        _require(
            self.lr > 0 and math.isfinite(self.lr), f"{key}.lr", f"must be > 0 (got {self.lr})"
        )
        _require(0 <= self.beta1 < 1, f"{key}.beta1", "must be in [0, 1)")
        _require(0 <= self.beta2 < 1, f"{key}.beta2", "must be in [0, 1)")


@dataclass
class TrainerConfig:
    steps: int = 3000  # generator steps
    batch_size: int = 512
    n_critic: int = 5
    label_sampling: str = "balanced"  # balanced: half rare rows per batch | empirical
    generator_optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    critic_optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    steps_per_call: int = 10  # generator steps inside one tf.function call
    jit_compile: bool = False  # XLA-compile the training function
    precision: str = "float32"  # float32 | mixed_float16 | mixed_bfloat16 | auto (by hardware)
    device: str = "auto"  # auto | cpu | gpu
    strategy: str = "none"  # none | mirrored
    deterministic: bool = True
    checkpoint_every: int = 500
    #: default: <launch dir>/checkpoints/<name>-seed<seed>-<config hash>, where a relaunch of the
    #: same command finds them (wgangp.training.checkpoints)
    checkpoint_dir: str | None = None
    keep_checkpoints: int = 3
    resume: bool = False
    on_nan: str = "raise"  # raise | stop | skip
    max_consecutive_skips: int = 10
    progress: bool = True
    sample_rows: int = 1000  # rare-class rows sampled into the run directory at the end
    #: Generator weight averaging per step (wgangp.training.averaging); 0: off
    ema_decay: float = 0.0
    refit: bool = False  # after selection, fit again on training + validation rows (training.refit)

    def __post_init__(self) -> None:
        _require(self.steps >= 1, "trainer.steps", f"must be >= 1 (got {self.steps})")
        _require(
            self.batch_size >= 2, "trainer.batch_size", f"must be >= 2 (got {self.batch_size})"
        )
        _require(self.n_critic >= 1, "trainer.n_critic", f"must be >= 1 (got {self.n_critic})")
        _require_choice(self.label_sampling, "trainer.label_sampling", LABEL_SAMPLINGS)
        self.generator_optimizer.check("trainer.generator_optimizer")
        self.critic_optimizer.check("trainer.critic_optimizer")
        _require(self.steps_per_call >= 1, "trainer.steps_per_call", "must be >= 1")
        _require_choice(self.precision, "trainer.precision", PRECISIONS)
        _require_choice(self.device, "trainer.device", DEVICES)
        _require_choice(self.strategy, "trainer.strategy", STRATEGIES)
        mirrored = self.strategy == "mirrored"
        _require(
            not (mirrored and self.jit_compile),
            "trainer.jit_compile",
            "must be false with trainer.strategy=mirrored (XLA inside the per-replica function "
            "fails on TF 2.21); set trainer.jit_compile=false",
        )
        _require(
            not (mirrored and self.precision == "mixed_float16"),
            "trainer.precision",
            "mixed_float16 is not supported with trainer.strategy=mirrored (loss scaling across "
            "replicas is untested); use mixed_bfloat16 or float32",
        )
        _require(self.checkpoint_every >= 1, "trainer.checkpoint_every", "must be >= 1")
        _require(self.keep_checkpoints >= 1, "trainer.keep_checkpoints", "must be >= 1")
        _require_choice(self.on_nan, "trainer.on_nan", NAN_POLICIES)
        _require(self.max_consecutive_skips >= 1, "trainer.max_consecutive_skips", "must be >= 1")
        _require(self.sample_rows >= 0, "trainer.sample_rows", "must be >= 0")
        _require(0 <= self.ema_decay < 1, "trainer.ema_decay", "must be in [0, 1) (0: off)")


@dataclass
class TrackingConfig:
    enabled: bool = True
    uri: str | None = None  # else $MLFLOW_TRACKING_URI, else sqlite:///<launch dir>/mlflow.db
    experiment: str = "wgangp"
    run_name: str | None = None
    log_every: int = 50  # generator steps between metric points
    required: bool = True  # false: fall back to a local sqlite store when the server is down
    log_model: bool = True
    register_as: str | None = None  # a Model Registry name; its alias champion follows val/score

    def __post_init__(self) -> None:
        _require(self.log_every >= 1, "tracking.log_every", "must be >= 1")
        _require(bool(self.experiment), "tracking.experiment", "must not be empty")
        if self.register_as is not None:
            name = self.register_as
            _require(
                re.fullmatch(r"[A-Za-z0-9._-]+", name) is not None,
                "tracking.register_as",
                f"{name!r} must be a non-empty model name without '/', ':' or '@', of letters, "
                "digits, '.', '_' and '-' only (models:/NAME@champion must carry it)",
            )
            _require(
                self.enabled and self.log_model,
                "tracking.register_as",
                "registers the run's model: needs tracking.enabled=true and log_model=true",
            )


@dataclass
class EvaluateConfig:
    """What the end-of-run evaluation draws, fits and reports (``wgangp.evaluation``); small
    models and at most ``max_normal_rows`` normals keep a Kaggle-sized run to about a minute.
    :meth:`check` runs again after ``python -m wgangp.evaluate`` changes values."""

    enabled: bool = True
    #: Synthetic rare-class rows drawn for fidelity, detection and privacy.
    n_synthetic: int = 2000
    #: Synthetic rows added to the detector's training rows = ratio * (#real training rare rows).
    augment_ratios: list[float] = field(default_factory=lambda: [0.5, 1.0, 2.0])
    #: The ratio behind ``eval/pr_auc_augmented`` (one of augment_ratios); the baselines add as
    #: many rare rows, so the headline comparison is count for count.
    headline_ratio: float = 1.0
    #: Repeats of the utility experiment (normal subsample, synthetic draw, model seed): lifts
    #: are paired per repeat (``evaluate=full``: 5).
    seeds: int = 3
    #: Subsample of real training rows of the other class the detectors train on (speed).
    max_normal_rows: int = 20_000
    #: Report recall at this precision (the operating point of a team's review queue).
    target_precision: float = 0.9
    #: Repeats of the detection classifiers, each fitted on a random half of both sets (C2ST).
    c2st_repeats: int = 10
    #: Boosting rounds of the gradient-boosting detectors (utility and C2ST).
    gbm_max_iter: int = 200
    #: SMOTE's neighbour count (imbalanced-learn default 5).
    smote_k_neighbors: int = 5
    #: Exact copies: V1..V28 equal within this relative tolerance, Time and Amount as in the file
    #: (float32 output would slip a memorised row past a comparison at the file's 15 digits).
    copy_rtol: float = 1e-6
    #: BLAS/OpenMP threads of each evaluation worker; 2 are many times slower on a busy 2-core
    #: machine.
    threads: int = 1
    #: Processes the evaluation's pieces run on (0: one per core; 1: in the run's own process).
    workers: int = 0
    #: Draws of SDMetrics' DCR overfitting protection, each a fresh equal-sized entity draw
    #: (``evaluate=full``: 5).
    dcr_repeats: int = 2
    #: Also compute SDMetrics' QualityReport (needs the ``sdmetrics`` package).
    sdmetrics: bool = True

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise :class:`ConfigError` with one line naming the first invalid value."""
        bounds = {  # key: (lowest, highest) allowed
            "n_synthetic": (20, None), "seeds": (1, 100), "max_normal_rows": (100, None),
            "c2st_repeats": (1, 100), "gbm_max_iter": (1, None), "smote_k_neighbors": (1, None),
            "threads": (1, None), "workers": (0, None), "dcr_repeats": (1, 100),
        }  # fmt: skip
        for key, (low, high) in bounds.items():
            value = getattr(self, key)
            allowed = f"in {low}..{high}" if high is not None else f">= {low}"
            _require(
                low <= value and (high is None or value <= high),
                f"evaluate.{key}",
                f"{value} must be {allowed}",
            )
        ratios = list(self.augment_ratios)
        _require(len(ratios) > 0, "evaluate.augment_ratios", "must list at least one ratio")
        for ratio in ratios:
            _require(
                isinstance(ratio, int | float) and math.isfinite(ratio) and ratio > 0,
                "evaluate.augment_ratios",
                f"{ratio!r} must be a positive number",
            )
        _require(
            any(math.isclose(r, self.headline_ratio) for r in ratios),
            "evaluate.headline_ratio",
            f"{self.headline_ratio} must be one of augment_ratios {ratios}",
        )
        precision = self.target_precision
        _require(0 < precision < 1, "evaluate.target_precision", f"{precision} must be in (0, 1)")
        rtol = self.copy_rtol
        _require(0 <= rtol <= 1e-2, "evaluate.copy_rtol", f"{rtol} must be in [0, 0.01]")


@dataclass
class SelectConfig:
    """The step selection (``wgangp.synthesis.selection``): every ``every`` generator steps the
    rows a user would get are scored on the validation split; the best step after the first
    ``after`` of the run ships. ``every=0``: the last step ships."""

    every: int = 250
    by: str = "c2st_auc_gbm"  # the val/* metric behind val/score (lower is better)
    smoothing: float = 0.5  # weight of the earlier probes in val/score (moving average)
    after: float = 0.25  # keep no step in this first fraction of the run
    samples: int = 200  # synthetic rows per detection repeat
    repeats: int = 8  # detection repeats per probe, each with a fresh draw
    gbm_max_iter: int = 50  # boosting rounds of the probe's detector

    def __post_init__(self) -> None:
        _require(self.every >= 0, "select.every", f"{self.every} must be >= 0 (0: off)")
        _require_choice(self.by, "select.by", SELECT_BY)
        _require(0 <= self.smoothing < 1, "select.smoothing", "must be in [0, 1)")
        _require(0 <= self.after < 1, "select.after", "must be in [0, 1)")
        for key in ("samples", "repeats", "gbm_max_iter"):
            value = getattr(self, key)
            _require(value >= 1, f"select.{key}", f"{value} must be >= 1")


@dataclass
class ShipConfig:
    """What ships beside the generator (``wgangp.synthesis.assemble``)."""

    calibrate_marginals: bool = True  # each generated column onto the training marginals
    copula_share: float = 0.0  # rows drawn from a Gaussian copula of the training rows instead
    #: k: every number the bundle stores from training rows is the mean of >= k of them; a value
    #: fewer than k rows hold is never stored (docs/privacy.md).
    min_atom_rows: int = 5

    def __post_init__(self) -> None:
        _require(
            0 <= self.copula_share < 1,
            "ship.copula_share",
            f"must be in [0, 1) (got {self.copula_share}; 1 would ship no generated row)",
        )
        _require(
            isinstance(self.min_atom_rows, int) and self.min_atom_rows >= 2,
            "ship.min_atom_rows",
            f"{self.min_atom_rows!r} must be an integer >= 2 (1 would store training values)",
        )


@dataclass
class PrivacyConfig:
    """Entity-level differential privacy (``wgangp.privacy``, docs/privacy.md): everything that
    ships, and every statistic of the training rows it is fitted from, within (epsilon, delta)."""

    epsilon: float | None = None  # null: off (k-anonymous stored tables, no guarantee)
    #: null: 1e-6, public (never read off the table; refused when not below 1 / (10 x entities))
    delta: float | None = None
    clip: float = 1.0  # the L2 bound on one entity's critic gradient
    #: The share of epsilon the statistics (levels, bounds, knots, counts, the calibration's
    #: targets) are released at; DP-SGD spends the rest. Half: with a few hundred rare entities
    #: the marginals carry most of what a budget can buy, the critic's updates are mostly noise.
    statistics_share: float = 0.5

    @property
    def enabled(self) -> bool:
        return self.epsilon is not None

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            _require(
                math.isfinite(self.epsilon) and 0 < self.epsilon <= MAX_EPSILON,
                "privacy.epsilon",
                f"{self.epsilon} must be in (0, {MAX_EPSILON}] (null: off; beyond "
                f"{MAX_EPSILON} DP-SGD's noise protects next to nothing)",
            )
        if self.delta is not None:
            _require(0 < self.delta < 1e-2, "privacy.delta", f"{self.delta} must be in (0, 0.01)")
            _require(
                self.epsilon is not None,
                "privacy.delta",
                f"{self.delta} is set but privacy.epsilon is null (privacy off, and the run would "
                "say nothing); set privacy.epsilon too (e.g. privacy.epsilon=3), or drop "
                "privacy.delta",
            )
        _require(
            math.isfinite(self.clip) and self.clip > 0, "privacy.clip", f"{self.clip} must be > 0"
        )
        share = self.statistics_share
        _require(0 < share < 1, "privacy.statistics_share", f"{share} must be in (0, 1)")


#: What privacy.epsilon cannot run with, each (key, its value is refused when, the fix).
_NOT_PRIVATE: tuple[tuple[str, Any, str], ...] = (
    # A private run maps every number through released quantiles: a mixture or raw units would
    # be silently replaced (the default, standard, reads as quantile there: docs/privacy.md).
    (
        "preprocess.scaling",
        lambda c: c.preprocess.scaling not in ("standard", "quantile"),
        "set preprocess=quantile",
    ),
    ("ship.copula_share", lambda c: c.ship.copula_share > 0, "set ship.copula_share=0"),
    ("trainer.refit", lambda c: c.trainer.refit, "set trainer.refit=false"),
    ("trainer.strategy", lambda c: c.trainer.strategy != "none", "set trainer.strategy=none"),
    ("trainer.jit_compile", lambda c: c.trainer.jit_compile, "set trainer.jit_compile=false"),
    (
        "trainer.precision",
        lambda c: c.trainer.precision != "float32",
        "set trainer.precision=float32",
    ),
    ("model.critic.pac", lambda c: c.model.critic.pac != 1, "set model.critic.pac=1"),
    # Its releases would be drawn again with new secret noise: the budget spent twice.
    ("trainer.resume", lambda c: c.trainer.resume, "start a new run (trainer.resume=false)"),
    (
        "data.time",
        lambda c: c.data.time is not None,
        "differential privacy for histories is not built yet: set privacy.epsilon=null, or drop "
        "data.time to train on rows",
    ),
)


#: What a history model (data.time) does not run with yet, as (key, refused when, the fix).
_NOT_HISTORIES: tuple[tuple[str, Any, str], ...] = (
    ("trainer.refit", lambda c: c.trainer.refit, "set trainer.refit=false"),
    ("trainer.strategy", lambda c: c.trainer.strategy != "none", "set trainer.strategy=none"),
    ("trainer.precision", lambda c: c.trainer.precision != "float32",
     "set trainer.precision=float32"),
    ("ship.copula_share", lambda c: c.ship.copula_share > 0, "set ship.copula_share=0"),
    ("data.entity_share", lambda c: c.data.entity_share is not None,
     "a history table is capped by data.max_entities: set data.entity_share=null"),
)  # fmt: skip


def _refuse_any(config: Any, refusals: tuple[tuple[str, Any, str], ...], under: str) -> None:
    for key, refused, fix in refusals:
        if refused(config):
            value = functools.reduce(getattr, key.split("."), config)
            shown = str(value).lower() if isinstance(value, bool) else repr(value)
            _require(False, key, f"{shown} is not supported {under}; {fix}")


@dataclass
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    preprocess: PreprocessConfig = field(default_factory=PreprocessConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    gp: GPConfig = field(default_factory=GPConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    select: SelectConfig = field(default_factory=SelectConfig)
    ship: ShipConfig = field(default_factory=ShipConfig)
    privacy: PrivacyConfig = field(default_factory=PrivacyConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    seed: int = 0
    name: str = "default"  # the experiment's name, set by conf/experiment/*.yaml
    debug: bool = False  # show tracebacks for user errors

    def __post_init__(self) -> None:
        _require(
            0 <= self.seed <= MAX_SEED, "seed", f"must be in [0, {MAX_SEED}] (got {self.seed})"
        )
        batch, pac = self.trainer.batch_size, self.model.critic.pac
        why = f"{batch} must be a multiple of model.critic.pac={pac} (the critic's pack size)"
        _require(batch % pac == 0, "trainer.batch_size", why)
        if self.privacy.enabled:
            self._under_privacy()
            self._selection_off_under_privacy()
        if self.data.time is not None:
            _refuse_any(self, _NOT_HISTORIES, "with data.time (a history model)")

    def _under_privacy(self) -> None:
        """Refuse, one line each, what DP-SGD does not cover; the calibration is fitted from DP
        releases (``wgangp.serving.calibration``)."""
        _refuse_any(self, _NOT_PRIVATE, "under privacy.epsilon")

    def _selection_off_under_privacy(self) -> None:
        """Not a check: the one value ``privacy.epsilon`` sets rather than refuses. The step
        selection reads validation rows outside the budget, so a private run ships its last
        step: ``select.every`` is 0, said in the log, and recorded as the run's own value (its
        params and ``config_resolved.yaml``)."""
        if self.select.every != 0:
            log.info(
                "select.every=%d -> 0 under privacy.epsilon: the step selection would read "
                "validation rows outside the budget; the run ships its last step",
                self.select.every,
            )
            self.select.every = 0


def register_configs() -> None:
    """Register the schema so ``conf/config.yaml`` can extend it (``- schema`` in defaults)."""
    ConfigStore.instance().store(name="schema", node=Config)


def to_config(cfg: DictConfig | Config) -> Config:
    """Validate a composed config and return the typed object; one-line ConfigError otherwise."""
    if isinstance(cfg, Config):
        return cfg
    try:
        obj: Any = OmegaConf.to_object(cfg)
    except ConfigError:
        raise
    except Exception as err:  # omegaconf validation errors carry several lines
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConfigError(f"invalid config: {first}") from err
    if not isinstance(obj, Config):
        raise ConfigError("invalid config: the composed config does not follow the wgangp schema")
    return obj


def flatten(cfg: Config | DictConfig) -> dict[str, Any]:
    """The whole resolved config as ``{"trainer.steps": 2000, ...}`` for MLflow params."""
    container = OmegaConf.to_container(
        OmegaConf.structured(cfg) if isinstance(cfg, Config) else cfg, resolve=True
    )
    out: dict[str, Any] = {}

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        else:
            out[prefix] = node

    walk("", container)
    return out
