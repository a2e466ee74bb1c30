"""How a number appears in an error line: short, whatever its size.

``str(int(-1e308))`` is 309 digits; an error line must stay one readable line, so every value it
shows goes through :func:`short_number` (six significant digits, exponent when needed).
"""

from __future__ import annotations

import math


def short_number(value: float) -> str:
    """``2``, ``12.5``, ``-3.5``, ``172792``, ``1.23457e+06``, ``-1e+308``, ``inf``, ``nan``."""
    number = float(value)
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return f"{number:.6g}"
