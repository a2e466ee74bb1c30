"""The histories benchmark (``python -m scripts.histories_benchmark``): wgangp's history model, the
peers in their own environments and a row-independent baseline, on transaction tables by
external simulators and our own, scored by behavioral fidelity, history detection and utility."""
