"""Shared test support, registered as pytest plugins by tests/conftest.py: configs and sizes,
the CLI in a subprocess, a real MLflow server, headless Chromium, runs tracked on a server."""
