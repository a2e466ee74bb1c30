"""EvaluateConfig: a Hydra structured config whose check() names a bad value in one line."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from wgangp.config import EvaluateConfig
from wgangp.errors import ConfigError


def test_defaults_are_valid_and_compose_as_a_structured_config() -> None:
    EvaluateConfig().check()
    composed = OmegaConf.merge(
        OmegaConf.structured(EvaluateConfig), {"augment_ratios": [1, 3], "seeds": 5}
    )
    settings = OmegaConf.to_object(composed)
    assert isinstance(settings, EvaluateConfig)
    assert settings.augment_ratios == [1.0, 3.0] and settings.seeds == 5
    settings.check()


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"n_synthetic": 5}, "evaluate.n_synthetic"),
        ({"augment_ratios": []}, "evaluate.augment_ratios"),
        ({"augment_ratios": [1.0, -2.0]}, "evaluate.augment_ratios"),
        ({"headline_ratio": 3.0}, "evaluate.headline_ratio"),
        ({"seeds": 0}, "evaluate.seeds"),
        ({"max_normal_rows": 10}, "evaluate.max_normal_rows"),
        ({"target_precision": 1.0}, "evaluate.target_precision"),
        ({"c2st_repeats": 0}, "evaluate.c2st_repeats"),
        ({"threads": 0}, "evaluate.threads"),
        ({"workers": -1}, "evaluate.workers"),
        ({"dcr_repeats": 0}, "evaluate.dcr_repeats"),
        ({"copy_rtol": 0.5}, "evaluate.copy_rtol"),
    ],
)
def test_invalid_values_raise_one_line_config_errors(overrides: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=key) as info:
        EvaluateConfig(**overrides).check()
    assert "\n" not in str(info.value)


def test_unknown_keys_are_rejected_by_the_schema() -> None:
    with pytest.raises(Exception, match="n_synthetics"):
        OmegaConf.merge(OmegaConf.structured(EvaluateConfig), {"n_synthetics": 10})


def test_the_full_evaluation_is_one_option_away() -> None:
    """``evaluate=full`` restores every repeat the default trims; all else is the default's."""
    from support.configs import compose

    from wgangp.config import to_config

    trimmed, whole = to_config(compose()).evaluate, to_config(compose(["evaluate=full"])).evaluate
    changed = {k for k, v in vars(trimmed).items() if getattr(whole, k) != v}
    assert changed == {"seeds", "dcr_repeats"}
    defaults = EvaluateConfig()
    assert (trimmed.seeds, trimmed.dcr_repeats) == (3, 2) == (defaults.seeds, defaults.dcr_repeats)
    assert (whole.seeds, whole.dcr_repeats, whole.workers) == (5, 5, 0)
