"""Evaluation of synthetic fraud rows against real rows they were never fitted on.

fidelity, detection (C2ST), utility against SMOTE, privacy; ``suite`` runs them all, ``render``
writes the report.
"""
