"""Typed configuration schema, registered in Hydra's ConfigStore.

The YAML files under ``conf/`` fill these dataclasses. Hydra composes in struct mode, so an unknown
key fails at composition; values are checked in ``__post_init__``, which runs when
:func:`to_config` turns the composed DictConfig into these objects, before any work is done.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from wgangp.errors import ConfigError
from wgangp.evaluation.settings import EvaluateConfig


def _require(condition: bool, key: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"invalid config value {key}: {message}")


def _require_choice(value: str, key: str, choices: tuple[str, ...]) -> None:
    _require(value in choices, key, f"{value!r} is not one of {', '.join(choices)}")


@dataclass
class DataConfig:
    """Where the rows come from and how they are split."""

    name: str = "creditcard"  # creditcard: the Kaggle file; simulated: the embedded default
    path: str | None = "data/creditcard.csv"  # relative to the directory the job was launched from
    fallback: str = "simulated"  # when the file is absent and there are no Kaggle credentials
    cache_dir: str = "~/.cache/wgangp"  # where the Kaggle download goes
    simulated_rows: int = 284_807
    val_fraction: float = 0.1
    test_fraction: float = 0.2
    min_rows_per_class: int = 3

    def __post_init__(self) -> None:
        _require_choice(self.name, "data.name", ("creditcard", "simulated"))
        _require_choice(self.fallback, "data.fallback", ("simulated", "error"))
        _require(self.simulated_rows >= 100, "data.simulated_rows", "must be >= 100")
        _require(0 <= self.val_fraction < 0.5, "data.val_fraction", "must be in [0, 0.5)")
        _require(0 < self.test_fraction < 0.5, "data.test_fraction", "must be in (0, 0.5)")
        _require(self.min_rows_per_class >= 3, "data.min_rows_per_class", "must be >= 3")


@dataclass
class PreprocessConfig:
    """Invertible feature transform; ``scaling=none`` reproduces the unscaled original setup."""

    scaling: str = "standard"  # standard | none
    log_amount: bool = True  # model log1p(Amount): Amount spans 0..25,000

    def __post_init__(self) -> None:
        _require_choice(self.scaling, "preprocess.scaling", ("standard", "none"))


@dataclass
class GeneratorConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    negative_slope: float = 0.2


@dataclass
class CriticConfig:
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    negative_slope: float = 0.2
    output: str = "linear"  # linear (WGAN) | tanh (the original failing code: saturates)


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
        _require_choice(self.critic.output, "model.critic.output", ("linear", "tanh"))


NORMS = ("safe_sqrt", "tf_norm", "custom_gradient", "double_where")


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
        _require_choice(self.norm, "gp.norm", NORMS)
        _require_choice(self.dtype, "gp.dtype", ("float32", "compute"))


@dataclass
class OptimizerConfig:
    """Adam, defaults from Gulrajani et al. 2017."""

    lr: float = 1e-4
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
    steps: int = 2000  # generator steps
    batch_size: int = 512
    n_critic: int = 5
    label_sampling: str = "balanced"  # balanced: half frauds per batch | empirical
    generator_optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    critic_optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    steps_per_call: int = 10  # generator steps inside one tf.function call
    jit_compile: bool = False  # XLA-compile the training function
    precision: str = "float32"  # float32 | mixed_float16 | mixed_bfloat16
    device: str = "auto"  # auto | cpu | gpu
    strategy: str = "none"  # none | mirrored
    deterministic: bool = True
    checkpoint_every: int = 500
    checkpoint_dir: str | None = None  # default: <run output dir>/checkpoints
    keep_checkpoints: int = 3
    resume: bool = False
    on_nan: str = "raise"  # raise | stop | skip
    max_consecutive_skips: int = 10
    progress: bool = True
    sample_rows: int = 1000  # fraud rows sampled into the run directory at the end

    def __post_init__(self) -> None:
        _require(self.steps >= 1, "trainer.steps", f"must be >= 1 (got {self.steps})")
        _require(
            self.batch_size >= 2, "trainer.batch_size", f"must be >= 2 (got {self.batch_size})"
        )
        _require(self.n_critic >= 1, "trainer.n_critic", f"must be >= 1 (got {self.n_critic})")
        _require_choice(self.label_sampling, "trainer.label_sampling", ("balanced", "empirical"))
        self.generator_optimizer.check("trainer.generator_optimizer")
        self.critic_optimizer.check("trainer.critic_optimizer")
        _require(self.steps_per_call >= 1, "trainer.steps_per_call", "must be >= 1")
        _require_choice(
            self.precision, "trainer.precision", ("float32", "mixed_float16", "mixed_bfloat16")
        )
        _require_choice(self.device, "trainer.device", ("auto", "cpu", "gpu"))
        _require_choice(self.strategy, "trainer.strategy", ("none", "mirrored"))
        _require(
            not (self.strategy == "mirrored" and self.jit_compile),
            "trainer.jit_compile",
            "must be false with trainer.strategy=mirrored (XLA inside replicas fails on TF 2.21)",
        )
        _require(self.checkpoint_every >= 1, "trainer.checkpoint_every", "must be >= 1")
        _require(self.keep_checkpoints >= 1, "trainer.keep_checkpoints", "must be >= 1")
        _require_choice(self.on_nan, "trainer.on_nan", ("raise", "stop", "skip"))
        _require(self.max_consecutive_skips >= 1, "trainer.max_consecutive_skips", "must be >= 1")
        _require(self.sample_rows >= 0, "trainer.sample_rows", "must be >= 0")


@dataclass
class TrackingConfig:
    enabled: bool = True
    uri: str | None = None  # else $MLFLOW_TRACKING_URI, else sqlite:///<launch dir>/mlflow.db
    experiment: str = "wgangp"
    run_name: str | None = None
    log_every: int = 50  # generator steps between metric points
    required: bool = True  # false: fall back to a local sqlite store when the server is down
    log_model: bool = True

    def __post_init__(self) -> None:
        _require(self.log_every >= 1, "tracking.log_every", "must be >= 1")
        _require(bool(self.experiment), "tracking.experiment", "must not be empty")


@dataclass
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    preprocess: PreprocessConfig = field(default_factory=PreprocessConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    gp: GPConfig = field(default_factory=GPConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    seed: int = 0
    name: str = "default"  # the experiment's name, set by conf/experiment/*.yaml
    debug: bool = False  # show tracebacks for user errors

    def __post_init__(self) -> None:
        _require(self.seed >= 0, "seed", f"must be >= 0 (got {self.seed})")
        if hasattr(self.evaluate, "check"):
            self.evaluate.check()


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
