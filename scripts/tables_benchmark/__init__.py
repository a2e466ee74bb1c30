"""The quality benchmark across tables (issue 41, part 5): ``python -m scripts.tables_benchmark``.

For each table it trains the default model for a few seeds and scores it beside SMOTE(-NC), a
Gaussian copula, independent column marginals and CTGAN, all on the same split and by the same
balanced two-sample test; docs/tables-benchmark.md holds the table and how to re-run it.
"""
