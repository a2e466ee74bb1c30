"""What runs in the peers' own environments (``setup_envs.sh``): the peers, one module each, and
what they share with the harness (``record``, ``rows``, ``flops``). Nothing here imports
``wgangp`` or the rest of ``scripts``; the harness starts the peers through ``peer_launch``."""
