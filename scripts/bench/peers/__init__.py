"""The peers, one module each, run in their own environments (``setup_envs.sh``) by ``launch``."""
