"""Shared test harnesses: a real MLflow server and headless Chromium (fixtures re-exported by
tests/conftest.py)."""
