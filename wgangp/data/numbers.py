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


#: Largest magnitude a cell may have. No real value of a table comes near it (Kaggle's largest is
#: a Time of ~1.7e5; Unix times in milliseconds are ~1.7e12), while fill values and broken exports
#: do (1e20, 1e30, netCDF's 9.97e36, 1e308). One such cell would set its column's scale alone, or
#: overflow float32 (the networks' type) and the transform's squares to inf.
MAX_ABS_VALUE = 1e15
#: No parameter fitted on values within MAX_ABS_VALUE goes past this: a std or mean stays within
#: it, quantile knots extended past the outermost groups (:mod:`wgangp.data.knots`) reach about
#: twice it. A stored parameter beyond (1e300) is an edit (checked when a transform is loaded).
MAX_PARAMETER = 10 * MAX_ABS_VALUE
