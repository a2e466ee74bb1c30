"""short_number: every value an error line shows stays short, whatever its size."""

from __future__ import annotations

import pytest

from wgangp.data.numbers import short_number


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (2.0, "2"),
        (12.5, "12.5"),
        (-3.5, "-3.5"),
        (172_792.0, "172792"),
        (25_691.16, "25691.2"),
        (-1e308, "-1e+308"),
        (1e15, "1e+15"),
        (9.969209968386869e36, "9.96921e+36"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (float("nan"), "nan"),
    ],
)
def test_short_number(value: float, shown: str) -> None:
    assert short_number(value) == shown
