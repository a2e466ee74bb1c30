"""Peer implementations, each run in its own virtual environment (see ``setup_envs.sh``)."""
