"""``python -m scripts.dp_date_bounds``: a datetime column's DP bounds on the numbers' geometric
grid (before) and on the public date grid (:data:`~wgangp.data.transform.private_column.DATE_GRID`).

    python -m scripts.dp_date_bounds [--draws 200]

Birth dates uniform over 1940-2000, one per customer, each customer 3 to 12 rows; each draw a new
table and a new noise. For 270 and 2,000 customers at noise multipliers 28 (epsilon 1 leaves 270
customers about that), 10, 3 and 1 it prints, over the draws, the share whose bounds are no date
pandas can hold (the run then failed: ``bounds ['NaT', 'NaT'] are not dates``), the mean and
least share of customers whose date lies within the bounds, and the median width in years.
"""

from __future__ import annotations

import argparse

import numpy as np

from wgangp.data.schema.column_codes import bound_seconds
from wgangp.data.transform.private_column import DATE_GRID
from wgangp.privacy.mechanisms import BOUND_SPREAD, DEFAULT_GRID, dp_bounds

#: Seconds pandas' nanosecond timestamps hold on either side of 1970.
DATETIME_LIMIT_S = 9.2e9
YEAR_S = 365.25 * 86400
GRIDS = {
    "geometric (before)": (DEFAULT_GRID, BOUND_SPREAD),
    "date grid (now)": (DATE_GRID, len(DATE_GRID)),
}


def measure(customers: int, noise: float, draws: int, grid: np.ndarray, spread: int) -> str:
    not_dates, inside, widths = 0, [], []
    for draw in range(draws):
        rng = np.random.default_rng(draw)
        rows = rng.integers(3, 13, customers)
        born = bound_seconds("1940-01-01") + rng.integers(0, 60 * 365, customers) * 86400.0
        values, owners = np.repeat(born, rows), np.repeat(np.arange(customers), rows)
        (low, high), _ = dp_bounds(values, owners, noise, rng, edges=grid, spread=spread)
        not_dates += max(abs(low), abs(high)) > DATETIME_LIMIT_S
        inside.append(float(np.mean((born >= low) & (born <= high))))
        widths.append((high - low) / YEAR_S)
    return (
        f"no date {not_dates / draws:5.1%}  customers inside {np.mean(inside):6.1%} "
        f"(least {min(inside):6.1%})  median width {np.median(widths):9.3g} years"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    args = parser.parse_args()
    for customers in (270, 2000):
        for noise in (28.0, 10.0, 3.0, 1.0):
            for name, (grid, spread) in GRIDS.items():
                result = measure(customers, noise, args.draws, grid, spread)
                print(f"{customers:5d} customers, noise {noise:4.0f}, {name:18s}: {result}")


if __name__ == "__main__":
    main()
