"""A private run's noise source (:mod:`wgangp.privacy.randomness`): secret and fresh each run,
replayable only by the test switch, which says so."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from support.docs import documented

from wgangp.errors import ConfigError
from wgangp.privacy.randomness import (
    CALIBRATION_STREAM,
    REPLAYABLE,
    REPLAYABLE_ENV,
    SECRET,
    STATISTICS_STREAM,
    NoiseSource,
    noise_source,
)


def test_each_run_draws_a_fresh_secret_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REPLAYABLE_ENV, raising=False)
    first, second = noise_source(), noise_source()
    assert first.kind == second.kind == SECRET
    assert first.key != second.key and first.key.bit_length() > 64
    draws = [s.numpy(STATISTICS_STREAM).normal(size=4) for s in (first, second)]
    assert not np.allclose(*draws)
    assert str(first.key) not in repr(first)


def test_streams_of_one_key_are_independent_and_repeat() -> None:
    source = NoiseSource(12345)
    statistics = source.numpy(STATISTICS_STREAM).normal(size=8)
    assert np.array_equal(statistics, source.numpy(STATISTICS_STREAM).normal(size=8))
    assert not np.allclose(statistics, source.numpy(CALIBRATION_STREAM).normal(size=8))
    words = source.tf_key()
    assert words == source.tf_key() and all(-(2**63) <= w < 2**63 for w in words)
    assert words != NoiseSource(12346).tf_key()


def test_the_test_switch_is_replayable_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(REPLAYABLE_ENV, "7")
    with caplog.at_level(logging.WARNING, logger="wgangp.train"):
        first, second = noise_source(), noise_source()
    assert first == second and first.kind == REPLAYABLE
    assert "carries no guarantee" in caplog.text


@pytest.mark.parametrize("value", ["seven", "-1"])
def test_a_bad_test_switch_is_one_line(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(REPLAYABLE_ENV, value)
    with pytest.raises(ConfigError) as err:
        noise_source()
    assert REPLAYABLE_ENV in str(err.value) and "\n" not in str(err.value)
    if value == "seven":
        documented(str(err.value))
