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
