"""Project scripts, a package so that tools run with ``python -m scripts.<name>``."""
