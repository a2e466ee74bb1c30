"""The training table: its schema, where it comes from (file, Kaggle, simulated), validation,
the split, the invertible feature transform, and ``prepare`` (load -> validate -> split)."""
