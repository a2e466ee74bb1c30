"""A training run's lifecycle: the job's MLflow run and checkpoints (session), the host loop that
calls the compiled step (:mod:`wgangp.step`), interrupts, history, NaN forensics, runtime and
precision, one fit of the networks and the refit."""
