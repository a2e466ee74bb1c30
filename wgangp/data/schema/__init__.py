"""The schema: kinds, levels, bounds; inferred, reviewed, edited, matched to a table; cells and
label values."""
