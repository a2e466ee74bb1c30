"""The typed schema: composition, unknown keys and bad values fail with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf
from support.configs import REPO, compose
from support.docs import documented, one_line

from wgangp.config import (
    Config,
    flatten,
    to_config,
)
from wgangp.errors import ConfigError
from wgangp.overrides import RENAMED_KEYS, _schema_keys, check_overrides, config_groups


def test_default_config_composes_to_the_schema() -> None:
    cfg = to_config(compose())
    assert isinstance(cfg, Config)
    assert cfg.gp.norm == "safe_sqrt" and cfg.gp.eps == 1e-12 and cfg.gp.dtype == "float32"
    assert (cfg.gp.weight, cfg.trainer.n_critic) == (10.0, 5)
    opt = cfg.trainer.critic_optimizer
    assert (opt.lr, opt.beta1, opt.beta2) == (2e-4, 0.0, 0.9)
    assert cfg.model.critic.output == "linear"
    assert cfg.trainer.label_sampling == "balanced"


def test_experiment_is_selected_with_plus() -> None:
    cfg = to_config(compose(["+experiment=stable_gp"]))
    assert cfg.name == "stable_gp"
    assert cfg.preprocess.per_class and cfg.preprocess.point_masses
    assert cfg.preprocess.quantile_columns == []


def test_the_plain_command_trains_the_product_model_that_stable_gp_names() -> None:
    """``python -m wgangp.train`` and ``+experiment=stable_gp`` differ in the name alone; the
    typed schema's defaults are the files' (one default per key)."""
    plain, named = to_config(compose()), to_config(compose(["+experiment=stable_gp"]))
    assert replace(named, name=plain.name) == plain
    assert flatten(Config()) == {**flatten(plain), "data.name": "creditcard"}
    assert (plain.trainer.steps, plain.trainer.generator_optimizer.lr) == (3000, 2e-4)
    assert plain.ship.calibrate_marginals and plain.ship.copula_share == 0.0
    assert plain.ship.min_atom_rows == 5
    assert (plain.select.every, plain.select.by, plain.select.after) == (250, "c2st_auc_gbm", 0.25)


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_KEYS.items()))
def test_a_renamed_key_answers_with_its_new_name(old: str, new: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_overrides([f"{old}=1"])
    assert str(err.value) == f"config key '{old}' was renamed to '{new}': write {new}=1"
    assert new in _schema_keys()


def test_the_mixture_transform_keeps_point_masses() -> None:
    """``preprocess=gmm`` changes the scaling only: columns with point masses keep quantiles."""
    cfg = to_config(compose(["+experiment=stable_gp", "preprocess=gmm"]))
    assert cfg.preprocess.scaling == "gmm" and cfg.preprocess.per_class
    assert cfg.preprocess.point_masses


def test_raw_units_turn_every_column_option_off() -> None:
    """``preprocess=none``: the original failing setup, no scale, no point masses."""
    cfg = to_config(compose(["preprocess=none"]))
    assert (cfg.preprocess.scaling, cfg.preprocess.per_class) == ("none", False)
    assert not cfg.preprocess.point_masses and cfg.preprocess.quantile_columns == []


def test_quantile_columns_are_checked_against_the_table_not_the_config() -> None:
    """Any table's column names are accepted here (the transform's fit checks them, one line);
    a name listed twice is refused."""
    cfg = to_config(compose(["preprocess.quantile_columns=[amount,Time]"]))
    assert cfg.preprocess.quantile_columns == ["amount", "Time"]
    with pytest.raises(ConfigError, match=r"preprocess.quantile_columns: lists \['Time'\] more"):
        to_config(compose(["preprocess.quantile_columns=[Time,Time]"]))


def test_fast_trainer_differs_from_default_only_in_how_steps_run() -> None:
    """``trainer=fast`` extends trainer/default: K=100 steps per call, XLA; nothing else moves."""
    fast = to_config(compose(["trainer=fast", "+experiment=stable_gp"])).trainer
    default = to_config(compose(["+experiment=stable_gp"])).trainer
    assert (fast.steps_per_call, fast.jit_compile) == (100, True)
    assert (default.steps_per_call, default.jit_compile) == (10, False)
    assert fast.steps == 3000  # the experiment still sets the schedule
    assert replace(fast, steps_per_call=10, jit_compile=False) == default


def test_interface_names_override() -> None:
    cfg = to_config(
        compose(
            [
                "trainer.steps=7",
                "seed=3",
                "model.critic.hidden=[512,512]",
                "data.path=/x.csv",
                "tracking.uri=sqlite:///m.db",
                "tracking.experiment=abc",
            ]
        )
    )
    assert (cfg.trainer.steps, cfg.seed, cfg.model.critic.hidden) == (7, 3, [512, 512])
    assert (cfg.data.path, cfg.tracking.uri, cfg.tracking.experiment) == (
        "/x.csv",
        "sqlite:///m.db",
        "abc",
    )


def test_unknown_key_names_the_closest_valid_one() -> None:
    with pytest.raises(ConfigError) as err:
        check_overrides(["+experiment=stable_gp", "trainer.stepz=5"])
    assert "trainer.stepz" in str(err.value) and "trainer.steps" in str(err.value)
    assert "\n" not in str(err.value)
    check_overrides(["trainer.steps=5", "data=simulated", "hydra.run.dir=x", "-m", "seed=0,1"])


def test_a_group_outside_the_defaults_needs_a_plus() -> None:
    with pytest.raises(ConfigError) as err:
        check_overrides(["experiment=stable_gp"])
    assert str(err.value) == (
        "config group 'experiment' needs a '+' (it is not in the defaults list of "
        "conf/config.yaml): write +experiment=stable_gp"
    )
    check_overrides(["+experiment=stable_gp", "~experiment", "data=simulated"])


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("trainer=fastt", "no option 'fastt' in config group 'trainer' (override 'trainer=fastt'); "
         "did you mean 'fast'? choose one of default, fast"),
        ("+experiment=tf_norm", "no option 'tf_norm' in config group 'experiment'"),
        ("-m data=simulated,simulted", "no option 'simulted' in config group 'data'"),
    ],
)  # fmt: skip
def test_an_unknown_group_option_is_one_line_naming_the_options(override, expected) -> None:
    with pytest.raises(ConfigError) as err:
        check_overrides(override.split())
    assert str(err.value).startswith(expected)
    assert "\n" not in str(err.value)


def test_the_group_list_is_the_conf_folder() -> None:
    """A new folder under conf/ is a group the checks know, with its YAML files as options."""
    groups = config_groups()
    assert set(groups) == {p.name for p in (REPO / "conf").iterdir() if p.is_dir()}
    assert groups["trainer"] == ("default", "fast")
    assert "stable_gp" in groups["experiment"]


def test_hydra_itself_rejects_unknown_keys() -> None:
    with pytest.raises(Exception, match="stepz"):
        compose(["trainer.stepz=5"])


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("trainer.critic_optimizer.lr=0", "trainer.critic_optimizer.lr"),
        ("trainer.generator_optimizer.lr=-1", "trainer.generator_optimizer.lr"),
        ("trainer.n_critic=0", "trainer.n_critic"),
        ("trainer.batch_size=1", "trainer.batch_size"),
        ("gp.eps=0", "gp.eps"),
        ("gp.norm=l1", "gp.norm"),
        ("trainer.on_nan=ignore", "trainer.on_nan"),
        ("trainer.steps=0", "trainer.steps"),
        ("model.critic.pac=0", "model.critic.pac"),
        ("model.critic.pac=3", "must be a multiple of model.critic.pac=3"),
        ("ship.copula_share=1", "ship.copula_share: must be in [0, 1) (got 1.0; 1 would ship"),
        ("ship.copula_share=-0.5", "ship.copula_share: must be in [0, 1) (got -0.5;"),
        ("ship.min_atom_rows=1", "ship.min_atom_rows: 1 must be an integer >= 2 (1 would store"),
        ("preprocess.quantile_columns=[Amount,Amount]", "lists ['Amount'] more than once"),
        ("select.by=auc", "select.by: 'auc' is not one of c2st_auc_gbm, ks_mean"),
        ("select.every=-1", "select.every: -1 must be >= 0 (0: off)"),
        ("select.after=1.0", "select.after: must be in [0, 1)"),
    ],
)
def test_bad_values_fail_with_one_line(override: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        to_config(compose([override]))
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("val", "test"), [(-0.1, 0.2), (0.1, 0.0), (0.1, 1.0), (0.5, 0.5), (float("nan"), 0.2)]
)
def test_bad_split_fractions_are_config_errors(val: float, test: float) -> None:
    overrides = [f"data.val_fraction={val}", f"data.test_fraction={test}"]
    with pytest.raises(ConfigError, match="data.(val|test)_fraction"):
        to_config(compose(overrides))


def test_flatten_gives_dotted_params() -> None:
    params = flatten(to_config(compose()))
    assert params["trainer.steps"] == 3000
    assert params["model.generator.hidden"] == [256, 256]
    assert "evaluate.enabled" in params


@pytest.mark.slow
def test_cli_unknown_key_exits_with_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "wgangp.train", "+experiment=stable_gp", "trainer.stepz=5"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("wgangp: error: unknown config key 'trainer.stepz'")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("override", "fix"),
    [
        ("tracking.register_as=o'brien", 'tracking.register_as=\\"o\\\'brien\\"'),
        ("data.path=/data/it's.csv", 'data.path=\\"/data/it\\\'s.csv\\"'),
    ],
)
def test_an_unquoted_apostrophe_is_one_line_with_the_quoting(
    tmp_path: Path, override: str, fix: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "wgangp.train", override], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    line = (
        f"wgangp: error: override '{override}' holds an unmatched ' (Hydra reads a quote as the "
        f"start of a quoted value); quote the value for Hydra and escape it for the shell: {fix}"
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [line]
    if override.startswith("data.path"):
        documented(line.removeprefix("wgangp: error: "))
    # the quoting it names reaches Hydra as one quoted value
    typed = subprocess.run(
        ["bash", "-c", f"printf '%s' {fix}"], capture_output=True, text=True, check=True
    ).stdout

    value = OverridesParser.create().parse_overrides([typed])[0].value()
    assert value == override.split("=", 1)[1]


@pytest.mark.parametrize("value", ["2", "0", "yes", "on", "1.0"])
def test_a_switch_takes_only_true_or_false(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_overrides([f"trainer.refit={value}"])
    line = one_line(err)
    shown = repr(value) if value in ("yes", "on") else value
    assert line == (
        f"invalid config value in override 'trainer.refit={value}': trainer.refit is true or "
        f"false, got {shown}"
    )
    if value == "2":
        documented(line)
    check_overrides(["trainer.refit=true", "trainer.refit=False", "evaluate.enabled=TRUE"])


@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (
            ["privacy.delta=1e-6"],
            "invalid config value privacy.delta: 1e-06 is set but privacy.epsilon is null "
            "(privacy off, and the run would say nothing); set privacy.epsilon too (e.g. "
            "privacy.epsilon=3), or drop privacy.delta",
        ),
        (
            ["privacy.epsilon=3", "preprocess=gmm"],
            "invalid config value preprocess.scaling: 'gmm' is not supported under "
            "privacy.epsilon; set preprocess=quantile",
        ),
        (
            ["privacy.epsilon=3", "preprocess=none"],
            "invalid config value preprocess.scaling: 'none' is not supported under "
            "privacy.epsilon; set preprocess=quantile",
        ),
    ],
)
def test_a_privacy_setting_that_would_be_ignored_is_one_line(overrides, line) -> None:
    """A delta without an epsilon trained without privacy, and a scaling the private path
    replaces was replaced, both silently."""
    with pytest.raises(ConfigError) as err:
        to_config(compose(overrides))
    assert one_line(err) == line
    if "gmm" in line or "delta" in line:
        documented(line)
    for accepted in ("preprocess=quantile", "preprocess=standard"):  # the private path's own
        assert to_config(compose(["privacy.epsilon=3", accepted])).privacy.epsilon == 3


def _written_keys() -> set[str]:
    """Every key the default config's files write: conf/config.yaml and each default group's
    option (conf/<group>/<option>.yaml)."""
    import yaml

    from wgangp.config import CONF_DIR

    def walk(prefix: str, node: dict, out: set[str]) -> None:
        for key, value in node.items():
            full = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict) and value:
                walk(full, value, out)
            else:
                out.add(full)

    top = yaml.safe_load((CONF_DIR / "config.yaml").read_text())
    written: set[str] = set()
    walk("", {k: v for k, v in top.items() if k not in ("defaults", "hydra")}, written)
    for entry in top["defaults"]:
        if isinstance(entry, dict):
            ((group, option),) = entry.items()
            raw = yaml.safe_load((CONF_DIR / group / f"{option}.yaml").read_text()) or {}
            walk(group, {k: v for k, v in raw.items() if k != "defaults"}, written)
    return written


def test_every_key_is_written_in_conf() -> None:
    """README: "Every key is in conf/": each key of the typed schema has a line in the default
    config's files, where a user reads what there is to set (and test above: with the schema's
    default)."""
    schema: set[str] = set()

    def walk(prefix: str, node: object) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(f"{prefix}.{key}" if prefix else str(key), value)
        else:
            schema.add(prefix)

    walk("", OmegaConf.to_container(OmegaConf.structured(Config)))
    assert sorted(schema - _written_keys()) == []
