"""Kaggle's credit-card file: its shipped schema, its download, the simulated stand-in."""
