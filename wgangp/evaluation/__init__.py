"""Evaluation of synthetic rare-class rows against real rows they were never fitted on.

fidelity, detection (C2ST), utility against SMOTE, disclosure, on the rows of any table's schema
(``encoding`` turns them into numbers); ``suite`` runs them all, ``render`` writes the report.
"""
